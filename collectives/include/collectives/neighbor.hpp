// collectives/neighbor: blocking neighbor collectives over a communicator's
// virtual topology (MPI 3.1 section 7.6).
//
// Every rank posts all its receives, then all its sends, on the collective
// context, and waits for them: no rank waits for another's progress before
// issuing its own operations, so the exchange cannot deadlock whatever the
// sizes. Blocks for MPI_PROC_NULL neighbors are left untouched. Arguments are
// checked by the MPI layer; the communicator has a topology.
#pragma once

#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"

namespace mpc::coll {

using mpi::Comm;
using mpi::Datatype;

int neighbor_allgather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                       int recvcount, Datatype* recvtype, Comm* c);
int neighbor_allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                        const int* recvcounts, const int* displs, Datatype* recvtype, Comm* c);
int neighbor_alltoall(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
                      int recvcount, Datatype* recvtype, Comm* c);
int neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                       Datatype* sendtype, void* recvbuf, const int* recvcounts,
                       const int* rdispls, Datatype* recvtype, Comm* c);
// Displacements in bytes, one datatype per neighbor.
int neighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                       Datatype* const* sendtypes, void* recvbuf, const int* recvcounts,
                       const MPI_Aint* rdispls, Datatype* const* recvtypes, Comm* c);

}  // namespace mpc::coll
