// Agreements over a file's group (util.hpp). Inside a node process they go
// through the shared address space (one synchronisation, no message), across
// node processes hierarchically, as the blocking collectives do.
#include "util.hpp"

#include "collectives/collectives.hpp"
#include "collectives/shm.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/op.hpp"

namespace mpc::io {

int allreduce_min(Comm* comm, int64_t* v, int n) {
    mpi::Datatype* t = mpi::datatype_lookup(MPI_INT64_T);
    const mpi::Op* op = mpi::op_lookup(MPI_MIN);
    if (coll::shm::eligible(comm, op)) return coll::shm::allreduce(MPI_IN_PLACE, v, n, t, op, comm);
    return coll::run_blocking(coll::make_allreduce(MPI_IN_PLACE, v, n, t, op, comm));
}

int barrier(File* f) {
    if (coll::shm::eligible(f->comm)) return coll::shm::barrier(f->comm);
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
