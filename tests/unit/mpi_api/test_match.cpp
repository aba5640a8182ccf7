// Matching queues (mpi_api/match.hpp): FIFO order of posted receives and
// unexpected messages per context, wildcards, removal from any position, and
// the counters kept alongside.
#include <catch2/catch.hpp>

#include <vector>

#include "mpi_api/match.hpp"
#include "mpi_api/request.hpp"

using namespace mpc::mpi;

namespace {

// Requests hold atomics (not copyable): they are set up in place.
Request& posted(Request& r, uint32_t context, int source, int tag) {
    r.kind = Request::Kind::Recv;
    r.context = context;
    r.peer = source;
    r.tag = tag;
    return r;
}

Incoming arrived(uint32_t context, int source, int tag, size_t bytes = 0) {
    Incoming m;
    m.env = Envelope{context, source, tag};
    m.bytes = bytes;
    return m;
}

}  // namespace

TEST_CASE("envelope_matches honours both wildcards", "[match]") {
    const Envelope e{0, 3, 7};
    CHECK(envelope_matches(3, 7, e));
    CHECK(envelope_matches(MPI_ANY_SOURCE, 7, e));
    CHECK(envelope_matches(3, MPI_ANY_TAG, e));
    CHECK(envelope_matches(MPI_ANY_SOURCE, MPI_ANY_TAG, e));
    CHECK_FALSE(envelope_matches(2, 7, e));
    CHECK_FALSE(envelope_matches(3, 8, e));
    CHECK_FALSE(envelope_matches(MPI_ANY_SOURCE, 8, e));
    CHECK_FALSE(envelope_matches(4, MPI_ANY_TAG, e));
}

TEST_CASE("an incoming message takes the first posted receive it matches", "[match]") {
    MatchQueues q;
    Request a, b, c, d;
    posted(a, 0, 1, 5);
    posted(b, 0, MPI_ANY_SOURCE, 5);
    posted(c, 0, 1, MPI_ANY_TAG);
    posted(d, 0, MPI_ANY_SOURCE, MPI_ANY_TAG);
    for (Request* r : {&a, &b, &c, &d}) q.add_posted(r);
    REQUIRE(q.posted_count() == 4);

    CHECK(q.take_posted(Envelope{0, 2, 6}) == &d);  // only the full wildcard fits
    CHECK(q.take_posted(Envelope{0, 1, 5}) == &a);  // earliest of a, b, c
    CHECK(q.take_posted(Envelope{0, 1, 5}) == &b);
    CHECK(q.take_posted(Envelope{0, 2, 5}) == nullptr);  // c wants source 1
    CHECK(q.take_posted(Envelope{0, 1, 9}) == &c);
    CHECK(q.take_posted(Envelope{0, 1, 5}) == nullptr);
    CHECK(q.posted_count() == 0);
    CHECK(a.next == nullptr);
    CHECK(a.prev == nullptr);
}

TEST_CASE("posted receives of different contexts never match each other", "[match]") {
    MatchQueues q;
    Request world, coll, other;
    posted(world, 0, MPI_ANY_SOURCE, MPI_ANY_TAG);
    posted(coll, 1, MPI_ANY_SOURCE, MPI_ANY_TAG);
    posted(other, 6, 0, 0);
    q.add_posted(&world);
    q.add_posted(&coll);
    q.add_posted(&other);
    CHECK(q.take_posted(Envelope{2, 0, 0}) == nullptr);
    CHECK(q.take_posted(Envelope{1, 0, 0}) == &coll);
    CHECK(q.take_posted(Envelope{6, 0, 0}) == &other);
    CHECK(q.take_posted(Envelope{6, 0, 0}) == nullptr);
    CHECK(q.take_posted(Envelope{0, 0, 0}) == &world);
    CHECK(q.posted_count() == 0);
}

TEST_CASE("remove_posted unlinks from any position and reports a lost race", "[match]") {
    MatchQueues q;
    Request rs[5];
    for (int i = 0; i < 5; ++i) q.add_posted(&posted(rs[i], 0, 0, i));

    CHECK(q.remove_posted(&rs[2]));  // middle
    CHECK(q.remove_posted(&rs[0]));  // head
    CHECK(q.remove_posted(&rs[4]));  // tail
    CHECK(q.posted_count() == 2);
    CHECK_FALSE(q.remove_posted(&rs[2]));  // already gone: as if a message had matched it
    Request never, elsewhere;
    CHECK_FALSE(q.remove_posted(&posted(never, 0, 0, 9)));
    CHECK_FALSE(q.remove_posted(&posted(elsewhere, 12, 0, 9)));  // no queue for that context  // context with no queue at all

    // The survivors are still in order and still matchable.
    CHECK(q.take_posted(Envelope{0, 0, 2}) == nullptr);
    CHECK(q.take_posted(Envelope{0, 0, 3}) == &rs[3]);
    CHECK(q.take_posted(Envelope{0, 0, 1}) == &rs[1]);
    CHECK(q.posted_count() == 0);

    // A queue emptied by removals accepts new receives at its head.
    Request again;
    q.add_posted(&posted(again, 0, 0, 7));
    CHECK(q.take_posted(Envelope{0, 0, 7}) == &again);
}

TEST_CASE("a receive takes the first unexpected message it matches", "[match]") {
    MatchQueues q;
    Incoming m1 = arrived(0, 1, 5, 10), m2 = arrived(0, 2, 5, 20), m3 = arrived(0, 1, 6, 30),
             m4 = arrived(0, 1, 5, 40);
    for (Incoming* m : {&m1, &m2, &m3, &m4}) q.add_unexpected(m);
    REQUIRE(q.unexpected_count() == 4);

    CHECK(q.find_unexpected(0, MPI_ANY_SOURCE, MPI_ANY_TAG) == &m1);
    CHECK(q.find_unexpected(0, 2, MPI_ANY_TAG) == &m2);
    CHECK(q.find_unexpected(0, MPI_ANY_SOURCE, 6) == &m3);
    CHECK(q.find_unexpected(0, 3, MPI_ANY_TAG) == nullptr);
    CHECK(q.find_unexpected(1, MPI_ANY_SOURCE, MPI_ANY_TAG) == nullptr);  // other context
    // find does not remove.
    CHECK(q.unexpected_count() == 4);

    q.remove_unexpected(&m1);
    CHECK(q.find_unexpected(0, 1, 5) == &m4);  // the next one from (1, 5), in order
    q.remove_unexpected(&m3);                  // middle
    q.remove_unexpected(&m4);                  // tail
    CHECK(q.find_unexpected(0, MPI_ANY_SOURCE, MPI_ANY_TAG) == &m2);
    q.remove_unexpected(&m2);                  // last
    CHECK(q.find_unexpected(0, MPI_ANY_SOURCE, MPI_ANY_TAG) == nullptr);
    CHECK(q.unexpected_count() == 0);

    Incoming m5 = arrived(0, 4, 4);
    q.add_unexpected(&m5);
    CHECK(q.find_unexpected(0, 4, 4) == &m5);
    q.remove_unexpected(&m5);
    CHECK(q.unexpected_count() == 0);
}

TEST_CASE("many contexts keep separate FIFO queues", "[match]") {
    MatchQueues q;
    constexpr int kContexts = 20, kPer = 3;
    std::vector<Incoming> msgs;
    std::vector<Request> recvs(kContexts * kPer);
    msgs.reserve(kContexts * kPer);
    // Interleave the contexts so that each queue's order is tested.
    for (int k = 0; k < kPer; ++k)
        for (int c = 0; c < kContexts; ++c) {
            msgs.push_back(arrived(static_cast<uint32_t>(c * 2), 0, 1, static_cast<size_t>(k)));
            posted(recvs[msgs.size() - 1], static_cast<uint32_t>(c * 2 + 1), 0, k);
        }
    for (auto& m : msgs) q.add_unexpected(&m);
    for (auto& r : recvs) q.add_posted(&r);
    CHECK(q.unexpected_count() == msgs.size());
    CHECK(q.posted_count() == recvs.size());
    for (int c = kContexts - 1; c >= 0; --c) {
        for (int k = 0; k < kPer; ++k) {
            Incoming* m = q.find_unexpected(static_cast<uint32_t>(c * 2), 0, MPI_ANY_TAG);
            REQUIRE(m != nullptr);
            CHECK(m->bytes == static_cast<size_t>(k));
            q.remove_unexpected(m);
            Request* r = q.take_posted(Envelope{static_cast<uint32_t>(c * 2 + 1), 0, k});
            REQUIRE(r != nullptr);
            CHECK(r->tag == k);
        }
        CHECK(q.find_unexpected(static_cast<uint32_t>(c * 2), 0, MPI_ANY_TAG) == nullptr);
    }
    CHECK(q.unexpected_count() == 0);
    CHECK(q.posted_count() == 0);
}
