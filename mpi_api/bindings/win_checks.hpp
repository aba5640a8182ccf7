// Argument checks shared by the window bindings (win.cpp, rma.cpp).
#pragma once

#include "mpi_api/api.hpp"
#include "rma/window.hpp"

namespace mpc::mpi {

// The caller's window behind handle; the error goes to MPI_COMM_WORLD's
// handler when the handle itself is bad (the window is unknown).
inline int check_win(RankState* me, MPI_Win handle, rma::Win** out) {
    rma::Win* w = rma::win_lookup(me, handle);
    if (__builtin_expect(w != nullptr, 1)) {
        *out = w;
        return MPI_SUCCESS;
    }
    if (handle == MPI_WIN_NULL) return make_error(MPI_ERR_WIN, "MPI_WIN_NULL passed");
    if (rma::Win* other = rma::win_lookup_any(handle); other && other->owner)
        return make_error(MPI_ERR_WIN,
                          "window 0x%x belongs to MPI_COMM_WORLD rank %d, not to the calling "
                          "rank (ranks of a node process share global variables: keep window "
                          "handles per rank)",
                          handle, other->owner->world_rank);
    return make_error(MPI_ERR_WIN, "0x%x is not a valid window", handle);
}

// A rank of the window, or MPI_PROC_NULL.
inline int check_win_rank(const rma::Win* w, int rank) {
    if (rank == MPI_PROC_NULL || (rank >= 0 && rank < w->size)) return MPI_SUCCESS;
    return make_error(MPI_ERR_RANK, "invalid rank %d: the window has %d ranks", rank, w->size);
}

// Assertions: only the bits `allowed` (MPI_MODE_*) may be set.
inline int check_assert(int assertion, int allowed, const char* fn) {
    if ((assertion & ~allowed) == 0) return MPI_SUCCESS;
    return make_error(MPI_ERR_ASSERT, "invalid assertion 0x%x for %s", assertion, fn);
}

}  // namespace mpc::mpi

// Raises through the window's error handler when `expr` is an error.
#define MPC_WIN_TRY(win, expr)                            \
    do {                                                  \
        int mpc_err_ = (expr);                            \
        if (__builtin_expect(mpc_err_ != MPI_SUCCESS, 0)) \
            return ::mpc::rma::raise((win), mpc_err_);    \
    } while (0)
