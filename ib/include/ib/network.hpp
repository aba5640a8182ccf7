// ib/network: messages between node processes, and the poll function.
//
// The Network moves messages of opaque match bits between ranks of different
// node processes over one Driver: eager (header and data in one receive-pool
// buffer), buffered eager (fragments reassembled into the receive buffer) and
// rendezvous (REQ, then an ACK carrying the registered receive buffer once the
// receive has matched, then one RDMA write straight into it). Credits per
// connection keep every sender from overrunning the shared receive pool, and
// per-pair sequence numbers keep MPI's order across the three protocols.
//
// Completions from the two shared CQs are dispatched as work requests into
// per-rank pending lists; poll() processes the caller's list and, in
// collaborative mode, steals from other ranks' lists (same NUMA node first):
// matching their messages, copying into their buffers, answering their REQs.
//
// One-sided communication rides on the same connections: active messages for
// the layer above, executed in arrival order by whoever drains this node's
// completion queues (any polling rank, an idle VP, the progress thread), and
// RDMA writes, reads and atomics on registered memory, all in one order per
// connection.
//
// This room knows nothing about communicators or datatypes: matching happens
// above, through Upcalls, and data lands through RecvTarget / SendSource.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ib/driver.hpp"

namespace mpc::sched {
class Waiter;
}
namespace mpc::runtime {
class Bootstrap;
}

namespace mpc::ib {

struct MatchBits {
    uint32_t context = 0;
    int32_t source = 0;
    int32_t tag = 0;
};

// Where the data of a matched message goes.
struct RecvTarget {
    void* contiguous = nullptr;  // destination when it is one contiguous block
    size_t capacity = 0;         // bytes the receive can hold (more is truncated)
    // Non-contiguous destinations: store len bytes at packed offset.
    void (*unpack)(void* ctx, size_t offset, const void* data, size_t len) = nullptr;
    // All data is in: bytes is the message size (> capacity means truncated).
    void (*complete)(void* ctx, const MatchBits& bits, size_t bytes) = nullptr;
    void* ctx = nullptr;
};

// Where the data of a send comes from.
struct SendSource {
    const void* contiguous = nullptr;  // the data when contiguous
    size_t bytes = 0;
    void (*pack)(void* ctx, size_t offset, void* out, size_t len) = nullptr;
    // The send is done: the buffer may be reused (and, if synchronous, matched).
    void (*complete)(void* ctx) = nullptr;
    void* ctx = nullptr;
};

// An incoming message no receive matched yet (owned by the Network).
struct Unexpected;

struct Upcalls {
    // A message for local rank `local` arrived. Under that rank's matching
    // lock, either take a posted receive (fill *target, return true) or keep
    // `msg` as unexpected (return false) and later hand it to
    // Network::deliver_unexpected when a receive matches it.
    bool (*match)(void* ctx, int local, const MatchBits& bits, size_t bytes, Unexpected* msg,
                  RecvTarget* target) = nullptr;
    // Work arrived in local rank `local`'s pending list (wake it if it sleeps).
    void (*work_arrived)(void* ctx, int local) = nullptr;
    // Called by the progress thread (thread mode) on every round, so that the
    // layer above progresses its own operations there too.
    bool (*thread_poll)(void* ctx) = nullptr;
    void* ctx = nullptr;
};

// The one-sided engine's side of its messages (see Network::rma_send).
struct RmaHandler {
    // A message from node process src_node. Runs under the network's poll
    // (one at a time, in arrival order): must not block; may send.
    void (*message)(void* ctx, int src_node, const void* data, size_t len) = nullptr;
    void* ctx = nullptr;
};
// A one-sided transfer is locally complete (ok false: the network failed it).
struct RmaDone {
    void (*fn)(void* ctx, bool ok) = nullptr;
    void* ctx = nullptr;
};

enum class ProgressMode { Wait, Collaborative, Thread };

// How the progress thread waits between events (MPC_PROGRESS_THREAD).
// Hybrid: it polls while there was activity or a waiting rank asked for it
// in the last NetworkConfig::thread_grace_ns, and otherwise sleeps in the
// driver until the network or a waiting rank wakes it, so that it leaves the
// core to ranks that compute and still answers a request from another node
// at once.
enum class ThreadWait { Hybrid, Poll, Block };

struct NetworkConfig {
    std::string driver = "auto";        // MPC_NET
    ProgressMode mode = ProgressMode::Collaborative;
    ThreadWait thread_wait = ThreadWait::Hybrid;  // MPC_PROGRESS_THREAD
    // Hybrid: how long the thread polls after activity or a nudge. The host
    // sets 0 where the thread shares a core with VPs: a thread that slept
    // comes back with a scheduler credit, and polling with sched_yield then
    // keeps the core from a computing rank, or from the thread that would
    // answer, for milliseconds (the yield does not hand over while the credit
    // lasts).
    int64_t thread_grace_ns = 200'000;
    bool thread_realtime = false;       // MPC_PROGRESS_THREAD_RT=1
    size_t eager_limit = 0;             // 0: chosen per driver (MPC_EAGER_LIMIT)
    size_t rendezvous_threshold = 0;    // 0: chosen per driver (MPC_RNDV_THRESHOLD)
    size_t buffer_size = 0;             // receive/send buffer size (MPC_NET_BUFFER)
    uint32_t recv_buffers = 0;          // receive-pool buffers (MPC_NET_RECV_BUFFERS)
    uint32_t send_buffers = 0;          // send buffers (MPC_NET_SEND_BUFFERS)
    size_t write_chunk = 0;             // 0: chosen per driver (MPC_NET_WRITE_CHUNK)
    size_t rcache_max_bytes = 0;        // lazily kept registrations (MPC_RCACHE_MAX)
    bool stats = false;

    // Reads MPC_* variables over the defaults.
    static NetworkConfig from_env();
};

// Layout of the job as the network needs it.
struct NetworkLayout {
    int node_id = 0;
    int num_nodes = 1;
    std::vector<int> node_of;        // world rank -> node process
    std::vector<int> local_of;       // world rank -> local index on its node
    std::vector<int> local_numa;     // local index -> NUMA node of its core
    bool one_host = false;           // every node process on this host (listeners bind loopback)
};

struct RankNetStats {
    // Messages and bytes the rank sent per protocol, counted while
    // runtime::tools::g_transport is open (MPC_STATS, or MPI_T handles).
    enum Path : int { Eager, Fragments, Rendezvous, kPaths };
    uint64_t sent_msgs[kPaths] = {};
    uint64_t sent_bytes[kPaths] = {};
    uint64_t processed_self = 0;
    uint64_t stolen_same_numa = 0;
    uint64_t stolen_other_numa = 0;
    uint64_t rndv_count = 0;            // rendezvous sends started by this rank
    uint64_t rndv_req_to_ack_ns = 0;    // sum, sender side: REQ sent -> ACK processed
    uint64_t rndv_req_to_ack_max_ns = 0;
    uint64_t rndv_matched = 0;          // rendezvous REQs matched for this rank
    uint64_t rndv_matching_ns = 0;      // sum: REQ arrived -> matched
    uint64_t wr_received = 0;           // work requests dispatched to this rank
    uint64_t wr_timed = 0;              // of which timed (transport gate open at dispatch)
    uint64_t wr_reception_ns = 0;       // sum over those: dispatched -> processed
};

class Network {
public:
    // Opens the driver, exchanges addresses through the bootstrap, connects.
    // Returns null with *error set when the network cannot start.
    static std::unique_ptr<Network> start(const NetworkConfig& config, const NetworkLayout& layout,
                                          const Upcalls& upcalls, runtime::Bootstrap& boot,
                                          std::string* error);
    // Same with a given driver (tests).
    static std::unique_ptr<Network> start_with_driver(std::unique_ptr<Driver> driver,
                                                      const NetworkConfig& config,
                                                      const NetworkLayout& layout,
                                                      const Upcalls& upcalls,
                                                      const std::vector<std::string>& addresses,
                                                      std::string* error);
    virtual ~Network() = default;

    // Sends to a rank of another node process. synchronous: complete only once
    // the receive has matched (MPI_Ssend).
    virtual void send(int src_world, int dest_world, const MatchBits& bits,
                      const SendSource& source, bool synchronous) = 0;
    // A receive matched msg: move its data (now or as it arrives) into target.
    virtual void deliver_unexpected(Unexpected* msg, const RecvTarget& target) = 0;
    // No receive will ever match msg (teardown): forget it.
    virtual void drop_unexpected(Unexpected* msg) = 0;

    // The poll function (DESIGN.md 5.3). caller: local index of the calling rank,
    // or -1 (idle VP, progress thread). steal=false: the caller's own work only
    // this time. thief_numa: the NUMA node of an idle VP calling (caller -1), so
    // that it serves the ranks of its NUMA node first; -1 when unknown (a
    // progress thread). Returns true when it did any work.
    virtual bool poll(int caller, bool steal = true, int thief_numa = -1) = 0;
    // An idle VP may block here until network activity or interrupt().
    virtual void block(int timeout_ms) = 0;
    virtual void interrupt() = 0;
    // A rank has waited a while for work that the progress thread may owe it
    // (progress mode thread): keeps the thread polling, waking it if it
    // sleeps. Cheap when it is awake; nothing without a progress thread.
    virtual void nudge() = 0;

    // ---- One-sided communication ----
    virtual void set_rma_handler(const RmaHandler& handler) = 0;
    // Bytes an rma_send may carry.
    virtual size_t rma_message_max() const = 0;
    // Sends head then data as one message to node's RmaHandler; both are
    // copied before the call returns. Ordered with every operation before it
    // to that node: messages, RDMA writes, reads and atomics. A lazy message
    // may wait for the next one to node, or the next poll, to leave with it
    // (nobody waits for it: a Put before its flush).
    virtual void rma_send(int node, const void* head, size_t head_len, const void* data,
                          size_t data_len, bool lazy) = 0;
    // Registers [addr, addr+len) for peers' RDMA: the address they name it by
    // is stored in *remote_addr. Returns the registration to give back, or
    // null when the driver refuses it.
    virtual void* rma_register(void* addr, size_t len, uint64_t* remote_addr) = 0;
    // The key to give node for a registration: drivers that bind keys to
    // connections (tcp) answer a different one per node, good from it only.
    virtual uint64_t rma_key_for(void* registration, int node) const = 0;
    virtual void rma_deregister(void* registration) = 0;
    // The driver reads peer memory (rma_read may be used).
    virtual bool rma_can_read() const = 0;
    // The driver's 8-byte atomics are atomic with the target CPU's and
    // ordered after the messages before them (Driver::atomics_with_cpu).
    virtual bool rma_atomics() const = 0;
    // Writes (reads) len contiguous bytes from (into) local memory, which is
    // registered through the cache, to (from) node's registered memory at
    // remote_addr; done runs once the local memory may be reused (holds the
    // data). False when the local memory cannot be registered: nothing started.
    virtual bool rma_write(int node, const void* local, size_t len, uint64_t remote_addr,
                           uint64_t key, RmaDone done) = 0;
    virtual bool rma_read(int node, void* local, size_t len, uint64_t remote_addr, uint64_t key,
                          RmaDone done) = 0;
    // An 8-byte atomic on node's registered memory; the old value is stored
    // in *result before done runs. False when it cannot be started now.
    virtual bool rma_atomic(int node, AtomicOp op, uint64_t operand, uint64_t compare,
                            uint64_t* result, uint64_t remote_addr, uint64_t key,
                            RmaDone done) = 0;

    virtual ProgressMode mode() const = 0;
    virtual const char* driver_name() const = 0;
    virtual size_t eager_limit() const = 0;
    virtual size_t rendezvous_threshold() const = 0;
    virtual RankNetStats stats(int local) const = 0;
    // One-line summaries of the network's state for a hang report: per
    // connection credits and queued messages, per rank unprocessed work.
    // Read without locks (the process is stuck or being killed).
    virtual std::vector<std::string> describe_state() const = 0;

    // Waits until every message this node sent has left (flush), then stops
    // the progress thread; the driver closes when the object is destroyed.
    virtual void shutdown() = 0;
};

// Registers the network's control and performance variables (MPI_T) with the
// runtime's registry (runtime/tools.hpp); they read the running network, or
// the settings alone while none runs. Call once per process.
void register_tool_variables();

// Invalidates registrations overlapping [addr, addr+len): memory is being
// unmapped or freed. Called by the memory hooks; cheap when nothing is cached.
void memory_released(const void* addr, size_t len);

}  // namespace mpc::ib
