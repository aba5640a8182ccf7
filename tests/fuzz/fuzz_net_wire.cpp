// Fuzz target: the network's receive path (ib/src/recv_path.cpp) facing a
// corrupted or hostile peer. Node process 1 (world ranks 2 and 3) runs a real
// Network over the fake fabric of the unit tests, with real traffic in flight
// (eager, fragmented and rendezvous sends to rank 0, receives posted by its
// ranks); "node process 0" is the attacker: the fuzzer's packets land in node
// 1's receive pool as if node 0 had sent them. Property (ib/src/wire.hpp): no
// packet crashes the node process, reads or writes outside its buffers, or
// makes it allocate without bound.
//
// Input: records [op][len][bytes...] (len: one byte, times 16 for op 0-1):
//   0  a raw packet: the bytes as they are
//   1  a packet with a plausible header: type, nodes and ranks forced into
//      range (the rest, payload included, as given)
//   2  rank 2 or 3 posts a receive (context, source, tag, capacity from bytes)
//   3  node 1 polls, as rank 2, rank 3 or an idle VP
//   4  an answer (CTS) to the last rendezvous request node 1 sent: length,
//      receive id and place in node 0's registered window from the bytes
//      (a CTS with a key node 0 never gave makes node 1's write fail, which
//      ends the job by design); one byte more may ask for the data as
//      messages instead (kCtsNoRdma: node 1's send falls back to copies)
//   5  rendezvous data (RndvData) for the last CTS node 1 sent: receiving
//      rank, offset and payload from the bytes
// (Ops 5 and type RndvData came with the registration fallback: saved
// inputs from before it replay with another meaning, still without crash.)
// A runtime::fatal() (the job ending) aborts, so that the fuzzer sees it.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "fake_fabric.hpp"
#include "ib/network.hpp"
#include "runtime/log.hpp"
#include "wire.hpp"

using namespace mpc::ib;
using mpc::ib::test::FakeDriver;
using mpc::ib::test::FakeFabric;

// Leak checking off: an input ends with the network torn down mid-protocol,
// and the operations still in flight (a fragmented message half received,
// say) are not freed then; that is no leak of a running node process.
extern "C" const char* __asan_default_options() {
    return "detect_leaks=0";
}

namespace {

constexpr size_t kBuffer = 4096;
constexpr int kAnySource = -1, kAnyTag = -1;

struct Recv {
    MatchBits want;
    std::vector<char> buf;
    bool done = false;
};

struct Harness {
    // Declared so that the network goes before the memory it may still
    // reference (receive buffers, send data) and before the fabric.
    FakeFabric fabric;
    std::unique_ptr<FakeDriver> attacker;  // node 0's driver, driven by hand
    std::deque<Recv> recvs;                // stable addresses
    std::deque<std::vector<char>> send_data;
    std::unique_ptr<Network> net;  // node 1
    std::vector<Recv*> posted[2];
    std::vector<std::pair<MatchBits, Unexpected*>> unexpected[2];
    Header last_rts{};
    bool have_rts = false;
    Header last_cts{};
    bool have_cts = false;
    std::vector<char> window = std::vector<char>(1 << 20);  // node 0's memory for writes
    MemoryRegion window_mr{};

    static bool matches(const MatchBits& want, const MatchBits& got) {
        return want.context == got.context &&
               (want.source == kAnySource || want.source == got.source) &&
               (want.tag == kAnyTag || want.tag == got.tag);
    }
    static RecvTarget target(Recv* r) {
        RecvTarget t;
        t.contiguous = r->buf.data();
        t.capacity = r->buf.size();
        t.unpack = [](void* ctx, size_t off, const void* data, size_t len) {
            auto* q = static_cast<Recv*>(ctx);
            if (off > q->buf.size() || len > q->buf.size() - off) __builtin_trap();
            memcpy(q->buf.data() + off, data, len);
        };
        t.complete = [](void* ctx, const MatchBits&, size_t) {
            static_cast<Recv*>(ctx)->done = true;
        };
        t.ctx = r;
        return t;
    }
    static bool match(void* ctx, int local, const MatchBits& bits, size_t, Unexpected* msg,
                      RecvTarget* t) {
        auto* h = static_cast<Harness*>(ctx);
        if (local < 0 || local > 1) __builtin_trap();  // the network chose a rank it has not
        auto& posted = h->posted[local];
        for (auto it = posted.begin(); it != posted.end(); ++it) {
            if (!matches((*it)->want, bits)) continue;
            *t = target(*it);
            posted.erase(it);
            return true;
        }
        h->unexpected[local].emplace_back(bits, msg);
        return false;
    }

    Harness() {
        mpc::runtime::set_job_killer([](int, const char*) { abort(); });
        DriverConfig dc;
        dc.num_peers = 2;
        dc.recv_buffer_size = kBuffer;
        dc.recv_buffers = 64;
        dc.send_queue_depth = 64;
        dc.self = 0;
        attacker = fabric.open(dc);
        attacker->register_memory(window.data(), window.size(), &window_mr);
        dc.self = 1;
        auto driver = fabric.open(dc);
        NetworkConfig config;
        config.mode = ProgressMode::Collaborative;
        config.eager_limit = 1024;
        config.rendezvous_threshold = 16384;
        config.buffer_size = kBuffer;
        config.recv_buffers = 64;
        config.send_buffers = 32;
        config.rcache_max_bytes = 16 << 20;
        NetworkLayout layout;
        layout.node_id = 1;
        layout.num_nodes = 2;
        layout.node_of = {0, 0, 1, 1};
        layout.local_of = {0, 1, 0, 1};
        layout.local_numa = {0, 0};
        Upcalls up;
        up.match = &Harness::match;
        up.ctx = this;
        std::string error;
        net = Network::start_with_driver(std::move(driver), config, layout, up, {"a", "b"}, &error);
        if (!net) __builtin_trap();
        // Real traffic: rank 2 sends to rank 0 with each protocol.
        for (size_t n : {100, 5000, 40000}) {
            send_data.emplace_back(n, 'x');
            SendSource s;
            s.contiguous = send_data.back().data();
            s.bytes = n;
            s.complete = [](void*) {};
            net->send(2, 0, MatchBits{4, 2, 9}, s, false);
        }
        pump();
    }

    // Messages no receive matched are the harness's to drop (as a job's
    // leftovers at the end): LeakSanitizer checks the network frees the rest.
    ~Harness() {
        for (auto& list : unexpected)
            for (auto& [bits, msg] : list) net->drop_unexpected(msg);
    }

    // What node 1 sent to node 0 is consumed (and the last RTS remembered);
    // node 0's completions of the injected packets are dropped.
    void pump() {
        Completion c[16];
        int n;
        while ((n = attacker->poll_recv_cq(c, 16)) > 0) {
            for (int i = 0; i < n; ++i) {
                if (c[i].type == Completion::Type::Recv) {
                    const auto* h = static_cast<const Header*>(attacker->recv_buffer(c[i].buffer));
                    if (c[i].length >= sizeof(Header) && h->type == MsgType::Rts) {
                        last_rts = *h;
                        have_rts = true;
                    }
                    if (c[i].length >= sizeof(Header) && h->type == MsgType::Cts) {
                        last_cts = *h;
                        have_cts = true;
                    }
                    attacker->repost_recv(c[i].buffer);
                }
            }
        }
        while (attacker->poll_send_cq(c, 16) > 0) {
        }
    }

    void inject(const void* packet, size_t len) {
        attacker->post_send(1, packet, std::min(len, kBuffer), nullptr, 0);
        pump();
    }

    void poll(int caller) {
        for (int i = 0; i < 4; ++i) net->poll(caller);
        pump();
    }

    void post(int local, const uint8_t* b, size_t len) {
        uint8_t v[8] = {};
        memcpy(v, b, std::min<size_t>(len, sizeof(v)));
        recvs.emplace_back();
        Recv* r = &recvs.back();
        r->want = MatchBits{
            static_cast<uint32_t>(v[0] & 7),
            v[1] & 1 ? kAnySource : static_cast<int32_t>(v[1] >> 1 & 3),
            v[2] & 1 ? kAnyTag : static_cast<int32_t>(v[2] >> 1),
        };
        r->buf.assign(static_cast<size_t>(v[3]) << (v[4] & 15), '\0');
        auto& unexp = unexpected[local];
        for (auto it = unexp.begin(); it != unexp.end(); ++it) {
            if (!matches(r->want, it->first)) continue;
            Unexpected* u = it->second;
            unexp.erase(it);
            net->deliver_unexpected(u, target(r));
            pump();
            return;
        }
        posted[local].push_back(r);
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto h = std::make_unique<Harness>();
    size_t at = 0;
    while (at + 2 <= size) {
        const uint8_t op = data[at] % 6;
        size_t len = data[at + 1];
        if (op <= 1) len *= 16;
        len = std::min(len, size - at - 2);
        const uint8_t* b = data + at + 2;
        at += 2 + len;
        switch (op) {
            case 0:
                h->inject(b, len);
                break;
            case 1: {
                std::vector<uint8_t> p(std::max(len, sizeof(Header)), 0);
                memcpy(p.data(), b, len);
                Header hd;
                memcpy(&hd, p.data(), sizeof(hd));
                hd.type = static_cast<MsgType>(1 + p[0] % 7);
                hd.src_node = 0;
                hd.dst_world = 2 + (p[1] & 1);
                hd.src_world = p[2] & 1;
                if (hd.type == MsgType::Eager && (p[3] & 1)) hd.bytes = p.size() - sizeof(Header);
                memcpy(p.data(), &hd, sizeof(hd));
                h->inject(p.data(), p.size());
                break;
            }
            case 2:
                h->post(len ? b[0] & 1 : 0, b, len);
                break;
            case 3:
                h->poll(len ? (b[0] % 3) - 1 : -1);
                break;
            case 4: {
                if (!h->have_rts) break;
                uint64_t v[3] = {};
                memcpy(v, b, std::min(len, sizeof(v)));
                Header cts{};
                cts.type = MsgType::Cts;
                cts.src_node = 0;
                cts.dst_world = h->last_rts.src_world;
                cts.src_world = -1;
                cts.msg_id = h->last_rts.msg_id;
                cts.length = v[0] & 0xfffff;
                cts.offset = v[1];  // node 0's receive id, echoed in the write's immediate
                cts.addr = h->window_mr.remote_base + (v[2] % (h->window.size() - cts.length));
                cts.rkey = h->window_mr.remote_key;
                if (len > sizeof(v) && (b[sizeof(v)] & 1)) cts.flags = kCtsNoRdma;
                h->inject(&cts, sizeof(cts));
                break;
            }
            case 5: {
                if (!h->have_cts) break;
                std::vector<uint8_t> p(sizeof(Header) + len, 0);
                Header hd{};
                hd.type = MsgType::RndvData;
                hd.src_node = 0;
                hd.src_world = h->last_cts.dst_world;
                hd.dst_world = 2 + (len ? b[0] & 1 : 0);
                hd.msg_id = h->last_cts.offset;
                uint32_t offset = 0;
                if (len > 4) memcpy(&offset, b + 1, 4);
                hd.offset = offset & 0xfffff;
                hd.bytes = h->last_cts.length;
                memcpy(p.data(), &hd, sizeof(hd));
                memcpy(p.data() + sizeof(hd), b, len);
                h->inject(p.data(), p.size());
                break;
            }
        }
    }
    h->poll(-1);
    return 0;
}
