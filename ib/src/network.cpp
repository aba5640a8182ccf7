// Network set-up, the poll function, idle blocking and shutdown.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "fault_plan.hpp"
#include "network_impl.hpp"
#include "runtime/bootstrap.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/tools.hpp"
#include "runtime/topology.hpp"

namespace mpc::ib {
namespace {

constexpr int kProcessBatch = 64;            // work requests processed per rank per poll
constexpr unsigned kCheckPeriodIdle = 64;    // drains between connection checks, when idle
constexpr unsigned kCheckPeriodBusy = 4096;  // and under traffic
constexpr int64_t kLostConnectionGraceNs = 500'000'000;  // see check_connections

// Ranks of this node sorted for stealing by `local`: same NUMA node first, then
// the other NUMA nodes nearest first (the caller gives NUMA distances by order).
std::vector<int> steal_order(int local, const std::vector<int>& numa_of,
                             const std::vector<int>& numa_rank) {
    std::vector<int> order;
    for (int i = 0; i < static_cast<int>(numa_of.size()); ++i)
        if (i != local) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return numa_rank[static_cast<size_t>(numa_of[static_cast<size_t>(a)])] <
               numa_rank[static_cast<size_t>(numa_of[static_cast<size_t>(b)])];
    });
    return order;
}

// MPC_NET_FAULT=hold: waits for the file MPC_NET_HOLD_FILE to appear (at
// most MPC_CONNECT_TIMEOUT).
void hold_until_file() {
    const char* path = runtime::env::get("MPC_NET_HOLD_FILE");
    if (!path) runtime::fatal("MPC_NET_FAULT=hold needs MPC_NET_HOLD_FILE");
    const double limit = runtime::env::get_seconds("MPC_CONNECT_TIMEOUT", 60.0);
    const int64_t deadline = runtime::now_ns() + static_cast<int64_t>(limit * 1e9);
    while (access(path, F_OK) != 0 && runtime::now_ns() < deadline) usleep(10000);
}

}  // namespace

NetworkConfig NetworkConfig::from_env() {
    namespace env = runtime::env;
    NetworkConfig c;
    c.driver = env::get("MPC_NET") ? env::get("MPC_NET") : "auto";
    if (c.driver != "auto" && c.driver != "ofi" && c.driver != "verbs" && c.driver != "tcp")
        runtime::fatal("MPC_NET=%s is not valid: expected auto, ofi, verbs or tcp",
                       c.driver.c_str());
    c.mode = static_cast<ProgressMode>(
        env::get_choice("MPC_PROGRESS", static_cast<int>(ProgressMode::Collaborative),
                        {{"wait", static_cast<int>(ProgressMode::Wait)},
                         {"collaborative", static_cast<int>(ProgressMode::Collaborative)},
                         {"thread", static_cast<int>(ProgressMode::Thread)}}));
    c.thread_wait = static_cast<ThreadWait>(
        env::get_choice("MPC_PROGRESS_THREAD", static_cast<int>(ThreadWait::Hybrid),
                        {{"hybrid", static_cast<int>(ThreadWait::Hybrid)},
                         {"poll", static_cast<int>(ThreadWait::Poll)},
                         {"block", static_cast<int>(ThreadWait::Block)}}));
    c.thread_realtime = env::get_bool("MPC_PROGRESS_THREAD_RT", false);
    c.eager_limit = env::get_size("MPC_EAGER_LIMIT", 0);
    c.rendezvous_threshold = env::get_size("MPC_RNDV_THRESHOLD", 0);
    c.buffer_size = env::get_size("MPC_NET_BUFFER", 0);
    c.recv_buffers = static_cast<uint32_t>(env::get_int("MPC_NET_RECV_BUFFERS", 0, 0, 1 << 20));
    c.send_buffers = static_cast<uint32_t>(env::get_int("MPC_NET_SEND_BUFFERS", 0, 0, 1 << 20));
    c.write_chunk = env::get_size("MPC_NET_WRITE_CHUNK", 0);
    c.rcache_max_bytes = env::get_size("MPC_RCACHE_MAX", 256u << 20);
    c.stats = env::get_bool("MPC_STATS", false);
    return c;
}

RankNetStats RankNetCounters::snapshot() const {
    auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    RankNetStats s;
    for (int p = 0; p < RankNetStats::kPaths; ++p) {
        s.sent_msgs[p] = get(sent_msgs[p]);
        s.sent_bytes[p] = get(sent_bytes[p]);
    }
    s.processed_self = get(processed_self);
    s.stolen_same_numa = get(stolen_same_numa);
    s.stolen_other_numa = get(stolen_other_numa);
    s.rndv_count = get(rndv_count);
    s.rndv_req_to_ack_ns = get(rndv_req_to_ack_ns);
    s.rndv_req_to_ack_max_ns = get(rndv_req_to_ack_max_ns);
    s.rndv_matched = get(rndv_matched);
    s.rndv_matching_ns = get(rndv_matching_ns);
    s.wr_received = get(wr_received);
    s.wr_timed = get(wr_timed);
    s.wr_reception_ns = get(wr_reception_ns);
    return s;
}

bool NetworkImpl::set_write_chunk(size_t bytes) {
    if (bytes < 4096 || bytes > kMaxWrite) return false;
    write_chunk_.store(bytes, std::memory_order_relaxed);
    return true;
}

NetworkImpl::NetworkImpl(std::unique_ptr<Driver> driver, const NetworkConfig& config,
                         const NetworkLayout& layout, const Upcalls& upcalls)
    : driver_(std::move(driver)),
      watch_(dynamic_cast<ConnectionWatch*>(driver_.get())),
      config_(config),
      layout_(layout),
      upcalls_(upcalls) {}

NetworkImpl::~NetworkImpl() {
    network_ended(this);
    stopping_.store(true);
    if (progress_thread_.joinable()) {
        driver_->interrupt();
        progress_thread_.join();
    }
    // Operations still in flight (a job that ended with messages under way).
    for (SendOp* op : send_ops_.take_all()) {
        delete[] op->packed;
        delete op;
    }
    for (RecvOp* op : recv_ops_.take_all()) {
        delete[] op->bounce;
        delete op;
    }
    for (RmaOp* op : rma_ops_.take_all()) delete op;
    for (auto& s : slots_) {
        for (auto& [key, wr] : s->early) delete wr;
        for (auto& [key, op] : s->fragments)
            if (op->has_target) delete op;  // else its Unexpected owns it (drop_unexpected)
    }
    set_global_rcache(nullptr);
    rcache_.reset();  // (drops the registrations those operations held)
    if (send_mr_.handle) driver_->deregister_memory(send_mr_);
    if (atomic_mr_.handle) driver_->deregister_memory(atomic_mr_);
    for (auto& s : slots_) {
        for (WorkRequest* wr = s->head; wr;) {
            WorkRequest* next = wr->next;
            delete wr;
            wr = next;
        }
    }
}

bool NetworkImpl::init(const std::vector<std::string>& addresses, std::string* error) {
    buffer_size_ = config_.buffer_size;
    pool_size_ = config_.recv_buffers;
    send_buffers_ = config_.send_buffers;
    eager_limit_ = std::min(config_.eager_limit, buffer_size_ - sizeof(Header));
    frag_payload_ = buffer_size_ - sizeof(Header);
    rndv_threshold_ = std::max(config_.rendezvous_threshold, eager_limit_);
    size_t chunk = config_.write_chunk ? config_.write_chunk : driver_->write_chunk();
    if (!chunk || chunk > kMaxWrite) chunk = kMaxWrite;
    write_chunk_.store(chunk, std::memory_order_relaxed);

    const int nodes = layout_.num_nodes;
    const uint32_t share = pool_size_ / static_cast<uint32_t>(std::max(1, nodes - 1));
    if (nodes > 1 && share < 8) {
        *error = "the receive pool (" + std::to_string(pool_size_) + " buffers) is too small for " +
                 std::to_string(nodes) + " node processes (MPC_NET_RECV_BUFFERS)";
        return false;
    }
    for (int n = 0; n < nodes; ++n) {
        auto p = std::make_unique<Peer>();
        p->reserve = 2;
        p->credits = static_cast<int>(share) - p->reserve;
        peers_.push_back(std::move(p));
    }

    // Ranks, their NUMA nodes and steal orders.
    const size_t nlocal = layout_.local_numa.size();
    int max_numa = 0;
    for (int n : layout_.local_numa) max_numa = std::max(max_numa, n);
    for (size_t i = 0; i < nlocal; ++i) {
        auto s = std::make_unique<RankSlot>();
        s->numa = layout_.local_numa[i];
        s->expected_seq.assign(layout_.node_of.size(), 0);
        s->next_seq = std::vector<std::atomic<uint32_t>>(layout_.node_of.size());
        // Position of every NUMA node in hwloc's distance order from ours.
        std::vector<int> numa_rank(static_cast<size_t>(max_numa + 1), max_numa + 1);
        const auto& topo = runtime::Topology::instance();
        if (s->numa < topo.num_numa_nodes()) {
            const auto& order = topo.numa_order_from(s->numa);
            for (size_t k = 0; k < order.size(); ++k)
                if (order[k] <= max_numa)
                    numa_rank[static_cast<size_t>(order[k])] = static_cast<int>(k);
        }
        numa_rank[static_cast<size_t>(s->numa)] = 0;
        s->steal_order = steal_order(static_cast<int>(i), layout_.local_numa, numa_rank);
        slots_.push_back(std::move(s));
    }

    // Send buffers: one registered slab.
    send_slab_.reset(new char[static_cast<size_t>(send_buffers_) * buffer_size_]);
    if (driver_->register_memory(send_slab_.get(),
                                 static_cast<size_t>(send_buffers_) * buffer_size_,
                                 &send_mr_) != Status::Ok) {
        *error = "cannot register the send buffers";
        return false;
    }
    for (uint32_t i = send_buffers_; i > 0; --i) send_free_.push_back(i - 1);
    if (!init_rma(error)) return false;

    Driver* d = driver_.get();
    const FaultPlan faults = fault_plan_from_env(layout_.node_id);
    const bool refuse = faults.refuse_registrations;
    rcache_ = std::make_unique<RegistrationCache>(
        [d, refuse](void* addr, size_t len, MemoryRegion* out) {
            return !refuse && d->register_memory(addr, len, out) == Status::Ok;
        },
        [d](MemoryRegion& mr) { d->deregister_memory(mr); }, config_.rcache_max_bytes);
    set_global_rcache(rcache_.get());

    if (faults.hold_connect) hold_until_file();
    if (nodes > 1 && driver_->connect_all(addresses) != Status::Ok) {
        *error =
            std::string("the ") + driver_->name() + " driver could not connect the node processes";
        return false;
    }

    if (config_.mode == ProgressMode::Thread) {
        progress_thread_ = std::thread([this] {
            if (config_.thread_realtime) {
                sched_param p{};
                p.sched_priority = sched_get_priority_min(SCHED_FIFO);
                if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) != 0)
                    runtime::warn(
                        "the progress thread cannot get real-time priority (not permitted); it "
                        "runs at normal priority");
            }
            progress_thread_loop();
        });
    }
    return true;
}

void NetworkImpl::progress_thread_loop() {
    int64_t busy_at = runtime::now_ns();  // the last activity or nudge
    while (!stopping_.load(std::memory_order_acquire)) {
        bool did = poll(-1);
        if (upcalls_.thread_poll) did |= upcalls_.thread_poll(upcalls_.ctx);
        const ThreadWait how = config_.thread_wait;
        if (did && how == ThreadWait::Hybrid) busy_at = runtime::now_ns();
        if (did) continue;
        if (how == ThreadWait::Block) {
            driver_->wait(kThreadSleepMs);
            continue;
        }
        if (how == ThreadWait::Hybrid) {
            const int64_t now = runtime::now_ns();
            if (nudged_.load(std::memory_order_relaxed) && nudged_.exchange(false)) busy_at = now;
            if (now - busy_at >= config_.thread_grace_ns) {
                // Asleep first, then look at the nudges (Dekker with nudge()).
                thread_asleep_.store(true, std::memory_order_seq_cst);
                if (!nudged_.load(std::memory_order_seq_cst)) driver_->wait(kThreadSleepMs);
                thread_asleep_.store(false, std::memory_order_seq_cst);
                continue;  // a wake-up shows as work or a nudge at the next look
            }
        }
        // Polling: give the core to anyone else who wants it (a woken VP
        // sharing it runs at once, not after our time slice).
        sched_yield();
    }
}

void NetworkImpl::nudge() {
    if (config_.mode != ProgressMode::Thread || config_.thread_wait != ThreadWait::Hybrid) return;
    if (!nudged_.load(std::memory_order_relaxed)) nudged_.store(true, std::memory_order_seq_cst);
    if (thread_asleep_.load(std::memory_order_seq_cst) && thread_asleep_.exchange(false))
        driver_->interrupt();
}

// Send completions only free send buffers unless a write is awaited: reap
// them in batches.
constexpr int kSendReapAt = 16;

bool NetworkImpl::drain_cqs() {
    if (!cq_lock_.try_lock()) return false;
    Completion* c = batch_;
    int n = driver_->poll_recv_cq(c, kBatch);
    for (int i = 0; i < n; ++i) {
        if (c[i].type == Completion::Type::WriteImm)
            dispatch_write_imm(c[i]);
        else
            dispatch_recv(c[i]);
    }
    // A broken connection shows on the event queue, not in the CQs: a rank
    // waiting for that peer alone would never hear of it. Asked every 64th
    // drain that found nothing, every 4096th under constant traffic (it may
    // cost a lock or a system call in the driver: not on every poll).
    const unsigned period = n == 0 ? kCheckPeriodIdle : kCheckPeriodBusy;
    if (++drains_ % period == 0) check_connections();
    // Every CQ read may cost a system call (tcp runs its progress engine
    // there, and each read of the send CQ re-arms a signal that the next send
    // then writes: two system calls per message). So the send CQ is read only
    // with sends in flight: once a few have piled up, every 64th drain, or at
    // once when the recv CQ is idle and someone waits for a send completion
    // (a rendezvous send for its RDMA write, a queued message for a buffer).
    int m = 0;
    const int inflight = inflight_.load(std::memory_order_relaxed);
    const bool awaited = writes_inflight_.load(std::memory_order_relaxed) > 0 ||
                         queued_.load(std::memory_order_relaxed) > 0;
    if (inflight > 0 && (inflight >= kSendReapAt || ++send_cq_turn_ % 64 == 0 ||
                         (n == 0 && awaited))) {
        m = driver_->poll_send_cq(c, kBatch);
        for (int i = 0; i < m; ++i) handle_send_completion(c[i]);
    }
    cq_lock_.unlock();
    return n + m > 0;
}

void NetworkImpl::check_connections() {
    int peer = -1;
    std::string why;
    // Once shut down, peers close their ends as they finish: that is no fault.
    if (!watch_ || !watch_->connection_lost(&peer, &why) || stopping_.load()) return;
    // Nor while we shut down: a peer closes only once it has our Bye (or it
    // died, and the launcher ends the job).
    if (closing_.load()) {
        peers_[static_cast<size_t>(peer)]->done.store(true, std::memory_order_release);
        return;
    }
    // A peer that died or ended the job is followed at once by the launcher
    // ending this node process too, with the first cause (and, under
    // MPC_HANG_TIMEOUT, this node's report of its ranks): give it a moment
    // before ending the job on our own. The connection itself is gone either way.
    runtime::debug("network: lost the connection to node process %d (%s)", peer, why.c_str());
    const int64_t until = runtime::now_ns() + kLostConnectionGraceNs;
    while (runtime::now_ns() < until && !stopping_.load()) usleep(10000);
    runtime::fatal("network: lost the connection to node process %d (%s), ending the job", peer,
                   why.c_str());
}

bool NetworkImpl::poll(int caller, bool steal, int thief_numa) {
    const ProgressMode mode = config_.mode;
    // In thread mode the progress thread alone touches the network.
    if (mode == ProgressMode::Thread && caller >= 0) return false;
    bool did = drain_cqs();
    if (queued_.load(std::memory_order_relaxed) > 0) flush_all_peers();
    bool own = false;
    if (caller >= 0) own = process_rank(caller, caller, slots_[static_cast<size_t>(caller)]->numa);
    did |= own;
    steal = steal &&
            (mode == ProgressMode::Collaborative || (mode == ProgressMode::Thread && caller < 0));
    if (!steal || own) return did;
    if (caller >= 0) {
        RankSlot& me = *slots_[static_cast<size_t>(caller)];
        for (int v : me.steal_order) did |= process_rank(v, caller, me.numa);
    } else if (thief_numa >= 0) {
        // An idle VP: the ranks of its NUMA node first, then the others.
        for (int pass = 0; pass < 2; ++pass)
            for (size_t v = 0; v < slots_.size(); ++v)
                if ((slots_[v]->numa == thief_numa) == (pass == 0))
                    did |= process_rank(static_cast<int>(v), -1, thief_numa);
    } else {
        for (size_t v = 0; v < slots_.size(); ++v)
            did |= process_rank(static_cast<int>(v), -1, slots_[v]->numa);
    }
    return did;
}

bool NetworkImpl::process_rank(int local, int thief, int thief_numa) {
    RankSlot& s = *slots_[static_cast<size_t>(local)];
    if (s.pending.load(std::memory_order_acquire) == 0) return false;
    if (!s.processing.try_lock()) return false;
    int n = 0;
    while (n < kProcessBatch) {
        s.list_lock.lock();
        WorkRequest* wr = s.head;
        if (wr) {
            s.head = wr->next;
            if (!s.head) s.tail = nullptr;
        }
        s.list_lock.unlock();
        if (!wr) break;
        s.pending.fetch_sub(1, std::memory_order_relaxed);
        if (thief == local)
            RankNetCounters::add(s.stats.processed_self, 1);
        else if (thief_numa == s.numa)
            RankNetCounters::add(s.stats.stolen_same_numa, 1);
        else
            RankNetCounters::add(s.stats.stolen_other_numa, 1);
        if (wr->dispatched_ns) {  // timed when dispatched
            RankNetCounters::add(s.stats.wr_timed, 1);
            RankNetCounters::add(s.stats.wr_reception_ns,
                                 static_cast<uint64_t>(runtime::now_ns() - wr->dispatched_ns));
        }
        RankNetCounters::add(s.stats.wr_received, 1);
        process_in_order(local, wr);
        ++n;
    }
    s.processing.unlock();
    return n > 0;
}

void NetworkImpl::block(int timeout_ms) {
    // One blocker at a time is enough: the others would only be woken together.
    if (blocker_.exchange(true)) return;
    if (!drain_cqs()) driver_->wait(timeout_ms);
    blocker_.store(false);
}

__attribute__((no_sanitize("thread"))) std::vector<std::string> NetworkImpl::describe_state()
    const {
    std::vector<std::string> lines;
    char buf[256];
    snprintf(buf, sizeof(buf),
             "network (%s): %d receive buffers of %u held by work, %d messages queued, %d posted "
             "not completed, %zu send buffers free of %u",
             driver_->name(), pool_out_.load(), pool_size_, queued_.load(), inflight_.load(),
             send_free_.size(), send_buffers_);
    lines.emplace_back(buf);
    for (int n = 0; n < layout_.num_nodes; ++n) {
        if (n == layout_.node_id) continue;
        const Peer& p = *peers_[static_cast<size_t>(n)];
        snprintf(buf, sizeof(buf),
                 "network: to node %d: %d credits, %d reserved, %zu queued%s%s, %d credits owed to "
                 "it%s",
                 n, p.credits, p.reserve, p.queue.size(), p.queue.empty() ? "" : " (first: ",
                 p.queue.empty()                                  ? ""
                 : p.queue.front().write                          ? "RDMA write)"
                 : p.queue.front().header.type == MsgType::Credit ? "credit)"
                 : p.queue.front().header.type == MsgType::Cts    ? "ACK)"
                                                                  : "message)",
                 p.credits_to_return.load(), p.credit_due ? " (a credit message waits)" : "");
        lines.emplace_back(buf);
    }
    describe_operations(lines);
    if (const size_t n = rma_ops_.live()) {
        snprintf(buf, sizeof(buf),
                 "network: %zu one-sided transfers (RDMA writes, reads, atomics) in flight", n);
        lines.emplace_back(buf);
    }
    for (size_t i = 0; i < slots_.size(); ++i) {
        const RankSlot& s = *slots_[i];
        if (s.pending.load() == 0 && s.early.empty() && s.fragments.empty()) continue;
        snprintf(buf, sizeof(buf),
                 "network: local rank %zu: %d work requests unprocessed, %zu out of order, %zu "
                 "messages collecting fragments",
                 i, s.pending.load(), s.early.size(), s.fragments.size());
        lines.emplace_back(buf);
    }
    return lines;
}

namespace {

// Reading another thread's operation races by nature: the report describes a
// node process in which nothing moves any more (or that is being ended), and
// a field read mid-update only blurs one line. The table lock keeps each
// operation alive meanwhile; ThreadSanitizer is told not to instrument the
// reads (these functions are not inlined into instrumented callers).
#define MPC_DIAGNOSTIC_READS __attribute__((no_sanitize("thread"), noinline))

MPC_DIAGNOSTIC_READS std::string describe_send(const SendOp* op, int64_t now) {
    const char* state = "queued: waits for credits or send buffers to that node";
    if (op->protocol == Protocol::Rendezvous) {
        if (op->copies)
            state = "ACK received, the data goes as copies (no registration)";
        else if (op->reg)
            state = "ACK received, RDMA write in flight";
        else
            state = "REQ sent, waits for the receiver to match and answer";
    }
    char buf[320];
    int n = snprintf(
        buf, sizeof(buf),
        "network: send of local rank %d to world rank %d (node %d), tag %d, %zu bytes, %s: %s",
        op->src_local, op->dest_world, op->dest_node, op->bits.tag, op->bytes,
        op->protocol == Protocol::Eager       ? "eager"
        : op->protocol == Protocol::Fragments ? "fragments"
                                              : "rendezvous",
        state);
    if (op->protocol == Protocol::Rendezvous && !op->reg && !op->copies && n > 0 &&
        static_cast<size_t>(n) < sizeof(buf))
        snprintf(buf + n, sizeof(buf) - static_cast<size_t>(n), " (for %.1f s)",
                 static_cast<double>(now - op->rts_sent_ns) * 1e-9);
    return buf;
}

MPC_DIAGNOSTIC_READS std::string describe_recv(const RecvOp* op, int64_t now) {
    char buf[320];
    snprintf(buf, sizeof(buf),
             "network: rendezvous receive of local rank %d from rank %d (node %d), tag %d, %zu "
             "bytes: ACK sent %.1f s ago, waits for the data (%s, %zu of %zu bytes arrived)",
             op->local, op->bits.source, op->src_node, op->bits.tag, op->bytes,
             static_cast<double>(now - op->cts_sent_ns) * 1e-9, op->reg ? "RDMA write" : "copies",
             op->received, op->accepted);
    return buf;
}

}  // namespace

// The protocol state of every send and rendezvous receive still in flight:
// which step each waits for, and since when.
void NetworkImpl::describe_operations(std::vector<std::string>& lines) const {
    constexpr int kMaxListed = 8;
    const int64_t now = runtime::now_ns();
    int listed = 0, more = 0;
    send_ops_.for_each([&](const SendOp* op) {
        if (listed == kMaxListed) {
            ++more;
            return;
        }
        lines.push_back(describe_send(op, now));
        ++listed;
    });
    if (more) lines.emplace_back("network: ... and " + std::to_string(more) + " more sends");
    listed = more = 0;
    recv_ops_.for_each([&](const RecvOp* op) {
        if (listed == kMaxListed) {
            ++more;
            return;
        }
        lines.push_back(describe_recv(op, now));
        ++listed;
    });
    if (more) lines.emplace_back("network: ... and " + std::to_string(more) + " more receives");
}

void NetworkImpl::shutdown() {
    // Every node process says Bye and closes only once every other one has
    // said it: a peer still finishing (its last messages on their way to us,
    // or ours to it) never sees a connection close under it. The launcher's
    // final fence is not enough: hydra's returns before every process is in.
    closing_.store(true);
    for (int n = 0; n < layout_.num_nodes; ++n) {
        if (n == layout_.node_id) continue;
        Header bye{};
        bye.type = MsgType::Bye;
        bye.src_world = -1;
        bye.dst_world = -1;
        send_control(n, bye);
    }
    auto everyone_done = [&] {
        for (int n = 0; n < layout_.num_nodes; ++n)
            if (n != layout_.node_id && !peers_[static_cast<size_t>(n)]->done.load()) return false;
        return true;
    };
    // A peer may still compute for long before its Bye: no time limit on
    // that (the launcher's fence after this would wait as long).
    while (!everyone_done()) {
        // (drain_cqs checks the connections now and then.)
        const bool did = drain_cqs();
        flush_all_peers();
        if (!did) usleep(200);
    }
    // Everything this node posted must leave before the connections close.
    const int64_t deadline = runtime::now_ns() + 10'000'000'000;
    while ((queued_.load() > 0 || inflight_.load() > 0) && runtime::now_ns() < deadline) {
        drain_cqs();
        flush_all_peers();
        if (config_.mode == ProgressMode::Thread) sched_yield();
    }
    if (queued_.load() > 0 || inflight_.load() > 0)
        runtime::warn("network shutdown: %d queued and %d posted messages did not complete",
                      queued_.load(), inflight_.load());
    stopping_.store(true);
    if (progress_thread_.joinable()) {
        driver_->interrupt();
        progress_thread_.join();
    }
}

// ---- Creation --------------------------------------------------------------------

namespace {

DriverConfig driver_config(const NetworkConfig& c, const NetworkLayout& layout,
                           const runtime::auth::Secret& secret) {
    DriverConfig d;
    d.secret = secret;
    d.one_host = layout.one_host;
    d.self = layout.node_id;
    d.num_peers = layout.num_nodes;
    d.recv_buffer_size = c.buffer_size;
    d.recv_buffers = c.recv_buffers;
    d.send_queue_depth = std::max<uint32_t>(c.send_buffers, 64);
    d.provider =
        runtime::env::get("MPC_OFI_PROVIDER") ? runtime::env::get("MPC_OFI_PROVIDER") : "tcp";
    return d;
}

// Fills the sizes left at 0 with defaults chosen by measurement per driver
// (README, "Environment variables": MPC_NET_BUFFER, MPC_NET_WRITE_CHUNK).
NetworkConfig with_defaults(NetworkConfig c, int nodes) {
    // 32 KiB of payload after the header: on loopback tcp a 16 KiB message
    // took 14 us as two fragments of 16 KiB buffers, 9.6 as one (Open MPI's
    // tcp: 8.7), and a 32 KiB one 17 us as two, 13 as one (Open MPI: 13).
    // 64 KiB buffers gained little more for twice the pool memory.
    if (!c.buffer_size) c.buffer_size = 32768 + sizeof(Header);
    if (c.buffer_size < 1024) runtime::fatal("MPC_NET_BUFFER must be at least 1K");
    if (c.write_chunk && c.write_chunk < 4096)
        runtime::fatal("MPC_NET_WRITE_CHUNK must be at least 4K");
    if (!c.eager_limit) c.eager_limit = c.buffer_size - sizeof(Header);
    if (!c.rendezvous_threshold) c.rendezvous_threshold = 65536;
    if (!c.recv_buffers)
        c.recv_buffers =
            std::max<uint32_t>(256, 64u * static_cast<uint32_t>(std::max(1, nodes - 1)));
    if (!c.send_buffers) c.send_buffers = 256;
    return c;
}

}  // namespace

std::unique_ptr<Network> Network::start_with_driver(
    std::unique_ptr<Driver> driver, const NetworkConfig& config, const NetworkLayout& layout,
    const Upcalls& upcalls, const std::vector<std::string>& addresses, std::string* error) {
    auto net = std::make_unique<NetworkImpl>(
        std::move(driver), with_defaults(config, layout.num_nodes), layout, upcalls);
    if (!net->init(addresses, error)) return nullptr;
    network_started(net.get());
    return net;
}

std::unique_ptr<Network> Network::start(const NetworkConfig& config, const NetworkLayout& layout,
                                        const Upcalls& upcalls, runtime::Bootstrap& boot,
                                        std::string* error) {
    NetworkConfig c = with_defaults(config, layout.num_nodes);
    // The secret is known from the launcher, or after a first fence (which
    // the host's has been: see Bootstrap::job_secret).
    std::unique_ptr<Driver> driver =
        open_driver(c.driver, driver_config(c, layout, boot.job_secret()), error);
    if (!driver) return nullptr;
    boot.put("mpc-net-" + std::to_string(layout.node_id), driver->local_address());
    boot.fence();
    std::vector<std::string> addresses(static_cast<size_t>(layout.num_nodes));
    for (int n = 0; n < layout.num_nodes; ++n) {
        addresses[static_cast<size_t>(n)] = boot.get("mpc-net-" + std::to_string(n));
        if (addresses[static_cast<size_t>(n)].empty()) {
            *error = "node process " + std::to_string(n) + " published no network address";
            return nullptr;
        }
    }
    return start_with_driver(std::move(driver), c, layout, upcalls, addresses, error);
}

}  // namespace mpc::ib
