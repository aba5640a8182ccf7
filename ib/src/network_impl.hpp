// Private to the network room: the state of a running Network.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "connection_watch.hpp"
#include "ib/network.hpp"
#include "op_table.hpp"
#include "rcache.hpp"
#include "runtime/sync.hpp"
#include "wire.hpp"

namespace mpc::ib {

// ---- Sender side ---------------------------------------------------------------

enum class Protocol : uint8_t { Eager, Fragments, Rendezvous };
static_assert(static_cast<int>(Protocol::Fragments) == RankNetStats::Fragments &&
                  static_cast<int>(Protocol::Rendezvous) == RankNetStats::Rendezvous,
              "the counters of a path are indexed by its protocol");

// A send in flight (owned by the network until its source is complete).
struct SendOp {
    SendSource source;
    MatchBits bits;
    int src_world = 0, dest_world = 0, dest_node = 0;
    size_t bytes = 0;
    Protocol protocol = Protocol::Eager;
    uint64_t id = 0;
    uint32_t seq = 0;
    size_t next_offset = 0;          // fragments: first byte not yet sent
    // Rendezvous: the registered data and the writes still in flight.
    RegistrationCache::Entry* reg = nullptr;
    char* packed = nullptr;          // non-contiguous data packed for the write
    std::atomic<int> writes_left{0};
    bool copies = false;  // rendezvous data goes as RndvData messages
    bool answered = false;  // rendezvous: the receiver's answer (CTS) came
    int64_t rts_sent_ns = 0;
    int src_local = -1;
};

// A message waiting in a connection's queue (credits, send buffers or the
// driver's queue ran out). Order on a connection is the order of the queue.
struct OutMsg {
    Header header{};
    SendOp* op = nullptr;       // data source for Eager / fragments
    size_t data_offset = 0;
    size_t data_len = 0;
    bool write = false;         // an RDMA write of op (rendezvous data), not a message
    bool control = false;       // a Credit message: may use the reserved credits
    bool lazy = false;          // may wait for the next message to its node (Driver::post_send_lazy)
    // Writes only.
    const char* local = nullptr;
    void* local_desc = nullptr;
    uint64_t remote_addr = 0, remote_key = 0;
    bool has_imm = false;
    uint32_t imm = 0;
    // One-sided operations: reads and atomics (remote_addr, remote_key,
    // local_desc as writes), the send-CQ context of writes, reads and
    // atomics (0: a rendezvous write, kCtxWrite | op), and a message's own
    // copy of its payload (data_len bytes).
    bool read = false;
    bool atomic = false;
    char* local_dest = nullptr;
    AtomicOp atomic_op = AtomicOp::FetchAdd;
    uint64_t operand = 0, compare = 0;
    uint64_t* result = nullptr;
    uint64_t context = 0;
    std::unique_ptr<char[]> owned{};
};

// A one-sided transfer (rma_write, rma_read, rma_atomic) in flight.
struct RmaOp {
    RmaDone done;
    RegistrationCache::Entry* reg = nullptr;  // of the local memory
    std::atomic<int> left{0};                 // driver operations not completed
    uint64_t id = 0;
    uint32_t result_slot = UINT32_MAX;        // atomics: where the old value lands
    uint64_t* user_result = nullptr;
};

// One connection: credits into the peer's receive pool and the queue of
// messages that could not be posted yet.
struct Peer {
    runtime::SpinLock lock;
    int credits = 0;                    // messages we may still send into its pool
    int reserve = 0;                    // credits kept for Credit messages
    std::deque<OutMsg> queue;
    std::atomic<int> credits_to_return{0};  // its messages we consumed, not yet told
    // A Credit message is due but could not be posted yet. It never waits in
    // `queue`: that queue may be blocked on credits from the very peer that
    // waits for ours (a deadlock when both sides flood each other).
    bool credit_due = false;
    // It said Bye (or, while we shut down, closed): its end may close now.
    std::atomic<bool> done{false};
};

// ---- Receiver side ------------------------------------------------------------

// A received message handed to a rank (a completion turned into work).
struct WorkRequest {
    enum class Kind : uint8_t { Message, WriteDone };
    Kind kind = Kind::Message;
    uint32_t pool_index = UINT32_MAX;   // receive-pool buffer holding it, if any
    std::unique_ptr<char[]> copy;       // or a private copy (pool running low)
    const Header* header = nullptr;
    size_t length = 0;                  // header + payload bytes
    uint64_t recv_op = 0;               // WriteDone: the receive operation
    int64_t dispatched_ns = 0;
    WorkRequest* next = nullptr;
    const char* payload() const { return reinterpret_cast<const char*>(header + 1); }
};

// A receive being filled: fragments arriving, or a rendezvous write expected.
struct RecvOp {
    int local = 0;                       // the receiving rank
    RecvTarget target{};
    bool has_target = false;             // false: still unexpected (data goes to `stash`)
    Unexpected* unexpected = nullptr;    // when !has_target
    MatchBits bits;
    size_t bytes = 0;                    // message size
    size_t received = 0;                 // bytes arrived so far
    // Rendezvous.
    RegistrationCache::Entry* reg = nullptr;
    char* bounce = nullptr;              // non-contiguous target: written here, unpacked at the end
    size_t accepted = 0;                 // bytes the sender writes (or sends as RndvData)
    int src_node = 0;
    uint64_t msg_id = 0;      // fragments: the sender's id of the message
    int64_t cts_sent_ns = 0;  // rendezvous: when the answer left
};

// A message whose fragments are arriving: its sender's node process and its
// full id there (ids are reused with a new generation: a key that kept only
// part of the generation named two messages at once).
struct FragKey {
    uint32_t src_node;
    uint64_t msg_id;
    bool operator==(const FragKey&) const = default;
};
struct FragKeyHash {
    size_t operator()(const FragKey& k) const {
        return std::hash<uint64_t>()(k.msg_id * 0x9e3779b97f4a7c15ull ^ k.src_node);
    }
};

// The network's view of an unexpected message.
struct Unexpected {
    enum class Kind : uint8_t { Eager, Fragments, Rendezvous } kind = Kind::Eager;
    int local = 0;
    MatchBits bits;
    size_t bytes = 0;
    std::unique_ptr<char[]> data;        // Eager / Fragments: the bytes so far
    RecvOp* frags = nullptr;             // Fragments: the op still collecting them
    // Rendezvous: who to answer.
    int src_node = 0;
    int src_world = 0;
    uint64_t send_id = 0;
    int64_t arrived_ns = 0;
};

// RankNetStats as the network keeps it: threads processing for the rank (and
// tools reading) at once, so every field is a relaxed atomic.
struct RankNetCounters {
    std::atomic<uint64_t> sent_msgs[RankNetStats::kPaths] = {};
    std::atomic<uint64_t> sent_bytes[RankNetStats::kPaths] = {};
    std::atomic<uint64_t> processed_self{0}, stolen_same_numa{0}, stolen_other_numa{0};
    std::atomic<uint64_t> rndv_count{0}, rndv_req_to_ack_ns{0}, rndv_req_to_ack_max_ns{0};
    std::atomic<uint64_t> rndv_matched{0}, rndv_matching_ns{0};
    std::atomic<uint64_t> wr_received{0}, wr_timed{0}, wr_reception_ns{0};

    static void add(std::atomic<uint64_t>& a, uint64_t n) {
        a.fetch_add(n, std::memory_order_relaxed);
    }
    static void raise_max(std::atomic<uint64_t>& a, uint64_t n) {
        uint64_t cur = a.load(std::memory_order_relaxed);
        while (n > cur && !a.compare_exchange_weak(cur, n, std::memory_order_relaxed)) {
        }
    }
    RankNetStats snapshot() const;
};

// Everything about one local rank that the network keeps.
struct RankSlot {
    alignas(runtime::kCacheLine) runtime::SpinLock list_lock;
    WorkRequest* head = nullptr;
    WorkRequest* tail = nullptr;
    std::atomic<int> pending{0};
    alignas(runtime::kCacheLine) runtime::SpinLock processing;  // one processor at a time
    std::vector<uint32_t> expected_seq;                  // per source world rank
    std::unordered_map<uint64_t, WorkRequest*> early;    // out-of-order, by (src_world<<32 | seq)
    // Messages still expecting fragments (a complete one leaves at once).
    std::unordered_map<FragKey, RecvOp*, FragKeyHash> fragments;
    std::vector<std::atomic<uint32_t>> next_seq;         // per destination world rank
    std::vector<int> steal_order;                        // other local ranks, nearest first
    int numa = 0;
    RankNetCounters stats;
};

class NetworkImpl final : public Network {
public:
    NetworkImpl(std::unique_ptr<Driver> driver, const NetworkConfig& config,
                const NetworkLayout& layout, const Upcalls& upcalls);
    ~NetworkImpl() override;
    bool init(const std::vector<std::string>& addresses, std::string* error);

    void send(int src_world, int dest_world, const MatchBits& bits, const SendSource& source,
              bool synchronous) override;
    void deliver_unexpected(Unexpected* msg, const RecvTarget& target) override;
    void drop_unexpected(Unexpected* msg) override;
    bool poll(int caller, bool steal = true, int thief_numa = -1) override;
    void block(int timeout_ms) override;
    void interrupt() override { driver_->interrupt(); }
    void nudge() override;
    ProgressMode mode() const override { return config_.mode; }
    const char* driver_name() const override { return driver_->name(); }
    size_t eager_limit() const override { return eager_limit_; }
    size_t rendezvous_threshold() const override { return rndv_threshold_; }
    RankNetStats stats(int local) const override {
        return slots_[static_cast<size_t>(local)]->stats.snapshot();
    }
    // For the tools interface (tool_vars.cpp).
    int local_ranks() const { return static_cast<int>(slots_.size()); }
    const RankNetCounters& counters(int local) const {
        return slots_[static_cast<size_t>(local)]->stats;
    }
    size_t buffer_size() const { return buffer_size_; }
    uint32_t send_buffer_count() const { return send_buffers_; }
    uint32_t recv_buffer_count() const { return pool_size_; }
    size_t write_chunk() const { return write_chunk_.load(std::memory_order_relaxed); }
    // [4 KiB, kMaxWrite]: each rendezvous reads it once, as its writes start.
    bool set_write_chunk(size_t bytes);
    int queued_messages() const { return queued_.load(std::memory_order_relaxed); }
    RegistrationCache& rcache() const { return *rcache_; }
    const NetworkConfig& config() const { return config_; }
    std::vector<std::string> describe_state() const override;
    void describe_operations(std::vector<std::string>& lines) const;
    void shutdown() override;

    // rma.cpp
    void set_rma_handler(const RmaHandler& handler) override { rma_handler_ = handler; }
    size_t rma_message_max() const override { return buffer_size_ - sizeof(Header); }
    void rma_send(int node, const void* head, size_t head_len, const void* data,
                  size_t data_len, bool lazy) override;
    void* rma_register(void* addr, size_t len, uint64_t* remote_addr) override;
    uint64_t rma_key_for(void* registration, int node) const override;
    void rma_deregister(void* registration) override;
    bool rma_can_read() const override { return driver_->supports_read(); }
    bool rma_atomics() const override { return driver_->atomics_with_cpu(); }
    bool rma_write(int node, const void* local, size_t len, uint64_t remote_addr, uint64_t key,
                   RmaDone done) override;
    bool rma_read(int node, void* local, size_t len, uint64_t remote_addr, uint64_t key,
                  RmaDone done) override;
    bool rma_atomic(int node, AtomicOp op, uint64_t operand, uint64_t compare, uint64_t* result,
                    uint64_t remote_addr, uint64_t key, RmaDone done) override;

private:
    // send_path.cpp
    void post_or_queue(int node, OutMsg&& msg);
    bool try_post(int node, Peer& peer, OutMsg& msg);   // peer.lock held
    void flush_peer(int node);
    void flush_all_peers();
    void send_control(int node, Header h);
    void send_credit(int node);
    bool post_due_credit(int node, Peer& peer);  // peer.lock held
    void start_writes(SendOp* op, const Header& cts);
    void send_copies(SendOp* op, size_t len, uint32_t recv_op);
    void registration_failed(size_t bytes, const char* side);
    void send_op_done(SendOp* op);
    void return_credit(int node);
    uint32_t take_credits_to_return(Peer& peer);
    uint32_t allocate_send_buffer();
    void free_send_buffer(uint32_t index);

    // recv_path.cpp
    void dispatch_recv(const Completion& c);
    void dispatch_write_imm(const Completion& c);
    void handle_send_completion(const Completion& c);
    void push_work(int local, WorkRequest* wr);
    bool process_rank(int local, int thief, int thief_numa);
    void process(int local, WorkRequest* wr);
    void process_in_order(int local, WorkRequest* wr);
    void on_eager(int local, const WorkRequest& wr);
    void on_frag_first(int local, const WorkRequest& wr);
    void on_frag(int local, const WorkRequest& wr);
    void on_rts(int local, const WorkRequest& wr);
    void on_cts(const WorkRequest& wr);
    void on_write_done(uint64_t recv_op);
    void on_rndv_data(int local, const WorkRequest& wr);
    void finish_rendezvous_recv(RecvOp* op);
    void start_rendezvous_recv(int local, const RecvTarget& target, const MatchBits& bits,
                               size_t bytes, int src_node, int src_world, uint64_t send_id);
    void copy_to_target(const RecvTarget& t, size_t offset, const char* data, size_t len);
    void finish_recv_op(RecvOp* op);
    void release_work(WorkRequest* wr);
    bool drain_cqs();
    void check_connections();  // cq_lock_ held
    // rma.cpp
    bool rma_transfer(int node, char* local, size_t len, uint64_t remote_addr, uint64_t key,
                      RmaDone done, bool read);
    void rma_completion(const Completion& c);
    bool init_rma(std::string* error);

    std::unique_ptr<Driver> driver_;
    ConnectionWatch* watch_ = nullptr;  // the driver, when it can report broken connections
    NetworkConfig config_;
    NetworkLayout layout_;
    Upcalls upcalls_;
    size_t buffer_size_ = 0, eager_limit_ = 0, rndv_threshold_ = 0, frag_payload_ = 0;
    // One RDMA write of a rendezvous moves at most this (a tool may change it).
    std::atomic<size_t> write_chunk_{0};

    std::vector<std::unique_ptr<Peer>> peers_;
    std::vector<std::unique_ptr<RankSlot>> slots_;
    mutable OpTable<SendOp> send_ops_;  // (mutable: describe_state reads them under their lock)
    mutable OpTable<RecvOp> recv_ops_;
    std::unique_ptr<RegistrationCache> rcache_;
    // One-sided communication: the engine's handler, transfers in flight,
    // and a registered slab where atomics' old values land.
    RmaHandler rma_handler_;
    mutable OpTable<RmaOp> rma_ops_;
    static constexpr uint32_t kAtomicSlots = 1024;
    std::unique_ptr<uint64_t[]> atomic_slab_;
    MemoryRegion atomic_mr_{};
    runtime::SpinLock atomic_free_lock_;
    std::vector<uint32_t> atomic_free_;
    std::atomic<bool> registration_warned_{false};

    // Send buffers: one registered slab.
    std::unique_ptr<char[]> send_slab_;
    MemoryRegion send_mr_{};
    runtime::SpinLock send_free_lock_;
    std::vector<uint32_t> send_free_;
    uint32_t send_buffers_ = 0;

    alignas(runtime::kCacheLine) runtime::SpinLock cq_lock_;
    unsigned send_cq_turn_ = 0;         // under cq_lock_
    // Under cq_lock_: drained completions. Not on drain_cqs' stack: making and
    // unmaking 32 of them (a string each) on every poll was an eighth of a
    // busy node process's time.
    static constexpr int kBatch = 32;  // completions drained per CQ per poll
    Completion batch_[kBatch];
    unsigned drains_ = 0;               // under cq_lock_: counts drains between connection checks
    std::atomic<int> pool_out_{0};      // receive-pool buffers handed to ranks, not reposted
    uint32_t pool_size_ = 0;
    std::atomic<int> queued_{0};        // messages waiting in peer queues
    std::atomic<int> inflight_{0};      // sends and writes posted, not completed
    std::atomic<int> writes_inflight_{0};  // of which RDMA writes (a send request waits)

    // The progress thread (mode thread) and its hybrid wait: it polls for
    // config_.thread_grace_ns after activity or a nudge, then sleeps in the
    // driver for at most kThreadSleepMs (a lost nudge costs no more; waiting
    // ranks nudge again whenever they poll).
    static constexpr int kThreadSleepMs = 100;
    void progress_thread_loop();
    std::thread progress_thread_;
    std::atomic<bool> nudged_{false};
    std::atomic<bool> thread_asleep_{false};
    std::atomic<bool> stopping_{false};
    // In shutdown, our Bye sent: a peer that closes is done, not lost.
    std::atomic<bool> closing_{false};
    std::atomic<bool> blocker_{false};
};

// The network the tools interface reads (tool_vars.cpp): set once it runs,
// cleared before it goes.
void network_started(NetworkImpl* net);
void network_ended(NetworkImpl* net);

// One RDMA write moves at most this (the drivers' message-size limits).
inline constexpr size_t kMaxWrite = size_t{1} << 30;

// Context of a send-CQ entry: what completed.
inline constexpr uint64_t kCtxSendBuffer = 1ull << 60;
inline constexpr uint64_t kCtxWrite = 2ull << 60;
inline constexpr uint64_t kCtxRma = 3ull << 60;  // a one-sided transfer: RmaOp
inline constexpr uint64_t kCtxMask = 0xfull << 60;

}  // namespace mpc::ib
