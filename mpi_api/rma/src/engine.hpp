// What the operations and the synchronisation calls of the one-sided engine
// share: waiting, epoch checks, where target data lies, requests.
#pragma once

#include <cstdint>

#include "mpi_api/errors.hpp"
#include "mpi_api/progress.hpp"
#include "rma/window.hpp"

namespace mpc::rma {

// Waits like any MPI wait (polls, yields, then parks) until done(). Whoever
// makes done() true rings the owner's doorbell afterwards.
template <class F>
void wait_until(F&& done) {
    mpi::block_until(
        done, [](sched::Waiter*) {}, [](sched::Waiter*) {});
}

// The access epoch allows an operation to target (request: MPI_Rput and
// friends, passive target only). Moves FenceReady to Fence.
int check_access(Win* w, int target, bool request);
// Before an operation to target under a lock: the lock is granted (asks for
// it first, for a remote target of MPI_Win_lock_all).
void await_lock(Win* w, int target);

// The bytes [lo, hi) that (count, type) at displacement disp covers in the
// window of member m, relative to its base (an address for dynamic windows);
// MPI_ERR_DISP or MPI_ERR_RMA_RANGE when outside.
int target_range(const Win* w, const Member& m, MPI_Aint disp, int count, const Datatype& type,
                 uint64_t* lo, uint64_t* hi);
// Where target data starts, as the buffer argument of the datatype walks
// (the window offset, or the address for dynamic windows): disp * disp_unit.
inline uint64_t target_offset(const Win* w, const Member& m, MPI_Aint disp) {
    return w->flavor == MPI_WIN_FLAVOR_DYNAMIC
               ? static_cast<uint64_t>(disp)
               : static_cast<uint64_t>(disp) * static_cast<uint64_t>(m.disp_unit);
}

// A request for MPI_Rput and friends (already complete when done).
Request* new_request(Win* w, bool done);
// The refused operations of target (or every target, -1) as an error, once.
int refused_error(Win* w, int target);

}  // namespace mpc::rma
