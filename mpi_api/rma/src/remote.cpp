// The origin's side of one-sided operations on ranks of other node
// processes: RDMA where the driver and the data allow (contiguous data in
// registered window memory), messages otherwise, cut to the network's
// buffers; the operations still awaiting answers; the synchronisation
// messages.
#include "remote.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "accumulate.hpp"
#include "engine.hpp"
#include "mpi_api/net.hpp"
#include "target.hpp"

namespace mpc::rma {
namespace {

// Contiguous transfers from this size on go as RDMA (below, one message
// costs less than registering the origin buffer).
constexpr size_t kRdmaMin = 4096;

// ---- Operations awaiting answers: ids are generation << 32 | index ----------

struct OpTable {
    runtime::SpinLock lock;
    struct Slot {
        RemoteOp* op = nullptr;
        uint32_t generation = 1;
    };
    std::vector<Slot> slots;
    std::vector<uint32_t> free;
};
OpTable g_ops;

RemoteOp* new_op(Win* w, int target, Request* request) {
    auto* op = new RemoteOp();
    op->win = w;
    op->target = target;
    op->request = request;
    std::lock_guard<runtime::SpinLock> g(g_ops.lock);
    uint32_t index;
    if (!g_ops.free.empty()) {
        index = g_ops.free.back();
        g_ops.free.pop_back();
    } else {
        index = static_cast<uint32_t>(g_ops.slots.size());
        g_ops.slots.emplace_back();
    }
    g_ops.slots[index].op = op;
    op->id = static_cast<uint64_t>(g_ops.slots[index].generation) << 32 | index;
    w->peers[static_cast<size_t>(target)].pending.fetch_add(1, std::memory_order_relaxed);
    return op;
}

void drop_op(uint64_t id) {
    std::lock_guard<runtime::SpinLock> g(g_ops.lock);
    const uint32_t index = static_cast<uint32_t>(id);
    OpTable::Slot& s = g_ops.slots[index];
    s.op = nullptr;
    s.generation++;
    g_ops.free.push_back(index);
}

void op_done(void* ctx, bool) {
    finish_op(static_cast<RemoteOp*>(ctx));
}

// The old value of an RDMA atomic is the answer.
void atomic_done(void* ctx, bool) {
    auto* op = static_cast<RemoteOp*>(ctx);
    mpi::unpack(op->buf, op->count, *op->type, 0, &op->scratch, sizeof op->scratch);
    finish_op(op);
}

ib::Network& net() {
    return *mpi::network();
}

AmHeader header(Am type, Win* w, const Member& m) {
    AmHeader h{};
    h.type = type;
    h.from_rank = w->rank;
    h.from_id = w->target->id;
    h.to_id = m.id;
    return h;
}

// The target memory of t as segments (window offsets, or addresses).
std::vector<Seg> target_segments(const Win* w, const Member& m, MPI_Aint disp, size_t count,
                                 const Datatype& type, size_t bytes) {
    std::vector<Seg> segs;
    const auto base = reinterpret_cast<void*>(static_cast<uintptr_t>(target_offset(w, m, disp)));
    mpi::for_each_run(base, count, type, 0, bytes, [&](uintptr_t a, size_t n) {
        if (!segs.empty() && segs.back().disp + segs.back().len == a)
            segs.back().len += n;  // adjacent runs: one segment
        else
            segs.push_back(Seg{a, n});
    });
    return segs;
}

// Cuts segments into messages of at most `cap` bytes of segments (plus their
// data when with_data) and at most `cap` bytes of data (an answer must fit a
// message too); pieces of a segment are cut at multiples of esize.
// emit(segments, stream offset, data bytes) for each message, in order.
template <class Emit>
void split(const std::vector<Seg>& segs, size_t esize, size_t cap, bool with_data, Emit&& emit) {
    std::vector<Seg> msg;
    size_t used = 0, data = 0, start = 0, stream = 0;
    for (Seg s : segs) {
        while (s.len > 0) {
            const size_t room = cap - used;
            if (room < sizeof(Seg) + (with_data ? esize : 0) || cap - data < esize) {
                emit(msg, start, data);
                msg.clear();
                used = data = 0;
                start = stream;
                continue;
            }
            size_t can = std::min(with_data ? room - sizeof(Seg) : cap - data, cap - data);
            const size_t take = std::min<size_t>(s.len, can / esize * esize);
            msg.push_back(Seg{s.disp, take});
            used += sizeof(Seg) + (with_data ? take : 0);
            data += take;
            stream += take;
            s.disp += take;
            s.len -= take;
        }
    }
    if (!msg.empty()) emit(msg, start, data);
}

// A contiguous pointer to the packed origin stream (packed into `copy` when
// the data is not contiguous).
const char* origin_stream(const void* buf, int count, const Datatype& type, size_t bytes,
                          std::vector<char>& copy) {
    if (type.contiguous) return reinterpret_cast<const char*>(mpi::contiguous_data(buf, type));
    copy.resize(bytes);
    mpi::pack(buf, static_cast<size_t>(count), type, 0, copy.data(), bytes);
    return copy.data();
}

void complete_request(Request* r) {
    if (r) mpi::complete(r);
}

uint64_t rdma_address(const Win* w, const Member& m, MPI_Aint disp, const Datatype& type) {
    return m.rdma_base + target_offset(w, m, disp) + static_cast<uint64_t>(type.true_lb);
}

bool is_8_byte_integer(const Datatype& t) {
    return t.predefined && t.size == 8 &&
           (t.category == mpi::TypeCategory::CInt || t.category == mpi::TypeCategory::FInt);
}

}  // namespace

RemoteOp* find_op(uint64_t id) {
    std::lock_guard<runtime::SpinLock> g(g_ops.lock);
    const uint32_t index = static_cast<uint32_t>(id);
    if (index >= g_ops.slots.size()) return nullptr;
    const OpTable::Slot& s = g_ops.slots[index];
    return s.generation == static_cast<uint32_t>(id >> 32) ? s.op : nullptr;
}

void finish_op(RemoteOp* op) {
    drop_op(op->id);
    Win* w = op->win;
    PeerState& p = w->peers[static_cast<size_t>(op->target)];
    if (op->type) mpi::datatype_release(op->type);
    complete_request(op->request);
    delete op;
    p.pending.fetch_sub(1, std::memory_order_acq_rel);
    w->owner->doorbell.ring();
}

bool network_up() {
    return mpi::network() != nullptr;
}

size_t am_capacity() {
    return net().rma_message_max() - sizeof(AmHeader);
}

void send_am(int node, const AmHeader& h, const Seg* segs, const void* data, size_t data_len,
             bool lazy) {
    const size_t seg_bytes = static_cast<size_t>(h.nsegs) * sizeof(Seg);
    char head[sizeof(AmHeader) + 64 * sizeof(Seg)];
    std::vector<char> big;
    char* p = head;
    if (seg_bytes > 64 * sizeof(Seg)) {
        big.resize(sizeof(AmHeader) + seg_bytes);
        p = big.data();
    }
    memcpy(p, &h, sizeof h);
    if (seg_bytes) memcpy(p + sizeof h, segs, seg_bytes);
    net().rma_send(node, p, sizeof h + seg_bytes, data, data_len, lazy);
}

void touch(Win* w, int target) {
    PeerState& p = w->peers[static_cast<size_t>(target)];
    std::lock_guard<runtime::SpinLock> g(w->touch_lock);
    if (p.touched) return;
    p.touched = true;
    w->touched.push_back(target);
}

int remote_put(Win* w, const Transfer& t, Request* request) {
    const size_t bytes = static_cast<size_t>(t.origin_count) * t.origin_type->size;
    const Member& m = w->members[static_cast<size_t>(t.target_rank)];
    PeerState& p = w->peers[static_cast<size_t>(t.target_rank)];
    if (!bytes) return complete_request(request), MPI_SUCCESS;
    touch(w, t.target_rank);
    p.dirty.store(true, std::memory_order_relaxed);
    if (m.rdma && bytes >= kRdmaMin && t.origin_type->contiguous && t.target_type->contiguous) {
        RemoteOp* op = new_op(w, t.target_rank, request);
        if (net().rma_write(m.node, mpi::contiguous_data(t.origin, *t.origin_type), bytes,
                            rdma_address(w, m, t.target_disp, *t.target_type), m.rdma_key,
                            ib::RmaDone{op_done, op}))
            return MPI_SUCCESS;
        // The origin buffer cannot be registered: messages then.
        op->request = nullptr;
        finish_op(op);
    }
    std::vector<char> copy;
    const char* data = origin_stream(t.origin, t.origin_count, *t.origin_type, bytes, copy);
    const std::vector<Seg> segs = target_segments(
        w, m, t.target_disp, static_cast<size_t>(t.target_count), *t.target_type, bytes);
    split(segs, 1, am_capacity(), true, [&](const std::vector<Seg>& s, size_t off, size_t len) {
        AmHeader h = header(Am::Put, w, m);
        h.nsegs = static_cast<uint16_t>(s.size());
        h.bytes = len;
        send_am(m.node, h, s.data(), data + off, len, true);
    });
    complete_request(request);  // the data left the origin buffer
    return MPI_SUCCESS;
}

int remote_get(Win* w, void* origin, const Transfer& t, Request* request) {
    const size_t bytes = static_cast<size_t>(t.origin_count) * t.origin_type->size;
    const Member& m = w->members[static_cast<size_t>(t.target_rank)];
    if (!bytes) return complete_request(request), MPI_SUCCESS;
    touch(w, t.target_rank);
    RemoteOp* op = new_op(w, t.target_rank, request);
    op->buf = origin;
    op->count = static_cast<size_t>(t.origin_count);
    op->type = mpi::datatype_retain(t.origin_type);
    op->left.store(bytes, std::memory_order_relaxed);
    if (m.rdma && bytes >= kRdmaMin && net().rma_can_read() && t.origin_type->contiguous &&
        t.target_type->contiguous &&
        net().rma_read(m.node, mpi::contiguous_data(origin, *t.origin_type), bytes,
                       rdma_address(w, m, t.target_disp, *t.target_type), m.rdma_key,
                       ib::RmaDone{op_done, op}))
        return MPI_SUCCESS;
    const std::vector<Seg> segs = target_segments(
        w, m, t.target_disp, static_cast<size_t>(t.target_count), *t.target_type, bytes);
    const uint64_t id = op->id;  // op may finish before the last request is sent
    split(segs, 1, am_capacity(), false, [&](const std::vector<Seg>& s, size_t off, size_t len) {
        AmHeader h = header(Am::Get, w, m);
        h.nsegs = static_cast<uint16_t>(s.size());
        h.op_id = id;
        h.offset = off;
        h.bytes = len;
        send_am(m.node, h, s.data(), nullptr, 0);
    });
    return MPI_SUCCESS;
}

int remote_accumulate(Win* w, const Transfer& t, const Op& op, const Datatype& basic, void* result,
                      int result_count, Datatype* result_type, Request* request) {
    const size_t bytes = static_cast<size_t>(t.target_count) * t.target_type->size;
    const Member& m = w->members[static_cast<size_t>(t.target_rank)];
    PeerState& p = w->peers[static_cast<size_t>(t.target_rank)];
    const bool no_op = op.handle == MPI_NO_OP;
    if (!bytes) return complete_request(request), MPI_SUCCESS;
    touch(w, t.target_rank);
    if (!no_op) p.dirty.store(true, std::memory_order_relaxed);
    std::vector<char> copy;
    const char* data =
        no_op ? nullptr : origin_stream(t.origin, t.origin_count, *t.origin_type, bytes, copy);
    RemoteOp* rop = nullptr;
    uint64_t id = 0;
    if (result) {
        rop = new_op(w, t.target_rank, request);
        rop->buf = result;
        rop->count = static_cast<size_t>(result_count);
        rop->type = mpi::datatype_retain(result_type);
        rop->left.store(bytes, std::memory_order_relaxed);
        id = rop->id;
        // Fetch-and-add (or fetch) of one 8-byte integer: the driver's own
        // atomic, when it is atomic with the target's CPU (accumulate.hpp).
        const uint64_t addr = rdma_address(w, m, t.target_disp, *t.target_type);
        if (bytes == 8 && is_8_byte_integer(basic) && (no_op || op.handle == MPI_SUM) && m.rdma &&
            net().rma_atomics() && addr % 8 == 0) {
            uint64_t operand = 0;
            if (!no_op) memcpy(&operand, data, 8);
            if (net().rma_atomic(m.node, ib::AtomicOp::FetchAdd, operand, 0, &rop->scratch, addr,
                                 m.rdma_key, ib::RmaDone{atomic_done, rop}))
                return MPI_SUCCESS;
        }
    } else if (no_op) {
        return complete_request(request), MPI_SUCCESS;  // changes nothing
    }
    const std::vector<Seg> segs = target_segments(
        w, m, t.target_disp, static_cast<size_t>(t.target_count), *t.target_type, bytes);
    split(segs, basic.size, am_capacity(), !no_op,
          [&](const std::vector<Seg>& s, size_t off, size_t len) {
              AmHeader h = header(result ? Am::GetAcc : Am::Acc, w, m);
              h.nsegs = static_cast<uint16_t>(s.size());
              h.op = op.handle;
              h.basic = basic.handle;
              h.op_id = id;
              h.offset = off;
              h.bytes = len;
              send_am(m.node, h, s.data(), no_op ? nullptr : data + off, no_op ? 0 : len,
                      !result);
          });
    if (!result) complete_request(request);
    return MPI_SUCCESS;
}

int remote_compare_and_swap(Win* w, const void* origin, const void* compare, void* result,
                            const Datatype& type, int target, MPI_Aint disp) {
    const Member& m = w->members[static_cast<size_t>(target)];
    const size_t n = type.size;
    touch(w, target);
    w->peers[static_cast<size_t>(target)].dirty.store(true, std::memory_order_relaxed);
    RemoteOp* op = new_op(w, target, nullptr);
    op->buf = result;
    op->count = 1;
    op->type = mpi::datatype_retain(const_cast<Datatype*>(&type));
    op->left.store(n, std::memory_order_relaxed);
    const uint64_t addr = rdma_address(w, m, disp, type);
    if (n == 8 && m.rdma && net().rma_atomics() && addr % 8 == 0) {
        uint64_t desired, expected;
        memcpy(&desired, origin, 8);
        memcpy(&expected, compare, 8);
        if (net().rma_atomic(m.node, ib::AtomicOp::CompareSwap, desired, expected, &op->scratch,
                             addr, m.rdma_key, ib::RmaDone{atomic_done, op}))
            return MPI_SUCCESS;
    }
    char data[2 * 16];
    memcpy(data, origin, n);
    memcpy(data + n, compare, n);
    const Seg seg{target_offset(w, m, disp), n};
    AmHeader h = header(Am::Cas, w, m);
    h.nsegs = 1;
    h.basic = type.handle;
    h.op_id = op->id;
    h.bytes = 2 * n;
    send_am(m.node, h, &seg, data, 2 * n);
    return MPI_SUCCESS;
}

void lock_remote(Win* w, int target, bool exclusive) {
    PeerState& p = w->peers[static_cast<size_t>(target)];
    p.lock_requested = true;
    p.granted.store(false, std::memory_order_relaxed);
    touch(w, target);
    AmHeader h = header(Am::Lock, w, w->members[static_cast<size_t>(target)]);
    h.flags = exclusive ? kExclusive : 0;
    send_am(w->members[static_cast<size_t>(target)].node, h, nullptr, nullptr, 0);
}

void unlock_remote(Win* w, int target) {
    PeerState& p = w->peers[static_cast<size_t>(target)];
    p.dirty.store(false, std::memory_order_relaxed);
    p.pending.fetch_add(1, std::memory_order_relaxed);  // the Ack
    AmHeader h = header(Am::Unlock, w, w->members[static_cast<size_t>(target)]);
    h.flags = p.lock == PeerState::kExclusive ? kExclusive : 0;
    send_am(w->members[static_cast<size_t>(target)].node, h, nullptr, nullptr, 0);
}

void flush_remote(Win* w, int target) {
    PeerState& p = w->peers[static_cast<size_t>(target)];
    if (!p.dirty.exchange(false, std::memory_order_acq_rel)) return;
    p.pending.fetch_add(1, std::memory_order_relaxed);  // the Ack
    const Member& m = w->members[static_cast<size_t>(target)];
    send_am(m.node, header(Am::Flush, w, m), nullptr, nullptr, 0);
}

void post_remote(Win* w, int origin) {
    const Member& m = w->members[static_cast<size_t>(origin)];
    send_am(m.node, header(Am::Post, w, m), nullptr, nullptr, 0);
}

void complete_remote(Win* w, int target) {
    PeerState& p = w->peers[static_cast<size_t>(target)];
    p.dirty.store(false, std::memory_order_relaxed);
    touch(w, target);
    const Member& m = w->members[static_cast<size_t>(target)];
    send_am(m.node, header(Am::Complete, w, m), nullptr, nullptr, 0);
}

}  // namespace mpc::rma
