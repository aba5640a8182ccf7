// collectives: collective operations on communicators.
//
// First version: simple, correct algorithms over internal point-to-point on
// the communicator's collective context (dissemination barrier, binomial
// broadcast and reduction). The schedule engine (DESIGN.md section 7) replaces
// them. Arguments are checked by the MPI layer before these are called.
#pragma once

#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/op.hpp"

namespace mpc::coll {

using mpi::Comm;
using mpi::Datatype;
using mpi::Op;

int barrier(Comm* c);
int bcast(void* buf, int count, Datatype* type, int root, Comm* c);
// sendbuf may be MPI_IN_PLACE at the root.
int reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, int root,
           Comm* c);
int allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
              Comm* c);

}  // namespace mpc::coll
