// Agreements over a file's group (util.hpp).
#include "util.hpp"

#include "collectives/collectives.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/op.hpp"

namespace mpc::io {

int allreduce_min(Comm* comm, int64_t* v, int n) {
    mpi::Datatype* t = mpi::datatype_lookup(MPI_INT64_T);
    return coll::run_blocking(
        coll::make_allreduce(MPI_IN_PLACE, v, n, t, mpi::op_lookup(MPI_MIN), comm));
}

int barrier(File* f) {
    return coll::barrier(f->comm);
}

int agree(File* f, int64_t value, int local_err, const char* what) {
    int64_t v[] = {value, -value, -static_cast<int64_t>(mpi::error_class_of(local_err))};
    if (int e = allreduce_min(f, v, 3)) return e;
    if (local_err) return local_err;
    if (-v[2] != MPI_SUCCESS)
        return mpi::make_error(static_cast<int>(-v[2]), "%s failed on another rank", what);
    if (v[0] != -v[1])
        return mpi::make_error(MPI_ERR_NOT_SAME, "%s: the ranks passed different values", what);
    return MPI_SUCCESS;
}

}  // namespace mpc::io
