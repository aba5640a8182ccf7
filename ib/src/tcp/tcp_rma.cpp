// The tcp driver's one-sided operations: RDMA reads and 8-byte atomics as
// requests the target node process answers when it polls (the frames are in
// tcp_driver.hpp), and the requests awaiting their answers.
#include <cstring>

#include "tcp_driver.hpp"

namespace mpc::ib::tcp {

Status TcpDriver::post_read(int peer, void* buf, size_t len, void*, uint64_t remote_addr,
                            uint64_t remote_key, uint64_t context) {
    RemoteRequest request{};
    request.addr = remote_addr;
    request.key = remote_key;
    request.length = len;
    return post_request(peer, FrameKind::ReadReq, request, static_cast<char*>(buf), len,
                        Completion::Type::Read, context);
}

Status TcpDriver::post_atomic(int peer, AtomicOp op, uint64_t operand, uint64_t compare,
                              uint64_t* result, void*, uint64_t remote_addr, uint64_t remote_key,
                              uint64_t context) {
    if (remote_addr % 8 != 0) return Status::Error;
    RemoteRequest request{};
    request.addr = remote_addr;
    request.key = remote_key;
    request.length = 8;
    request.operand = operand;
    request.compare = compare;
    request.op = static_cast<uint32_t>(op);
    return post_request(peer, FrameKind::AtomicReq, request, reinterpret_cast<char*>(result), 8,
                        Completion::Type::Atomic, context);
}

// The request is awaited before it can leave: its answer may come back
// before post() returns, to a poller on another thread.
Status TcpDriver::post_request(int peer, FrameKind kind, const RemoteRequest& request, char* dest,
                               size_t length, Completion::Type type, uint64_t context) {
    if (peer < 0 || peer >= config_.num_peers || !connections_[peer]) return Status::Error;
    RemoteRequest r = request;
    {
        std::lock_guard<runtime::SpinLock> guard(awaited_lock_);
        r.token = next_token_++;
        awaited_[r.token] = Awaited{peer, type, dest, length, context};
    }
    FrameHeader header{kind, 0, 0};
    const Status st = post(peer, header, &r, sizeof r, nullptr, 0, type, context, false);
    if (st != Status::Ok) {
        std::lock_guard<runtime::SpinLock> guard(awaited_lock_);
        awaited_.erase(r.token);
    }
    return st;
}

void TcpDriver::fail_awaited(int peer) {
    std::vector<Awaited> failed;
    {
        std::lock_guard<runtime::SpinLock> guard(awaited_lock_);
        for (auto it = awaited_.begin(); it != awaited_.end();) {
            if (it->second.peer == peer) {
                failed.push_back(it->second);
                it = awaited_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (const Awaited& a : failed) record({a.type, false, peer, a.context});
}

bool TcpDriver::answer_request(Connection& conn, FrameKind kind, const RemoteRequest& r) {
    if (!find_region(r.key, r.addr, r.length) ||
        (kind == FrameKind::AtomicReq && (r.length != 8 || r.addr % 8 != 0 ||
                                          r.op > static_cast<uint32_t>(AtomicOp::CompareSwap)))) {
        fail(conn, "node " + std::to_string(conn.peer) +
                       " asked to read or update memory outside any registered region");
        return false;
    }
    if (kind == FrameKind::ReadReq) {
        FrameHeader header{FrameKind::ReadResp, 0, r.length};
        Answer answer{r.token};
        // The bytes leave from the registered memory itself (its owner does not
        // change them before the requester has them: MPI's rules).
        post(conn.peer, header, &answer, sizeof answer,
             reinterpret_cast<const char*>(static_cast<uintptr_t>(r.addr)), r.length,
             Completion::Type::Send, 0, false);
        return true;
    }
    auto* word = reinterpret_cast<uint64_t*>(static_cast<uintptr_t>(r.addr));
    uint64_t old;
    if (static_cast<AtomicOp>(r.op) == AtomicOp::FetchAdd) {
        old = __atomic_fetch_add(word, r.operand, __ATOMIC_SEQ_CST);
    } else {
        old = r.compare;
        __atomic_compare_exchange_n(word, &old, r.operand, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
    }
    struct {
        Answer answer;
        uint64_t value;
    } body{{r.token}, old};
    FrameHeader header{FrameKind::AtomicResp, 0, sizeof old};
    post(conn.peer, header, &body, sizeof body, nullptr, 0, Completion::Type::Send, 0, false);
    return true;
}

}  // namespace mpc::ib::tcp
