// The one-sided messages from other node processes, executed by whoever
// drains this node's network (any rank that polls, an idle VP, the progress
// thread): the target rank itself may be computing. Requests act on target
// memory and answer; answers finish the origin's operations. Every message is
// checked before it is followed: its window id through the registry, its
// segments against the window's memory (a refusal is answered, nothing is
// written).
#include <cstring>
#include <mutex>
#include <vector>

#include "accumulate.hpp"
#include "mpi_api/net.hpp"
#include "remote.hpp"
#include "runtime/log.hpp"
#include "target.hpp"

namespace mpc::rma {
namespace {

struct Message {
    int node;
    const AmHeader* h;
    const Seg* segs;
    const char* data;
    size_t data_len;
};

AmHeader answer(Am type, const TargetState& t, const AmHeader& to) {
    AmHeader a{};
    a.type = type;
    a.from_rank = t.win->rank;
    a.from_id = t.id;
    a.to_id = to.from_id;
    a.op_id = to.op_id;
    a.offset = to.offset;
    return a;
}

// Where every segment lies, or false when one is outside the target memory.
bool locate_all(TargetState& t, const Message& m, std::vector<uintptr_t>& where) {
    where.resize(m.h->nsegs);
    for (size_t i = 0; i < m.h->nsegs; ++i)
        if (!t.locate(m.segs[i].disp, m.segs[i].len, &where[i])) return false;
    return true;
}

uint64_t seg_bytes(const Message& m) {
    uint64_t n = 0;
    for (size_t i = 0; i < m.h->nsegs; ++i) n += m.segs[i].len;
    return n;
}

void refuse_data(const TargetState& t, const Message& m) {
    AmHeader a = answer(Am::Data, t, *m.h);
    a.flags = kRefusedData;
    a.bytes = m.h->type == Am::Cas ? m.h->bytes / 2 : seg_bytes(m);
    send_am(m.node, a, nullptr, nullptr, 0);
}

void on_put(TargetState& t, const Message& m) {
    std::vector<uintptr_t> where;
    if (seg_bytes(m) != m.data_len || !locate_all(t, m, where)) {
        send_am(m.node, answer(Am::Refused, t, *m.h), nullptr, nullptr, 0);
        return;
    }
    const char* in = m.data;
    for (size_t i = 0; i < m.h->nsegs; ++i) {
        memcpy(reinterpret_cast<void*>(where[i]), in, m.segs[i].len);
        in += m.segs[i].len;
    }
}

void on_get(TargetState& t, const Message& m) {
    std::vector<uintptr_t> where;
    if (seg_bytes(m) != m.h->bytes || m.h->bytes > am_capacity() || !locate_all(t, m, where))
        return refuse_data(t, m);
    std::vector<char> out(m.h->bytes);
    char* p = out.data();
    for (size_t i = 0; i < m.h->nsegs; ++i) {
        memcpy(p, reinterpret_cast<const void*>(where[i]), m.segs[i].len);
        p += m.segs[i].len;
    }
    AmHeader a = answer(Am::Data, t, *m.h);
    a.bytes = out.size();
    send_am(m.node, a, nullptr, out.data(), out.size());
}

void on_accumulate(TargetState& t, const Message& m) {
    const bool fetch = m.h->type == Am::GetAcc;
    const mpi::Op* op = mpi::op_lookup(m.h->op);
    const mpi::Datatype* basic = mpi::datatype_lookup(m.h->basic);
    const uint64_t bytes = seg_bytes(m);
    const bool no_op = op && op->handle == MPI_NO_OP;
    std::vector<uintptr_t> where;
    const bool valid = op && op->predefined && basic && basic->predefined && basic->size > 0 &&
                       check_accumulate_op(*op, *basic) == MPI_SUCCESS &&
                       bytes % basic->size == 0 &&
                       (no_op ? m.data_len == 0 : m.data_len == bytes) && bytes <= am_capacity() &&
                       locate_all(t, m, where);
    if (!valid) {
        if (fetch) return refuse_data(t, m);
        send_am(m.node, answer(Am::Refused, t, *m.h), nullptr, nullptr, 0);
        return;
    }
    std::vector<char> old(fetch ? bytes : 0);
    {
        Accumulator acc(t, *op, *basic, no_op ? nullptr : m.data, fetch ? old.data() : nullptr);
        for (size_t i = 0; i < m.h->nsegs; ++i) acc.run(where[i], m.segs[i].len);
    }
    if (!fetch) return;
    AmHeader a = answer(Am::Data, t, *m.h);
    a.bytes = bytes;
    send_am(m.node, a, nullptr, old.data(), old.size());
}

void on_cas(TargetState& t, const Message& m) {
    const mpi::Datatype* type = mpi::datatype_lookup(m.h->basic);
    std::vector<uintptr_t> where;
    if (!type || !compare_and_swap_type(*type) || m.h->nsegs != 1 || m.segs[0].len != type->size ||
        m.data_len != 2 * type->size || !locate_all(t, m, where))
        return refuse_data(t, m);
    uint64_t old = 0;
    compare_and_swap_element(t, where[0], *type, m.data, m.data + type->size, &old);
    AmHeader a = answer(Am::Data, t, *m.h);
    a.bytes = type->size;
    send_am(m.node, a, nullptr, &old, type->size);
}

void on_lock(TargetState& t, const Message& m) {
    LockWaiter w;
    w.exclusive = m.h->flags & kExclusive;
    w.node = m.node;
    w.origin_id = m.h->from_id;
    w.origin_rank = m.h->from_rank;
    if (lock_acquire(t, w)) send_am(m.node, answer(Am::Grant, t, *m.h), nullptr, nullptr, 0);
}

// Answers at the origin: its window's peer state for the target that sent it.
PeerState* peer_of(TargetState& t, const AmHeader& h) {
    if (h.from_rank < 0 || h.from_rank >= t.win->size) return nullptr;
    return &t.win->peers[static_cast<size_t>(h.from_rank)];
}

void on_data(const Message& m) {
    RemoteOp* op = find_op(m.h->op_id);
    if (!op) {
        runtime::warn("rma: dropped an answer for an unknown operation");
        return;
    }
    const uint64_t n = m.h->bytes;
    const size_t total = op->count * op->type->size;
    if (m.h->offset > total || n > total - m.h->offset || n > op->left.load() ||
        (!(m.h->flags & kRefusedData) && m.data_len != n)) {
        runtime::warn("rma: dropped an inconsistent answer");
        return;
    }
    if (m.h->flags & kRefusedData) {
        op->win->peers[static_cast<size_t>(op->target)].refused.fetch_add(1);
        op->win->refused.fetch_add(1);
    }
    else
        mpi::unpack(op->buf, op->count, *op->type, m.h->offset, m.data, n);
    if (op->left.fetch_sub(n, std::memory_order_acq_rel) == n) finish_op(op);
}

void handle(const Message& m) {
    const AmHeader& h = *m.h;
    if (h.type == Am::Data) return on_data(m);
    TargetState* t = find_target(h.to_id);
    if (!t) {
        runtime::warn("rma: dropped a message for a window that does not exist (any more)");
        return;
    }
    switch (h.type) {
        case Am::Put:
            return on_put(*t, m);
        case Am::Get:
            return on_get(*t, m);
        case Am::Acc:
        case Am::GetAcc:
            return on_accumulate(*t, m);
        case Am::Cas:
            return on_cas(*t, m);
        case Am::Lock:
            return on_lock(*t, m);
        case Am::Unlock:
            // Every operation of this origin before it is done: release, then say so.
            lock_release(*t, h.flags & kExclusive);
            send_am(m.node, answer(Am::Ack, *t, h), nullptr, nullptr, 0);
            return;
        case Am::Flush:
            send_am(m.node, answer(Am::Ack, *t, h), nullptr, nullptr, 0);
            return;
        case Am::Post:
            if (h.from_rank >= 0 && h.from_rank < t->win->size) {
                t->posts[static_cast<size_t>(h.from_rank)].fetch_add(1, std::memory_order_acq_rel);
                t->rank->doorbell.ring();
            }
            return;
        case Am::Complete:
            t->completes.fetch_add(1, std::memory_order_acq_rel);
            t->rank->doorbell.ring();
            return;
        case Am::Ack:
        case Am::Grant:
        case Am::Refused: {
            PeerState* p = peer_of(*t, h);
            if (!p) break;
            if (h.type == Am::Ack)
                p->pending.fetch_sub(1, std::memory_order_acq_rel);
            else if (h.type == Am::Grant)
                p->granted.store(true, std::memory_order_release);
            else {
                p->refused.fetch_add(1, std::memory_order_acq_rel);
                t->win->refused.fetch_add(1, std::memory_order_acq_rel);
            }
            t->win->owner->doorbell.ring();
            return;
        }
        default:
            break;
    }
    runtime::warn("rma: dropped a malformed message (type %d)", static_cast<int>(h.type));
}

void on_message(void*, int node, const void* data, size_t len) {
    if (len < sizeof(AmHeader)) {
        runtime::warn("rma: dropped a truncated message");
        return;
    }
    // Copied out: the receive buffer need not keep the header's alignment.
    AmHeader h;
    memcpy(&h, data, sizeof h);
    const size_t seg_len = static_cast<size_t>(h.nsegs) * sizeof(Seg);
    if (len - sizeof h < seg_len) {
        runtime::warn("rma: dropped a truncated message");
        return;
    }
    std::vector<Seg> segs(h.nsegs);
    if (seg_len) memcpy(segs.data(), static_cast<const char*>(data) + sizeof h, seg_len);
    const char* rest = static_cast<const char*>(data) + sizeof h + seg_len;
    handle(Message{node, &h, segs.data(), rest, len - sizeof h - seg_len});
}

std::once_flag g_installed;

}  // namespace

void install_handler() {
    std::call_once(g_installed, [] {
        mpi::network()->set_rma_handler(ib::RmaHandler{on_message, nullptr});
    });
}

}  // namespace mpc::rma
