// The data path of the tcp driver: registration, posting, reading frames,
// completions, wait. Opening and connecting are in tcp_connect.cpp.
#include "tcp_driver.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/auth.hpp"
#include "runtime/log.hpp"

namespace mpc::ib::tcp {

namespace {

// A rank's errno must not change under it in an MPI call (a program may test
// errno of its own call after one): the entry points that make system calls
// keep the caller's value.
class KeepErrno {
  public:
    KeepErrno() : saved_(errno) {}
    ~KeepErrno() { errno = saved_; }
    KeepErrno(const KeepErrno&) = delete;
    KeepErrno& operator=(const KeepErrno&) = delete;

  private:
    int saved_;
};

std::string socket_error(const char* what, int err) {
    return std::string(what) + ": " + std::strerror(err);
}

}  // namespace

// ---- registration ----------------------------------------------------------

Status TcpDriver::register_memory(void* addr, size_t length, MemoryRegion* out) {
    std::lock_guard<runtime::SpinLock> guard(region_lock_);
    uint64_t key = 0;
    do {  // 0 marks no registration; a repeat of a live key is drawn again
        if (keys_left_ == 0) {
            runtime::auth::random_bytes(key_pool_, sizeof key_pool_);
            keys_left_ = sizeof key_pool_ / sizeof key_pool_[0];
        }
        key = key_pool_[--keys_left_];
    } while (key == 0 || regions_.count(key));
    regions_[key] = Region{reinterpret_cast<uintptr_t>(addr), length};
    out->addr = addr;
    out->length = length;
    out->remote_key = key;
    out->remote_base = reinterpret_cast<uint64_t>(addr);
    out->local_desc = nullptr;
    out->handle = reinterpret_cast<void*>(static_cast<uintptr_t>(key));
    return Status::Ok;
}

void TcpDriver::deregister_memory(MemoryRegion& mr) {
    if (mr.handle) {
        std::lock_guard<runtime::SpinLock> guard(region_lock_);
        regions_.erase(mr.remote_key);
    }
    mr = MemoryRegion{};
}

bool TcpDriver::find_region(uint64_t key, uint64_t addr, uint64_t len) {
    std::lock_guard<runtime::SpinLock> guard(region_lock_);
    auto it = regions_.find(key);
    if (it == regions_.end()) return false;
    const Region& r = it->second;
    return addr >= r.addr && len <= r.length && addr - r.addr <= r.length - len;
}

Status TcpDriver::repost_recv(uint32_t index) {
    if (index >= config_.recv_buffers) return Status::Error;
    std::lock_guard<runtime::SpinLock> guard(free_lock_);
    free_buffers_.push_back(index);
    return Status::Ok;
}

// ---- sending ---------------------------------------------------------------

Status TcpDriver::post_send(int peer, const void* buf, size_t len, void*, uint64_t context) {
    if (len > config_.recv_buffer_size) return Status::Error;
    FrameHeader header{FrameKind::Send, 0, len};
    return post(peer, header, nullptr, 0, buf, len, Completion::Type::Send, context);
}

Status TcpDriver::post_send_lazy(int peer, const void* buf, size_t len, void*, uint64_t context) {
    if (len > config_.recv_buffer_size) return Status::Error;
    FrameHeader header{FrameKind::Send, 0, len};
    return post(peer, header, nullptr, 0, buf, len, Completion::Type::Send, context, true, true);
}

Status TcpDriver::post_write(int peer, const void* buf, size_t len, void*, uint64_t remote_addr,
                             uint64_t remote_key, bool has_imm, uint32_t imm, uint64_t context) {
    FrameHeader header{has_imm ? FrameKind::WriteImm : FrameKind::Write, imm, len};
    WriteTarget target{remote_addr, remote_key};
    return post(peer, header, &target, sizeof target, buf, len, Completion::Type::Write, context);
}

// report: writing the frame out completes the operation (a send, a write);
// not for a request (its answer does). An answer is the driver's own
// (context 0, type Send): neither counted against the queue depth nor
// reported, and never refused.
Status TcpDriver::post(int peer, const FrameHeader& header, const void* extra, size_t extra_len,
                       const void* buf, size_t len, Completion::Type type, uint64_t context,
                       bool report, bool lazy) {
    KeepErrno keep;
    if (peer < 0 || peer >= config_.num_peers || !connections_[peer]) return Status::Error;
    Connection& conn = *connections_[peer];
    const bool answer = !report && context == 0 && type == Completion::Type::Send;
    std::lock_guard<std::mutex> guard(conn.out_lock);
    if (!answer) {
        if (conn.outstanding.load(std::memory_order_relaxed) >= config_.send_queue_depth)
            return Status::Again;
        conn.outstanding.fetch_add(1, std::memory_order_relaxed);
    }
    if (conn.broken.load(std::memory_order_relaxed)) {
        // (A request's failure is reported by fail_awaited, at the break.)
        if (report) record({type, false, peer, context});
        else if (!answer) fail_awaited(peer);
        return Status::Ok;
    }
    OutOp op;
    std::memcpy(op.head, &header, sizeof header);
    op.head_len = sizeof header;
    if (extra_len) {
        std::memcpy(op.head + sizeof header, extra, extra_len);
        op.head_len += extra_len;
    }
    op.data = static_cast<const char*>(buf);
    op.len = len;
    op.type = type;
    op.context = context;
    op.report = report;
    // Behind queued operations a new one waits its turn (stream order), and
    // the poster pushes the queue on, unless it is lazy too.
    const bool behind = !conn.out.empty();
    if (!behind && !lazy) {
        if (write_some(conn, op)) {
            if (report) record({type, true, peer, context});
            return Status::Ok;
        }
        if (conn.broken.load(std::memory_order_relaxed)) {
            if (report) record({type, false, peer, context});
            return Status::Ok;
        }
    }
    conn.out.push_back(op);
    queued_ops_.fetch_add(1, std::memory_order_relaxed);
    if (behind && !lazy) flush(conn);
    return Status::Ok;
}

bool TcpDriver::write_some(Connection& conn, OutOp& op) {
    const size_t total = op.head_len + op.len;
    while (op.sent < total) {
        iovec iov[2];
        int n = 0;
        if (op.sent < op.head_len) {
            iov[n++] = {op.head + op.sent, op.head_len - op.sent};
            if (op.len) iov[n++] = {const_cast<char*>(op.data), op.len};
        } else {
            iov[n++] = {const_cast<char*>(op.data) + (op.sent - op.head_len), total - op.sent};
        }
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = static_cast<size_t>(n);
        ssize_t w = ::sendmsg(conn.fd.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            op.sent += static_cast<size_t>(w);
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
        fail_locked(conn, socket_error("sending", w < 0 ? errno : EPIPE));
        return false;
    }
    return true;
}

// Writes the queue out, several frames per sendmsg.
void TcpDriver::flush(Connection& conn) {
    constexpr size_t kGather = 16;  // frames per sendmsg (two pieces each)
    while (!conn.out.empty()) {
        iovec iov[2 * kGather];
        size_t n = 0;
        for (auto it = conn.out.begin(); it != conn.out.end() && n + 2 <= 2 * kGather; ++it) {
            const OutOp& op = *it;
            if (op.sent < op.head_len) {
                iov[n++] = {const_cast<char*>(op.head) + op.sent, op.head_len - op.sent};
                if (op.len) iov[n++] = {const_cast<char*>(op.data), op.len};
            } else {
                iov[n++] = {const_cast<char*>(op.data) + (op.sent - op.head_len),
                            op.head_len + op.len - op.sent};
            }
        }
        msghdr msg{};
        msg.msg_iov = iov;
        msg.msg_iovlen = n;
        const ssize_t w = ::sendmsg(conn.fd.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // the kernel is full
        if (w <= 0) return fail_locked(conn, socket_error("sending", w < 0 ? errno : EPIPE));
        // The frames written out complete; the first one not wholly written
        // keeps its place.
        size_t left = static_cast<size_t>(w);
        while (left > 0) {
            OutOp& op = conn.out.front();
            const size_t rest = op.head_len + op.len - op.sent;
            if (left < rest) {
                op.sent += left;
                break;
            }
            left -= rest;
            if (op.report) record({op.type, true, conn.peer, op.context});
            conn.out.pop_front();
            queued_ops_.fetch_sub(1, std::memory_order_relaxed);
        }
    }
}

void TcpDriver::flush_all() {
    for (Connection* conn : peers_) {
        std::unique_lock<std::mutex> guard(conn->out_lock, std::try_to_lock);
        // Busy: a poster, who pushes the queue on itself.
        if (guard.owns_lock()) flush(*conn);
    }
}

void TcpDriver::record(const SentRecord& r) {
    std::lock_guard<runtime::SpinLock> guard(sent_lock_);
    // Never full: a connection has at most send_queue_depth records unpolled.
    sent_[(sent_head_ + sent_count_) % sent_.size()] = r;
    ++sent_count_;
}

void TcpDriver::fail_locked(Connection& conn, const std::string& why) {
    if (conn.broken.load(std::memory_order_relaxed)) return;
    conn.why = why;
    conn.broken.store(true, std::memory_order_release);
    lost_unsaid_.fetch_add(1, std::memory_order_relaxed);
    ::shutdown(conn.fd.get(), SHUT_RDWR);
    // Its end of file would be reported to every poll from now on.
    epoll_ctl(ready_epoll_.get(), EPOLL_CTL_DEL, conn.fd.get(), nullptr);
    for (const OutOp& op : conn.out)
        if (op.report) record({op.type, false, conn.peer, op.context});
    queued_ops_.fetch_sub(static_cast<int>(conn.out.size()), std::memory_order_relaxed);
    conn.out.clear();
    fail_awaited(conn.peer);
    runtime::debug("tcp: connection to node %d broken: %s", conn.peer, why.c_str());
}

void TcpDriver::fail(Connection& conn, const std::string& why) {
    std::lock_guard<std::mutex> guard(conn.out_lock);
    fail_locked(conn, why);
}

int TcpDriver::poll_send_cq(Completion* out, int max) {
    KeepErrno keep;
    if (queued_ops_.load(std::memory_order_relaxed) > 0) flush_all();
    int done = 0;
    std::lock_guard<runtime::SpinLock> guard(sent_lock_);
    while (done < max && sent_count_ > 0) {
        const SentRecord r = sent_[sent_head_];
        sent_head_ = (sent_head_ + 1) % sent_.size();
        --sent_count_;
        Connection& conn = *connections_[r.peer];
        conn.outstanding.fetch_sub(1, std::memory_order_relaxed);
        Completion& c = out[done++];
        c.type = r.type;
        c.ok = r.ok;
        c.context = r.context;
        c.buffer = 0;
        c.length = 0;
        c.imm = 0;
        c.error.clear();
        if (!r.ok)  // why was set before broken, which the failure saw
            c.error = "connection to node " + std::to_string(r.peer) + ": " + conn.why;
    }
    return done;
}

// ---- receiving -------------------------------------------------------------

// Reads more bytes into the stage; false when none came (would block, or the
// connection broke).
bool TcpDriver::fill_stage(Connection& conn) {
    Inbound& in = conn.in;
    if (in.begin > 0) {
        std::memmove(in.stage.get(), in.stage.get() + in.begin, in.end - in.begin);
        in.end -= in.begin;
        in.begin = 0;
    }
    const size_t n = receive(conn, in.stage.get() + in.end, kStageBytes - in.end);
    in.end += n;
    return n > 0;
}

size_t TcpDriver::receive(Connection& conn, char* dst, size_t len) {
    for (;;) {
        const ssize_t n = ::recv(conn.fd.get(), dst, len, MSG_DONTWAIT);
        if (n > 0) {
            // A short read drained the socket: the next recv would only say
            // EAGAIN. (Bytes arriving meanwhile wait for the next poll.)
            if (static_cast<size_t>(n) < len) conn.in.readable = false;
            return static_cast<size_t>(n);
        }
        if (n < 0 && errno == EINTR) continue;
        conn.in.readable = false;
        if (n == 0)
            fail(conn, "closed by node " + std::to_string(conn.peer));
        else if (errno != EAGAIN && errno != EWOULDBLOCK)
            fail(conn, socket_error("receiving", errno));
        return 0;
    }
}

TcpDriver::Start TcpDriver::start_frame(Connection& conn) {
    Inbound& in = conn.in;
    const size_t avail = in.end - in.begin;
    if (avail < sizeof(FrameHeader)) return Start::NeedBytes;
    FrameHeader header;
    std::memcpy(&header, in.stage.get() + in.begin, sizeof header);
    if (header.kind == FrameKind::Send) {
        if (header.length > config_.recv_buffer_size) {
            fail(conn, "a message of " + std::to_string(header.length) +
                           " bytes, larger than the receive buffers");
            return Start::Broken;
        }
        uint32_t index;
        {
            std::lock_guard<runtime::SpinLock> guard(free_lock_);
            if (free_buffers_.empty()) return Start::NoBuffer;
            index = free_buffers_.back();
            free_buffers_.pop_back();
        }
        in.begin += sizeof header;
        in.dest = static_cast<char*>(recv_buffer(index));
        in.done.type = Completion::Type::Recv;
        in.done.buffer = index;
        in.done.imm = 0;
        in.emit = true;
        in.answer = false;
    } else if (header.kind == FrameKind::ReadReq || header.kind == FrameKind::AtomicReq) {
        if (avail < sizeof header + sizeof(RemoteRequest)) return Start::NeedBytes;
        RemoteRequest request;
        std::memcpy(&request, in.stage.get() + in.begin + sizeof header, sizeof request);
        in.begin += sizeof header + sizeof request;
        if (!answer_request(conn, header.kind, request)) return Start::Broken;
        in.dest = nullptr;
        in.emit = false;
        in.answer = false;
        header.length = 0;  // no body
    } else if (header.kind == FrameKind::ReadResp || header.kind == FrameKind::AtomicResp) {
        if (avail < sizeof header + sizeof(Answer)) return Start::NeedBytes;
        Answer answer;
        std::memcpy(&answer, in.stage.get() + in.begin + sizeof header, sizeof answer);
        Awaited a{};
        bool known = false;
        {
            std::lock_guard<runtime::SpinLock> guard(awaited_lock_);
            auto it = awaited_.find(answer.token);
            if (it != awaited_.end() && it->second.peer == conn.peer &&
                it->second.length == header.length) {
                a = it->second;
                awaited_.erase(it);
                known = true;
            }
        }
        if (!known) {
            fail(conn, "node " + std::to_string(conn.peer) + " answered no request of ours");
            return Start::Broken;
        }
        in.begin += sizeof header + sizeof answer;
        in.dest = a.dest;
        in.emit = false;
        in.answer = true;
        in.answer_type = a.type;
        in.answer_context = a.context;
    } else if (header.kind == FrameKind::Write || header.kind == FrameKind::WriteImm) {
        if (avail < sizeof header + sizeof(WriteTarget)) return Start::NeedBytes;
        WriteTarget target;
        std::memcpy(&target, in.stage.get() + in.begin + sizeof header, sizeof target);
        if (!find_region(target.key ^ conn.key_mask, target.addr, header.length)) {
            fail(conn, "node " + std::to_string(conn.peer) +
                           " wrote outside any registered region (bad key or range)");
            return Start::Broken;
        }
        in.begin += sizeof header + sizeof target;
        in.dest = reinterpret_cast<char*>(static_cast<uintptr_t>(target.addr));
        in.done.type = Completion::Type::WriteImm;
        in.done.buffer = 0;
        in.done.imm = header.imm;
        in.emit = header.kind == FrameKind::WriteImm;
        in.answer = false;
    } else {
        fail(conn, "garbled data from node " + std::to_string(conn.peer));
        return Start::Broken;
    }
    in.done.ok = true;
    in.done.context = 0;
    in.done.length = header.length;
    in.done.error.clear();
    in.left = header.length;
    in.in_body = true;
    return Start::Started;
}

int TcpDriver::read_connection(Connection& conn, Completion* out, int max) {
    Inbound& in = conn.in;
    int done = 0;
    while (done < max && !conn.broken.load(std::memory_order_relaxed)) {
        if (in.in_body) {
            // The staged part of the body first, then straight from the socket.
            size_t take = std::min(in.left, in.end - in.begin);
            if (take) std::memcpy(in.dest, in.stage.get() + in.begin, take);
            in.begin += take;
            in.dest += take;
            in.left -= take;
            while (in.left > 0) {
                const size_t n = in.readable ? receive(conn, in.dest, in.left) : 0;
                if (n == 0) return done;
                in.dest += n;
                in.left -= n;
            }
            in.in_body = false;
            if (in.emit) out[done++] = in.done;
            if (in.answer) record({in.answer_type, true, conn.peer, in.answer_context});
            continue;
        }
        // A read or atomic request waits until the completions of the frames
        // before it are in the caller's hands (see the header).
        if (done > 0 && in.end - in.begin >= sizeof(FrameHeader)) {
            FrameKind kind;
            std::memcpy(&kind, in.stage.get() + in.begin, sizeof kind);
            if (kind == FrameKind::ReadReq || kind == FrameKind::AtomicReq) break;
        }
        const Start start = start_frame(conn);
        if (start == Start::Started) continue;
        // A frame waiting for a free pool buffer stays in the stage until a repost.
        if (start != Start::NeedBytes || !in.readable || !fill_stage(conn)) break;
    }
    return done;
}

int TcpDriver::poll_recv_cq(Completion* out, int max) {
    KeepErrno keep;
    if (queued_ops_.load(std::memory_order_relaxed) > 0) flush_all();
    // Which sockets have data: epoll does not lock them. A recv that finds
    // nothing does, and a socket locked by its reader makes the kernel set
    // arriving data aside for that reader to process later; a receiver trying
    // recv in a loop halved the bandwidth of a large write.
    epoll_event events[64];
    const int ready = epoll_wait(ready_epoll_.get(), events, 64, 0);
    for (int i = 0; i < ready; ++i) connections_[events[i].data.u32]->in.readable = true;
    int done = 0;
    const size_t count = peers_.size();
    for (size_t k = 0; k < count && done < max; ++k) {
        Connection& conn = *peers_[(next_peer_ + k) % count];
        done += read_connection(conn, out + done, max - done);
    }
    if (count) next_peer_ = (next_peer_ + 1) % count;
    bool staged = false;
    for (Connection* conn : peers_)
        staged = staged || conn->in.end - conn->in.begin >= sizeof(FrameHeader);
    staged_.store(staged, std::memory_order_relaxed);
    return done;
}

// ---- connection state, sleeping ----------------------------------------------

bool TcpDriver::connection_lost(int* peer, std::string* why) {
    KeepErrno keep;
    if (lost_unsaid_.load(std::memory_order_relaxed) == 0) find_hangups();
    if (lost_unsaid_.load(std::memory_order_relaxed) == 0) return false;
    for (Connection* conn : peers_) {
        if (!conn->broken.load(std::memory_order_acquire) || conn->reported) continue;
        conn->reported = true;
        lost_unsaid_.fetch_sub(1, std::memory_order_relaxed);
        *peer = conn->peer;
        *why = conn->why;
        return true;
    }
    return false;
}

// A peer that closed or reset its end while this node only waits shows no
// frame: ask the kernel about every live socket at once.
void TcpDriver::find_hangups() {
    std::vector<pollfd> fds;
    std::vector<Connection*> live;
    for (Connection* conn : peers_) {
        if (conn->broken.load(std::memory_order_relaxed)) continue;
        fds.push_back({conn->fd.get(), static_cast<short>(POLLRDHUP), 0});
        live.push_back(conn);
    }
    if (fds.empty() || ::poll(fds.data(), fds.size(), 0) <= 0) return;
    for (size_t i = 0; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR))) continue;
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
        fail(*live[i], err ? socket_error("connection", err)
                           : "closed by node " + std::to_string(live[i]->peer));
    }
}

void TcpDriver::wait(int timeout_ms) {
    KeepErrno keep;
    {
        std::lock_guard<runtime::SpinLock> guard(sent_lock_);
        if (sent_count_ > 0) return;
    }
    // Frames read but not parsed (the caller's batch was full) need no wake-up.
    if (lost_unsaid_.load(std::memory_order_relaxed) > 0 || staged_.load(std::memory_order_relaxed))
        return;
    const bool writing = queued_ops_.load(std::memory_order_relaxed) > 0;
    for (Connection* conn : peers_) {
        // A broken socket stays readable (end of file): stop watching it.
        if (conn->broken.load(std::memory_order_relaxed)) {
            if (!conn->unwatched) wakeup_.remove(conn->fd.get());
            conn->unwatched = true;
            continue;
        }
        bool want_out = writing && [&] {
            std::lock_guard<std::mutex> guard(conn->out_lock);
            return !conn->out.empty();
        }();
        if (want_out != conn->out_armed) {
            wakeup_.watch(conn->fd.get(), want_out ? EPOLLIN | EPOLLOUT : EPOLLIN);
            conn->out_armed = want_out;
        }
    }
    wakeup_.wait(timeout_ms);
}

}  // namespace mpc::ib::tcp
