// Network drivers: one suite run against every driver (tcp, ofi over tcp and,
// for the basic exchanges, over sockets; verbs when an RDMA device exists):
// connection, send/receive of every size up to the buffer size, the shared
// receive pool, the send queue bound, RDMA writes of 1 B to 64 MiB, writes
// with immediate data, registration, error completions, wait/interrupt, lost
// connections, keys bound to connections, impostors without the job's secret.
#include <atomic>
#include <cstdlib>
#include <map>
#include <set>

#include "../../../ib/src/connection_watch.hpp"
#include "driver_harness.hpp"
#include "runtime/auth.hpp"

using namespace mpc::ib;
using namespace mpc::ib::test;
using Type = Completion::Type;

namespace {

size_t count_type(const std::vector<Completion>& v, Type t) {
    size_t n = 0;
    for (auto& c : v) n += c.type == t;
    return n;
}

// Header of the test messages: who sent it and its sequence number.
struct Tag {
    uint32_t from;
    uint32_t seq;
};

}  // namespace

TEST_CASE("drivers connect every pair and exchange messages", "[ib][driver]") {
    std::string kind =
        GENERATE(from_range(std::begin(kProviderNeutralKinds), std::end(kProviderNeutralKinds)));
    // 7 node processes: six connections per driver, data arriving on several
    // at once.
    const int n = GENERATE(3, 7);
    INFO("driver " << kind << ", " << n << " nodes");
    Cluster c;
    if (!c.open(kind, n)) return;
    for (int i = 0; i < n; ++i) CHECK(!c[i].local_address().empty());
    CHECK(c[0].local_address() != c[1].local_address());

    std::vector<std::unique_ptr<Registered>> bufs;
    for (int i = 0; i < n; ++i) bufs.push_back(std::make_unique<Registered>(c[i], 16 * n));
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            if (i == j) continue;
            char* slot = bufs[i]->data() + 16 * j;
            const std::string text = std::to_string(i) + "->" + std::to_string(j);
            std::memcpy(slot, text.c_str(), text.size() + 1);
            REQUIRE(c[i].post_send(j, slot, 16, bufs[i]->mr().local_desc, 100 + j) == Status::Ok);
        }
    }
    REQUIRE(c.pump([&] {
        for (auto& node : c.nodes)
            if (node.sent.size() < size_t(n - 1) || node.received.size() < size_t(n - 1))
                return false;
        return true;
    }));
    for (int j = 0; j < n; ++j) {
        std::vector<std::string> got;
        for (auto& r : c.nodes[j].received) {
            REQUIRE(r.ok);
            REQUIRE(r.type == Type::Recv);
            REQUIRE(r.length == 16);
            got.emplace_back(static_cast<char*>(c[j].recv_buffer(r.buffer)));
            REQUIRE(c[j].repost_recv(r.buffer) == Status::Ok);
        }
        std::sort(got.begin(), got.end());
        std::vector<std::string> want;
        for (int i = 0; i < n; ++i)
            if (i != j) want.push_back(std::to_string(i) + "->" + std::to_string(j));
        CHECK(got == want);
        for (auto& s : c.nodes[j].sent) {
            CHECK(s.ok);
            CHECK(s.type == Type::Send);
            CHECK(s.context >= 100);
        }
    }
}

TEST_CASE("send/recv carries every size up to the buffer size", "[ib][driver]") {
    std::string kind =
        GENERATE(from_range(std::begin(kProviderNeutralKinds), std::end(kProviderNeutralKinds)));
    INFO("driver " << kind);
    DriverConfig config;
    config.recv_buffer_size = 8192;
    config.recv_buffers = 32;
    Cluster c;
    if (!c.open(kind, 2, config)) return;
    Registered src(c[0], config.recv_buffer_size + 1);
    const size_t sizes[] = {0,   1,   2,    3,    7,    8,    63,   64,   65,   127, 128,
                            129, 255, 1000, 1024, 4095, 4096, 4097, 8000, 8191, 8192};
    uint32_t seq = 0;
    for (size_t size : sizes) {
        INFO("size " << size);
        fill_pattern(src.data(), size, seq);
        REQUIRE(c[0].post_send(1, src.data(), size, src.mr().local_desc, seq) == Status::Ok);
        REQUIRE(c.pump([&] {
            return c.nodes[1].received.size() == seq + 1 && c.nodes[0].sent.size() == seq + 1;
        }));
        const Completion& r = c.nodes[1].received.back();
        REQUIRE(r.ok);
        REQUIRE(r.type == Type::Recv);
        REQUIRE(r.length == size);
        CHECK(check_pattern(static_cast<char*>(c[1].recv_buffer(r.buffer)), size, seq));
        CHECK(c.nodes[0].sent.back().context == seq);
        REQUIRE(c[1].repost_recv(r.buffer) == Status::Ok);
        ++seq;
    }
    // Larger than the peer's buffers: refused before anything is sent.
    CHECK(c[0].post_send(1, src.data(), config.recv_buffer_size + 1, src.mr().local_desc, 0) ==
          Status::Error);
}

TEST_CASE("lazy sends leave with the next send, or at the next poll, in order",
          "[ib][driver]") {
    std::string kind =
        GENERATE(from_range(std::begin(kProviderNeutralKinds), std::end(kProviderNeutralKinds)));
    // Followed by an ordinary send, or left alone: a poll must take them out.
    const bool followed = GENERATE(true, false);
    INFO("driver " << kind << (followed ? ", followed" : ", alone"));
    DriverConfig config;
    config.recv_buffer_size = 4096;
    config.recv_buffers = 64;
    config.send_queue_depth = 64;
    Cluster c;
    if (!c.open(kind, 2, config)) return;
    // More lazy frames than one sendmsg gathers, of several sizes.
    const uint32_t lazy = 40, total = followed ? lazy + 1 : lazy;
    Registered src(c[0], total * 4096);
    auto size_of = [](uint32_t i) { return size_t{8} + (i * 397) % 4000; };
    for (uint32_t i = 0; i < total; ++i) {
        char* p = src.data() + size_t{i} * 4096;
        fill_pattern(p, size_of(i), i);
        const Status st = i < lazy ? c[0].post_send_lazy(1, p, size_of(i), src.mr().local_desc, i)
                                   : c[0].post_send(1, p, size_of(i), src.mr().local_desc, i);
        REQUIRE(st == Status::Ok);
    }
    REQUIRE(c.pump([&] {
        return c.nodes[1].received.size() == total && c.nodes[0].sent.size() == total;
    }));
    for (uint32_t i = 0; i < total; ++i) {
        INFO("message " << i);
        const Completion& r = c.nodes[1].received[i];
        REQUIRE(r.ok);
        REQUIRE(r.length == size_of(i));
        CHECK(check_pattern(static_cast<char*>(c[1].recv_buffer(r.buffer)), size_of(i), i));
        REQUIRE(c[1].repost_recv(r.buffer) == Status::Ok);
        CHECK(c.nodes[0].sent[i].ok);
    }
}

TEST_CASE("the receive pool is reused: many more messages than buffers", "[ib][driver]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    DriverConfig config;
    config.recv_buffer_size = 256;
    config.recv_buffers = 8;
    config.send_queue_depth = 8;
    Cluster c;
    if (!c.open(kind, 2, config)) return;
    Registered src(c[0], 8 * 256);
    const uint32_t total = 2000;
    uint32_t posted = 0, next_expected = 0, in_flight = 0;
    size_t sends_seen = 0;
    auto progress = [&] {
        // Keep the send queue full; the receiver checks order and reposts.
        while (posted < total && in_flight < 8) {
            char* slot = src.data() + (posted % 8) * 256;
            Tag tag{0, posted};
            std::memcpy(slot, &tag, sizeof tag);
            fill_pattern(slot + sizeof tag, 100, posted);
            Status s = c[0].post_send(1, slot, sizeof tag + 100, src.mr().local_desc, posted);
            if (s == Status::Again) break;
            REQUIRE(s == Status::Ok);
            ++posted;
            ++in_flight;
        }
        for (; sends_seen < c.nodes[0].sent.size(); ++sends_seen) {
            REQUIRE(c.nodes[0].sent[sends_seen].ok);
            --in_flight;
        }
        for (auto& r : c.nodes[1].received) {
            REQUIRE(r.ok);
            Tag tag;
            const char* data = static_cast<char*>(c[1].recv_buffer(r.buffer));
            std::memcpy(&tag, data, sizeof tag);
            REQUIRE(tag.seq == next_expected);  // one connection keeps its order
            REQUIRE(check_pattern(data + sizeof tag, 100, tag.seq));
            ++next_expected;
            REQUIRE(c[1].repost_recv(r.buffer) == Status::Ok);
        }
        c.nodes[1].received.clear();
        return next_expected == total;
    };
    REQUIRE(c.pump(progress, 60));
}

TEST_CASE("many messages in flight from several threads at once", "[ib][driver]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    DriverConfig config;
    config.recv_buffer_size = 64;
    config.recv_buffers = 256;
    config.send_queue_depth = 256;
    Cluster c;
    if (!c.open(kind, 2, config)) return;
    const int threads = 4;
    const uint32_t per_thread = 256;  // 1024 sends, 4 x the send queue depth
    Registered src(c[0], threads * per_thread * sizeof(Tag));
    std::atomic<uint32_t> again{0};
    std::atomic<bool> stop{false};
    // The main thread polls the send CQ (one poller per CQ) while the
    // posters retry on Again.
    std::vector<std::thread> posters;
    for (int t = 0; t < threads; ++t) {
        posters.emplace_back([&, t] {
            for (uint32_t i = 0; i < per_thread && !stop; ++i) {
                auto* tag = reinterpret_cast<Tag*>(src.data()) + t * per_thread + i;
                *tag = Tag{static_cast<uint32_t>(t), i};
                Status s;
                while ((s = c[0].post_send(1, tag, sizeof *tag, src.mr().local_desc,
                                           uint64_t(t) << 32 | i)) == Status::Again) {
                    again++;
                    std::this_thread::yield();
                }
                if (s != Status::Ok) stop = true;
            }
        });
    }
    std::map<uint32_t, uint32_t> next;  // per thread: next sequence number
    bool ok = c.pump([&] {
        for (auto& r : c.nodes[1].received) {
            Tag tag;
            std::memcpy(&tag, c[1].recv_buffer(r.buffer), sizeof tag);
            if (!r.ok || tag.seq != next[tag.from]++) stop = true;
            c[1].repost_recv(r.buffer);
        }
        c.nodes[1].received.clear();
        uint32_t done = 0;
        for (auto& [t, n] : next) done += n;
        return stop ||
               (done == threads * per_thread && c.nodes[0].sent.size() == threads * per_thread);
    });
    stop = stop || !ok;
    for (auto& t : posters) t.join();
    REQUIRE_FALSE(stop);
    std::vector<bool> seen(threads * per_thread);
    for (auto& s : c.nodes[0].sent) {
        REQUIRE(s.ok);
        seen[(s.context >> 32) * per_thread + (s.context & 0xffffffff)] = true;
    }
    CHECK(std::count(seen.begin(), seen.end(), true) == threads * per_thread);
}

TEST_CASE("a full send queue answers Again and drains", "[ib][driver]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    DriverConfig config;
    config.send_queue_depth = 8;
    config.recv_buffers = 64;
    Cluster c;
    if (!c.open(kind, 2, config)) return;
    Registered src(c[0], 64);
    // Nobody polls: exactly send_queue_depth operations are accepted.
    int accepted = 0;
    Status s;
    while ((s = c[0].post_send(1, src.data(), 8, src.mr().local_desc, accepted)) == Status::Ok)
        if (++accepted > 100) break;
    CHECK(s == Status::Again);
    CHECK(accepted == 8);
    CHECK(c[0].post_write(1, src.data(), 8, src.mr().local_desc, 0, 0, false, 0, 0) ==
          Status::Again);
    REQUIRE(c.pump([&] { return c.nodes[0].sent.size() == 8; }));
    for (int i = 0; i < 8; ++i) CHECK(c.nodes[0].sent[i].context == uint64_t(i));
    // Drained: posting works again.
    CHECK(c[0].post_send(1, src.data(), 8, src.mr().local_desc, 99) == Status::Ok);
    REQUIRE(c.pump([&] { return c.nodes[0].sent.size() == 9 && c.nodes[1].received.size() == 9; }));
}

TEST_CASE("RDMA writes of 1 B to 64 MiB land in the registered region", "[ib][driver]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    Cluster c;
    if (!c.open(kind, 2)) return;
    const size_t max = 64u << 20, offset = 3;  // an odd offset checks the address translation
    Registered src(c[0], max), dst(c[1], max + offset);
    Registered note(c[0], 8);
    const size_t sizes[] = {1, 7, 4096, 65537, 1u << 20, 16u << 20, max};
    uint32_t round = 0;
    for (size_t size : sizes) {
        INFO("size " << size);
        fill_pattern(src.data(), size, round + 1);
        std::memset(dst.data(), 0, size + offset);
        REQUIRE(c[0].post_write(1, src.data(), size, src.mr().local_desc, dst.remote(offset),
                                c[1].remote_key_for(dst.mr(), 0), false, 0,
                                1000 + round) == Status::Ok);
        // A send after the write arrives after its data (ordered connection).
        REQUIRE(c[0].post_send(1, note.data(), 8, note.mr().local_desc, 2000 + round) ==
                Status::Ok);
        REQUIRE(c.pump([&] { return c.nodes[1].received.size() == round + 1; }, 120));
        CHECK(check_pattern(dst.data() + offset, size, round + 1));
        CHECK(dst.data()[offset - 1] == 0);  // nothing before the target
        REQUIRE(c.pump([&] { return c.nodes[0].sent.size() == 2 * (round + 1); }));
        CHECK(c.nodes[0].sent[2 * round].type == Type::Write);
        CHECK(c.nodes[0].sent[2 * round].context == 1000 + round);
        CHECK(c.nodes[0].sent[2 * round].ok);
        REQUIRE(c[1].repost_recv(c.nodes[1].received.back().buffer) == Status::Ok);
        ++round;
    }
    CHECK(count_type(c.nodes[1].received, Type::WriteImm) == 0);  // plain writes are silent
}

TEST_CASE("a write with immediate delivers its value after its data", "[ib][driver]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    DriverConfig config;
    config.recv_buffers = 4;  // fewer than the writes: a consumed buffer must come back
    config.send_queue_depth = 4;
    Cluster c;
    if (!c.open(kind, 2, config)) return;
    const size_t chunk = 256 * 1024;
    const uint32_t writes = 40;  // ten times the pool, ten times the send queue
    Registered src(c[0], chunk * writes), dst(c[1], chunk * writes);
    for (uint32_t i = 0; i < writes; ++i) fill_pattern(src.data() + i * chunk, chunk, i);
    uint32_t posted = 0;
    REQUIRE(c.pump(
        [&] {
            while (posted < writes &&
                   c[0].post_write(1, src.data() + posted * chunk, chunk, src.mr().local_desc,
                                   dst.remote(posted * chunk), c[1].remote_key_for(dst.mr(), 0),
                                   true, 0xabc00000u + posted, posted) == Status::Ok)
                ++posted;
            return c.nodes[1].received.size() == writes;
        },
        60));
    for (uint32_t i = 0; i < writes; ++i) {
        const Completion& r = c.nodes[1].received[i];
        INFO("write " << i);
        REQUIRE(r.ok);
        REQUIRE(r.type == Type::WriteImm);
        CHECK(r.imm == 0xabc00000u + i);  // in order, each with its own value
        CHECK(check_pattern(dst.data() + i * chunk, chunk, i));
    }
    // The pool is intact: as many messages as it holds still arrive.
    Registered msg(c[0], 16);
    c.nodes[1].received.clear();
    REQUIRE(c.pump([&] { return c.nodes[0].sent.size() == writes; }));
    for (uint32_t i = 0; i < config.recv_buffers; ++i)
        REQUIRE(c[0].post_send(1, msg.data(), 16, msg.mr().local_desc, i) == Status::Ok);
    REQUIRE(c.pump([&] { return c.nodes[1].received.size() == config.recv_buffers; }));
}

TEST_CASE("registration gives distinct keys and can be undone and redone", "[ib][driver]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    Cluster c;
    if (!c.open(kind, 2)) return;
    std::vector<char> memory(1 << 20);
    std::vector<MemoryRegion> regions(100);
    std::set<uint64_t> keys;
    for (size_t i = 0; i < regions.size(); ++i) {
        size_t at = (i * 7919) % (memory.size() / 2), len = 1 + (i * 104729) % (memory.size() / 2);
        REQUIRE(c[1].register_memory(memory.data() + at, len, &regions[i]) == Status::Ok);
        CHECK(regions[i].addr == memory.data() + at);
        CHECK(regions[i].length == len);
        CHECK(regions[i].handle != nullptr);
        keys.insert(regions[i].remote_key);
    }
    CHECK(keys.size() == regions.size());
    for (auto& r : regions) {
        c[1].deregister_memory(r);
        CHECK(r.handle == nullptr);
    }
    // Register the same memory again and write through the new key.
    Registered src(c[0], 4096);
    MemoryRegion again;
    REQUIRE(c[1].register_memory(memory.data() + 100, 4096, &again) == Status::Ok);
    fill_pattern(src.data(), 4096, 77);
    REQUIRE(c[0].post_write(1, src.data(), 4096, src.mr().local_desc, again.remote_base,
                            c[1].remote_key_for(again, 0), true, 5, 0) == Status::Ok);
    REQUIRE(c.pump([&] { return c.nodes[1].received.size() == 1; }));
    CHECK(c.nodes[1].received[0].imm == 5);
    CHECK(check_pattern(memory.data() + 100, 4096, 77));
    c[1].deregister_memory(again);
}

TEST_CASE("a write with a bad key is reported as an error", "[ib][driver]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    // The sends of `note` still queued on the broken connection are read by
    // the provider until the drivers close: its memory must outlive them.
    std::vector<char> note_memory(8);
    Cluster c;
    if (!c.open(kind, 2)) return;
    Registered src(c[0], 4096), dst(c[1], 4096);
    MemoryRegion note_mr;
    REQUIRE(c[0].register_memory(note_memory.data(), note_memory.size(), &note_mr) == Status::Ok);
    // A key nobody registered. The transports treat it as fatal to the
    // connection (tcp closes it, verbs moves the QP to the error state), so
    // the failure shows on the write or on what follows it.
    uint64_t bad_key = c[1].remote_key_for(dst.mr(), 0) ^ 0x5a5a5a5a00ull;
    REQUIRE(c[0].post_write(1, src.data(), 4096, src.mr().local_desc, dst.remote(0), bad_key, true,
                            1, 7) == Status::Ok);
    bool failed = false;
    bool done = c.pump(
        [&] {
            for (auto& s : c.nodes[0].sent) failed = failed || !s.ok;
            if (!failed && c.nodes[0].sent.size() < 64) {
                Status s = c[0].post_send(1, note_memory.data(), 8, note_mr.local_desc, 8);
                failed = s == Status::Error;
            }
            return failed;
        },
        20);
    CHECK(done);
    for (auto& s : c.nodes[0].sent) {
        if (s.ok) continue;
        CHECK(!s.error.empty());
        UNSCOPED_INFO("reported: " << s.error);
    }
    // Nothing was written, and no WriteImm was reported for it.
    CHECK(count_type(c.nodes[1].received, Type::WriteImm) == 0);
    c[0].deregister_memory(note_mr);
}

TEST_CASE("tcp: a key is good only on the connection it was given to", "[ib][driver]") {
    // Node 2's memory, its key given to node 0; node 1 uses that key.
    std::vector<char> note_memory(8);
    Cluster c;
    REQUIRE(c.open("tcp", 3));
    Registered src(c[1], 4096), dst(c[2], 4096), good(c[0], 4096);
    const uint64_t for_node0 = c[2].remote_key_for(dst.mr(), 0);
    CHECK(for_node0 != c[2].remote_key_for(dst.mr(), 1));
    // Keys of successive registrations are not a sequence anyone could guess.
    MemoryRegion a, b;
    REQUIRE(c[2].register_memory(note_memory.data(), 4, &a) == Status::Ok);
    REQUIRE(c[2].register_memory(note_memory.data() + 4, 4, &b) == Status::Ok);
    const uint64_t gap =
        a.remote_key > b.remote_key ? a.remote_key - b.remote_key : b.remote_key - a.remote_key;
    CHECK(gap > 1000);
    c[2].deregister_memory(a);
    c[2].deregister_memory(b);
    // Node 0 writes with its key: fine.
    fill_pattern(good.data(), 4096, 9);
    REQUIRE(c[0].post_write(2, good.data(), 4096, good.mr().local_desc, dst.remote(0), for_node0,
                            true, 3, 0) == Status::Ok);
    REQUIRE(c.pump([&] { return c.nodes[2].received.size() == 1; }));
    CHECK(check_pattern(dst.data(), 4096, 9));
    // Node 1 with node 0's key: its connection breaks, nothing lands.
    std::memset(dst.data(), 0, 4096);
    REQUIRE(c[1].post_write(2, src.data(), 4096, src.mr().local_desc, dst.remote(0), for_node0,
                            true, 4, 7) == Status::Ok);
    bool failed = false;
    MemoryRegion note_mr;
    REQUIRE(c[1].register_memory(note_memory.data(), 8, &note_mr) == Status::Ok);
    CHECK(c.pump(
        [&] {
            for (auto& s : c.nodes[1].sent) failed = failed || !s.ok;
            if (!failed && c.nodes[1].sent.size() < 64)
                failed = c[1].post_send(2, note_memory.data(), 8, note_mr.local_desc, 8) ==
                         Status::Error;
            return failed;
        },
        20));
    CHECK(count_type(c.nodes[2].received, Type::WriteImm) == 1);  // node 0's only
    CHECK(std::all_of(dst.data(), dst.data() + 4096, [](char x) { return x == 0; }));
    c[1].deregister_memory(note_mr);
}

TEST_CASE("an impostor without the job's secret is refused; the real peers connect",
          "[ib][driver][auth]") {
    const char* kind = GENERATE("tcp", "ofi");
    INFO("driver " << kind);
    DriverConfig config;
    config.num_peers = 2;
    config.one_host = true;
    config.secret = mpc::runtime::auth::make_secret();
    std::unique_ptr<Driver> nodes[2];
    std::vector<std::string> addresses;
    for (int i = 0; i < 2; ++i) {
        config.self = i;
        std::string error;
        nodes[i] = open_driver(kind, config, &error);
        INFO(error);
        REQUIRE(nodes[i]);
        addresses.push_back(nodes[i]->local_address());
    }
    // Node 0 as someone without the secret would play it, at node 1's door.
    DriverConfig fake = config;
    fake.self = 0;
    fake.secret = mpc::runtime::auth::make_secret();
    std::string error;
    std::unique_ptr<Driver> impostor = open_driver(kind, fake, &error);
    REQUIRE(impostor);
    Status status[3] = {Status::Error, Status::Error, Status::Ok};
    // Refused, it waits for node 1's side until its connect timeout: short
    // here (the default 60 s made this the suite's slowest unit test).
    setenv("MPC_CONNECT_TIMEOUT", "3", 1);
    std::thread fake_thread([&] { status[2] = impostor->connect_all(addresses); });
    fake_thread.join();  // refused before the real node 0 even tries
    unsetenv("MPC_CONNECT_TIMEOUT");
    std::thread real([&] { status[0] = nodes[0]->connect_all(addresses); });
    status[1] = nodes[1]->connect_all(addresses);
    real.join();
    CHECK(status[2] == Status::Error);
    REQUIRE(status[0] == Status::Ok);
    REQUIRE(status[1] == Status::Ok);
    // The real pair works.
    std::vector<char> buf(64, 'x');
    MemoryRegion mr;
    REQUIRE(nodes[0]->register_memory(buf.data(), buf.size(), &mr) == Status::Ok);
    REQUIRE(nodes[0]->post_send(1, buf.data(), 8, mr.local_desc, 1) == Status::Ok);
    Completion c[4];
    int got = 0;
    for (int round = 0; round < 200000 && got == 0; ++round) {
        nodes[0]->poll_send_cq(c, 4);
        got = nodes[1]->poll_recv_cq(c, 4);
    }
    REQUIRE(got == 1);
    CHECK(c[0].ok);
    CHECK(c[0].length == 8);
    nodes[0]->deregister_memory(mr);
}

TEST_CASE("wait returns on a completion, on interrupt and on timeout", "[ib][driver]") {
    std::string kind = GENERATE(from_range(std::begin(kDriverKinds), std::end(kDriverKinds)));
    INFO("driver " << kind);
    Cluster c;
    if (!c.open(kind, 2)) return;
    using clock = std::chrono::steady_clock;
    auto ms_since = [](clock::time_point t) {
        return std::chrono::duration<double, std::milli>(clock::now() - t).count();
    };
    // Nothing to do: wait sleeps until the timeout. Spurious early returns
    // are allowed, but a wait that never sleeps would make idle VPs spin.
    double longest = 0;
    for (int i = 0; i < 3; ++i) {
        auto t0 = clock::now();
        c[1].wait(100);
        longest = std::max(longest, ms_since(t0));
    }
    CHECK(longest >= 50);
    CHECK(longest < 2000);

    // Completions already queued but not yet polled: wait must not sleep.
    Registered src(c[0], 8);
    for (int i = 0; i < 3; ++i)
        REQUIRE(c[0].post_send(1, src.data(), 8, src.mr().local_desc, i) == Status::Ok);
    Completion one[1];
    int polled = 0;
    for (auto t = clock::now(); polled == 0 && ms_since(t) < 10000;) {
        c[0].poll_send_cq(one, 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        polled = c[1].poll_recv_cq(one, 1);  // takes one, leaves two behind
    }
    REQUIRE(polled == 1);
    REQUIRE(c[1].repost_recv(one[0].buffer) == Status::Ok);
    auto t0 = clock::now();
    c[1].wait(3000);
    CHECK(ms_since(t0) < 1000);
    REQUIRE(c.pump([&] { return c.nodes[1].received.size() == 2; }));
    for (auto& r : c.nodes[1].received) REQUIRE(c[1].repost_recv(r.buffer) == Status::Ok);

    // Interrupt from another thread ends an unbounded wait.
    t0 = clock::now();
    std::thread waker([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        c[1].interrupt();
    });
    c[1].wait(-1);
    waker.join();
    CHECK(ms_since(t0) < 5000);

    // An interrupt before the wait is not lost.
    c[1].interrupt();
    t0 = clock::now();
    c[1].wait(10000);
    CHECK(ms_since(t0) < 5000);

    // A message wakes the receiver; the sender polls (it drives its own queue).
    std::atomic<bool> got{false};
    std::thread receiver([&] {
        Completion r[4];
        auto start = clock::now();
        while (!got && ms_since(start) < 10000) {
            c[1].wait(10000);
            if (c[1].poll_recv_cq(r, 4) > 0) got = true;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    t0 = clock::now();
    REQUIRE(c[0].post_send(1, src.data(), 8, src.mr().local_desc, 1) == Status::Ok);
    Completion s[4];
    while (!got && ms_since(t0) < 10000) c[0].poll_send_cq(s, 4);
    receiver.join();
    CHECK(got);
    CHECK(ms_since(t0) < 5000);
}

TEST_CASE("open_driver selects drivers and explains failures", "[ib][driver]") {
    DriverConfig config;
    std::string error;
    CHECK(open_driver("carrier-pigeon", config, &error) == nullptr);
    CHECK(error.find("carrier-pigeon") != std::string::npos);

    config.provider = "no-such-provider";
    error.clear();
    CHECK(open_driver("ofi", config, &error) == nullptr);
    CHECK(error.find("no-such-provider") != std::string::npos);

    // A provider that cannot carry the job's handshake is refused, with why.
    config.provider = "sockets";
    error.clear();
    CHECK(open_driver("ofi", config, &error) == nullptr);
    CHECK(error.find("cannot carry the job's connection handshake") != std::string::npos);

    config.provider.clear();
    auto driver = open_driver("auto", config, &error);
    INFO(error);
    REQUIRE(driver != nullptr);
    CHECK(std::string(driver->name()) == (rdma_device_present() ? "verbs" : "tcp"));
    // A job of one node process has nothing to connect.
    CHECK(driver->connect_all({driver->local_address()}) == Status::Ok);
}

TEST_CASE("a peer that goes away is reported as a lost connection", "[ib][driver]") {
    // ofi over tcp and our tcp: the verbs driver does not watch its connections yet.
    std::string kind = GENERATE("ofi", "tcp");
    INFO("driver " << kind);
    Cluster c;
    if (!c.open(kind, 3)) return;
    auto* watch = dynamic_cast<ConnectionWatch*>(&c[0]);
    REQUIRE(watch != nullptr);
    int peer = -1;
    std::string why;
    CHECK_FALSE(watch->connection_lost(&peer, &why));  // all connected, nothing to say
    // Node 2 closes its endpoints (as a process that dies would): node 0,
    // sleeping in wait() with nothing posted, must wake up and name it.
    c.nodes[2].driver.reset();
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    bool lost = false;
    while (!lost && clock::now() - t0 < std::chrono::seconds(10)) {
        c[0].wait(2000);
        lost = watch->connection_lost(&peer, &why);
    }
    const double took = std::chrono::duration<double>(clock::now() - t0).count();
    REQUIRE(lost);
    CHECK(peer == 2);
    CHECK_FALSE(why.empty());
    CHECK(took < 1.0);  // woken by the event, not by wait()'s timeout
    CHECK_FALSE(watch->connection_lost(&peer, &why));  // said once
    // The connection to node 1 is unaffected.
    Registered msg(c[0], 16);
    REQUIRE(c[0].post_send(1, msg.data(), 16, msg.mr().local_desc, 1) == Status::Ok);
    c.nodes.pop_back();  // (the pump polls every node left)
    REQUIRE(c.pump([&] { return c.nodes[1].received.size() == 1; }));
}
