// The network's protocols over the fake fabric: every size class expected and
// unexpected, truncation, MPI order across protocols, flow control under a
// message storm, synchronous sends, stealing statistics, registration reuse,
// rendezvous without registration, one-sided messages and writes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "net_harness.hpp"

using namespace mpc::ib;
using namespace mpc::ib::test;

namespace {

NetworkConfig config(ProgressMode mode = ProgressMode::Collaborative) {
    NetworkConfig c;
    c.mode = mode;
    c.eager_limit = 1024;
    c.rendezvous_threshold = 16384;
    c.rcache_max_bytes = 64 << 20;
    return c;
}

// Sends one message of n bytes from world rank 0 (node 0) to rank 2 (node 1).
void round_trip(Cluster& c, size_t n, bool unexpected, bool noncontig, bool sync = false) {
    TestSend s{pattern(n, 3)};
    TestRecv r;
    r.want = MatchBits{7, kAny, 11};
    r.capacity = n;
    r.noncontiguous = noncontig;
    r.buf.assign(n + 16, 'Z');
    if (!unexpected) c.post(2, &r);
    c.send(0, 2, MatchBits{7, 0, 11}, &s, sync);
    if (unexpected) {
        REQUIRE(c.run_until([&] { return !sync ? true : false; }, -1, 200));
        c.post(2, &r);
    }
    REQUIRE(c.run_until([&] { return r.done && s.done; }));
    CHECK(r.bytes == n);
    CHECK(r.got.source == 0);
    CHECK(r.got.tag == 11);
    CHECK(std::equal(s.data.begin(), s.data.end(), r.buf.begin()));
    CHECK(std::all_of(r.buf.begin() + static_cast<long>(n), r.buf.end(), [](char x) { return x == 'Z'; }));
}

}  // namespace

TEST_CASE("every protocol delivers at its boundaries, expected and unexpected", "[network]") {
    Cluster c(2, 2, config());
    const size_t eager = c.net(0).eager_limit(), rndv = c.net(0).rendezvous_threshold();
    for (size_t n : {size_t{0}, size_t{1}, eager - 1, eager, eager + 1, size_t{4096}, rndv - 1, rndv,
                     rndv + 1, size_t{1} << 20, size_t{9} << 20}) {
        for (bool unexpected : {false, true})
            for (bool noncontig : {false, true}) {
                INFO("size " << n << (unexpected ? " unexpected" : " expected")
                             << (noncontig ? " non-contiguous" : ""));
                round_trip(c, n, unexpected, noncontig);
            }
    }
    CHECK(c.driver(0).overruns == 0);
    CHECK(c.driver(1).overruns == 0);
    CHECK(c.driver(1).bad_writes == 0);
}

TEST_CASE("synchronous sends complete only once matched", "[network]") {
    Cluster c(2, 1, config());
    for (size_t n : {size_t{8}, size_t{100000}}) {
        TestSend s{pattern(n, 1)};
        c.send(0, 1, MatchBits{1, 0, 2}, &s, true);
        REQUIRE_FALSE(c.run_until([&] { return s.done; }, -1, 20000));
        TestRecv r;
        r.want = MatchBits{1, 0, 2};
        r.capacity = n;
        r.buf.resize(n);
        c.post(1, &r);
        REQUIRE(c.run_until([&] { return r.done && s.done; }));
        CHECK(r.buf == s.data);
    }
}

TEST_CASE("a message larger than the receive is truncated, never overflows", "[network]") {
    Cluster c(2, 1, config());
    for (size_t n : {size_t{500}, size_t{5000}, size_t{50000}}) {
        for (bool unexpected : {false, true}) {
            TestSend s{pattern(n, 5)};
            TestRecv r;
            r.want = MatchBits{1, kAny, kAny};
            r.capacity = n / 2;
            r.buf.assign(n, 'Z');
            if (!unexpected) c.post(1, &r);
            c.send(0, 1, MatchBits{1, 0, 3}, &s);
            if (unexpected) {
                c.run_until([] { return false; }, -1, 100);
                c.post(1, &r);
            }
            REQUIRE(c.run_until([&] { return r.done && s.done; }));
            CHECK(r.bytes == n);
            CHECK(std::equal(s.data.begin(), s.data.begin() + static_cast<long>(n / 2), r.buf.begin()));
            CHECK(std::all_of(r.buf.begin() + static_cast<long>(n / 2), r.buf.end(),
                              [](char x) { return x == 'Z'; }));
        }
    }
}

TEST_CASE("MPI order holds across the three protocols", "[network]") {
    Cluster c(2, 1, config());
    std::mt19937 rng(42);
    const size_t sizes[] = {0, 8, 1000, 1025, 3000, 16383, 16385, 70000};
    const int kMessages = 300;
    std::vector<TestSend> sends(kMessages);
    for (int i = 0; i < kMessages; ++i) {
        size_t n = sizes[rng() % 8];
        sends[static_cast<size_t>(i)].data = pattern(n + sizeof(int), i);
        memcpy(sends[static_cast<size_t>(i)].data.data(), &i, sizeof(int));
        c.send(0, 1, MatchBits{9, 0, 4}, &sends[static_cast<size_t>(i)]);
    }
    // Let everything arrive unexpected, then receive in order with wildcards.
    c.run_until([] { return false; }, -1, 5000);
    for (int i = 0; i < kMessages; ++i) {
        TestRecv r;
        r.want = MatchBits{9, kAny, kAny};
        r.capacity = 70000 + sizeof(int);
        r.buf.resize(r.capacity);
        c.post(1, &r);
        REQUIRE(c.run_until([&] { return r.done; }));
        int index;
        memcpy(&index, r.buf.data(), sizeof(int));
        REQUIRE(index == i);
        CHECK(r.bytes == sends[static_cast<size_t>(i)].data.size());
    }
    REQUIRE(c.run_until([&] { return std::all_of(sends.begin(), sends.end(), [](auto& s) { return s.done; }); }));
}

TEST_CASE("credits: a storm never overruns a small receive pool", "[network]") {
    // 16 receive buffers per node; a storm of eager messages and fragments from
    // two ranks while the receiver is slow to post.
    Cluster c(2, 2, config(), 16, 2048, 8);
    const int kMessages = 2000;
    std::vector<TestSend> sends(kMessages);
    for (int i = 0; i < kMessages; ++i) {
        sends[static_cast<size_t>(i)].data = pattern(static_cast<size_t>(i % 5) * 900, i);
        c.send(i % 2, 2, MatchBits{1, 0, i}, &sends[static_cast<size_t>(i)]);
    }
    c.run_until([] { return false; }, -1, 20000);
    std::vector<TestRecv> recvs(kMessages);
    for (int i = 0; i < kMessages; ++i) {
        auto& r = recvs[static_cast<size_t>(i)];
        r.want = MatchBits{1, i % 2, i};
        r.capacity = 4 * 900;
        r.buf.resize(r.capacity);
        c.post(2, &r);
    }
    REQUIRE(c.run_until([&] {
        return std::all_of(recvs.begin(), recvs.end(), [](auto& r) { return r.done; }) &&
               std::all_of(sends.begin(), sends.end(), [](auto& s) { return s.done; });
    }));
    for (int i = 0; i < kMessages; ++i) {
        auto& r = recvs[static_cast<size_t>(i)];
        auto& s = sends[static_cast<size_t>(i)];
        REQUIRE(r.bytes == s.data.size());
        REQUIRE(std::equal(s.data.begin(), s.data.end(), r.buf.begin()));
    }
    CHECK(c.driver(1).overruns == 0);
    CHECK(c.driver(0).overruns == 0);
}

TEST_CASE("credits: floods both ways at once do not deadlock", "[network]") {
    // Each side's queue is blocked on credits while it owes the other side
    // credits: the Credit messages must not wait behind that queue.
    // (A deep send queue: both sides spend all their credits before either
    // hears from the other.)
    Cluster c(2, 1, config(), 16, 2048, 64);
    const int kMessages = 400;
    std::vector<TestSend> sends(2 * kMessages);
    for (int i = 0; i < 2 * kMessages; ++i) {
        const int from = i % 2;
        sends[static_cast<size_t>(i)].data = pattern(static_cast<size_t>(i % 7) * 700, i);
        c.send(from, 1 - from, MatchBits{1, 0, i}, &sends[static_cast<size_t>(i)]);
    }
    c.run_until([] { return false; }, -1, 20000);
    std::vector<TestRecv> recvs(2 * kMessages);
    for (int i = 0; i < 2 * kMessages; ++i) {
        auto& r = recvs[static_cast<size_t>(i)];
        r.want = MatchBits{1, i % 2, i};
        r.capacity = 7 * 700;
        r.buf.resize(r.capacity);
        c.post(1 - i % 2, &r);
    }
    REQUIRE(c.run_until([&] {
        return std::all_of(recvs.begin(), recvs.end(), [](auto& r) { return r.done; }) &&
               std::all_of(sends.begin(), sends.end(), [](auto& s) { return s.done; });
    }));
    for (size_t i = 0; i < recvs.size(); ++i) {
        REQUIRE(recvs[i].bytes == sends[i].data.size());
        REQUIRE(std::equal(sends[i].data.begin(), sends[i].data.end(), recvs[i].buf.begin()));
    }
    CHECK(c.driver(0).overruns == 0);
    CHECK(c.driver(1).overruns == 0);
}

TEST_CASE("collaborative polling: another rank processes a busy rank's work", "[network]") {
    Cluster c(2, 2, config(ProgressMode::Collaborative));
    TestSend s{pattern(100, 1)};
    TestRecv r;
    r.want = MatchBits{1, 0, 1};
    r.capacity = 100;
    r.buf.resize(100);
    c.post(3, &r);  // world rank 3 = node 1, local rank 1: the "busy" rank
    c.send(0, 3, MatchBits{1, 0, 1}, &s);
    // Only local rank 0 of each node polls.
    REQUIRE(c.run_until([&] { return r.done; }, 0));
    CHECK(r.buf == s.data);
    RankNetStats st = c.net(1).stats(1);
    CHECK(st.processed_self == 0);
    CHECK(st.stolen_same_numa == 1);
}

TEST_CASE("wait mode: only the owner processes its work", "[network]") {
    Cluster c(2, 2, config(ProgressMode::Wait));
    TestSend s{pattern(100, 1)};
    TestRecv r;
    r.want = MatchBits{1, 0, 1};
    r.capacity = 100;
    r.buf.resize(100);
    c.post(3, &r);
    c.send(0, 3, MatchBits{1, 0, 1}, &s);
    REQUIRE_FALSE(c.run_until([&] { return r.done; }, 0, 20000));
    REQUIRE(c.run_until([&] { return r.done; }, 1));
    CHECK(c.net(1).stats(1).processed_self == 1);
}

TEST_CASE("rendezvous reuses the registration of a buffer sent again", "[network][rcache]") {
    Cluster c(2, 1, config());
    const size_t n = 1 << 20;
    TestSend s{pattern(n, 9)};
    TestRecv r;
    r.buf.resize(n);
    const int sender_before = c.driver(0).registrations;
    const int receiver_before = c.driver(1).registrations;
    for (int i = 0; i < 5; ++i) {
        s.done = false;
        r.done = false;
        r.want = MatchBits{1, 0, 1};
        r.capacity = n;
        std::fill(r.buf.begin(), r.buf.end(), 0);
        c.post(1, &r);
        c.send(0, 1, MatchBits{1, 0, 1}, &s);
        REQUIRE(c.run_until([&] { return s.done && r.done; }));
        REQUIRE(r.buf == s.data);
    }
    CHECK(c.driver(0).registrations - sender_before == 1);
    CHECK(c.driver(1).registrations - receiver_before == 1);
}

TEST_CASE("rendezvous falls back to copies when a side cannot register", "[network][rcache]") {
    // Which node refuses: the sender (0), the receiver (1), or both.
    const int refusing = GENERATE(0, 1, 2);
    INFO("refusing: " << (refusing == 2 ? "both" : refusing == 0 ? "sender" : "receiver"));
    Cluster c(2, 2, config());
    for (int n = 0; n < 2; ++n) c.driver(n).refuse_registrations = refusing == n || refusing == 2;
    // Larger than a bounce buffer many times over, expected and unexpected,
    // contiguous or not; a synchronous one (rendezvous at any size) too.
    for (size_t n : {size_t{20000}, size_t{1} << 20, size_t{1}})
        for (bool unexpected : {false, true})
            for (bool noncontig : {false, true}) {
                INFO(n << " bytes, unexpected " << unexpected << ", noncontiguous " << noncontig);
                round_trip(c, n, unexpected, noncontig, n == 1 && !unexpected);
            }
    CHECK(c.driver(0).refused + c.driver(1).refused > 0);
    CHECK(c.driver(1).bad_writes == 0);
    CHECK(c.driver(1).overruns == 0);

    // A truncated receive takes only its capacity, the sender still completes.
    TestSend s{pattern(100000, 5)};
    TestRecv r;
    r.want = MatchBits{7, kAny, 12};
    r.capacity = 30000;
    r.buf.assign(30016, 'Z');
    c.post(2, &r);
    c.send(0, 2, MatchBits{7, 0, 12}, &s);
    REQUIRE(c.run_until([&] { return r.done && s.done; }));
    CHECK(r.bytes == 100000);
    CHECK(std::equal(s.data.begin(), s.data.begin() + 30000, r.buf.begin()));
    CHECK(std::all_of(r.buf.begin() + 30000, r.buf.end(), [](char x) { return x == 'Z'; }));
}

TEST_CASE("rendezvous data goes in writes of at most the write chunk", "[network]") {
    NetworkConfig cfg = config();
    cfg.write_chunk = 64 << 10;
    Cluster c(2, 2, cfg);
    // Below, at and above one chunk and a multiple of it; many chunks (more
    // than the send queue holds at once); expected and unexpected.
    for (size_t n : {size_t{20000}, size_t{64} << 10, (size_t{64} << 10) + 1, size_t{192} << 10,
                     (size_t{1} << 20) + 5, size_t{9} << 20}) {
        for (bool unexpected : {false, true}) {
            INFO(n << " bytes" << (unexpected ? " unexpected" : " expected"));
            const int writes_before = c.driver(0).writes, imm_before = c.driver(0).writes_with_imm;
            round_trip(c, n, unexpected, false);
            CHECK(c.driver(0).writes - writes_before ==
                  static_cast<int>((n + cfg.write_chunk - 1) / cfg.write_chunk));
            CHECK(c.driver(0).writes_with_imm - imm_before == 1);  // the last one signals
        }
    }
    CHECK(c.driver(0).largest_write == cfg.write_chunk);
    CHECK(c.driver(1).bad_writes == 0);
}

// ---- One-sided communication --------------------------------------------------

TEST_CASE("one-sided messages reach the handler intact, in order, within credits",
          "[network][rma]") {
    Cluster c(2, 1, config(), 8);  // a pool of 8 buffers: credits stall the sender
    struct Seen {
        std::vector<std::vector<char>> messages;
        std::vector<int> from;
    } seen;
    c.net(1).set_rma_handler(RmaHandler{
        [](void* ctx, int node, const void* data, size_t len) {
            auto* s = static_cast<Seen*>(ctx);
            s->from.push_back(node);
            s->messages.emplace_back(static_cast<const char*>(data),
                                     static_cast<const char*>(data) + len);
        },
        &seen});
    const size_t max = c.net(0).rma_message_max();
    REQUIRE(max > 64);
    const int n = 300;
    for (int i = 0; i < n; ++i) {
        const size_t len = 8 + static_cast<size_t>(i * 37) % (max - 8);
        std::vector<char> body = pattern(len, i);
        memcpy(body.data(), &i, sizeof i);
        // Header and data are two pieces of one message; two in three are
        // lazy (they leave with the next one, or at a poll).
        c.net(0).rma_send(1, body.data(), 8, body.data() + 8, len - 8, i % 3 != 0);
    }
    REQUIRE(c.run_until([&] { return seen.messages.size() == size_t(n); }));
    for (int i = 0; i < n; ++i) {
        INFO("message " << i);
        const size_t len = 8 + static_cast<size_t>(i * 37) % (max - 8);
        std::vector<char> want = pattern(len, i);
        memcpy(want.data(), &i, sizeof i);
        CHECK(seen.messages[size_t(i)] == want);
        CHECK(seen.from[size_t(i)] == 0);
    }
    CHECK(c.driver(1).overruns == 0);
}

TEST_CASE("one-sided writes land in registered memory and report their end",
          "[network][rma]") {
    NetworkConfig cfg = config();
    cfg.write_chunk = 64 << 10;
    Cluster c(2, 1, cfg);
    std::vector<char> window(300000, 'W');
    uint64_t remote = 0;
    void* reg = c.net(1).rma_register(window.data(), window.size(), &remote);
    REQUIRE(reg != nullptr);
    const uint64_t key = c.net(1).rma_key_for(reg, 0);
    std::vector<char> src = pattern(200000, 5);
    bool done = false;
    REQUIRE(c.net(0).rma_write(
        1, src.data(), src.size(), remote + 1000, key,
        RmaDone{[](void* ctx, bool ok) { *static_cast<bool*>(ctx) = ok; }, &done}));
    REQUIRE(c.run_until([&] { return done; }));
    // Ordered after the writes: a message says they have landed.
    bool told = false;
    c.net(1).set_rma_handler(
        RmaHandler{[](void* ctx, int, const void*, size_t) { *static_cast<bool*>(ctx) = true; },
                   &told});
    c.net(0).rma_send(1, "x", 1, nullptr, 0, false);
    REQUIRE(c.run_until([&] { return told; }));
    CHECK(std::equal(src.begin(), src.end(), window.begin() + 1000));
    CHECK(window[999] == 'W');
    CHECK(window[1000 + src.size()] == 'W');
    CHECK(c.driver(0).largest_write == cfg.write_chunk);  // cut in chunks
    CHECK(c.driver(1).bad_writes == 0);
    // This driver reads nothing: the caller is told, nothing starts.
    CHECK(!c.net(0).rma_can_read());
    CHECK(!c.net(0).rma_read(1, src.data(), 8, remote, key, RmaDone{}));
    CHECK(!c.net(0).rma_atomics());
    c.net(1).rma_deregister(reg);
}
