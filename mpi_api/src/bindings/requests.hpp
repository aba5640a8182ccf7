// Shared by the point-to-point and completion bindings: starting a request,
// finishing one (status out, release), buffered sends.
#pragma once

#include "mpi_api/api.hpp"
#include "mpi_api/request.hpp"

namespace mpc::mpi {

// Checks the arguments of a point-to-point call and fills r. On error returns
// the code and sets *comm_out to the communicator to raise it on (may be null).
int setup_p2p(Request* r, RankState* me, Request::Kind kind, const void* buf, int count,
              MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, Comm** comm_out);

// Issues the operation of r (PROC_NULL, buffered and normal sends, receives).
// Returns an error code for failures detected at start (buffered send space).
int start_request(Request* r);

// After r completed: copies its status out, releases it (non-persistent) and
// sets *handle to MPI_REQUEST_NULL. Returns the operation's error code.
int finish_request(Request* r, MPI_Request* handle, MPI_Status* status);

// True when the request handle refers to nothing to wait for (null handle, or
// an inactive persistent request).
bool request_inactive(MPI_Request handle, Request* r);

// Buffered sends (MPI_Buffer_attach/detach, Bsend, Ibsend, Bsend_init).
int bsend_start(Request* r);
int bsend_attach(RankState* me, void* buffer, int size);
int bsend_detach(RankState* me, void* buffer_addr, int* size);

}  // namespace mpc::mpi
