// Receiving: dispatching completions into pending lists, and processing work
// requests for a rank (its own thread or a thief): order, matching, copies,
// rendezvous answers.
#include <algorithm>
#include <cstring>

#include "network_impl.hpp"
#include "runtime/log.hpp"
#include "runtime/tools.hpp"

namespace mpc::ib {
namespace {

FragKey frag_key(const RecvOp& op) {
    return FragKey{static_cast<uint32_t>(op.src_node), op.msg_id};
}

}  // namespace

// ---- Dispatch (under the CQ try-lock) -------------------------------------------

void NetworkImpl::dispatch_recv(const Completion& c) {
    if (!c.ok) {
        check_connections();
        runtime::fatal("network: a receive failed: %s", c.error.c_str());
    }
    char* buf = static_cast<char*>(driver_->recv_buffer(c.buffer));
    auto repost = [&] {
        if (driver_->repost_recv(c.buffer) != Status::Ok)
            runtime::fatal("network: cannot repost a receive buffer");
    };
    if (c.length < sizeof(Header) || c.length > buffer_size_) {
        runtime::warn("network: dropped a malformed message of %zu bytes", c.length);
        repost();
        return;
    }
    const Header* h = reinterpret_cast<const Header*>(buf);
    runtime::debug("net: received type %d from node %u (%zu bytes)", static_cast<int>(h->type),
                   h->src_node, c.length);
    if (h->src_node >= static_cast<uint32_t>(layout_.num_nodes) ||
        h->src_node == static_cast<uint32_t>(layout_.node_id)) {
        runtime::warn("network: dropped a message from unknown node process %u", h->src_node);
        repost();
        return;
    }
    const int src_node = static_cast<int>(h->src_node);
    if (h->credits) {
        Peer& p = *peers_[static_cast<size_t>(src_node)];
        p.lock.lock();
        // Credits come back to the reserve first: it is what Credit messages use.
        int n = h->credits;
        int refill = std::min(n, 2 - p.reserve);
        p.reserve += refill;
        p.credits += n - refill;
        p.lock.unlock();
        queued_.load(std::memory_order_relaxed) > 0 ? flush_peer(src_node) : void();
    }
    if (h->type == MsgType::Credit) {
        repost();
        return_credit(src_node);
        return;
    }
    if (h->type == MsgType::Bye) {
        peers_[static_cast<size_t>(src_node)]->done.store(true, std::memory_order_release);
        repost();
        return;
    }
    // One-sided messages are the engine's, done here, in arrival order, by
    // whoever drains: they need no rank (collaborative polling for RMA).
    if (h->type == MsgType::Rma) {
        if (rma_handler_.message && c.length - sizeof(Header) == h->bytes)
            rma_handler_.message(rma_handler_.ctx, src_node, buf + sizeof(Header), h->bytes);
        else
            runtime::warn("network: dropped a one-sided message from node process %d", src_node);
        repost();
        return_credit(src_node);
        return;
    }
    const bool known_type = h->type >= MsgType::Eager && h->type <= MsgType::RndvData;
    const bool local_dest = h->dst_world >= 0 &&
                            static_cast<size_t>(h->dst_world) < layout_.node_of.size() &&
                            layout_.node_of[static_cast<size_t>(h->dst_world)] == layout_.node_id;
    const bool valid_src = !carries_match(h->type) ||
                           (h->src_world >= 0 && static_cast<size_t>(h->src_world) < layout_.node_of.size());
    if (!known_type || !local_dest || !valid_src ||
        (h->type == MsgType::Eager && c.length - sizeof(Header) != h->bytes)) {
        runtime::warn("network: dropped an invalid message (type %d) from node process %d",
                      static_cast<int>(h->type), src_node);
        repost();
        return_credit(src_node);
        return;
    }
    // Read before a repost below hands the buffer back to the driver.
    const int dest_local = layout_.local_of[static_cast<size_t>(h->dst_world)];
    auto* wr = new WorkRequest();
    wr->length = c.length;
    wr->dispatched_ns = runtime::tools::g_transport.on() ? runtime::now_ns() : 0;
    // With half the pool held by unprocessed work, copy it out: a busy rank must
    // not starve the others of receive buffers.
    if (pool_out_.load(std::memory_order_relaxed) > static_cast<int>(pool_size_ / 2)) {
        wr->copy.reset(new char[c.length]);
        memcpy(wr->copy.get(), buf, c.length);
        wr->header = reinterpret_cast<const Header*>(wr->copy.get());
        repost();
        return_credit(src_node);
    } else {
        wr->pool_index = c.buffer;
        wr->header = h;
        pool_out_.fetch_add(1, std::memory_order_relaxed);
    }
    push_work(dest_local, wr);
}

void NetworkImpl::dispatch_write_imm(const Completion& c) {
    if (!c.ok) runtime::fatal("network: an RDMA write into this node failed: %s", c.error.c_str());
    uint64_t id = recv_ops_.expand(c.imm);
    RecvOp* op = id ? recv_ops_.find(id) : nullptr;
    if (!op) {
        runtime::warn("network: dropped a write completion for unknown receive %u", c.imm);
        return;
    }
    auto* wr = new WorkRequest();
    wr->kind = WorkRequest::Kind::WriteDone;
    wr->recv_op = id;
    wr->dispatched_ns = runtime::tools::g_transport.on() ? runtime::now_ns() : 0;
    push_work(op->local, wr);
}

void NetworkImpl::handle_send_completion(const Completion& c) {
    if (!c.ok && !stopping_.load()) {
        check_connections();  // names the peer when its connection broke
        runtime::fatal("network: a send failed: %s", c.error.c_str());
    }
    inflight_.fetch_sub(1, std::memory_order_relaxed);
    const uint64_t kind = c.context & kCtxMask;
    if (kind == kCtxSendBuffer) {
        free_send_buffer(static_cast<uint32_t>(c.context & 0xffffffffu));
        return;
    }
    if (kind == kCtxRma) {
        rma_completion(c);
        return;
    }
    if (kind == kCtxWrite) {
        writes_inflight_.fetch_sub(1, std::memory_order_relaxed);
        uint64_t id = send_ops_.expand(static_cast<uint32_t>(c.context));
        SendOp* op = id ? send_ops_.find(id) : nullptr;
        if (op && op->writes_left.fetch_sub(1, std::memory_order_acq_rel) == 1) send_op_done(op);
    }
}

void NetworkImpl::push_work(int local, WorkRequest* wr) {
    RankSlot& s = *slots_[static_cast<size_t>(local)];
    s.list_lock.lock();
    wr->next = nullptr;
    if (s.tail) s.tail->next = wr; else s.head = wr;
    s.tail = wr;
    s.list_lock.unlock();
    s.pending.fetch_add(1, std::memory_order_release);
    if (upcalls_.work_arrived) upcalls_.work_arrived(upcalls_.ctx, local);
}

void NetworkImpl::release_work(WorkRequest* wr) {
    if (wr->pool_index != UINT32_MAX) {
        // The header lives in the buffer: read it before the buffer goes back
        // to the driver, which may fill it with the next message at once (a
        // poller on another thread; TSan saw the credit go to a stale node).
        const int src_node = static_cast<int>(wr->header->src_node);
        if (driver_->repost_recv(wr->pool_index) != Status::Ok)
            runtime::fatal("network: cannot repost a receive buffer");
        pool_out_.fetch_sub(1, std::memory_order_relaxed);
        return_credit(src_node);
    }
    delete wr;
}

// ---- Processing (under the rank's processing lock) --------------------------------

void NetworkImpl::process_in_order(int local, WorkRequest* wr) {
    if (wr->kind == WorkRequest::Kind::WriteDone) {
        on_write_done(wr->recv_op);
        delete wr;
        return;
    }
    const Header* h = wr->header;
    if (!carries_match(h->type)) {
        process(local, wr);
        return;
    }
    // Matched messages are processed in their sender's order, whatever order
    // their work requests come in.
    RankSlot& s = *slots_[static_cast<size_t>(local)];
    uint32_t& expected = s.expected_seq[static_cast<size_t>(h->src_world)];
    if (h->seq != expected) {
        s.early.emplace((static_cast<uint64_t>(h->src_world) << 32) | h->seq, wr);
        return;
    }
    const int src = h->src_world;  // h is gone once processed
    process(local, wr);
    for (;;) {
        ++expected;
        auto it = s.early.find((static_cast<uint64_t>(src) << 32) | expected);
        if (it == s.early.end()) break;
        WorkRequest* next = it->second;
        s.early.erase(it);
        process(local, next);
    }
}

void NetworkImpl::process(int local, WorkRequest* wr) {
    switch (wr->header->type) {
        case MsgType::Eager: on_eager(local, *wr); break;
        case MsgType::FragFirst: on_frag_first(local, *wr); break;
        case MsgType::Frag: on_frag(local, *wr); break;
        case MsgType::Rts: on_rts(local, *wr); break;
        case MsgType::Cts: on_cts(*wr); break;
        case MsgType::RndvData:
            on_rndv_data(local, *wr);
            break;
        case MsgType::Credit:
        case MsgType::Rma:
        case MsgType::Bye: break;  // (handled at dispatch)
    }
    release_work(wr);
}

void NetworkImpl::copy_to_target(const RecvTarget& t, size_t offset, const char* data, size_t len) {
    if (offset >= t.capacity) return;
    len = std::min(len, t.capacity - offset);
    if (t.contiguous) memcpy(static_cast<char*>(t.contiguous) + offset, data, len);
    else t.unpack(t.ctx, offset, data, len);
}

static MatchBits bits_of(const Header& h) { return MatchBits{h.context, h.source, h.tag}; }

void NetworkImpl::on_eager(int local, const WorkRequest& wr) {
    const Header& h = *wr.header;
    auto* u = new Unexpected();
    u->kind = Unexpected::Kind::Eager;
    u->local = local;
    u->bits = bits_of(h);
    u->bytes = h.bytes;
    RecvTarget t;
    if (upcalls_.match(upcalls_.ctx, local, u->bits, h.bytes, u, &t)) {
        delete u;
        copy_to_target(t, 0, wr.payload(), h.bytes);
        t.complete(t.ctx, bits_of(h), h.bytes);
        return;
    }
    // Kept until a receive matches (deliver_unexpected waits for our lock).
    u->data.reset(new char[std::max<size_t>(h.bytes, 1)]);
    memcpy(u->data.get(), wr.payload(), h.bytes);
}

void NetworkImpl::on_frag_first(int local, const WorkRequest& wr) {
    const Header& h = *wr.header;
    const size_t len = wr.length - sizeof(Header);
    // Senders fragment only messages up to the rendezvous threshold: a larger
    // size is a corrupt header, and would be allocated below if unexpected.
    if (len > h.bytes || h.bytes > rndv_threshold_) {
        runtime::warn("network: dropped an inconsistent fragment");
        return;
    }
    auto* op = new RecvOp();
    op->local = local;
    op->bits = bits_of(h);
    op->bytes = h.bytes;
    op->src_node = static_cast<int>(h.src_node);
    op->msg_id = h.msg_id;
    auto* u = new Unexpected();
    u->kind = Unexpected::Kind::Fragments;
    u->local = local;
    u->bits = op->bits;
    u->bytes = h.bytes;
    RecvTarget t;
    if (upcalls_.match(upcalls_.ctx, local, op->bits, h.bytes, u, &t)) {
        delete u;
        op->target = t;
        op->has_target = true;
        copy_to_target(t, 0, wr.payload(), len);
    } else {
        u->frags = op;
        u->data.reset(new char[h.bytes]);
        memcpy(u->data.get(), wr.payload(), len);
        op->unexpected = u;
    }
    op->received = len;
    if (op->received < op->bytes) slots_[static_cast<size_t>(local)]->fragments[frag_key(*op)] = op;
    else if (op->has_target) finish_recv_op(op);
}

void NetworkImpl::on_frag(int local, const WorkRequest& wr) {
    const Header& h = *wr.header;
    RankSlot& s = *slots_[static_cast<size_t>(local)];
    auto it = s.fragments.find(FragKey{h.src_node, h.msg_id});
    const size_t len = wr.length - sizeof(Header);
    if (it == s.fragments.end() || h.offset > it->second->bytes ||
        len > it->second->bytes - h.offset) {  // (no overflow whatever the offset)
        runtime::warn("network: dropped a fragment of an unknown message");
        return;
    }
    RecvOp* op = it->second;
    if (op->has_target) copy_to_target(op->target, h.offset, wr.payload(), len);
    else memcpy(op->unexpected->data.get() + h.offset, wr.payload(), len);
    op->received += len;
    if (op->received < op->bytes) return;
    // The last fragment: the message no longer needs finding (an unexpected
    // one waits in its Unexpected for a receive).
    s.fragments.erase(it);
    if (op->has_target) finish_recv_op(op);
}

void NetworkImpl::finish_recv_op(RecvOp* op) {
    RecvTarget t = op->target;
    MatchBits bits = op->bits;
    size_t bytes = op->bytes;
    delete op;
    t.complete(t.ctx, bits, bytes);
}

void NetworkImpl::on_rts(int local, const WorkRequest& wr) {
    const Header& h = *wr.header;
    auto* u = new Unexpected();
    u->kind = Unexpected::Kind::Rendezvous;
    u->local = local;
    u->bits = bits_of(h);
    u->bytes = h.bytes;
    u->src_node = static_cast<int>(h.src_node);
    u->src_world = h.src_world;
    u->send_id = h.msg_id;
    u->arrived_ns = runtime::now_ns();
    RecvTarget t;
    if (upcalls_.match(upcalls_.ctx, local, u->bits, h.bytes, u, &t)) {
        RankSlot& s = *slots_[static_cast<size_t>(local)];
        RankNetCounters::add(s.stats.rndv_matched, 1);
        start_rendezvous_recv(local, t, u->bits, h.bytes, u->src_node, u->src_world, u->send_id);
        delete u;
    }
}

void NetworkImpl::start_rendezvous_recv(int local, const RecvTarget& target, const MatchBits& bits,
                                        size_t bytes, int src_node, int src_world,
                                        uint64_t send_id) {
    const size_t accept = std::min(bytes, target.capacity);
    Header cts{};
    cts.type = MsgType::Cts;
    cts.dst_world = src_world;
    cts.src_world = -1;
    cts.msg_id = send_id;
    cts.length = accept;
    if (accept == 0) {
        // Nothing to write: the answer alone completes the sender.
        send_control(src_node, cts);
        target.complete(target.ctx, bits, bytes);
        return;
    }
    auto* op = new RecvOp();
    op->local = local;
    op->target = target;
    op->has_target = true;
    op->bits = bits;
    op->bytes = bytes;
    op->accepted = accept;
    op->src_node = src_node;
    char* dest = static_cast<char*>(target.contiguous);
    if (!dest) dest = op->bounce = new char[accept];
    op->reg = rcache_->acquire(dest, accept);
    uint64_t id = recv_ops_.add(op);
    cts.offset = OpTable<RecvOp>::compact(id);
    if (op->reg) {
        const MemoryRegion& mr = RegistrationCache::region(op->reg);
        cts.addr = mr.remote_base + static_cast<uint64_t>(dest - static_cast<char*>(mr.addr));
        cts.rkey = driver_->remote_key_for(mr, src_node);
    } else {
        // No RDMA into this buffer: the sender sends the data as messages,
        // which unpack straight into the target (no bounce needed).
        registration_failed(accept, "receive");
        delete[] op->bounce;
        op->bounce = nullptr;
        cts.flags = kCtsNoRdma;
    }
    op->cts_sent_ns = runtime::now_ns();
    send_control(src_node, cts);
}

void NetworkImpl::on_cts(const WorkRequest& wr) {
    const Header& h = *wr.header;
    SendOp* op = send_ops_.find(h.msg_id);
    if (!op || op->protocol != Protocol::Rendezvous) {
        runtime::warn("network: dropped an answer for an unknown send");
        return;
    }
    // A receiver answers once. A second answer (a corrupt or hostile peer)
    // would start the writes again while the first ones are queued, and the
    // operation would end under them.
    if (op->answered) {
        runtime::warn("network: dropped a second answer for one rendezvous send");
        return;
    }
    op->answered = true;
    RankSlot& s = *slots_[static_cast<size_t>(op->src_local)];
    uint64_t wait = static_cast<uint64_t>(runtime::now_ns() - op->rts_sent_ns);
    RankNetCounters::add(s.stats.rndv_count, 1);
    RankNetCounters::add(s.stats.rndv_req_to_ack_ns, wait);
    RankNetCounters::raise_max(s.stats.rndv_req_to_ack_max_ns, wait);
    if (h.length == 0) {
        send_op_done(op);
        return;
    }
    start_writes(op, h);
}

void NetworkImpl::on_write_done(uint64_t id) {
    RecvOp* op = recv_ops_.remove(id);
    if (!op) return;
    return_credit(op->src_node);  // the write's immediate data used a credit
    finish_rendezvous_recv(op);
}

// A piece of rendezvous data sent as a message (one side could not register).
// It lands where the write would have: the bounce buffer when the receiver
// registered one, else straight in the target.
void NetworkImpl::on_rndv_data(int local, const WorkRequest& wr) {
    const Header& h = *wr.header;
    const size_t len = wr.length - sizeof(Header);
    const uint64_t id =
        h.msg_id <= UINT32_MAX ? recv_ops_.expand(static_cast<uint32_t>(h.msg_id)) : 0;
    RecvOp* op = id ? recv_ops_.find(id) : nullptr;
    if (!op || op->local != local || h.offset > op->accepted || len > op->accepted - h.offset) {
        runtime::warn("network: dropped rendezvous data for an unknown receive");
        return;
    }
    if (op->bounce)
        memcpy(op->bounce + h.offset, wr.payload(), len);
    else
        copy_to_target(op->target, h.offset, wr.payload(), len);
    op->received += len;
    if (op->received < op->accepted) return;
    recv_ops_.remove(id);
    finish_rendezvous_recv(op);
}

void NetworkImpl::finish_rendezvous_recv(RecvOp* op) {
    if (op->bounce) op->target.unpack(op->target.ctx, 0, op->bounce, op->accepted);
    if (op->reg) rcache_->release(op->reg);
    delete[] op->bounce;
    RecvTarget t = op->target;
    MatchBits bits = op->bits;
    size_t bytes = op->bytes;
    delete op;
    t.complete(t.ctx, bits, bytes);
}

void NetworkImpl::deliver_unexpected(Unexpected* u, const RecvTarget& target) {
    RankSlot& s = *slots_[static_cast<size_t>(u->local)];
    s.processing.lock();
    switch (u->kind) {
        case Unexpected::Kind::Eager:
            copy_to_target(target, 0, u->data.get(), u->bytes);
            s.processing.unlock();
            target.complete(target.ctx, u->bits, u->bytes);
            break;
        case Unexpected::Kind::Fragments: {
            RecvOp* op = u->frags;
            copy_to_target(target, 0, u->data.get(), op->received);
            op->target = target;
            op->has_target = true;
            op->unexpected = nullptr;
            if (op->received == op->bytes) finish_recv_op(op);
            s.processing.unlock();
            break;
        }
        case Unexpected::Kind::Rendezvous:
            RankNetCounters::add(s.stats.rndv_matched, 1);
            RankNetCounters::add(s.stats.rndv_matching_ns,
                                 static_cast<uint64_t>(runtime::now_ns() - u->arrived_ns));
            start_rendezvous_recv(u->local, target, u->bits, u->bytes, u->src_node, u->src_world,
                                  u->send_id);
            s.processing.unlock();
            break;
    }
    delete u;
}

void NetworkImpl::drop_unexpected(Unexpected* u) {
    RankSlot& s = *slots_[static_cast<size_t>(u->local)];
    s.processing.lock();
    if (u->kind == Unexpected::Kind::Fragments && u->frags) {
        auto it = s.fragments.find(frag_key(*u->frags));
        if (it != s.fragments.end() && it->second == u->frags) s.fragments.erase(it);
        delete u->frags;
    }
    s.processing.unlock();
    delete u;
}

}  // namespace mpc::ib
