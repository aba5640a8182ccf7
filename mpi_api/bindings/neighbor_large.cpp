// The large-count neighborhood collectives (MPI 4.0, MPI_Neighbor_X_c), in
// their blocking, nonblocking and persistent forms: the int paths of
// neighbor.cpp when the counts fit an int, a contiguous_c type for more
// elements than that in one block, MPI_ERR_COUNT for v and w counts or
// displacements beyond int (as coll_large.cpp does; never truncated).
#include "coll_entry.hpp"
#include "coll_large.hpp"

using namespace mpc::mpi;
using namespace mpc::mpi::entry;
using namespace mpc::mpi::large;

namespace {

// The in and out degrees of comm (0 when it has no topology: the int path
// reports that).
struct Degrees {
    int in = 0, out = 0;
    explicit Degrees(MPI_Comm comm) {
        if (!neighbor_degrees(comm, &in, &out)) in = out = 0;
    }
};

int allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Described s(sendcount, sendtype), r(recvcount, recvtype);
    if (s.error || r.error) return raise_on(comm, s.error ? s.error : r.error);
    return neighbor_allgather(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm, run);
}

int alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    Described s(sendcount, sendtype), r(recvcount, recvtype);
    if (s.error || r.error) return raise_on(comm, s.error ? s.error : r.error);
    return neighbor_alltoall(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm, run);
}

int allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                 MPI_Comm comm, Run run) {
    Described s(sendcount, sendtype);
    if (s.error) return raise_on(comm, s.error);
    IntBlocks b = int_blocks(recvcounts, displs, Degrees(comm).in);
    if (!b.fits) return too_large(comm, "MPI_Neighbor_allgatherv_c");
    return with_blocks(&b, nullptr, run, [&](IntBlocks* k, IntBlocks*) {
        return neighbor_allgatherv(sendbuf, s.count, s.type, recvbuf, k->c(), k->d(), recvtype,
                                   comm, run);
    });
}

int alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, Run run) {
    const Degrees d(comm);
    IntBlocks s = int_blocks(sendcounts, sdispls, d.out), r = int_blocks(recvcounts, rdispls, d.in);
    if (!s.fits || !r.fits) return too_large(comm, "MPI_Neighbor_alltoallv_c");
    return with_blocks(&s, &r, run, [&](IntBlocks* ks, IntBlocks* kr) {
        return neighbor_alltoallv(sendbuf, ks->c(), ks->d(), sendtype, recvbuf, kr->c(), kr->d(),
                                  recvtype, comm, run);
    });
}

int alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, Run run) {
    const Degrees d(comm);
    IntBlocks s = int_counts(sendcounts, d.out), r = int_counts(recvcounts, d.in);
    if (!s.fits || !r.fits) return too_large(comm, "MPI_Neighbor_alltoallw_c");
    return with_blocks(&s, &r, run, [&](IntBlocks* ks, IntBlocks* kr) {
        return neighbor_alltoallw(sendbuf, ks->c(), sdispls, sendtypes, recvbuf, kr->c(), rdispls,
                                  recvtypes, comm, run);
    });
}

}  // namespace

extern "C" {

// The three forms of each operation (see coll_large.cpp).
#define MPC_NEIGHBOR_C(Name, Params, Call)                                                     \
    int PMPI_Neighbor_##Name##_c Params {                                                      \
        MPC_ENTER_ACTIVE(Neighbor_##Name##_c);                                                 \
        return Call(kBlocking);                                                                \
    }                                                                                          \
    int PMPI_Ineighbor_##Name##_c(MPC_STRIP Params, MPI_Request* request) {                    \
        MPC_ENTER_ACTIVE(Ineighbor_##Name##_c);                                                \
        return Call(nonblocking(request));                                                     \
    }                                                                                          \
    int PMPI_Neighbor_##Name##_init_c(MPC_STRIP Params, MPI_Info info, MPI_Request* request) { \
        MPC_ENTER_ACTIVE(Neighbor_##Name##_init_c);                                            \
        return Call(persistent_run(request, info));                                            \
    }
#define MPC_STRIP(...) __VA_ARGS__

#define ALLGATHER(run) \
    allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, run)
MPC_NEIGHBOR_C(allgather,
               (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
               ALLGATHER)

#define ALLGATHERV(run) \
    allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, run)
MPC_NEIGHBOR_C(allgatherv,
               (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                MPI_Comm comm),
               ALLGATHERV)

#define ALLTOALL(run) \
    alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, run)
MPC_NEIGHBOR_C(alltoall,
               (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
               ALLTOALL)

#define ALLTOALLV(run)                                                                          \
    alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, \
                comm, run)
MPC_NEIGHBOR_C(alltoallv,
               (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
               ALLTOALLV)

#define ALLTOALLW(run)                                                                            \
    alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, \
                comm, run)
MPC_NEIGHBOR_C(alltoallw,
               (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
               ALLTOALLW)

#undef MPC_NEIGHBOR_C
#undef MPC_STRIP

}  // extern "C"

#define MPC_WEAK_NEIGHBOR_C(Name)      \
    MPC_WEAK(MPI_Neighbor_##Name##_c)  \
    MPC_WEAK(MPI_Ineighbor_##Name##_c) \
    MPC_WEAK(MPI_Neighbor_##Name##_init_c)
MPC_WEAK_NEIGHBOR_C(allgather)
MPC_WEAK_NEIGHBOR_C(allgatherv)
MPC_WEAK_NEIGHBOR_C(alltoall)
MPC_WEAK_NEIGHBOR_C(alltoallv)
MPC_WEAK_NEIGHBOR_C(alltoallw)
