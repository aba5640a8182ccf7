// The tcp driver: plain TCP sockets, one per pair of node processes, with no
// library between the network layer and the kernel.
//
// Why a driver of our own beside ofi's tcp provider: on this kind of host the
// provider costs a message a write and a read on an internal signal socket
// besides the transfer itself, about 2 us per small message on loopback,
// while a socket driver needs one sendmsg at the sender and one recv at the
// receiver (docs/architecture.md, "The network drivers").
//
// Every operation travels as a frame: a FrameHeader, for writes a WriteTarget,
// then the payload. A send's payload lands in a receive-pool buffer (copied
// from the staging buffer a recv fills, so that one system call takes in
// several small frames); a write's payload goes straight into the registered
// region it names, read from the socket into place once its first bytes are
// through. The connection is a byte stream, so a write's data precedes its
// immediate and everything posted after it, as the interface requires.
//
// Sending: the posting thread writes the frame itself with one sendmsg; what
// the kernel does not take stays queued on its connection and is written by
// later posts and polls. An operation is complete once all its bytes are in
// the kernel; its completion waits in a ring for poll_send_cq.
// Receiving: a poll asks an epoll set which sockets have data (see
// poll_recv_cq for why it does not simply try recv on each).
// Keys are this driver's own: 64 random bits per registration, and each
// connection has a random mask of its own that a key is combined with before
// it is given to that peer (remote_key_for), so a key is unguessable and good
// on the connection it was given to only. A write naming a key or range
// nobody registered (or given to another peer) breaks the connection (as RDMA
// transports do).
//
// Connections open with the job's handshake (runtime/handshake.hpp) in
// tcp_setup.cpp: every pair of node processes is connected once, all
// handshakes progress together in one poll loop, and a connection that fails
// its proof, or keeps silent, is closed and logged without holding up the
// others. The listener binds loopback for a job on one host, else the job's
// interface, and closes once every pair is connected.
//
// Reads and atomics are requests the target node process executes when it
// polls: a ReadReq is answered by a ReadResp carrying the bytes (sent from
// the registered memory itself), an AtomicReq is done with the CPU's own
// atomic instruction and answered by an AtomicResp with the old value; the
// answer lands in the requester's buffer like a write and completes the
// operation on its send CQ. A request is executed only once the receive
// completions of the frames before it on its connection have been handed to
// the caller (a poll stops before it otherwise), so an atomic never
// overtakes the messages its origin sent first.
//
// Threading: posts to one connection serialize on its out_lock; the receive
// side (Inbound) belongs to the thread polling the receive CQ (one at a
// time, as the interface says); wait() is called by one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "../buffer_block.hpp"
#include "../connection_watch.hpp"
#include "../unique_fd.hpp"
#include "../wakeup_set.hpp"
#include "ib/driver.hpp"
#include "runtime/sync.hpp"

namespace mpc::ib::tcp {

enum class FrameKind : uint32_t {
    Send = 0x5e4d0001,
    Write = 0x5e4d0002,
    WriteImm = 0x5e4d0003,
    ReadReq = 0x5e4d0004,
    ReadResp = 0x5e4d0005,
    AtomicReq = 0x5e4d0006,
    AtomicResp = 0x5e4d0007,
};

struct FrameHeader {
    FrameKind kind;
    uint32_t imm;
    uint64_t length;  // payload bytes
};
struct WriteTarget {
    uint64_t addr;
    uint64_t key;
};
// Follows the header of ReadReq and AtomicReq frames (which have no body).
struct RemoteRequest {
    uint64_t addr;
    uint64_t key;
    uint64_t length;  // ReadReq: bytes to read; AtomicReq: 8
    uint64_t token;   // echoed by the answer: the requester's operation
    uint64_t operand;
    uint64_t compare;
    uint32_t op;  // AtomicReq: an AtomicOp
    uint32_t pad;
};
// Follows the header of ReadResp and AtomicResp frames, before the body.
struct Answer {
    uint64_t token;
};

class TcpDriver final : public Driver, public ConnectionWatch {
  public:
    static std::unique_ptr<Driver> open(const DriverConfig& config, std::string* error);
    ~TcpDriver() override;

    const char* name() const override { return "tcp"; }
    std::string local_address() override { return local_address_; }
    Status connect_all(const std::vector<std::string>& addresses) override;

    Status register_memory(void* addr, size_t length, MemoryRegion* out) override;
    void deregister_memory(MemoryRegion& mr) override;
    uint64_t remote_key_for(const MemoryRegion& mr, int peer) const override {
        const Connection* conn = connections_[static_cast<size_t>(peer)].get();
        return conn ? mr.remote_key ^ conn->key_mask : mr.remote_key;
    }

    void* recv_buffer(uint32_t index) override {
        return pool_.data() + static_cast<size_t>(index) * config_.recv_buffer_size;
    }
    Status repost_recv(uint32_t index) override;

    Status post_send(int peer, const void* buf, size_t len, void* desc, uint64_t context) override;
    // Queued, not written: the next post to peer (or poll) writes it with its
    // own frame in one sendmsg (a wait with it queued arms EPOLLOUT).
    Status post_send_lazy(int peer, const void* buf, size_t len, void* desc,
                          uint64_t context) override;
    // A rendezvous in writes of 512 KiB: 4 MiB ping-pongs on loopback took
    // 0.93 ms against 1.55 with one write per message (5 interleaved runs).
    size_t write_chunk() const override { return size_t{512} << 10; }
    Status post_write(int peer, const void* buf, size_t len, void* desc, uint64_t remote_addr,
                      uint64_t remote_key, bool has_imm, uint32_t imm, uint64_t context) override;
    bool supports_read() const override { return true; }
    Status post_read(int peer, void* buf, size_t len, void* desc, uint64_t remote_addr,
                     uint64_t remote_key, uint64_t context) override;
    Status post_atomic(int peer, AtomicOp op, uint64_t operand, uint64_t compare, uint64_t* result,
                       void* desc, uint64_t remote_addr, uint64_t remote_key,
                       uint64_t context) override;
    bool atomics_with_cpu() const override { return true; }

    int poll_send_cq(Completion* out, int max) override;
    int poll_recv_cq(Completion* out, int max) override;

    bool connection_lost(int* peer, std::string* why) override;
    void wait(int timeout_ms) override;
    void interrupt() override { wakeup_.interrupt(); }

  private:
    static constexpr size_t kStageBytes = 64 * 1024;  // per connection

    // A posted operation whose bytes are not all in the kernel yet.
    struct OutOp {
        char head[sizeof(FrameHeader) + sizeof(RemoteRequest)];
        size_t head_len = 0;
        const char* data = nullptr;
        size_t len = 0;
        size_t sent = 0;  // of head_len + len
        Completion::Type type = Completion::Type::Send;
        uint64_t context = 0;
        // Whether writing it out completes a posted operation: not for a
        // read or atomic request (its answer does), nor for an answer.
        bool report = true;
    };

    // A read or atomic request waiting for its answer.
    struct Awaited {
        int peer;
        Completion::Type type;
        char* dest;
        size_t length;
        uint64_t context;
    };

    // The receiving half of a connection: the polling thread's alone.
    struct Inbound {
        std::unique_ptr<char[]> stage;  // bytes read, not yet parsed: [begin, end)
        size_t begin = 0, end = 0;
        char* dest = nullptr;  // where the frame body being received goes
        size_t left = 0;       // body bytes still to come
        bool in_body = false;
        bool emit = false;  // body done: report `done`
        Completion done;
        // Body done: an answer to our read or atomic, to report on the send CQ.
        bool answer = false;
        Completion::Type answer_type = Completion::Type::Read;
        uint64_t answer_context = 0;
        bool readable = false;  // worth a recv on this poll
    };

    struct Connection {
        int peer = -1;
        UniqueFd fd;
        uint64_t key_mask = 0;                 // random: keys given to this peer are key ^ key_mask
        std::mutex out_lock;                   // the sending half and `why`
        std::deque<OutOp> out;                 // queued, in posting order
        std::atomic<uint32_t> outstanding{0};  // posted, completion not yet polled
        Inbound in;
        std::atomic<bool> broken{false};
        bool reported = false;  // connection_lost said it
        // wait()'s alone (one thread waits at a time, as the network does):
        bool out_armed = false;  // watched for writability
        bool unwatched = false;  // broken, out of the wait set
        std::string why;         // set before broken
    };

    struct SentRecord {
        Completion::Type type;
        bool ok;
        int peer;
        uint64_t context;
    };

    struct Region {
        uintptr_t addr;
        size_t length;
    };

    explicit TcpDriver(const DriverConfig& config) : config_(config) {}
    bool init(std::string* error);
    bool listen(std::string* error);
    // tcp_setup.cpp: connects every pair through the handshake; false with
    // *error (nodes missing at the deadline, a peer that failed its proof).
    bool set_up_connections(const std::vector<std::string>& addresses, int64_t deadline,
                            std::string* error);
    bool ready_connection(Connection& conn, std::string* error);

    Status post(int peer, const FrameHeader& header, const void* extra, size_t extra_len,
                const void* buf, size_t len, Completion::Type type, uint64_t context,
                bool report = true, bool lazy = false);
    Status post_request(int peer, FrameKind kind, const RemoteRequest& request, char* dest,
                        size_t length, Completion::Type type, uint64_t context);
    // The target's side of a request (the polling thread's): checks it, does
    // it and queues the answer; false when it broke the connection.
    bool answer_request(Connection& conn, FrameKind kind, const RemoteRequest& request);
    // Writes what the kernel takes of op; true when all of it is in. On a
    // socket error breaks the connection and returns false.
    bool write_some(Connection& conn, OutOp& op);
    void flush(Connection& conn);  // caller holds out_lock
    void flush_all();
    void record(const SentRecord& r);
    // Breaks conn: queued operations fail, the peer sees the socket shut.
    // Caller holds conn.out_lock.
    void fail_locked(Connection& conn, const std::string& why);
    void fail(Connection& conn, const std::string& why);

    int read_connection(Connection& conn, Completion* out, int max);
    enum class Start { Started, NeedBytes, NoBuffer, Broken };
    // Starts the frame at the head of the stage.
    Start start_frame(Connection& conn);
    bool fill_stage(Connection& conn);
    // One recv into [dst, dst + len): the bytes read, or 0 when none came
    // (would block, or the connection broke). Clears readable when drained.
    size_t receive(Connection& conn, char* dst, size_t len);
    void find_hangups();
    bool find_region(uint64_t key, uint64_t addr, uint64_t len);
    // Fails the requests awaiting answers from a broken connection's peer.
    void fail_awaited(int peer);

    DriverConfig config_;
    std::string local_address_;
    UniqueFd listen_fd_;
    std::vector<std::unique_ptr<Connection>> connections_;  // by node; null for self
    std::vector<Connection*> peers_;                        // the others, for polling
    size_t next_peer_ = 0;                                  // round robin start
    UniqueFd ready_epoll_;  // which sockets have data (polls ask it)
    WakeupSet wakeup_;

    BufferBlock pool_;
    runtime::SpinLock free_lock_;
    std::vector<uint32_t> free_buffers_;  // posted, ready to receive into

    runtime::SpinLock sent_lock_;
    std::vector<SentRecord> sent_;  // ring of completed sends and writes
    size_t sent_head_ = 0, sent_count_ = 0;

    std::atomic<int> queued_ops_{0};   // OutOps on all connections
    std::atomic<int> lost_unsaid_{0};  // broken connections not yet reported
    std::atomic<bool> staged_{false};  // a poll left whole headers in a stage
    runtime::SpinLock awaited_lock_;
    std::unordered_map<uint64_t, Awaited> awaited_;  // by token
    uint64_t next_token_ = 1;                        // under awaited_lock_
    runtime::SpinLock region_lock_;
    std::unordered_map<uint64_t, Region> regions_;
    uint64_t key_pool_[32];  // random keys drawn ahead (one getrandom per 32 registrations)
    size_t keys_left_ = 0;
};

}  // namespace mpc::ib::tcp
