// The short paths of the busiest calls: an operation on a window of a rank of
// this node process, with predefined types of the same count on both sides,
// inside an epoch that allows it, and a flush with nothing in flight. They
// check exactly what the full paths check and act the same, in a few dozen
// instructions (an 8-byte Put + Win_flush is a copy and a handful of compares);
// anything else (errors included) returns false and takes the full path.
#include "accumulate.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/progress.hpp"
#include "rma/window.hpp"
#include "runtime/copy.hpp"
#include "target.hpp"

namespace mpc::rma {
namespace {

// The access epoch lets this origin reach target now, without a lock to
// wait for (the full path asks for it and waits).
inline bool epoch_open(const Win* w, int target) {
    switch (w->access) {
        case Access::Fence:
            return true;
        case Access::Lock:
        case Access::LockAll: {
            const PeerState& p = w->peers[static_cast<size_t>(target)];
            return p.lock != PeerState::kUnlocked && p.granted.load(std::memory_order_acquire);
        }
        default:
            return false;
    }
}

// Where `bytes` bytes at displacement disp of a target of this node process
// lie, when the whole transfer is inside its window (static windows).
inline char* local_target(const Win* w, int target, MPI_Aint disp, size_t bytes) {
    if (static_cast<unsigned>(target) >= static_cast<unsigned>(w->size) ||
        w->flavor == MPI_WIN_FLAVOR_DYNAMIC || disp < 0)
        return nullptr;
    const Member& m = w->members[static_cast<size_t>(target)];
    if (!m.local || !epoch_open(w, target)) return nullptr;
    const unsigned __int128 start = static_cast<unsigned __int128>(disp) * m.disp_unit;
    if (start + bytes > static_cast<unsigned __int128>(m.size)) return nullptr;
    return reinterpret_cast<char*>(m.base + static_cast<uintptr_t>(start));
}

inline const Datatype* same_predefined(int count, MPI_Datatype a, int count_b, MPI_Datatype b) {
    if (a != b || count != count_b || count < 0) return nullptr;
    const Datatype* t = mpi::datatype_lookup(a);
    return t && t->predefined && t->size ? t : nullptr;
}

}  // namespace

bool put_fast(Win* w, const void* origin, int count, MPI_Datatype type, int target, MPI_Aint disp,
              int target_count, MPI_Datatype target_type) {
    const Datatype* t = same_predefined(count, type, target_count, target_type);
    if (!t || !origin) return false;
    const size_t bytes = static_cast<size_t>(count) * t->size;
    char* dst = local_target(w, target, disp, bytes);
    if (!dst) return false;
    if (bytes <= 16)
        runtime::copy_bytes(dst, origin, bytes);
    else
        mpi::shared_copy(origin, dst, bytes, w->owner);
    return true;
}

bool get_fast(Win* w, void* origin, int count, MPI_Datatype type, int target, MPI_Aint disp,
              int target_count, MPI_Datatype target_type) {
    const Datatype* t = same_predefined(count, type, target_count, target_type);
    if (!t || !origin) return false;
    const size_t bytes = static_cast<size_t>(count) * t->size;
    const char* src = local_target(w, target, disp, bytes);
    if (!src) return false;
    if (bytes <= 16)
        runtime::copy_bytes(origin, src, bytes);
    else
        mpi::shared_copy(src, origin, bytes, w->owner);
    return true;
}

bool accumulate_fast(Win* w, const void* origin, int count, MPI_Datatype type, void* result,
                     int result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                     int target_count, MPI_Datatype target_type, MPI_Op op) {
    const Datatype* t = same_predefined(count, type, target_count, target_type);
    if (!t || !origin || (result && (result_type != type || result_count != count))) return false;
    const Op* o = mpi::op_lookup(op);
    if (!o || !o->predefined || o->handle == MPI_NO_OP) return false;
    if (check_accumulate_op(*o, *t) != MPI_SUCCESS) return false;  // (detailed by the full path)
    const size_t bytes = static_cast<size_t>(count) * t->size;
    char* dst = local_target(w, target, disp, bytes);
    if (!dst) return false;
    Accumulator acc(*w->members[static_cast<size_t>(target)].local, *o, *t,
                    static_cast<const char*>(origin), static_cast<char*>(result));
    acc.run(reinterpret_cast<uintptr_t>(dst), bytes);
    return true;
}

bool flush_fast(Win* w, int target) {
    if (w->access != Access::Lock && w->access != Access::LockAll) return false;
    if (target >= 0 && (static_cast<unsigned>(target) >= static_cast<unsigned>(w->size) ||
                        w->peers[static_cast<size_t>(target)].lock == PeerState::kUnlocked))
        return false;
    if (!w->touched.empty() || w->refused.load(std::memory_order_relaxed)) return false;
    // Operations on this node process's windows are done when issued; their
    // stores are ordered before whatever synchronises next (x86: a compiler
    // barrier is all it takes).
    std::atomic_thread_fence(std::memory_order_acq_rel);
    // A loop of fetches and flushes waiting for another rank's store is a
    // common pattern: now and then let the ranks of this VP run, and poll,
    // or one sharing the VP with the writer would wait forever.
    static thread_local unsigned calls = 0;
    if (++calls % 64 == 0) mpi::progress_for_test();
    return true;
}

}  // namespace mpc::rma
