// collectives: the collective operations of MPI 3.1 chapter 5, each built as
// a schedule (schedule.hpp): make_x on intracommunicators, make_inter_x on
// intercommunicators (alg_inter.cpp).
//
// make_x builds the schedule of collective x for the calling rank; the caller
// runs it blocking (run_blocking) or behind a request (run_nonblocking), so
// MPI_X and MPI_IX share one implementation. Building consumes the
// communicator's next collective tag, so every member must build the same
// collectives in the same order (the MPI rule). Arguments are checked by the
// MPI layer before these are called: counts are valid, types committed, roots
// in range, MPI_IN_PLACE only where the standard allows it, operations defined
// on their types. Algorithms and thresholds: tuning.hpp.
//
// This room never blocks while building and never touches the network
// directly: all data moves through the point-to-point engine.
#pragma once

#include <memory>

#include "collectives/schedule.hpp"
#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/op.hpp"

namespace mpc::coll {

using SchedulePtr = std::unique_ptr<Schedule>;

SchedulePtr make_barrier(Comm* c);
SchedulePtr make_bcast(void* buf, int count, Datatype* type, int root, Comm* c);

// Rooted data movement. sendbuf (Gather*) or recvbuf (Scatter*) may be
// MPI_IN_PLACE at the root; arguments the standard calls insignificant on a
// rank are ignored there.
SchedulePtr make_gather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                        int recvcount, Datatype* recvtype, int root, Comm* c);
SchedulePtr make_gatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                         const int* recvcounts, const int* displs, Datatype* recvtype, int root,
                         Comm* c);
SchedulePtr make_scatter(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                         int recvcount, Datatype* recvtype, int root, Comm* c);
SchedulePtr make_scatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                          Datatype* sendtype, void* recvbuf, int recvcount, Datatype* recvtype,
                          int root, Comm* c);

// All-to-all data movement; sendbuf may be MPI_IN_PLACE.
SchedulePtr make_allgather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                           int recvcount, Datatype* recvtype, Comm* c);
SchedulePtr make_allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                            const int* recvcounts, const int* displs, Datatype* recvtype, Comm* c);
SchedulePtr make_alltoall(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                          int recvcount, Datatype* recvtype, Comm* c);
SchedulePtr make_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                           Datatype* sendtype, void* recvbuf, const int* recvcounts,
                           const int* rdispls, Datatype* recvtype, Comm* c);
// Displacements in bytes, one datatype per peer.
SchedulePtr make_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                           Datatype* const* sendtypes, void* recvbuf, const int* recvcounts,
                           const MPI_Aint* rdispls, Datatype* const* recvtypes, Comm* c);

// Reductions; sendbuf may be MPI_IN_PLACE (Reduce: at the root only).
SchedulePtr make_reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                        int root, Comm* c);
SchedulePtr make_allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type,
                           const Op* op, Comm* c);
SchedulePtr make_reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                                Datatype* type, const Op* op, Comm* c);
SchedulePtr make_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                      Datatype* type, const Op* op, Comm* c);
SchedulePtr make_scan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                      Comm* c);
SchedulePtr make_exscan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                        Comm* c);

// Intercommunicators (MPI 3.1 section 5.2.2): peers and roots are ranks of the
// remote group; root is MPI_ROOT at the root, MPI_PROC_NULL at the rest of its
// group, the root's remote rank in the other group. Counts and displacements
// arrays have one entry per remote rank, except Reduce_scatter's recvcounts
// (one per local rank: the reduction of the remote group's vectors is
// scattered over the local group). No MPI_IN_PLACE.
SchedulePtr make_inter_barrier(Comm* c);
SchedulePtr make_inter_bcast(void* buf, int count, Datatype* type, int root, Comm* c);
SchedulePtr make_inter_gather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                              int recvcount, Datatype* recvtype, int root, Comm* c);
SchedulePtr make_inter_gatherv(const void* sendbuf, int sendcount, Datatype* sendtype,
                               void* recvbuf, const int* recvcounts, const int* displs,
                               Datatype* recvtype, int root, Comm* c);
SchedulePtr make_inter_scatter(const void* sendbuf, int sendcount, Datatype* sendtype,
                               void* recvbuf, int recvcount, Datatype* recvtype, int root, Comm* c);
SchedulePtr make_inter_scatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                                Datatype* sendtype, void* recvbuf, int recvcount,
                                Datatype* recvtype, int root, Comm* c);
SchedulePtr make_inter_allgather(const void* sendbuf, int sendcount, Datatype* sendtype,
                                 void* recvbuf, int recvcount, Datatype* recvtype, Comm* c);
SchedulePtr make_inter_allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype,
                                  void* recvbuf, const int* recvcounts, const int* displs,
                                  Datatype* recvtype, Comm* c);
SchedulePtr make_inter_alltoall(const void* sendbuf, int sendcount, Datatype* sendtype,
                                void* recvbuf, int recvcount, Datatype* recvtype, Comm* c);
SchedulePtr make_inter_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                                 Datatype* sendtype, void* recvbuf, const int* recvcounts,
                                 const int* rdispls, Datatype* recvtype, Comm* c);
SchedulePtr make_inter_alltoallw(const void* sendbuf, const int* sendcounts,
                                 const MPI_Aint* sdispls, Datatype* const* sendtypes, void* recvbuf,
                                 const int* recvcounts, const MPI_Aint* rdispls,
                                 Datatype* const* recvtypes, Comm* c);
SchedulePtr make_inter_reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type,
                              const Op* op, int root, Comm* c);
SchedulePtr make_inter_allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type,
                                 const Op* op, Comm* c);
SchedulePtr make_inter_reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                                      Datatype* type, const Op* op, Comm* c);
SchedulePtr make_inter_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                            Datatype* type, const Op* op, Comm* c);

// MPI_Reduce_local: inout = in op inout, at once.
void reduce_local(const void* in, void* inout, int count, Datatype* type, const Op* op);

// A blocking barrier for the MPI layer itself (MPI_Finalize).
int barrier(Comm* c);

}  // namespace mpc::coll
