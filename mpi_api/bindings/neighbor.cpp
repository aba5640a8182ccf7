// Neighbor collectives, blocking and nonblocking: argument checks, then a
// schedule from the collectives room.
#include "collectives/neighbor.hpp"

#include "coll_checks.hpp"
#include "coll_entry.hpp"
#include "object_checks.hpp"
#include "topo_checks.hpp"

using namespace mpc::mpi;

namespace {

// The communicator with its topology, and its in/out degrees.
struct Target {
    Comm* comm = nullptr;
    size_t in = 0, out = 0;
};

int check_target(MPI_Comm comm, Target* t) {
    if (int e = check_comm(comm, &t->comm)) return e;
    if (int e = check_intra_coll(t->comm, "a neighborhood collective")) return e;
    const Topology* topo = nullptr;
    if (int e = check_topology(t->comm, MPI_UNDEFINED, &topo)) return e;
    NeighborList nl = topo_neighbors(*t->comm);
    t->in = nl.in.size();
    t->out = nl.out.size();
    return MPI_SUCCESS;
}

int check_block(const void* buf, int count, MPI_Datatype type, Datatype** out) {
    if (int e = check_count(count)) return e;
    if (int e = check_type(type, out)) return e;
    if (buf == MPI_IN_PLACE)
        return make_error(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in neighbor collectives");
    return check_buffer(buf, count, *out);
}

// n per-neighbor counts (and displacements), each block checked.
int check_blocks(const void* buf, size_t n, const int* counts, const void* displs,
                 MPI_Datatype type, Datatype** out) {
    if (int e = check_type(type, out)) return e;
    if (n > 0 && (!counts || !displs))
        return make_error(MPI_ERR_ARG, "a counts or displacements array is NULL");
    for (size_t k = 0; k < n; ++k)
        if (int e = check_block(buf, counts[k], type, out)) return e;
    return MPI_SUCCESS;
}

int check_typed_blocks(const void* buf, size_t n, const int* counts, const MPI_Aint* displs,
                       const MPI_Datatype* types, std::vector<Datatype*>& out) {
    if (n > 0 && (!counts || !displs || !types))
        return make_error(MPI_ERR_ARG, "a counts, displacements or types array is NULL");
    out.resize(n);
    for (size_t k = 0; k < n; ++k)
        if (int e = check_block(buf, counts[k], types[k], &out[k])) return e;
    return MPI_SUCCESS;
}

}  // namespace

namespace mpc::mpi::entry {

bool neighbor_degrees(MPI_Comm comm, int* in, int* out) {
    Target t;
    if (check_target(comm, &t)) return false;
    *in = static_cast<int>(t.in);
    *out = static_cast<int>(t.out);
    return true;
}

int neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Target t;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = check_comm(comm, &t.comm)) return raise(nullptr, e);
    MPC_TRY(t.comm, check_target(comm, &t));
    MPC_TRY(t.comm, check_run(run));
    MPC_TRY(t.comm, check_block(sendbuf, sendcount, sendtype, &st));
    MPC_TRY(t.comm, check_block(recvbuf, recvcount, recvtype, &rt));
    return start(
        t.comm,
        mpc::coll::make_neighbor_allgather(sendbuf, sendcount, st, recvbuf, recvcount, rt, t.comm),
        run);
}

int neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, Run run) {
    Target t;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = check_comm(comm, &t.comm)) return raise(nullptr, e);
    MPC_TRY(t.comm, check_target(comm, &t));
    MPC_TRY(t.comm, check_run(run));
    MPC_TRY(t.comm, check_block(sendbuf, sendcount, sendtype, &st));
    MPC_TRY(t.comm, check_blocks(recvbuf, t.in, recvcounts, displs, recvtype, &rt));
    return start(t.comm,
                 mpc::coll::make_neighbor_allgatherv(sendbuf, sendcount, st, recvbuf, recvcounts,
                                                     displs, rt, t.comm),
                 run);
}

int neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Target t;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = check_comm(comm, &t.comm)) return raise(nullptr, e);
    MPC_TRY(t.comm, check_target(comm, &t));
    MPC_TRY(t.comm, check_run(run));
    MPC_TRY(t.comm, check_block(sendbuf, sendcount, sendtype, &st));
    MPC_TRY(t.comm, check_block(recvbuf, recvcount, recvtype, &rt));
    return start(
        t.comm,
        mpc::coll::make_neighbor_alltoall(sendbuf, sendcount, st, recvbuf, recvcount, rt, t.comm),
        run);
}

int neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Target t;
    Datatype *st = nullptr, *rt = nullptr;
    if (int e = check_comm(comm, &t.comm)) return raise(nullptr, e);
    MPC_TRY(t.comm, check_target(comm, &t));
    MPC_TRY(t.comm, check_run(run));
    MPC_TRY(t.comm, check_blocks(sendbuf, t.out, sendcounts, sdispls, sendtype, &st));
    MPC_TRY(t.comm, check_blocks(recvbuf, t.in, recvcounts, rdispls, recvtype, &rt));
    return start(t.comm,
                 mpc::coll::make_neighbor_alltoallv(sendbuf, sendcounts, sdispls, st, recvbuf,
                                                    recvcounts, rdispls, rt, t.comm),
                 run);
}

int neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       Run run) {
    Target t;
    std::vector<Datatype*> st, rt;
    if (int e = check_comm(comm, &t.comm)) return raise(nullptr, e);
    MPC_TRY(t.comm, check_target(comm, &t));
    MPC_TRY(t.comm, check_run(run));
    MPC_TRY(t.comm, check_typed_blocks(sendbuf, t.out, sendcounts, sdispls, sendtypes, st));
    MPC_TRY(t.comm, check_typed_blocks(recvbuf, t.in, recvcounts, rdispls, recvtypes, rt));
    return start(
        t.comm,
        mpc::coll::make_neighbor_alltoallw(sendbuf, sendcounts, sdispls, st.data(), recvbuf,
                                           recvcounts, rdispls, rt.data(), t.comm),
        run);
}

}  // namespace mpc::mpi::entry

using namespace mpc::mpi::entry;

extern "C" {

int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Neighbor_allgather);
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              kBlocking);
}

int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ineighbor_allgather);
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              nonblocking(request));
}

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Neighbor_allgatherv);
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, kBlocking);
}

int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ineighbor_allgatherv);
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, nonblocking(request));
}

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Neighbor_alltoall);
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             kBlocking);
}

int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ineighbor_alltoall);
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             nonblocking(request));
}

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Neighbor_alltoallv);
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, kBlocking);
}

int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ineighbor_alltoallv);
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, nonblocking(request));
}

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Neighbor_alltoallw);
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, kBlocking);
}

int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ineighbor_alltoallw);
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, nonblocking(request));
}

// Persistent neighborhood collectives (MPI 4.0 section 8.8).
int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Neighbor_allgather_init);
    return neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              persistent_run(request, info));
}

int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
    MPC_ENTER_ACTIVE(Neighbor_allgatherv_init);
    return neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm, persistent_run(request, info));
}

int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Neighbor_alltoall_init);
    return neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             persistent_run(request, info));
}

int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Neighbor_alltoallv_init);
    return neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm, persistent_run(request, info));
}

int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
    MPC_ENTER_ACTIVE(Neighbor_alltoallw_init);
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, persistent_run(request, info));
}

}  // extern "C"

MPC_WEAK(MPI_Neighbor_allgather)
MPC_WEAK(MPI_Ineighbor_allgather)
MPC_WEAK(MPI_Neighbor_allgatherv)
MPC_WEAK(MPI_Ineighbor_allgatherv)
MPC_WEAK(MPI_Neighbor_alltoall)
MPC_WEAK(MPI_Ineighbor_alltoall)
MPC_WEAK(MPI_Neighbor_alltoallv)
MPC_WEAK(MPI_Ineighbor_alltoallv)
MPC_WEAK(MPI_Neighbor_alltoallw)
MPC_WEAK(MPI_Ineighbor_alltoallw)
MPC_WEAK(MPI_Neighbor_allgather_init)
MPC_WEAK(MPI_Neighbor_allgatherv_init)
MPC_WEAK(MPI_Neighbor_alltoall_init)
MPC_WEAK(MPI_Neighbor_alltoallv_init)
MPC_WEAK(MPI_Neighbor_alltoallw_init)
