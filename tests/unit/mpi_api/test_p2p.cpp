// The point-to-point engine and intra-node transport (mpi_api/p2p.hpp), driven
// directly: ranks of a world created in this process, operations started on
// requests built by hand. Sequential cases run on the test's thread (nothing
// blocks); concurrent ones run ranks as scheduler tasks on two VPs, or several
// OS threads of one rank. A message waits in the receiver's inbox until the
// receiver (a new receive or probe, or a poll) moves it into matching.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "scheduler/scheduler.hpp"
#include "../../../mpi_api/core/src/intranode_rings.hpp"

using namespace mpc::mpi;

namespace {

// A world of n ranks, all hosted here; the eager limit is set for the test.
struct Job {
    explicit Job(int n, size_t eager = 16384) : saved_eager(g_intra_eager_limit) {
        datatype_init_predefined();
        world_create(n, 1, 0, std::vector<int>(static_cast<size_t>(n), 0));
        g_intra_eager_limit = eager;
    }
    ~Job() {
        g_intra_eager_limit = saved_eager;
        world_destroy();
    }
    RankState* operator[](int r) const { return world().local(r); }
    size_t saved_eager;
};

void init_op(Request& r, Request::Kind kind, RankState* me, const void* buf, size_t bytes,
             int peer, int tag, SendMode mode = SendMode::Standard) {
    r.kind = kind;
    r.rank = me;
    r.comm = &me->world;
    r.buf = const_cast<void*>(buf);
    r.count = static_cast<int>(bytes);
    r.type = datatype_lookup(MPI_BYTE);
    r.peer = peer;
    r.tag = tag;
    r.context = me->world.context;
    r.mode = mode;
}

void start_send(Request& r, RankState* me, const void* buf, size_t bytes, int dest, int tag,
                SendMode mode = SendMode::Standard) {
    init_op(r, Request::Kind::Send, me, buf, bytes, dest, tag, mode);
    p2p_start_send(&r);
}

void start_recv(Request& r, RankState* me, void* buf, size_t bytes, int source, int tag) {
    init_op(r, Request::Kind::Recv, me, buf, bytes, source, tag);
    p2p_start_recv(&r);
}

std::vector<unsigned char> pattern(size_t n, int seed) {
    std::vector<unsigned char> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 31 + static_cast<size_t>(seed) * 7 + 1);
    return v;
}

int error_class(int code) { return code == MPI_SUCCESS ? MPI_SUCCESS : error_class_of(code); }

// What the receiver does when it polls: moves its inbox into matching.
void poll_as(RankState* r) { poll(r->local_index); }
bool poll_as_did(RankState* r) {
    return poll(r->local_index);
}

}  // namespace

TEST_CASE("a message meets its posted receive when the receiver polls", "[p2p]") {
    Job job(2);
    auto out = pattern(3000, 1);
    std::vector<unsigned char> in(3000, 0);
    Request r, s;
    start_recv(r, job[1], in.data(), in.size(), 0, 4);
    CHECK(job[1]->match.posted_count() == 1);
    CHECK_FALSE(r.is_complete());
    start_send(s, job[0], out.data(), out.size(), 1, 4);
    CHECK(s.is_complete());  // small: copied out at once
    poll_as(job[1]);
    REQUIRE(r.is_complete());
    CHECK(in == out);
    CHECK(r.status.MPI_SOURCE == 0);
    CHECK(r.status.MPI_TAG == 4);
    CHECK(r.status.mpc_count == 3000);
    CHECK(r.status.MPI_ERROR == MPI_SUCCESS);
    CHECK(job[1]->match.posted_count() == 0);
    CHECK(job[1]->match.unexpected_count() == 0);
}

TEST_CASE("a lone small message travels in the inbox's slot, received in place", "[p2p]") {
    Job job(2);
    RankState* me = job[1];
    int a = 11, b = 22, c = 33, got_a = 0, got_b = 0, got_c = 0;
    Request ra, sa;
    start_recv(ra, me, &got_a, sizeof got_a, 0, 1);
    start_send(sa, job[0], &a, sizeof a, 1, 1);
    CHECK(sa.is_complete());
    CHECK(me->inbox.word.load() == Inbox::kSlotBusy);  // in the slot, no cell
    poll_as(me);
    REQUIRE(ra.is_complete());
    CHECK(got_a == 11);
    CHECK(ra.status.MPI_SOURCE == 0);
    CHECK(ra.status.mpc_count == sizeof a);
    // The slot stays busy until the next drain, and a poll finds nothing new.
    CHECK(me->received_in_place.load() == Inbox::kSlotBusy);
    CHECK(me->inbox.word.load() == Inbox::kSlotBusy);
    CHECK_FALSE(poll_as_did(me));
    // Two more arrive meanwhile, in cells: the next receive gets the older
    // one, never the one already delivered; its drain frees the slot.
    Request sb, sc;
    start_send(sb, job[0], &b, sizeof b, 1, 1);
    start_send(sc, job[0], &c, sizeof c, 1, 1);
    Request rb, rc;
    start_recv(rb, me, &got_b, sizeof got_b, 0, 1);
    REQUIRE(rb.is_complete());
    CHECK(got_b == 22);
    CHECK(me->received_in_place.load() == 0);
    CHECK(me->inbox.word.load() == 0);
    CHECK(me->match.unexpected_count() == 1);
    start_recv(rc, me, &got_c, sizeof got_c, 0, 1);
    REQUIRE(rc.is_complete());
    CHECK(got_c == 33);
    CHECK(me->match.unexpected_count() == 0);
    // The slot is free again.
    Request sd;
    start_send(sd, job[0], &a, sizeof a, 1, 2);
    CHECK(me->inbox.word.load() == Inbox::kSlotBusy);
}

TEST_CASE("a receive posted late takes the slot's message in place, in matching order", "[p2p]") {
    Job job(2);
    RankState* me = job[1];
    int x = 1, y = 2, z = 3, got = 0;
    Request sx, sy, sz;
    start_send(sx, job[0], &x, sizeof x, 1, 7);
    Request r1;
    start_recv(r1, me, &got, sizeof got, 0, 7);  // straight from the slot
    REQUIRE(r1.is_complete());
    CHECK(got == 1);
    CHECK(me->received_in_place.load() == Inbox::kSlotBusy);
    CHECK(me->match.unexpected_count() == 0);
    // A receive the slot's message does not match drains as usual.
    Request r2;
    start_recv(r2, me, &got, sizeof got, 0, 8);
    CHECK_FALSE(r2.is_complete());
    CHECK(me->inbox.word.load() == 0);
    CHECK(me->received_in_place.load() == 0);
    start_send(sy, job[0], &y, sizeof y, 1, 7);
    poll_as(me);  // y: unexpected (the posted receive wants tag 8)
    CHECK(me->match.unexpected_count() == 1);
    start_send(sz, job[0], &z, sizeof z, 1, 7);  // z: in the slot again
    CHECK(me->inbox.word.load() == Inbox::kSlotBusy);
    Request r3, r4;
    start_recv(r3, me, &got, sizeof got, 0, 7);  // the older one first
    REQUIRE(r3.is_complete());
    CHECK(got == 2);
    start_recv(r4, me, &got, sizeof got, MPI_ANY_SOURCE, MPI_ANY_TAG);
    REQUIRE(r4.is_complete());
    CHECK(got == 3);
    CHECK(me->match.unexpected_count() == 0);
    // A receive posted earlier that matches it has it, not the one posted now.
    int w = 4, v = 5, got2 = 0;
    Request sw, sv, r5;
    start_send(sw, job[0], &w, sizeof w, 1, 8);
    CHECK(me->inbox.word.load() == Inbox::kSlotBusy);
    start_recv(r5, me, &got2, sizeof got2, 0, MPI_ANY_TAG);
    REQUIRE(r2.is_complete());
    CHECK(got == 4);
    CHECK_FALSE(r5.is_complete());
    start_send(sv, job[0], &v, sizeof v, 1, 9);
    poll_as(me);
    REQUIRE(r5.is_complete());
    CHECK(got2 == 5);
}

TEST_CASE("a lone small cell is received in place; the next drain frees it", "[p2p]") {
    Job job(2);
    RankState* me = job[1];
    // Too big for the slot, small enough for an in-place copy.
    auto a = pattern(Inbox::kSlotPayload + 8, 1), b = pattern(Inbox::kSlotPayload + 8, 2);
    std::vector<unsigned char> got_a(a.size()), got_b(b.size());
    Request ra, sa;
    start_recv(ra, me, got_a.data(), got_a.size(), 0, 1);
    start_send(sa, job[0], a.data(), a.size(), 1, 1);
    const uintptr_t cell = me->inbox.word.load();
    CHECK(cell != 0);
    CHECK((cell & Inbox::kSlotBusy) == 0);
    poll_as(me);
    REQUIRE(ra.is_complete());
    CHECK(got_a == a);
    CHECK(me->received_in_place.load() == cell);
    CHECK(me->inbox.word.load() == cell);
    CHECK_FALSE(poll_as_did(me));
    // A small one arrives on top: not into the slot (the inbox is not empty).
    Request sb, rb;
    start_send(sb, job[0], b.data(), 4, 1, 1);
    CHECK((me->inbox.word.load() & Inbox::kSlotBusy) == 0);
    start_recv(rb, me, got_b.data(), got_b.size(), 0, 1);
    REQUIRE(rb.is_complete());
    CHECK(rb.status.mpc_count == 4);
    CHECK(std::equal(b.begin(), b.begin() + 4, got_b.begin()));
    CHECK(me->received_in_place.load() == 0);
    CHECK(me->inbox.word.load() == 0);
}

TEST_CASE("a message received in place is truncated like any other", "[p2p]") {
    Job job(2);
    RankState* me = job[1];
    const size_t size = GENERATE(size_t{8}, Inbox::kSlotPayload, Inbox::kSlotPayload + 1, size_t{64});
    const auto out = pattern(size, 3);
    unsigned char in[4] = {};
    Request r, s;
    start_recv(r, me, in, sizeof in, 0, 3);
    start_send(s, job[0], out.data(), out.size(), 1, 3);
    CHECK(((me->inbox.word.load() & Inbox::kSlotBusy) != 0) == (size <= Inbox::kSlotPayload));
    poll_as(me);
    REQUIRE(r.is_complete());
    CHECK(me->received_in_place.load() != 0);
    CHECK(error_class(r.status.MPI_ERROR) == MPI_ERR_TRUNCATE);
    CHECK(r.status.mpc_count == 4);
    CHECK(std::equal(in, in + 4, out.begin()));
}

TEST_CASE("the slot's message is the oldest: unexpected, it matches before later ones", "[p2p]") {
    Job job(3);
    RankState* me = job[1];
    int a = 1, b = 2, c = 3;
    Request sa, sb, sc;
    start_send(sa, job[0], &a, sizeof a, 1, 5);  // the slot
    start_send(sb, job[2], &b, sizeof b, 1, 5);  // a cell, from another sender
    start_send(sc, job[0], &c, sizeof c, 1, 5);  // a cell
    CHECK((me->inbox.word.load() & Inbox::kSlotBusy) != 0);
    poll_as(me);  // nothing posted: all three become unexpected, slot freed
    CHECK(me->inbox.word.load() == 0);
    CHECK(me->match.unexpected_count() == 3);
    int got[3] = {};
    MPI_Status st[3];
    for (int i = 0; i < 3; ++i) {
        Request r;
        start_recv(r, me, &got[i], sizeof got[i], MPI_ANY_SOURCE, 5);
        REQUIRE(r.is_complete());
        st[i] = r.status;
    }
    CHECK(got[0] == 1);
    CHECK(st[0].MPI_SOURCE == 0);
    CHECK(got[1] == 2);
    CHECK(st[1].MPI_SOURCE == 2);
    CHECK(got[2] == 3);
    // Probing sees the slot's message too, with its size.
    Request sd;
    const double d = 2.5;
    start_send(sd, job[2], &d, sizeof d, 1, 6);
    MPI_Status ps;
    CHECK(p2p_probe(me, me->world.context, MPI_ANY_SOURCE, 6, &ps, nullptr));
    CHECK(ps.MPI_SOURCE == 2);
    CHECK(ps.mpc_count == sizeof d);
    // Copied aside intact (and nothing is left behind when the world goes).
    double got_d = 0;
    Request rd;
    start_recv(rd, me, &got_d, sizeof got_d, 2, 6);
    REQUIRE(rd.is_complete());
    CHECK(got_d == 2.5);
    CHECK(me->match.unexpected_count() == 0);
}

TEST_CASE("a small unexpected message is copied aside: the sender completes at once", "[p2p]") {
    Job job(2, 1024);
    auto out = pattern(1024, 2);
    const auto sent = out;
    Request s;
    start_send(s, job[0], out.data(), out.size(), 1, 0);
    CHECK(s.is_complete());
    poll_as(job[1]);
    CHECK(job[1]->match.unexpected_count() == 1);
    std::fill(out.begin(), out.end(), 0);  // the sender may reuse its buffer now
    std::vector<unsigned char> in(1024);
    Request r;
    start_recv(r, job[1], in.data(), in.size(), 0, 0);
    REQUIRE(r.is_complete());
    CHECK(in == sent);
    CHECK(job[1]->match.unexpected_count() == 0);
}

TEST_CASE("a large unexpected message waits in the sender's buffer for its receive", "[p2p]") {
    Job job(2, 1024);
    auto out = pattern(1025, 3);
    Request s;
    start_send(s, job[0], out.data(), out.size(), 1, 0);
    CHECK_FALSE(s.is_complete());
    poll_as(job[1]);
    CHECK_FALSE(s.is_complete());
    CHECK(job[1]->match.unexpected_count() == 1);
    std::vector<unsigned char> in(2000, 0xEE);
    Request r;
    start_recv(r, job[1], in.data(), in.size(), MPI_ANY_SOURCE, MPI_ANY_TAG);
    REQUIRE(r.is_complete());
    CHECK(s.is_complete());  // the receiver's copy completes the sender
    CHECK(std::equal(out.begin(), out.end(), in.begin()));
    CHECK(in[1025] == 0xEE);
    CHECK(r.status.mpc_count == 1025);
}

TEST_CASE("a synchronous send completes only when a receive matches it", "[p2p]") {
    Job job(2);
    char out[8] = "ssend!", in[8] = {};
    Request s;
    start_send(s, job[0], out, sizeof(out), 1, 9, SendMode::Synchronous);
    CHECK_FALSE(s.is_complete());
    Request other;  // a receive for another tag does not match it
    char dummy[8];
    start_recv(other, job[1], dummy, sizeof(dummy), 0, 10);
    CHECK_FALSE(s.is_complete());
    CHECK_FALSE(other.is_complete());
    Request r;
    start_recv(r, job[1], in, sizeof(in), 0, 9);
    CHECK(r.is_complete());
    CHECK(s.is_complete());
    CHECK(std::strcmp(in, "ssend!") == 0);
    CHECK(p2p_cancel_recv(&other));
}

TEST_CASE("messages between a pair arrive in send order across both protocols", "[p2p]") {
    Job job(2, 100);
    const size_t sizes[] = {10, 500, 0, 101, 100, 7, 4000, 1, 99, 300};
    constexpr int N = 10;
    std::vector<std::vector<unsigned char>> out, in;
    for (int i = 0; i < N; ++i) {
        out.push_back(pattern(sizes[i], i));
        in.emplace_back(4000, 0);
    }
    Request r[N], s[N];
    // Three receives posted first, then all sends, then the other receives.
    for (int i = 0; i < 3; ++i) start_recv(r[i], job[1], in[i].data(), 4000, 0, 5);
    for (int i = 0; i < N; ++i) start_send(s[i], job[0], out[i].data(), out[i].size(), 1, 5);
    for (int i = 3; i < N; ++i)
        start_recv(r[i], job[1], in[i].data(), 4000, i % 2 ? MPI_ANY_SOURCE : 0,
                   i % 3 ? MPI_ANY_TAG : 5);
    poll_as(job[1]);
    for (int i = 0; i < N; ++i) {
        INFO("message " << i);
        REQUIRE(r[i].is_complete());
        CHECK(s[i].is_complete());
        CHECK(r[i].status.mpc_count == static_cast<MPI_Count>(sizes[i]));
        CHECK(std::equal(out[i].begin(), out[i].end(), in[i].begin()));
    }
    CHECK(job[1]->match.unexpected_count() == 0);
    CHECK(job[1]->match.posted_count() == 0);
}

TEST_CASE("a busy pair switches from the inbox to its ring, in send order", "[p2p]") {
    using namespace mpc::mpi::intranode;
    Job job(3, 1024);
    RankState* me = job[1];
    // From rank 0: enough messages to get a ring and fill it (the sender then
    // matches them itself), of every kind: in the entry, a cell, a
    // rendezvous. From rank 2: a few, through the inbox only.
    constexpr int N = static_cast<int>(kPromoteAfter) + 150;
    auto size_of = [](int i) -> size_t { return i % 11 == 0 ? 2000 : i % 3 == 0 ? 300 : i % 41; };
    std::vector<std::vector<unsigned char>> out;
    std::vector<Request> s(N + 5);
    for (int i = 0; i < N; ++i) {
        out.push_back(pattern(size_of(i), i));
        start_send(s[static_cast<size_t>(i)], job[0], out.back().data(), out.back().size(), 1, i);
        if (i == static_cast<int>(kPromoteAfter) + 10) {
            // The ring holds the messages sent since the switch.
            CHECK(rings_queued(me) > 0);
            CHECK(rings_queued(me) <= 11);
        }
    }
    int few[5] = {1, 2, 3, 4, 5};
    for (int i = 0; i < 5; ++i)
        start_send(s[static_cast<size_t>(N + i)], job[2], &few[i], sizeof few[i], 1, 7);
    // Rank 0's messages in order, whatever the tag asked (any tag from 0).
    std::vector<unsigned char> in(2000);
    for (int i = 0; i < N; ++i) {
        INFO("message " << i);
        Request r;
        start_recv(r, me, in.data(), in.size(), 0, MPI_ANY_TAG);
        REQUIRE(r.is_complete());
        CHECK(r.status.MPI_TAG == i);
        CHECK(r.status.mpc_count == static_cast<MPI_Count>(size_of(i)));
        CHECK(std::equal(out[static_cast<size_t>(i)].begin(), out[static_cast<size_t>(i)].end(),
                         in.begin()));
        CHECK(s[static_cast<size_t>(i)].is_complete());
    }
    for (int i = 0; i < 5; ++i) {
        int got = 0;
        Request r;
        start_recv(r, me, &got, sizeof got, MPI_ANY_SOURCE, 7);
        REQUIRE(r.is_complete());
        CHECK(got == i + 1);
    }
    CHECK(rings_queued(me) == 0);
    CHECK(me->match.unexpected_count() == 0);
    // Posted first, then sent through the ring (a window): matched on a poll.
    constexpr int W = 100;
    int vals[W], got[W] = {};
    Request rw[W], sw[W];
    for (int i = 0; i < W; ++i) start_recv(rw[i], me, &got[i], sizeof got[i], 0, 9);
    for (int i = 0; i < W; ++i) {
        vals[i] = 1000 + i;
        start_send(sw[i], job[0], &vals[i], sizeof vals[i], 1, 9);
    }
    poll_as(me);
    for (int i = 0; i < W; ++i) {
        REQUIRE(rw[i].is_complete());
        CHECK(got[i] == 1000 + i);
    }
    CHECK_FALSE(poll_as_did(me));
}

TEST_CASE("ring entries of one and two slots start at every position of the ring", "[p2p]") {
    // Sizes 20, 20, 4 take 2 + 2 + 1 slots: 5 is prime to the ring's slots,
    // so over enough laps an entry of each kind starts at every slot, a
    // two-slot one across the ring's end among them. Posted late and early:
    // the unexpected copy and the placement both join the two halves.
    using namespace mpc::mpi::intranode;
    Job job(2);
    RankState* me = job[1];
    const size_t sizes[3] = {20, 20, 4};
    constexpr int kWarm = static_cast<int>(kPromoteAfter) + 1;  // the pair gets its ring
    for (int i = 0; i < kWarm; ++i) {
        int v = i, got = -1;
        Request s, r;
        start_send(s, job[0], &v, sizeof v, 1, 1);
        start_recv(r, me, &got, sizeof got, 0, 1);
        REQUIRE(r.is_complete());
    }
    for (int round = 0; round < 2; ++round) {
        const bool posted_first = round == 1;
        constexpr int N = 3 * 128 * 2;  // several laps
        std::vector<std::vector<unsigned char>> out, in;
        std::vector<Request> s(N), r(N);
        for (int i = 0; i < N; ++i) {
            out.push_back(pattern(sizes[i % 3], i + round));
            in.emplace_back(kRingInline, 0);
        }
        auto post = [&](int i) {
            start_recv(r[static_cast<size_t>(i)], me, in[static_cast<size_t>(i)].data(),
                       kRingInline, 0, 2);
        };
        constexpr int W = 40;  // windows of entries the receiver drains between
        for (int w = 0; w < N; w += W) {
            const int end = std::min(w + W, N);
            if (posted_first)
                for (int i = w; i < end; ++i) post(i);
            for (int i = w; i < end; ++i) {
                auto& o = out[static_cast<size_t>(i)];
                start_send(s[static_cast<size_t>(i)], job[0], o.data(), o.size(), 1, 2);
            }
            if (!posted_first)
                for (int i = w; i < end; ++i) post(i);
            poll_as(me);
        }
        for (int i = 0; i < N; ++i) {
            INFO("round " << round << ", message " << i);
            const size_t k = static_cast<size_t>(i);
            REQUIRE(r[k].is_complete());
            CHECK(r[k].status.mpc_count == static_cast<MPI_Count>(out[k].size()));
            CHECK(std::equal(out[k].begin(), out[k].end(), in[k].begin()));
        }
        CHECK(rings_queued(me) == 0);
        CHECK(me->match.unexpected_count() == 0);
    }
}

TEST_CASE("a line's second half from the last lap never passes for a new entry", "[p2p]") {
    // A two-slot entry's payload fills the second slot's stamp word. Here
    // that word holds the stamp the slot will have one lap later; the one-slot
    // entries of that lap start those lines one message at a time, so each
    // receive's look-ahead reads the old second half: it must not take it
    // for a message.
    using namespace mpc::mpi::intranode;
    Job job(2);
    RankState* me = job[1];
    auto send_recv = [&](const void* data, size_t bytes, void* into) {
        Request s, r;
        start_send(s, job[0], data, bytes, 1, 5);
        start_recv(r, me, into, kRingInline, 0, 5);
        REQUIRE(r.is_complete());
        CHECK(r.status.mpc_count == static_cast<MPI_Count>(bytes));
    };
    unsigned char got[kRingInline];
    // The inbox's messages, then the ring's first entry, at position 0.
    for (unsigned i = 0; i <= kPromoteAfter; ++i) send_recv(&i, sizeof i, got);
    REQUIRE(rings_queued(me) == 0);
    // Lap 1: 20-byte entries at 2, 4, ... 120 (1 is skipped).
    for (uint32_t pos = 2; pos <= 120; pos += 2) {
        unsigned char msg[20] = {};
        const uint32_t later = pos + 1 + kRingSlots + 1;  // slot pos + 1's stamp, a lap on
        memcpy(msg + 12, &later, sizeof later);
        send_recv(msg, sizeof msg, got);
        CHECK(memcmp(got, msg, sizeof msg) == 0);
    }
    // Lap 2: 4-byte entries from 122 on, past every line lap 1 wrote.
    for (int i = 0; i < 140; ++i) {
        INFO("message " << i);
        int v = 7000 + i, w = 0;
        send_recv(&v, sizeof v, &w);
        CHECK(w == v);
        CHECK(rings_queued(me) == 0);
    }
    CHECK(me->match.unexpected_count() == 0);
}

TEST_CASE("wildcard receives pick the earliest message that fits", "[p2p]") {
    Job job(3);
    int a = 1, b = 2, c = 3;
    Request s1, s2, s3;
    start_send(s1, job[0], &a, sizeof(a), 1, 7);
    start_send(s2, job[2], &b, sizeof(b), 1, 8);
    start_send(s3, job[0], &c, sizeof(c), 1, 9);
    int got = 0;
    Request r1;
    start_recv(r1, job[1], &got, sizeof(got), 2, MPI_ANY_TAG);  // only rank 2's
    CHECK(got == 2);
    CHECK(r1.status.MPI_SOURCE == 2);
    CHECK(r1.status.MPI_TAG == 8);
    Request r2;
    start_recv(r2, job[1], &got, sizeof(got), MPI_ANY_SOURCE, 9);  // skips tag 7
    CHECK(got == 3);
    CHECK(r2.status.MPI_SOURCE == 0);
    Request r3;
    start_recv(r3, job[1], &got, sizeof(got), MPI_ANY_SOURCE, MPI_ANY_TAG);
    CHECK(got == 1);
    CHECK(r3.status.MPI_TAG == 7);
    CHECK(job[1]->match.unexpected_count() == 0);
}

TEST_CASE("a message longer than its receive is truncated and flagged", "[p2p]") {
    for (size_t eager : {size_t{16384}, size_t{10}}) {  // cell, then rendezvous
        for (bool posted_first : {true, false}) {
            INFO("eager limit " << eager << (posted_first ? ", posted first" : ", late"));
            Job job(2, eager);
            auto out = pattern(100, 5);
            std::vector<unsigned char> in(64, 0xEE);
            Request r, s;
            if (posted_first) start_recv(r, job[1], in.data(), 40, 0, 1);
            start_send(s, job[0], out.data(), out.size(), 1, 1);
            if (!posted_first) start_recv(r, job[1], in.data(), 40, 0, 1);
            poll_as(job[1]);
            REQUIRE(r.is_complete());
            CHECK(s.is_complete());
            CHECK(s.status.MPI_ERROR == MPI_SUCCESS);
            CHECK(error_class(r.status.MPI_ERROR) == MPI_ERR_TRUNCATE);
            CHECK(r.status.mpc_count == 40);
            CHECK(std::equal(out.begin(), out.begin() + 40, in.begin()));
            CHECK(in[40] == 0xEE);
        }
    }
}

TEST_CASE("probe sees unexpected messages; a taken message leaves matching", "[p2p]") {
    Job job(2, 64);
    MPI_Status st{};
    const uint32_t ctx = job[1]->world.context;
    CHECK_FALSE(p2p_probe(job[1], ctx, MPI_ANY_SOURCE, MPI_ANY_TAG, &st, nullptr));
    auto small = pattern(20, 6), large = pattern(200, 7);
    Request s1, s2;
    start_send(s1, job[0], small.data(), small.size(), 1, 3);
    start_send(s2, job[0], large.data(), large.size(), 1, 3);
    REQUIRE(p2p_probe(job[1], ctx, 0, 3, &st, nullptr));
    CHECK(st.MPI_SOURCE == 0);
    CHECK(st.MPI_TAG == 3);
    CHECK(st.mpc_count == 20);
    CHECK(job[1]->match.unexpected_count() == 2);  // probing does not consume
    CHECK_FALSE(p2p_probe(job[1], ctx + 2, MPI_ANY_SOURCE, MPI_ANY_TAG, &st, nullptr));

    Incoming* first = nullptr;
    REQUIRE(p2p_probe(job[1], ctx, MPI_ANY_SOURCE, 3, &st, &first));
    REQUIRE(first != nullptr);
    CHECK(job[1]->match.unexpected_count() == 1);
    // A receive now gets the second message, the taken one is not matchable.
    std::vector<unsigned char> in(200);
    Request r;
    start_recv(r, job[1], in.data(), in.size(), 0, 3);
    REQUIRE(r.is_complete());
    CHECK(r.status.mpc_count == 200);
    CHECK(in == large);
    CHECK(s2.is_complete());
    // The taken message is delivered on demand.
    std::vector<unsigned char> in2(20);
    Request m;
    init_op(m, Request::Kind::Recv, job[1], in2.data(), in2.size(), 0, 0);
    p2p_receive_taken(first, &m);
    REQUIRE(m.is_complete());
    CHECK(in2 == small);
    CHECK(m.status.MPI_TAG == 3);
    CHECK(job[1]->match.unexpected_count() == 0);
}

TEST_CASE("a posted receive can be cancelled until it matches", "[p2p]") {
    Job job(2);
    char buf[4];
    Request r;
    start_recv(r, job[1], buf, sizeof(buf), 0, 1);
    REQUIRE(job[1]->match.posted_count() == 1);
    CHECK(p2p_cancel_recv(&r));
    CHECK(r.is_complete());
    CHECK(r.status.mpc_cancelled == 1);
    CHECK(job[1]->match.posted_count() == 0);
    // The cancelled receive no longer matches: the message becomes unexpected.
    char out[4] = "abc";
    Request s;
    start_send(s, job[0], out, sizeof(out), 1, 1);
    poll_as(job[1]);
    CHECK(job[1]->match.unexpected_count() == 1);
    // Too late for a receive that matched.
    Request r2;
    start_recv(r2, job[1], buf, sizeof(buf), 0, 1);
    REQUIRE(r2.is_complete());
    CHECK_FALSE(p2p_cancel_recv(&r2));
    CHECK(r2.status.mpc_cancelled == 0);
    CHECK(std::strcmp(buf, "abc") == 0);
}

namespace {

// Each rank sends kMsgs messages of mixed sizes to every rank (itself
// included) and receives all of them with ANY_SOURCE, checking that the
// messages of each sender come in order.
constexpr int kRanks = 4, kMsgs = 120;  // past the switch to rings, and rings full

size_t mixed_size(int i) { return static_cast<size_t>((i * 37) % 5 == 0 ? 3000 : (i * 13) % 200); }

struct Result {
    std::atomic<int> errors{0};
    std::atomic<int> received{0};
};
Result g_result;

void exchange_all(void*) {
    RankState* me = current_rank();
    const int rank = me->world_rank;
    std::vector<std::vector<unsigned char>> out;
    std::vector<Request> sends(static_cast<size_t>(kRanks * kMsgs));
    out.reserve(sends.size());
    for (int dest = 0; dest < kRanks; ++dest)
        for (int i = 0; i < kMsgs; ++i) {
            out.push_back(pattern(mixed_size(i), rank * 1000 + i));
            start_send(sends[static_cast<size_t>(dest * kMsgs + i)], me, out.back().data(),
                       out.back().size(), dest, 0);
            if (i % 7 == 0) mpc::sched::yield();
        }
    int next[kRanks] = {};
    std::vector<unsigned char> in(3000);
    for (int k = 0; k < kRanks * kMsgs; ++k) {
        Request r;
        start_recv(r, me, in.data(), in.size(), MPI_ANY_SOURCE, 0);
        wait_complete(&r);
        const int src = r.status.MPI_SOURCE;
        const int i = next[src]++;
        const auto expect = pattern(mixed_size(i), src * 1000 + i);
        if (r.status.mpc_count != static_cast<MPI_Count>(expect.size()) ||
            !std::equal(expect.begin(), expect.end(), in.begin()))
            g_result.errors++;
        g_result.received++;
    }
    for (auto& s : sends) wait_complete(&s);
}

}  // namespace

TEST_CASE("ranks on two VPs exchange messages concurrently, in order per sender", "[p2p]") {
    Job job(kRanks, 1000);
    g_result.errors = 0;
    g_result.received = 0;
    mpc::sched::Options o;
    o.num_vps = 2;
    o.stack_size = 256 * 1024;
    o.bind = false;
    {
        mpc::sched::Scheduler s(o);
        for (int r = 0; r < kRanks; ++r) s.spawn(r % 2, exchange_all, nullptr, job[r]);
        s.run();
    }
    CHECK(g_result.errors == 0);
    CHECK(g_result.received == kRanks * kRanks * kMsgs);
    for (int r = 0; r < kRanks; ++r) {
        CHECK(job[r]->match.unexpected_count() == 0);
        CHECK(job[r]->match.posted_count() == 0);
    }
}

TEST_CASE("several threads of one rank blocked in probe are all woken", "[p2p]") {
    // Regression: a single waiter slot per rank lost the wake-up of all but the
    // last thread to block in MPI_Probe (MPI_THREAD_MULTIPLE).
    Job job(2);
    constexpr int kThreads = 3;
    std::atomic<int> found{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            mpc::sched::set_thread_owner(job[1]);
            MPI_Status st{};
            p2p_probe_wait(job[1], job[1]->world.context, MPI_ANY_SOURCE, t, &st, nullptr);
            if (st.MPI_TAG == t) found++;
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let them all park
    int v[kThreads] = {0, 1, 2};
    Request s[kThreads];
    for (int t = 0; t < kThreads; ++t) start_send(s[t], job[0], &v[t], sizeof(int), 1, t);
    for (auto& th : threads) th.join();
    CHECK(found == kThreads);
    CHECK(job[1]->prober_count.load() == 0);
    CHECK(job[1]->probers == nullptr);
    // Drain the messages.
    for (int t = 0; t < kThreads; ++t) {
        int got = -1;
        Request r;
        start_recv(r, job[1], &got, sizeof(got), 0, t);
        CHECK(got == t);
    }
}

TEST_CASE("threads of one rank sending while their pair gets its ring keep their order", "[p2p]") {
    // Each thread's messages arrive in its order, whichever of inbox and ring
    // they took: a thread may push to the inbox just after another made the
    // ring and wrote into it. Repeated, as the race is in the first messages.
    constexpr int kThreads = 3, kMsgs = 60;
    for (int round = 0; round < 20; ++round) {
        Job job(2);
        std::vector<std::thread> senders;
        for (int t = 0; t < kThreads; ++t)
            senders.emplace_back([&, t] {
                mpc::sched::set_thread_owner(job[0]);
                for (int i = 0; i < kMsgs; ++i) {
                    const int v = i;
                    Request s;
                    start_send(s, job[0], &v, sizeof v, 1, t);
                }
            });
        int next[kThreads] = {};
        int errors = 0;
        for (int k = 0; k < kThreads * kMsgs; ++k) {
            int got = -1;
            Request r;
            start_recv(r, job[1], &got, sizeof got, 0, MPI_ANY_TAG);
            while (!r.is_complete()) poll_as(job[1]);
            const int t = r.status.MPI_TAG;
            if (t < 0 || t >= kThreads || got != next[t]++) ++errors;
        }
        for (auto& th : senders) th.join();
        REQUIRE(errors == 0);
    }
}

TEST_CASE("a receive posted late takes a ring's message straight, in matching order", "[p2p]") {
    using namespace mpc::mpi::intranode;
    Job job(2);
    RankState* me = job[1];
    // Make the pair busy enough for its ring.
    for (unsigned i = 0; i <= kPromoteAfter; ++i) {
        int v = 0, got = 0;
        Request s, r;
        start_send(s, job[0], &v, sizeof v, 1, 1);
        start_recv(r, me, &got, sizeof got, 0, 1);
        REQUIRE(r.is_complete());
    }
    int a = 10, b = 20, got = 0;
    Request sa, sb;
    start_send(sa, job[0], &a, sizeof a, 1, 5);
    start_send(sb, job[0], &b, sizeof b, 1, 6);
    REQUIRE(rings_queued(me) == 2);
    Request rb;
    start_recv(rb, me, &got, sizeof got, 0, 6);  // a: unexpected; b: straight in
    REQUIRE(rb.is_complete());
    CHECK(got == 20);
    CHECK(me->match.unexpected_count() == 1);
    CHECK(me->match.posted_count() == 0);
    Request ra;
    start_recv(ra, me, &got, sizeof got, 0, 5);
    REQUIRE(ra.is_complete());
    CHECK(got == 10);
    // An older unexpected message that matches goes first.
    int c = 30, d = 40;
    Request sc, sd;
    start_send(sc, job[0], &c, sizeof c, 1, 7);
    poll_as(me);
    CHECK(me->match.unexpected_count() == 1);
    start_send(sd, job[0], &d, sizeof d, 1, 7);
    Request rc, rd;
    start_recv(rc, me, &got, sizeof got, 0, 7);
    REQUIRE(rc.is_complete());
    CHECK(got == 30);
    CHECK(me->match.unexpected_count() == 1);  // d
    start_recv(rd, me, &got, sizeof got, MPI_ANY_SOURCE, MPI_ANY_TAG);
    REQUIRE(rd.is_complete());
    CHECK(got == 40);
    CHECK(me->match.unexpected_count() == 0);
    CHECK(rings_queued(me) == 0);
}
