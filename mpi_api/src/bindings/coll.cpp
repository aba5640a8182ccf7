// Collective operations: argument checks, then the collectives room.
#include "collectives/collectives.hpp"
#include "mpi_api/api.hpp"
#include "mpi_api/op.hpp"

using namespace mpc::mpi;

namespace {

int check_data(const void* buf, int count, MPI_Datatype datatype, Datatype** t) {
    if (int e = check_count(count)) return e;
    if (int e = check_type(datatype, t)) return e;
    return check_buffer(buf, count, *t);
}

int check_op(MPI_Op op, const Datatype* t, Op** out) {
    Op* o = op_lookup(op);
    if (!o) return make_error(MPI_ERR_OP, "0x%x is not a valid operation", op);
    if (int e = op_check(*o, *t)) return e;
    *out = o;
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Barrier);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    return raise(c, mpc::coll::barrier(c));
}

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Bcast);
    Comm* c;
    Datatype* t;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (int e = check_data(buffer, count, datatype, &t)) return raise(c, e);
    if (int e = check_root(c, root)) return raise(c, e);
    return raise(c, mpc::coll::bcast(buffer, count, t, root, c));
}

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Reduce);
    Comm* c;
    Datatype* t;
    Op* o = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (int e = check_root(c, root)) return raise(c, e);
    if (sendbuf == MPI_IN_PLACE && c->rank != root)
        return raise(c, make_error(MPI_ERR_BUFFER, "MPI_IN_PLACE is only valid at the root"));
    const void* data = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (int e = check_data(data, count, datatype, &t)) return raise(c, e);
    if (c->rank == root)
        if (int e = check_buffer(recvbuf, count, t)) return raise(c, e);
    if (int e = check_op(op, t, &o)) return raise(c, e);
    return raise(c, mpc::coll::reduce(sendbuf, recvbuf, count, t, o, root, c));
}

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Allreduce);
    Comm* c;
    Datatype* t;
    Op* o = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    const void* data = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (int e = check_data(data, count, datatype, &t)) return raise(c, e);
    if (int e = check_buffer(recvbuf, count, t)) return raise(c, e);
    if (int e = check_op(op, t, &o)) return raise(c, e);
    return raise(c, mpc::coll::allreduce(sendbuf, recvbuf, count, t, o, c));
}

}  // extern "C"

MPC_WEAK(MPI_Barrier)
MPC_WEAK(MPI_Bcast)
MPC_WEAK(MPI_Reduce)
MPC_WEAK(MPI_Allreduce)
