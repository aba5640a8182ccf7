// Sending: protocol choice, posting under credits, connection queues,
// rendezvous writes.
#include <algorithm>
#include <cstring>

#include "network_impl.hpp"
#include "runtime/log.hpp"
#include "runtime/tools.hpp"

namespace mpc::ib {
uint32_t NetworkImpl::allocate_send_buffer() {
    std::lock_guard<runtime::SpinLock> g(send_free_lock_);
    if (send_free_.empty()) return UINT32_MAX;
    uint32_t i = send_free_.back();
    send_free_.pop_back();
    return i;
}

void NetworkImpl::free_send_buffer(uint32_t index) {
    std::lock_guard<runtime::SpinLock> g(send_free_lock_);
    send_free_.push_back(index);
}

uint32_t NetworkImpl::take_credits_to_return(Peer& peer) {
    int n = peer.credits_to_return.exchange(0, std::memory_order_acq_rel);
    if (n > 0xffff) {
        peer.credits_to_return.fetch_add(n - 0xffff);
        n = 0xffff;
    }
    return static_cast<uint32_t>(n);
}

void NetworkImpl::send(int src_world, int dest_world, const MatchBits& bits,
                       const SendSource& source, bool synchronous) {
    const int node = layout_.node_of[static_cast<size_t>(dest_world)];
    const int src_local = layout_.local_of[static_cast<size_t>(src_world)];
    auto* op = new SendOp();
    op->source = source;
    op->bits = bits;
    op->src_world = src_world;
    op->dest_world = dest_world;
    op->dest_node = node;
    op->bytes = source.bytes;
    op->src_local = src_local;
    if (!synchronous && op->bytes <= eager_limit_) op->protocol = Protocol::Eager;
    else if (!synchronous && op->bytes <= rndv_threshold_) op->protocol = Protocol::Fragments;
    else op->protocol = Protocol::Rendezvous;
    if (runtime::tools::g_transport.on()) {
        RankNetCounters& counters = slots_[static_cast<size_t>(src_local)]->stats;
        const int path = static_cast<int>(op->protocol);  // RankNetStats::Path's order
        RankNetCounters::add(counters.sent_msgs[path], 1);
        RankNetCounters::add(counters.sent_bytes[path], op->bytes);
    }
    op->id = send_ops_.add(op);

    Header h{};
    h.src_node = static_cast<uint32_t>(layout_.node_id);
    h.src_world = src_world;
    h.dst_world = dest_world;
    h.context = bits.context;
    h.source = bits.source;
    h.tag = bits.tag;
    h.bytes = op->bytes;
    h.msg_id = op->id;

    Peer& peer = *peers_[static_cast<size_t>(node)];
    std::vector<OutMsg> msgs;
    switch (op->protocol) {
        case Protocol::Eager:
            h.type = MsgType::Eager;
            msgs.push_back(OutMsg{h, op, 0, op->bytes});
            break;
        case Protocol::Fragments: {
            h.type = MsgType::FragFirst;
            size_t first = std::min(frag_payload_, op->bytes);
            msgs.push_back(OutMsg{h, op, 0, first});
            for (size_t off = first; off < op->bytes; off += frag_payload_) {
                Header f = h;
                f.type = MsgType::Frag;
                f.offset = off;
                msgs.push_back(OutMsg{f, op, off, std::min(frag_payload_, op->bytes - off)});
            }
            break;
        }
        case Protocol::Rendezvous:
            h.type = MsgType::Rts;
            op->rts_sent_ns = runtime::now_ns();
            msgs.push_back(OutMsg{h, nullptr, 0, 0});
            break;
    }
    // The sequence number and the order on the connection are taken together.
    peer.lock.lock();
    uint32_t seq = slots_[static_cast<size_t>(src_local)]->next_seq[static_cast<size_t>(dest_world)]
                       .fetch_add(1, std::memory_order_relaxed);
    for (OutMsg& m : msgs) {
        m.header.seq = seq;
        if (peer.queue.empty() && try_post(node, peer, m)) continue;
        peer.queue.push_back(std::move(m));
        queued_.fetch_add(1, std::memory_order_relaxed);
    }
    peer.lock.unlock();
}

bool NetworkImpl::try_post(int node, Peer& peer, OutMsg& m) {
    if (m.write || m.read || m.atomic) {
        if (m.has_imm && peer.credits <= 0) return false;
        const uint64_t context =
            m.context ? m.context : kCtxWrite | OpTable<SendOp>::compact(m.op->id);
        Status st;
        if (m.write)
            st = driver_->post_write(node, m.local, m.data_len, m.local_desc, m.remote_addr,
                                     m.remote_key, m.has_imm, m.imm, context);
        else if (m.read)
            st = driver_->post_read(node, m.local_dest, m.data_len, m.local_desc, m.remote_addr,
                                    m.remote_key, context);
        else
            st = driver_->post_atomic(node, m.atomic_op, m.operand, m.compare, m.result,
                                      m.local_desc, m.remote_addr, m.remote_key, context);
        if (st == Status::Again) return false;
        if (st != Status::Ok)
            runtime::fatal("network: RDMA %s to node process %d failed",
                           m.write ? "write" : m.read ? "read" : "atomic", node);
        if (m.has_imm) peer.credits--;
        inflight_.fetch_add(1, std::memory_order_relaxed);
        writes_inflight_.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    if (peer.credits <= 0 && !(m.control && peer.reserve > 0)) return false;
    uint32_t index = allocate_send_buffer();
    if (index == UINT32_MAX) return false;
    char* buf = send_slab_.get() + static_cast<size_t>(index) * buffer_size_;
    Header h = m.header;
    h.credits = static_cast<uint16_t>(take_credits_to_return(peer));
    memcpy(buf, &h, sizeof(h));
    if (m.data_len && m.owned) {
        memcpy(buf + sizeof(h), m.owned.get(), m.data_len);
    } else if (m.data_len) {
        const SendSource& src = m.op->source;
        if (src.contiguous)
            memcpy(buf + sizeof(h), static_cast<const char*>(src.contiguous) + m.data_offset, m.data_len);
        else
            src.pack(src.ctx, m.data_offset, buf + sizeof(h), m.data_len);
    }
    const size_t len = sizeof(h) + m.data_len;
    Status st = m.lazy ? driver_->post_send_lazy(node, buf, len, send_mr_.local_desc,
                                                 kCtxSendBuffer | index)
                       : driver_->post_send(node, buf, len, send_mr_.local_desc,
                                            kCtxSendBuffer | index);
    runtime::debug("net: post type %d to node %d seq %u bytes %zu: status %d", static_cast<int>(h.type),
                   node, h.seq, m.data_len, static_cast<int>(st));
    if (st != Status::Ok) {
        peer.credits_to_return.fetch_add(h.credits);
        free_send_buffer(index);
        if (st == Status::Again) return false;
        runtime::fatal("network: send to node process %d failed", node);
    }
    if (peer.credits > 0) peer.credits--;
    else peer.reserve--;
    inflight_.fetch_add(1, std::memory_order_relaxed);
    // Eager data and the last fragment leave the user's buffer here: the send
    // is complete (buffered) once copied. (h.bytes is what the receiver
    // takes: the message size, or less for rendezvous data sent as copies.)
    if (m.op && m.data_offset + m.data_len == h.bytes &&
        (h.type == MsgType::Eager || h.type == MsgType::FragFirst || h.type == MsgType::Frag ||
         h.type == MsgType::RndvData))
        send_op_done(m.op);
    return true;
}

void NetworkImpl::post_or_queue(int node, OutMsg&& msg) {
    Peer& peer = *peers_[static_cast<size_t>(node)];
    peer.lock.lock();
    if (!(peer.queue.empty() && try_post(node, peer, msg))) {
        peer.queue.push_back(std::move(msg));
        queued_.fetch_add(1, std::memory_order_relaxed);
    }
    peer.lock.unlock();
}

// peer.lock held. True when no Credit message is due any more.
bool NetworkImpl::post_due_credit(int node, Peer& peer) {
    if (!peer.credit_due) return true;
    // The credits may have ridden on another message meanwhile.
    if (peer.credits_to_return.load(std::memory_order_acquire) > 0) {
        Header h{};
        h.type = MsgType::Credit;
        h.dst_world = -1;
        h.src_node = static_cast<uint32_t>(layout_.node_id);
        OutMsg m{h, nullptr, 0, 0};
        m.control = true;
        if (!try_post(node, peer, m)) return false;
    }
    peer.credit_due = false;
    queued_.fetch_sub(1, std::memory_order_relaxed);
    return true;
}

void NetworkImpl::flush_peer(int node) {
    Peer& peer = *peers_[static_cast<size_t>(node)];
    if (!peer.lock.try_lock()) return;
    post_due_credit(node, peer);
    while (!peer.queue.empty() && try_post(node, peer, peer.queue.front())) {
        peer.queue.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    peer.lock.unlock();
}

void NetworkImpl::flush_all_peers() {
    for (int n = 0; n < layout_.num_nodes; ++n)
        if (n != layout_.node_id) flush_peer(n);
}

void NetworkImpl::send_control(int node, Header h) {
    h.src_node = static_cast<uint32_t>(layout_.node_id);
    post_or_queue(node, OutMsg{h, nullptr, 0, 0});
}

// Credit messages jump the connection's queue (they carry no match and need
// no order) and use the reserved credits; one that cannot go now stays due
// and goes first at the next flush.
void NetworkImpl::send_credit(int node) {
    Peer& peer = *peers_[static_cast<size_t>(node)];
    peer.lock.lock();
    if (!peer.credit_due) {
        peer.credit_due = true;
        queued_.fetch_add(1, std::memory_order_relaxed);  // so that polls flush this peer
    }
    post_due_credit(node, peer);
    peer.lock.unlock();
}

// One of `node`'s messages left our receive pool: give the credit back, in a
// Credit message once enough have gathered (otherwise they ride on traffic).
void NetworkImpl::return_credit(int node) {
    Peer& peer = *peers_[static_cast<size_t>(node)];
    int owed = peer.credits_to_return.fetch_add(1, std::memory_order_acq_rel) + 1;
    const int share = static_cast<int>(pool_size_) / std::max(1, layout_.num_nodes - 1);
    const int threshold = std::max(1, share / 4);
    if (owed >= threshold && !stopping_.load(std::memory_order_relaxed)) send_credit(node);
}

void NetworkImpl::registration_failed(size_t bytes, const char* side) {
    if (registration_warned_.exchange(true)) return;  // once per node process
    runtime::warn(
        "network: cannot register %zu bytes of a rendezvous %s buffer with the network "
        "(locked-memory limit, or the NIC's registration table is full?); rendezvous data "
        "that cannot be registered goes as copies through the bounce buffers (slower)",
        bytes, side);
}

void NetworkImpl::start_writes(SendOp* op, const Header& cts) {
    const size_t len = std::min<size_t>(op->bytes, cts.length);
    const uint32_t recv_op = static_cast<uint32_t>(cts.offset);
    if (cts.flags & kCtsNoRdma) {
        send_copies(op, len, recv_op);
        return;
    }
    const char* data = static_cast<const char*>(op->source.contiguous);
    if (!data) {
        op->packed = new char[len];
        op->source.pack(op->source.ctx, 0, op->packed, len);
        data = op->packed;
    }
    op->reg = rcache_->acquire(data, len);
    if (!op->reg) {
        registration_failed(len, "send");
        delete[] op->packed;
        op->packed = nullptr;
        send_copies(op, len, recv_op);
        return;
    }
    const MemoryRegion& mr = RegistrationCache::region(op->reg);
    const size_t chunk =
        write_chunk_.load(std::memory_order_relaxed);  // once: a tool may change it
    const size_t chunks = (len + chunk - 1) / chunk;
    op->writes_left.store(static_cast<int>(chunks), std::memory_order_relaxed);
    for (size_t i = 0; i < chunks; ++i) {
        OutMsg m;
        m.write = true;
        m.op = op;
        m.data_offset = i * chunk;
        m.data_len = std::min(chunk, len - m.data_offset);
        m.local = data + m.data_offset;
        m.local_desc = mr.local_desc;
        m.remote_addr = cts.addr + m.data_offset;
        m.remote_key = cts.rkey;
        m.has_imm = i + 1 == chunks;
        m.imm = static_cast<uint32_t>(cts.offset);
        post_or_queue(op->dest_node, std::move(m));
    }
}

// Rendezvous without RDMA: the data goes like fragments, through the bounce
// buffers, to the receive operation the answer named. The send completes once
// the last piece is copied out, as a buffered one does.
void NetworkImpl::send_copies(SendOp* op, size_t len, uint32_t recv_op) {
    op->copies = true;
    Header h{};
    h.type = MsgType::RndvData;
    h.src_node = static_cast<uint32_t>(layout_.node_id);
    h.src_world = op->src_world;
    h.dst_world = op->dest_world;
    h.bytes = len;
    h.msg_id = recv_op;
    const int node = op->dest_node;
    Peer& peer = *peers_[static_cast<size_t>(node)];
    peer.lock.lock();
    for (size_t off = 0; off < len; off += frag_payload_) {
        Header piece = h;
        piece.offset = off;
        OutMsg m{piece, op, off, std::min(frag_payload_, len - off)};
        // (Once the last piece is posted, op is gone: the loop ends there.)
        if (peer.queue.empty() && try_post(node, peer, m)) continue;
        peer.queue.push_back(std::move(m));
        queued_.fetch_add(1, std::memory_order_relaxed);
    }
    peer.lock.unlock();
}

void NetworkImpl::send_op_done(SendOp* op) {
    send_ops_.remove(op->id);
    if (op->reg) rcache_->release(op->reg);
    delete[] op->packed;
    SendSource src = op->source;
    delete op;
    if (src.complete) src.complete(src.ctx);
}

}  // namespace mpc::ib
