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
// Nonblocking Barrier and Allreduce take the same path when the whole
// communicator lives in this node process: the request's steps advance
// whenever someone polls the owner's operations (in collaborative mode an idle
// rank does a computing rank's share of the reduction for it). Other
// nonblocking collectives use schedules (schedule.hpp).
#pragma once

#include <memory>

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
MPI_Request iallreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                       Comm* c);

// Persistent forms (persistent.hpp), under the same conditions as the
// nonblocking ones; each request synchronises through a group of its own.
std::unique_ptr<Persistent> persistent_barrier(Comm* c);
std::unique_ptr<Persistent> persistent_allreduce(const void* sendbuf, void* recvbuf, int count,
                                                 Datatype* type, const Op* op, Comm* c);

}  // namespace mpc::coll::shm
