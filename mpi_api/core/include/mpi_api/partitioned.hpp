// mpi_api/partitioned: partitioned point-to-point communication (MPI 4.0
// chapter 4): one message whose sender marks parts of its buffer ready, from
// any of its threads, and whose receiver sees parts arrive.
//
// Matching. MPI_Psend_init sends a small "hello" (the send's partitioning,
// and for a receiver in this node process the address of the transfer's
// shared state) on a context of the communicator that only partitioned
// operations use; MPI_Precv_init posts its receive. The point-to-point engine
// matches hellos in the order of initialization, as it matches messages. Both
// calls stay local: neither waits for the other side.
//
// Inside a node process the two requests share a Channel: every sender
// partition has a state word (the run it belongs to, and whether it is
// ready, being copied or copied). A partition marked ready is copied straight
// into the receive buffer (one copy per partition) once the receiver has
// started the same run: by the receiver when it is idle, polling
// MPI_Parrived (it copies every ready partition when it finds one missing,
// and its engine's Claimer of the run in any of its waits), so that the
// sender's threads compute on; by the marking thread at once otherwise.
// Before the receiver's start, the receiver copies what is ready when it
// starts (or attaches, if the hello had not arrived). A partition is copied
// by whoever claims it first, with a
// compare-and-swap on its state word; the copier accounts the bytes to the
// receive partitions it covers (MPI_Parrived reads these counts) and
// completes the requests whose last part it moved. Sender and receiver may
// partition the data differently; only the total size must agree.
//
// Across node processes every sender partition travels as one message of its
// own (the engine's eager or zero-copy rendezvous protocols), sent when it is
// marked ready; the receiver posts a receive per sender partition at each
// start, straight into its buffer (a staging buffer for a type that is not
// contiguous). Tags on the data context are taken from a per-process counter,
// so that partitions of different transfers never match each other.
//
// This room never blocks in MPI_Pready or MPI_Parrived.
#pragma once

#include "mpi.h"
#include "mpi_api/request.hpp"

namespace mpc::mpi {

struct Comm;
struct Datatype;

// MPI_Psend_init / MPI_Precv_init with checked arguments (peer a rank of c's
// remote group or MPI_PROC_NULL): a new inactive partitioned request.
Request* partitioned_send_init(RankState* me, Comm* c, const void* buf, int partitions,
                               MPI_Count count, Datatype* type, int dest, int tag);
Request* partitioned_recv_init(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count,
                               Datatype* type, int source, int tag);

// MPI_Start of an inactive partitioned request (already set pending).
int partitioned_start(Request* r);

bool partitioned_is_send(const Request* r);
int partitioned_partitions(const Request* r);
// MPI_Pready: partition of an active send request. MPI_ERR_ARG when the
// partition is already ready in this run.
int partitioned_ready(Request* r, int partition);
// MPI_Parrived: whether the partition of an active receive request has arrived.
bool partitioned_arrived(Request* r, int partition);

}  // namespace mpc::mpi
