// collectives/shm: blocking collectives of communicators whose members all live
// in this node process, through the shared address space instead of messages.
//
// The members of such a communicator share one ShmGroup: a cache line of
// progress per member (the last "episode" it reached) and two small inline
// buffers per member, used alternately. A collective is one to three episodes:
// a member publishes (its data inline, or pointers to its buffers) and moves
// its counter, the others wait for the counters they need and read straight
// from the publisher's memory. Small reductions thus cost one synchronisation
// and no message; large ones are split in slices that every member reduces in
// parallel from the others' buffers, then copies once.
//
// Every member must take the same path, so eligibility depends only on what
// all members agree on: the communicator, the operation (predefined ones; a
// user function belongs to its rank's program image and runs on the schedule
// path) and the data size. Waiting polls and yields like any MPI wait (an idle
// member progresses the node's network), then parks until a member moves.
//
// The nonblocking forms take the same path when the whole communicator lives
// in this node process: the request's steps advance whenever someone polls
// the owner's operations (in collaborative mode an idle rank does a computing
// rank's share of the work for it). Every nonblocking collective of a
// communicator spread over node processes uses a schedule (schedule.hpp).
#pragma once

#include <memory>

#include "mpi.h"
#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/op.hpp"

namespace mpc::coll {
class Persistent;
}

namespace mpc::coll::shm {

using mpi::Comm;
using mpi::Datatype;
using mpi::Op;

// Registers MPC_COLL_SHM as a control variable of the tools interface (MPI_T).
void register_tool_variables();

// True when c's blocking collectives run here: an intracommunicator of one
// rank, or one with several ranks in some node process (and MPC_COLL_SHM is
// not 0).
bool eligible(Comm* c);
// Reductions also need a predefined operation.
bool eligible(Comm* c, const Op* op);

// As the MPI functions; arguments checked by the MPI layer. Return MPI_SUCCESS.
int barrier(Comm* c);
int bcast(void* buf, int count, Datatype* type, int root, Comm* c);
int reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, int root,
           Comm* c);
int allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, Comm* c);

// Nonblocking forms: c must live in this node process (and the operation be
// predefined). Return the new request's handle.
bool eligible_nonblocking(Comm* c);
bool eligible_nonblocking(Comm* c, const Op* op);
MPI_Request ibarrier(Comm* c);
MPI_Request ibcast(void* buf, int count, Datatype* type, int root, Comm* c);
MPI_Request ireduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                    int root, Comm* c);
MPI_Request iallreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                       Comm* c);

// The other collectives, as the MPI functions (arguments checked by the MPI
// layer; collectives.hpp says which are significant where). Blocking when
// request is null: c must be eligible(), (eligible(c, op) for the reductions)
// and the result is an MPI error code. Otherwise the nonblocking form: c must
// be eligible_nonblocking() (eligible_nonblocking(c, op)), the new request's
// handle goes to *request and the result is MPI_SUCCESS. A communicator spread
// over node processes runs hierarchically where that pays, otherwise its
// schedule.
int gather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf, int recvcount,
           Datatype* recvtype, int root, Comm* c, MPI_Request* request = nullptr);
int gatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
            const int* recvcounts, const int* displs, Datatype* recvtype, int root, Comm* c,
            MPI_Request* request = nullptr);
int scatter(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf, int recvcount,
            Datatype* recvtype, int root, Comm* c, MPI_Request* request = nullptr);
int scatterv(const void* sendbuf, const int* sendcounts, const int* displs, Datatype* sendtype,
             void* recvbuf, int recvcount, Datatype* recvtype, int root, Comm* c,
             MPI_Request* request = nullptr);
int allgather(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf, int recvcount,
              Datatype* recvtype, Comm* c, MPI_Request* request = nullptr);
int allgatherv(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf,
               const int* recvcounts, const int* displs, Datatype* recvtype, Comm* c,
               MPI_Request* request = nullptr);
int alltoall(const void* sendbuf, int sendcount, Datatype* sendtype, void* recvbuf, int recvcount,
             Datatype* recvtype, Comm* c, MPI_Request* request = nullptr);
int alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, Datatype* sendtype,
              void* recvbuf, const int* recvcounts, const int* rdispls, Datatype* recvtype, Comm* c,
              MPI_Request* request = nullptr);
// Displacements in bytes, one datatype per peer.
int alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
              Datatype* const* sendtypes, void* recvbuf, const int* recvcounts,
              const MPI_Aint* rdispls, Datatype* const* recvtypes, Comm* c,
              MPI_Request* request = nullptr);
int reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, Datatype* type,
                   const Op* op, Comm* c, MPI_Request* request = nullptr);
int reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, Datatype* type,
                         const Op* op, Comm* c, MPI_Request* request = nullptr);
int scan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, Comm* c,
         MPI_Request* request = nullptr);
int exscan(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, Comm* c,
           MPI_Request* request = nullptr);
// Persistent forms (persistent.hpp), under the same conditions as the
// nonblocking ones; each request synchronises through a group of its own.
std::unique_ptr<Persistent> persistent_barrier(Comm* c);
std::unique_ptr<Persistent> persistent_allreduce(const void* sendbuf, void* recvbuf, int count,
                                                 Datatype* type, const Op* op, Comm* c);
// Null when these arguments take the schedule instead (every member decides
// the same way).
std::unique_ptr<Persistent> persistent_bcast(void* buf, int count, Datatype* type, int root,
                                             Comm* c);
std::unique_ptr<Persistent> persistent_reduce(const void* sendbuf, void* recvbuf, int count,
                                              Datatype* type, const Op* op, int root, Comm* c);
std::unique_ptr<Persistent> persistent_allgather(const void* sendbuf, int sendcount,
                                                 Datatype* sendtype, void* recvbuf, int recvcount,
                                                 Datatype* recvtype, Comm* c);
std::unique_ptr<Persistent> persistent_alltoall(const void* sendbuf, int sendcount,
                                                Datatype* sendtype, void* recvbuf, int recvcount,
                                                Datatype* recvtype, Comm* c);

}  // namespace mpc::coll::shm
