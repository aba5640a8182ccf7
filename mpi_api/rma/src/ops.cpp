// MPI_Put, MPI_Get, the accumulates and compare-and-swap: checks, then plain
// loads and stores (and CPU atomics) when the target lives in this node
// process, the network otherwise (remote.cpp). An operation on a target of
// this node process is complete when the call returns.
#include <cstring>
#include <vector>

#include "accumulate.hpp"
#include "engine.hpp"
#include "mpi_api/p2p.hpp"
#include "remote.hpp"
#include "target.hpp"

namespace mpc::rma {

using mpi::make_error;

int check_access(Win* w, int target, bool request) {
    switch (w->access) {
        case Access::None:
            return make_error(MPI_ERR_RMA_SYNC,
                              "no access epoch is open on the window (MPI_Win_fence, "
                              "MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all first)");
        case Access::FenceReady:
        case Access::Fence:
            if (request) break;
            w->access = Access::Fence;
            return MPI_SUCCESS;
        case Access::Pscw:
            if (request) break;
            for (int r : w->access_group)
                if (r == target) return MPI_SUCCESS;
            return make_error(MPI_ERR_RMA_SYNC,
                              "rank %d is not in the group of the access epoch (MPI_Win_start)",
                              target);
        case Access::Lock:
            if (w->peers[static_cast<size_t>(target)].lock != PeerState::kUnlocked)
                return MPI_SUCCESS;
            return make_error(MPI_ERR_RMA_SYNC, "rank %d of the window is not locked", target);
        case Access::LockAll:
            return MPI_SUCCESS;
    }
    return make_error(MPI_ERR_RMA_SYNC,
                      "request-based operations (MPI_Rput, ...) are only allowed in passive target "
                      "epochs (MPI_Win_lock, MPI_Win_lock_all)");
}

void await_lock(Win* w, int target) {
    if (w->access != Access::Lock && w->access != Access::LockAll) return;
    PeerState& p = w->peers[static_cast<size_t>(target)];
    if (w->access == Access::LockAll && p.lock == PeerState::kShared && !p.lock_requested &&
        !w->members[static_cast<size_t>(target)].local)
        lock_remote(w, target, false);
    if (p.lock_requested && !p.granted.load(std::memory_order_acquire))
        wait_until([&] { return p.granted.load(std::memory_order_acquire); });
}

int target_range(const Win* w, const Member& m, MPI_Aint disp, int count, const Datatype& type,
                 uint64_t* lo, uint64_t* hi) {
    const bool dynamic = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    if (disp < 0 && !dynamic)
        return make_error(MPI_ERR_DISP, "negative target displacement %ld",
                          static_cast<long>(disp));
    // In 128 bits: no product or sum below can wrap.
    using I = __int128;
    const I start = dynamic ? I(disp) : I(disp) * m.disp_unit;
    const I span = count > 1 ? I(count - 1) * type.extent : I(0);
    const I first = start + type.true_lb + (span < 0 ? span : I(0));
    const I last = start + type.true_lb + type.true_extent + (span > 0 ? span : I(0));
    if (!dynamic && (first < 0 || last > I(m.size)))
        return make_error(MPI_ERR_RMA_RANGE,
                          "the target data [%lld, %lld) lies outside rank's window of %ld bytes",
                          static_cast<long long>(first), static_cast<long long>(last),
                          static_cast<long>(m.size));
    if (first < 0 || last > I(UINT64_MAX))
        return make_error(MPI_ERR_RMA_RANGE, "the target data lies outside the address space");
    *lo = static_cast<uint64_t>(first);
    *hi = static_cast<uint64_t>(last);
    return MPI_SUCCESS;
}

Request* new_request(Win* w, bool done) {
    Request* r = mpi::request_allocate(Request::Kind::Rma, w->owner, w->comm);
    mpi::set_empty_status(&r->status);
    if (done) mpi::complete(r);
    return r;
}

int refused_error(Win* w, int target) {
    if (!w->refused.load(std::memory_order_relaxed)) return MPI_SUCCESS;
    int n = 0;
    for (int t = target < 0 ? 0 : target; t < (target < 0 ? w->size : target + 1); ++t)
        n += w->peers[static_cast<size_t>(t)].refused.exchange(0);
    if (!n) return MPI_SUCCESS;
    w->refused.fetch_sub(n, std::memory_order_relaxed);
    return make_error(MPI_ERR_RMA_RANGE,
                      "%d operations reached memory not attached to the target's dynamic window",
                      n);
}

namespace {

size_t data_bytes(int count, const Datatype* type) {
    return static_cast<size_t>(count) * type->size;
}

// Common checks of the data movement calls: epoch, data sizes, lock; the
// target's range when it lives here (*addr: where its data starts).
int open_transfer(Win* w, const Transfer& t, bool request, size_t* bytes, uintptr_t* addr) {
    if (int e = check_access(w, t.target_rank, request)) return e;
    const size_t ob = data_bytes(t.origin_count, t.origin_type);
    const size_t tb = data_bytes(t.target_count, t.target_type);
    if (ob != tb)
        return make_error(MPI_ERR_TYPE,
                          "the origin data (%zu bytes) and the target data (%zu bytes) differ in "
                          "size: their type signatures must match",
                          ob, tb);
    *bytes = ob;
    const Member& m = w->members[static_cast<size_t>(t.target_rank)];
    uint64_t lo = 0, hi = 0;
    if (ob && (m.local || w->flavor != MPI_WIN_FLAVOR_DYNAMIC))
        if (int e = target_range(w, m, t.target_disp, t.target_count, *t.target_type, &lo, &hi))
            return e;
    if (m.local && ob) {
        const uint64_t off = target_offset(w, m, t.target_disp);
        uintptr_t where;
        if (!m.local->locate(lo, hi - lo, &where))
            return make_error(MPI_ERR_RMA_RANGE,
                              "the target data is not in memory attached to rank %d's window",
                              t.target_rank);
        *addr = m.local->dynamic ? static_cast<uintptr_t>(off) : m.base + off;
    }
    await_lock(w, t.target_rank);
    return MPI_SUCCESS;
}

void finish(Win* w, MPI_Request* request) {
    if (request) *request = new_request(w, true)->handle;
}

}  // namespace

int put(Win* w, const Transfer& t, MPI_Request* request) {
    if (t.target_rank == MPI_PROC_NULL) return finish(w, request), MPI_SUCCESS;
    size_t bytes;
    uintptr_t addr = 0;
    if (int e = open_transfer(w, t, request != nullptr, &bytes, &addr)) return e;
    if (!w->members[static_cast<size_t>(t.target_rank)].local) {
        Request* r = request ? new_request(w, false) : nullptr;
        if (r) *request = r->handle;
        return remote_put(w, t, r);
    }
    if (bytes) {
        void* dst = reinterpret_cast<void*>(addr);
        if (t.origin_type->contiguous && t.target_type->contiguous)
            mpi::shared_copy(mpi::contiguous_data(t.origin, *t.origin_type),
                             mpi::contiguous_data(dst, *t.target_type), bytes, w->owner);
        else
            mpi::typed_copy(t.origin, static_cast<size_t>(t.origin_count), *t.origin_type, dst,
                            static_cast<size_t>(t.target_count), *t.target_type, bytes);
    }
    finish(w, request);
    return MPI_SUCCESS;
}

int get(Win* w, void* origin, const Transfer& t, MPI_Request* request) {
    if (t.target_rank == MPI_PROC_NULL) return finish(w, request), MPI_SUCCESS;
    size_t bytes;
    uintptr_t addr = 0;
    if (int e = open_transfer(w, t, request != nullptr, &bytes, &addr)) return e;
    if (!w->members[static_cast<size_t>(t.target_rank)].local) {
        Request* r = request ? new_request(w, false) : nullptr;
        if (r) *request = r->handle;
        return remote_get(w, origin, t, r);
    }
    if (bytes) {
        const void* src = reinterpret_cast<const void*>(addr);
        if (t.origin_type->contiguous && t.target_type->contiguous)
            mpi::shared_copy(mpi::contiguous_data(src, *t.target_type),
                             mpi::contiguous_data(origin, *t.origin_type), bytes, w->owner);
        else
            mpi::typed_copy(src, static_cast<size_t>(t.target_count), *t.target_type, origin,
                            static_cast<size_t>(t.origin_count), *t.origin_type, bytes);
    }
    finish(w, request);
    return MPI_SUCCESS;
}

namespace {

// The element type all of (count, type) is made of, or null.
const Datatype* basic_of(const Datatype* type) {
    if (type->predefined) return type;
    return type->basic == MPI_DATATYPE_NULL ? nullptr : mpi::datatype_lookup(type->basic);
}

int check_elements(const Datatype* type, const Datatype* basic, const char* what) {
    const Datatype* b = basic_of(type);
    if (!b)
        return make_error(MPI_ERR_TYPE,
                          "the %s datatype of an accumulate must be made of one predefined type",
                          what);
    if (b != basic)
        return make_error(MPI_ERR_TYPE,
                          "the %s datatype of an accumulate is made of %s, the target's of %s",
                          what, b->name.c_str(), basic->name.c_str());
    return MPI_SUCCESS;
}

}  // namespace

int accumulate(Win* w, const Transfer& t, const Op* op, void* result, int result_count,
               Datatype* result_type, MPI_Request* request) {
    if (t.target_rank == MPI_PROC_NULL) return finish(w, request), MPI_SUCCESS;
    const bool no_op = op->handle == MPI_NO_OP;
    const Datatype* basic = basic_of(t.target_type);
    if (!basic)
        return make_error(MPI_ERR_TYPE,
                          "the target datatype of an accumulate must be made of one predefined "
                          "type");
    if (int e = check_accumulate_op(*op, *basic)) return e;
    if (!no_op)
        if (int e = check_elements(t.origin_type, basic, "origin")) return e;
    if (result)
        if (int e = check_elements(result_type, basic, "result")) return e;
    if (int e = check_access(w, t.target_rank, request != nullptr)) return e;
    const size_t bytes = data_bytes(t.target_count, t.target_type);
    if (!no_op && data_bytes(t.origin_count, t.origin_type) != bytes)
        return make_error(MPI_ERR_TYPE,
                          "the origin data (%zu bytes) and the target data (%zu bytes) differ in "
                          "size",
                          data_bytes(t.origin_count, t.origin_type), bytes);
    if (result && data_bytes(result_count, result_type) != bytes)
        return make_error(MPI_ERR_TYPE,
                          "the result buffer (%zu bytes) and the target data (%zu bytes) differ "
                          "in size",
                          data_bytes(result_count, result_type), bytes);
    const Member& m = w->members[static_cast<size_t>(t.target_rank)];
    uint64_t lo = 0, hi = 0;
    if (bytes && (m.local || w->flavor != MPI_WIN_FLAVOR_DYNAMIC))
        if (int e = target_range(w, m, t.target_disp, t.target_count, *t.target_type, &lo, &hi))
            return e;
    await_lock(w, t.target_rank);
    if (!m.local) {
        Request* r = request ? new_request(w, false) : nullptr;
        if (r) *request = r->handle;
        return remote_accumulate(w, t, *op, *basic, result, result_count, result_type, r);
    }
    if (bytes) {
        uintptr_t where;
        if (!m.local->locate(lo, hi - lo, &where))
            return make_error(MPI_ERR_RMA_RANGE,
                              "the target data is not in memory attached to rank %d's window",
                              t.target_rank);
        const uint64_t off = target_offset(w, m, t.target_disp);
        void* dst =
            reinterpret_cast<void*>(m.local->dynamic ? static_cast<uintptr_t>(off) : m.base + off);
        // Both streams contiguous in the usual case; packed copies otherwise.
        std::vector<char> in_copy, out_copy;
        const char* in = nullptr;
        if (!no_op) {
            if (t.origin_type->contiguous) {
                in = reinterpret_cast<const char*>(mpi::contiguous_data(t.origin, *t.origin_type));
            } else {
                in_copy.resize(bytes);
                mpi::pack(t.origin, static_cast<size_t>(t.origin_count), *t.origin_type, 0,
                          in_copy.data(), bytes);
                in = in_copy.data();
            }
        }
        char* out = nullptr;
        if (result) {
            if (result_type->contiguous) {
                out = reinterpret_cast<char*>(mpi::contiguous_data(result, *result_type));
            } else {
                out_copy.resize(bytes);
                out = out_copy.data();
            }
        }
        {
            Accumulator acc(*m.local, *op, *basic, in, out);
            mpi::for_each_run(dst, static_cast<size_t>(t.target_count), *t.target_type, 0, bytes,
                              [&](uintptr_t a, size_t n) { acc.run(a, n); });
        }
        if (result && !result_type->contiguous)
            mpi::unpack(result, static_cast<size_t>(result_count), *result_type, 0, out_copy.data(),
                        bytes);
    }
    finish(w, request);
    return MPI_SUCCESS;
}

int compare_and_swap(Win* w, const void* origin, const void* compare, void* result, Datatype* type,
                     int target_rank, MPI_Aint target_disp) {
    if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (!compare_and_swap_type(*type))
        return make_error(MPI_ERR_TYPE,
                          "MPI_Compare_and_swap takes a predefined integer, logical or byte "
                          "type, not %s",
                          type->name.c_str());
    if (int e = check_access(w, target_rank, false)) return e;
    const Member& m = w->members[static_cast<size_t>(target_rank)];
    uint64_t lo = 0, hi = 0;
    if (m.local || w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        if (int e = target_range(w, m, target_disp, 1, *type, &lo, &hi)) return e;
    await_lock(w, target_rank);
    if (!m.local)
        return remote_compare_and_swap(w, origin, compare, result, *type, target_rank, target_disp);
    uintptr_t where;
    if (!m.local->locate(lo, hi - lo, &where))
        return make_error(MPI_ERR_RMA_RANGE,
                          "the target data is not in memory attached to rank %d's window",
                          target_rank);
    const uint64_t off = target_offset(w, m, target_disp);
    compare_and_swap_element(*m.local,
                             m.local->dynamic ? static_cast<uintptr_t>(off) : m.base + off, *type,
                             origin, compare, result);
    return MPI_SUCCESS;
}

}  // namespace mpc::rma
