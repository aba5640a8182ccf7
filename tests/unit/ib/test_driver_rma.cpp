// The drivers' one-sided operations: RDMA reads (tcp, ofi over tcp, verbs
// where a device exists) and 8-byte atomics (tcp: executed by the target's
// CPU). Reads of 1 B to 16 MiB bring the peer's registered bytes and complete
// on the send CQ with their context; fetch-and-add and compare-and-swap
// change the peer's word and bring back the old one; an atomic posted after a
// message runs only once that message's completion was handed out; a read or
// atomic outside registered memory breaks the connection.
#include <atomic>

#include "driver_harness.hpp"

using namespace mpc::ib;
using namespace mpc::ib::test;
using Type = Completion::Type;

TEST_CASE("RDMA reads of 1 B to 16 MiB bring the peer's registered bytes", "[ib][driver][rma]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    Cluster c;
    if (!c.open(kind, 2)) return;
    REQUIRE(c[0].supports_read());
    const size_t max = 16u << 20, offset = 5;
    Registered src(c[1], max + offset), dst(c[0], max + 1);
    const size_t sizes[] = {1, 8, 4095, 65537, 1u << 20, max};
    uint32_t round = 0;
    for (size_t size : sizes) {
        INFO("size " << size);
        fill_pattern(src.data() + offset, size, round + 7);
        std::memset(dst.data(), 0, size + 1);
        REQUIRE(c[0].post_read(1, dst.data(), size, dst.mr().local_desc, src.remote(offset),
                               src.mr().remote_key, 500 + round) == Status::Ok);
        // Only the target's polls answer (tcp): the pump polls both.
        REQUIRE(c.pump([&] { return c.nodes[0].sent.size() == round + 1; }, 60));
        const Completion& done = c.nodes[0].sent.back();
        CHECK(done.ok);
        CHECK(done.type == Type::Read);
        CHECK(done.context == 500 + round);
        CHECK(check_pattern(dst.data(), size, round + 7));
        CHECK(dst.data()[size] == 0);  // nothing past the end
        ++round;
    }
    CHECK(c.nodes[1].received.empty());  // the target saw no message
}

TEST_CASE("atomics change the peer's word and bring back the old one", "[ib][driver][rma]") {
    Cluster c;
    if (!c.open("tcp", 2)) return;
    REQUIRE(c[0].atomics_with_cpu());
    Registered word(c[1], 16), result(c[0], 16);
    uint64_t* w = reinterpret_cast<uint64_t*>(word.data() + 8);
    uint64_t* r = reinterpret_cast<uint64_t*>(result.data());
    *w = 40;
    auto run = [&](AtomicOp op, uint64_t operand, uint64_t compare, uint64_t context) {
        *r = 0xdead;
        REQUIRE(c[0].post_atomic(1, op, operand, compare, r, result.mr().local_desc,
                                 word.remote(8), word.mr().remote_key, context) == Status::Ok);
        const size_t before = c.nodes[0].sent.size();
        REQUIRE(c.pump([&] { return c.nodes[0].sent.size() == before + 1; }));
        const Completion& done = c.nodes[0].sent.back();
        CHECK(done.ok);
        CHECK(done.type == Type::Atomic);
        CHECK(done.context == context);
        return *r;
    };
    CHECK(run(AtomicOp::FetchAdd, 2, 0, 1) == 40);
    CHECK(*w == 42);
    CHECK(run(AtomicOp::CompareSwap, 100, 41, 2) == 42);  // no match: unchanged
    CHECK(*w == 42);
    CHECK(run(AtomicOp::CompareSwap, 100, 42, 3) == 42);  // match: swapped
    CHECK(*w == 100);
    CHECK(run(AtomicOp::FetchAdd, uint64_t(-1), 0, 4) == 100);
    CHECK(*w == 99);
    // Misaligned targets are refused at the origin.
    CHECK(c[0].post_atomic(1, AtomicOp::FetchAdd, 1, 0, r, result.mr().local_desc, word.remote(4),
                           word.mr().remote_key, 5) == Status::Error);
}

TEST_CASE("an atomic after a message runs once that message is handed out", "[ib][driver][rma]") {
    Cluster c;
    if (!c.open("tcp", 2)) return;
    Registered word(c[1], 8), result(c[0], 8), msg(c[0], 64);
    uint64_t* w = reinterpret_cast<uint64_t*>(word.data());
    for (int round = 0; round < 50; ++round) {
        *w = 7;
        REQUIRE(c[0].post_send(1, msg.data(), 64, msg.mr().local_desc, 10) == Status::Ok);
        REQUIRE(c[0].post_atomic(1, AtomicOp::FetchAdd, 1, 0,
                                 reinterpret_cast<uint64_t*>(result.data()),
                                 result.mr().local_desc, word.remote(0), word.mr().remote_key,
                                 11) == Status::Ok);
        // The target's polls: the poll that hands out the message does not
        // run the atomic behind it.
        Completion batch[16];
        int got = 0;
        for (int spins = 0; got == 0 && spins < 10000000; ++spins)
            got = c[1].poll_recv_cq(batch, 16);
        REQUIRE(got == 1);
        CHECK(batch[0].type == Type::Recv);
        CHECK(*w == 7);
        REQUIRE(c[1].repost_recv(batch[0].buffer) == Status::Ok);
        c.nodes[0].sent.clear();
        REQUIRE(c.pump([&] {
            for (const Completion& s : c.nodes[0].sent)
                if (s.type == Type::Atomic) return true;
            return false;
        }));
        CHECK(*w == 8);
        c.nodes[1].received.clear();
    }
}

TEST_CASE("a read outside registered memory breaks the connection", "[ib][driver][rma]") {
    Cluster c;
    if (!c.open("tcp", 2)) return;
    Registered src(c[1], 64), dst(c[0], 128);
    REQUIRE(c[0].post_read(1, dst.data(), 128, dst.mr().local_desc, src.remote(0),
                           src.mr().remote_key, 1) == Status::Ok);  // 128 of 64 bytes
    REQUIRE(c.pump([&] { return !c.nodes[0].sent.empty(); }, 20));
    CHECK(!c.nodes[0].sent.back().ok);
    CHECK(c.nodes[0].sent.back().type == Type::Read);
}
