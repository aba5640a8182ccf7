// Small collective steps of the file operations that are collective over the
// file's group (open, close, set_view, set_size, ...): agreements through the
// collectives room on the file's private communicator (or, at open, on the
// user's, which the call is collective over too).
#pragma once

#include <cstdint>

#include "file.hpp"

namespace mpc::io {

// v[0..n) replaced by its minimum over comm's ranks (negate for a maximum).
int allreduce_min(Comm* comm, int64_t* v, int n);
inline int allreduce_min(File* f, int64_t* v, int n) {
    return allreduce_min(f->comm, v, n);
}
int barrier(File* f);

// Agreement on one value and an error: every rank returns the same class.
// MPI_ERR_NOT_SAME when the values differ; another rank's error as a code of
// its class; else local_err (MPI_SUCCESS on all when none failed).
int agree(File* f, int64_t value, int local_err, const char* what);

}  // namespace mpc::io
