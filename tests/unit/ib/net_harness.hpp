// Several Networks in one process over the fake fabric, with a small matching
// layer standing in for MPI's, so the protocols can be tested deterministically.
#pragma once

#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "fake_fabric.hpp"
#include "ib/network.hpp"

namespace mpc::ib::test {

constexpr int kAny = -1;

struct TestRecv {
    MatchBits want;              // source/tag may be kAny
    std::vector<char> buf;
    size_t capacity = 0;
    bool noncontiguous = false;  // deliver through unpack into buf
    bool done = false;
    MatchBits got;
    size_t bytes = 0;
};

struct TestSend {
    std::vector<char> data;
    bool done = false;
};

class Cluster {
    struct NodeCtx;

public:
    // nodes node processes with ranks_per_node ranks each; world rank r lives
    // on node r / ranks_per_node.
    Cluster(int nodes, int ranks_per_node, NetworkConfig config, uint32_t recv_buffers = 64,
            size_t buffer_size = 4096, uint32_t queue_depth = 64)
        : nodes_(nodes), rpn_(ranks_per_node), ranks_(static_cast<size_t>(nodes * ranks_per_node)) {
        config.buffer_size = buffer_size;
        config.recv_buffers = recv_buffers;
        config.send_buffers = 32;
        std::vector<std::string> addr(static_cast<size_t>(nodes), "fake");
        for (int n = 0; n < nodes; ++n) {
            DriverConfig dc;
            dc.self = n;
            dc.num_peers = nodes;
            dc.recv_buffer_size = buffer_size;
            dc.recv_buffers = recv_buffers;
            dc.send_queue_depth = queue_depth;
            auto drv = fabric_.open(dc);
            drivers_.push_back(drv.get());
            NetworkLayout layout;
            layout.node_id = n;
            layout.num_nodes = nodes;
            for (int r = 0; r < nodes * ranks_per_node; ++r) {
                layout.node_of.push_back(r / ranks_per_node);
                layout.local_of.push_back(r % ranks_per_node);
            }
            layout.local_numa.assign(static_cast<size_t>(ranks_per_node), 0);
            Upcalls up;
            ctxs_.push_back(std::make_unique<NodeCtx>(NodeCtx{this, n}));
            up.ctx = ctxs_.back().get();
            up.match = &Cluster::match;
            std::string error;
            auto net = Network::start_with_driver(std::move(drv), config, layout, up, addr, &error);
            if (!net) throw std::runtime_error(error);
            nets_.push_back(std::move(net));
        }
    }
    // Together, as node processes do: each waits for the others' Bye.
    ~Cluster() {
        std::vector<std::thread> closing;
        for (auto& n : nets_) closing.emplace_back([&n] { n->shutdown(); });
        for (auto& t : closing) t.join();
    }

    Network& net(int node) { return *nets_[static_cast<size_t>(node)]; }
    FakeDriver& driver(int node) { return *drivers_[static_cast<size_t>(node)]; }
    int node_of(int world) const { return world / rpn_; }

    void send(int src, int dst, MatchBits bits, TestSend* s, bool sync = false) {
        SendSource source;
        source.contiguous = s->data.data();
        source.bytes = s->data.size();
        source.complete = [](void* ctx) { static_cast<TestSend*>(ctx)->done = true; };
        source.ctx = s;
        bits.source = src;
        net(node_of(src)).send(src, dst, bits, source, sync);
    }

    void post(int world, TestRecv* r) {
        Rank& rk = ranks_[static_cast<size_t>(world)];
        std::unique_lock<std::mutex> g(rk.mutex);
        for (auto it = rk.unexpected.begin(); it != rk.unexpected.end(); ++it) {
            if (!matches(r->want, it->bits)) continue;
            Unexpected* u = it->msg;
            rk.unexpected.erase(it);
            g.unlock();
            net(node_of(world)).deliver_unexpected(u, target(r));
            return;
        }
        rk.posted.push_back(r);
    }

    // Polls every node (as rank `caller` of each, -1 for none) until pred() or
    // the step budget is spent; returns pred().
    bool run_until(const std::function<bool()>& pred, int caller = -1, int steps = 2'000'000) {
        for (int i = 0; i < steps; ++i) {
            if (pred()) return true;
            for (auto& n : nets_) n->poll(caller);
        }
        return pred();
    }

    static RecvTarget target(TestRecv* r) {
        RecvTarget t;
        t.capacity = r->capacity;
        if (!r->noncontiguous) t.contiguous = r->buf.data();
        t.unpack = [](void* ctx, size_t off, const void* data, size_t len) {
            auto* q = static_cast<TestRecv*>(ctx);
            memcpy(q->buf.data() + off, data, len);
        };
        t.complete = [](void* ctx, const MatchBits& bits, size_t bytes) {
            auto* q = static_cast<TestRecv*>(ctx);
            q->got = bits;
            q->bytes = bytes;
            q->done = true;
        };
        t.ctx = r;
        return t;
    }

private:
    struct NodeCtx {
        Cluster* cluster;
        int node;
    };
    struct Pending {
        MatchBits bits;
        Unexpected* msg;
    };
    struct Rank {
        std::mutex mutex;
        std::deque<TestRecv*> posted;
        std::deque<Pending> unexpected;
    };

    static bool matches(const MatchBits& want, const MatchBits& got) {
        return want.context == got.context && (want.source == kAny || want.source == got.source) &&
               (want.tag == kAny || want.tag == got.tag);
    }

    static bool match(void* ctx, int local, const MatchBits& bits, size_t, Unexpected* msg,
                      RecvTarget* t) {
        auto* nc = static_cast<NodeCtx*>(ctx);
        Rank& rk = nc->cluster->ranks_[static_cast<size_t>(nc->node * nc->cluster->rpn_ + local)];
        std::lock_guard<std::mutex> g(rk.mutex);
        for (auto it = rk.posted.begin(); it != rk.posted.end(); ++it) {
            if (!matches((*it)->want, bits)) continue;
            *t = target(*it);
            rk.posted.erase(it);
            return true;
        }
        rk.unexpected.push_back(Pending{bits, msg});
        return false;
    }

    int nodes_, rpn_;
    std::vector<std::unique_ptr<NodeCtx>> ctxs_;
    FakeFabric fabric_;
    std::vector<FakeDriver*> drivers_;
    std::vector<std::unique_ptr<Network>> nets_;
    std::vector<Rank> ranks_;
};

inline std::vector<char> pattern(size_t n, int seed) {
    std::vector<char> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed) * 7) & 0xff);
    return v;
}

}  // namespace mpc::ib::test
