// ib/driver: the narrow, verbs-shaped interface every network driver fills.
//
// One Driver instance per node process: connection-oriented endpoints to every
// other node process (shared by all ranks), a shared receive pool of
// pre-posted registered buffers, sends, RDMA writes with 32-bit immediate
// data, RDMA reads and 8-byte remote atomics (for one-sided communication;
// optional: a driver says whether it has them), memory registration with
// remote keys, and exactly two completion queues (send, receive) shared by
// all ranks. Everything above this interface (protocols, flow control,
// matching, polling policy) is driver-independent.
//
// Threading: post_*, register_memory and repost_recv may be called by several
// threads at once. poll_send_cq and poll_recv_cq are called by one thread at a
// time each (the caller holds a try-lock). Nothing here blocks except
// connect_all() and wait().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/auth.hpp"

namespace mpc::ib {

// Result of a non-blocking driver call. Again: no resource right now (send
// queue full, ...); the caller keeps the work and retries after polling.
enum class Status { Ok, Again, Error };

struct MemoryRegion {
    void* addr = nullptr;
    size_t length = 0;
    uint64_t remote_key = 0;    // what a peer needs to write into this region
    // The remote_addr a peer passes to post_write to reach `addr`: addr itself
    // for providers addressing by virtual address (verbs), 0 for offset-based
    // ones (libfabric providers without FI_MR_VIRT_ADDR, such as tcp).
    // A peer writes to byte i of the region at remote_base + i.
    uint64_t remote_base = 0;
    void* local_desc = nullptr; // descriptor for local access (fi_mr_desc, lkey)
    void* handle = nullptr;     // driver-private (fid_mr*, ibv_mr*)
};

struct Completion {
    enum class Type : uint8_t {
        Send,         // a post_send finished: its buffer may be reused
        Write,        // a post_write finished: its buffer may be reused. The
                      // data may still be in flight; the peer learns of it by a
                      // WriteImm or a later send on the same connection, which
                      // both arrive after the data (ordered connections).
        Recv,         // a message landed in receive-pool buffer `buffer`
        WriteImm,     // a peer's post_write with immediate data landed here
        Read,         // a post_read finished: the data is in the local buffer
        Atomic,       // a post_atomic finished: the old value is in *result
    };
    // Read and Atomic complete on the send CQ, as RDMA transports report them.
    // WriteImm and the receive pool: the caller never reposts anything for a
    // WriteImm. Where the transport consumes a pool buffer for it (verbs
    // always, ofi when the provider asks for FI_RX_CQ_DATA; tcp does not), the
    // driver reposts that buffer itself before returning the completion. The
    // buffer is missing from the pool until the target polls the completion,
    // so flow control counts a write with immediate as one receive credit of
    // the target, given back once the WriteImm has been polled.
    // Failed completions (ok == false) keep their type; a failed Recv names
    // its buffer, which the caller reposts like any other.
    Type type = Type::Send;
    bool ok = true;             // false: the operation failed (see error)
    uint64_t context = 0;       // Send/Write: the context given when posting
    uint32_t buffer = 0;        // Recv: index of the pool buffer holding the data
    size_t length = 0;          // Recv: bytes received
    uint32_t imm = 0;           // WriteImm: the immediate data
    std::string error;          // when !ok: what the driver reported
};

struct DriverConfig {
    int self = 0;                  // this node process
    int num_peers = 1;             // node processes in the job (including self)
    size_t recv_buffer_size = 8192;  // bytes per receive-pool buffer
    uint32_t recv_buffers = 256;     // buffers in the shared receive pool
    uint32_t send_queue_depth = 256; // outstanding sends+writes per connection
    std::string provider;          // ofi: libfabric provider name (default "tcp")
    // The job's secret: every connection between node processes opens with
    // the handshake of runtime/handshake.hpp over it (tcp, ofi).
    runtime::auth::Secret secret;
    // Every node process runs on this host: listeners bind loopback only;
    // otherwise the job's interface (runtime/netif.hpp).
    bool one_host = false;

    // What every driver's open() checks first.
    bool valid() const {
        return num_peers >= 1 && self >= 0 && self < num_peers && recv_buffers > 0 &&
               recv_buffer_size > 0 && send_queue_depth > 0;
    }
};

// 8-byte atomic operations on a peer's registered memory.
enum class AtomicOp : uint8_t {
    FetchAdd,     // *remote += operand
    CompareSwap,  // if (*remote == compare) *remote = operand
};

class Driver {
public:
    virtual ~Driver() = default;
    virtual const char* name() const = 0;

    // Opaque address to publish through the bootstrap key-value store.
    virtual std::string local_address() = 0;
    // Connects to every other node process; addresses[i] is node i's
    // local_address(). Collective: every node process calls it. Blocking.
    virtual Status connect_all(const std::vector<std::string>& addresses) = 0;

    // Registers memory for local access and remote writes.
    virtual Status register_memory(void* addr, size_t length, MemoryRegion* out) = 0;
    virtual void deregister_memory(MemoryRegion& mr) = 0;
    // The key to give `peer` for writes into mr: a driver that binds keys to
    // connections (tcp) answers a different one per peer, and a write from
    // another peer with it fails as a bad key would.
    virtual uint64_t remote_key_for(const MemoryRegion& mr, int peer) const {
        (void)peer;
        return mr.remote_key;
    }

    // The shared receive pool: buffers are posted at open; a Recv completion
    // names one, and the caller gives it back with repost_recv once it has
    // consumed the data.
    virtual void* recv_buffer(uint32_t index) = 0;
    virtual Status repost_recv(uint32_t index) = 0;

    // Sends len bytes from registered memory (desc from its region) to peer.
    // len must not exceed recv_buffer_size (Error otherwise): every node
    // process uses the same DriverConfig. Again: send_queue_depth operations
    // are outstanding on this connection; poll_send_cq and retry.
    virtual Status post_send(int peer, const void* buf, size_t len, void* desc,
                             uint64_t context) = 0;
    // As post_send, but the driver may hold the frame back until the next
    // post to peer or the next poll, so that both leave in one go (a
    // one-sided Put and the Win_flush right after it). Drivers with nothing
    // to gain from it send at once.
    virtual Status post_send_lazy(int peer, const void* buf, size_t len, void* desc,
                                  uint64_t context) {
        return post_send(peer, buf, len, desc, context);
    }
    // The largest RDMA write worth posting at once (0: no limit): a rendezvous
    // splits its data into writes of at most this size.
    virtual size_t write_chunk() const { return 0; }
    // Writes len bytes into peer's registered memory at remote_addr (see
    // MemoryRegion::remote_base), remote_key from the peer's region. With
    // has_imm, the peer gets a WriteImm completion carrying imm after the data.
    virtual Status post_write(int peer, const void* buf, size_t len, void* desc,
                              uint64_t remote_addr, uint64_t remote_key, bool has_imm,
                              uint32_t imm, uint64_t context) = 0;

    // RDMA read: len bytes of peer's registered memory at remote_addr into
    // local registered memory (desc from its region); a Read completion on the
    // send CQ says they are there. Drivers without it return Error.
    virtual bool supports_read() const { return false; }
    virtual Status post_read(int /*peer*/, void* /*buf*/, size_t /*len*/, void* /*desc*/,
                             uint64_t /*remote_addr*/, uint64_t /*remote_key*/,
                             uint64_t /*context*/) {
        return Status::Error;
    }
    // An 8-byte atomic on peer's registered memory at remote_addr (8-byte
    // aligned); the old value lands in *result (registered memory, desc) and
    // an Atomic completion follows on the send CQ.
    virtual Status post_atomic(int /*peer*/, AtomicOp /*op*/, uint64_t /*operand*/,
                               uint64_t /*compare*/, uint64_t* /*result*/, void* /*desc*/,
                               uint64_t /*remote_addr*/, uint64_t /*remote_key*/,
                               uint64_t /*context*/) {
        return Status::Error;
    }
    // True when post_atomic runs on the target node's CPU with its ordinary
    // atomic instructions, in connection order with the messages posted
    // before it (their receive completions reported first): then a peer's
    // atomic and the target's own CPU atomics on the same word are atomic
    // with each other, and ordered after the messages the peer sent before.
    // One-sided communication uses the driver's atomics only then (NIC
    // atomics are atomic among themselves, not with the CPU's).
    virtual bool atomics_with_cpu() const { return false; }

    // Drain up to max completions; return how many were written to out. Every
    // field of each one written is set (callers reuse their arrays).
    virtual int poll_send_cq(Completion* out, int max) = 0;
    virtual int poll_recv_cq(Completion* out, int max) = 0;

    // Blocks until a completion may be available on either CQ, or until
    // interrupt() is called, or timeout_ms passes (-1: no timeout).
    virtual void wait(int timeout_ms) = 0;
    // Makes a concurrent wait() return. Any thread.
    virtual void interrupt() = 0;
};

// Opens a driver: "tcp", "ofi", "verbs", or "auto" (verbs when an RDMA device
// exists, otherwise tcp). On failure returns null and explains why in *error.
std::unique_ptr<Driver> open_driver(const std::string& kind, const DriverConfig& config,
                                    std::string* error);

// True when an RDMA device is visible to libibverbs (used by "auto").
bool rdma_device_present();

}  // namespace mpc::ib
