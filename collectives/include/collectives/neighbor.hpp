// collectives/neighbor: neighbor collectives over a communicator's virtual
// topology (MPI 3.1 section 7.6), built as schedules (schedule.hpp) and run
// blocking or behind a request like the other collectives.
//
// Every receive and every send is issued at the start: no rank waits for
// another's progress before issuing its own operations, so the exchange cannot
// deadlock whatever the sizes. Each message carries the tag offset of its
// neighbor slot (topology.hpp), which keeps apart the two blocks exchanged
// with the same rank (both neighbors of a periodic dimension of size 1 or 2).
// Blocks for MPI_PROC_NULL neighbors are left untouched. Arguments are checked
// by the MPI layer; the communicator has a topology.
#pragma once

#include "collectives/collectives.hpp"

namespace mpc::coll {

SchedulePtr make_neighbor_allgather(const void* sendbuf, int sendcount, Datatype* sendtype,
                                    void* recvbuf, int recvcount, Datatype* recvtype, Comm* c);
SchedulePtr make_neighbor_allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype,
                                     void* recvbuf, const int* recvcounts, const int* displs,
                                     Datatype* recvtype, Comm* c);
SchedulePtr make_neighbor_alltoall(const void* sendbuf, int sendcount, Datatype* sendtype,
                                   void* recvbuf, int recvcount, Datatype* recvtype, Comm* c);
SchedulePtr make_neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                                    Datatype* sendtype, void* recvbuf, const int* recvcounts,
                                    const int* rdispls, Datatype* recvtype, Comm* c);
// Displacements in bytes, one datatype per neighbor.
SchedulePtr make_neighbor_alltoallw(const void* sendbuf, const int* sendcounts,
                                    const MPI_Aint* sdispls, Datatype* const* sendtypes,
                                    void* recvbuf, const int* recvcounts, const MPI_Aint* rdispls,
                                    Datatype* const* recvtypes, Comm* c);

}  // namespace mpc::coll
