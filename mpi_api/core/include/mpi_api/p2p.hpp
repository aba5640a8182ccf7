// mpi_api/p2p: the point-to-point engine and the intra-node transport.
//
// A send to a rank of the same node process goes to the receiver's inbox
// (src/core/intranode.hpp): small ones as a copy in a cell (the sender
// completes at once; a blocking MPI_Send of one needs no request at all), large
// and synchronous ones as a pointer to the sender's buffer, copied once by
// whoever matches it (the sender completes then). The receiver, or a rank
// polling for it, matches in arrival order. No system call on any of these
// paths. Sends to other node processes go to the remote transport (the network
// room).
#pragma once

#include <atomic>
#include <cstddef>

#include "mpi.h"
#include "mpi_api/match.hpp"
#include "mpi_api/request.hpp"

namespace mpc::mpi {

struct RankState;
struct Comm;
struct Datatype;

// Largest message kept in a cell when unexpected (MPC_INTRA_EAGER, default 16 KiB).
// Read at every send (relaxed): an MPI_T tool may change it while ranks run.
extern std::atomic<size_t> g_intra_eager_limit;

// Starts the operation described by r (rank, comm, buf, count, type, peer, tag,
// context, mode); r completes when done. peer is a rank of r->comm (not PROC_NULL).
void p2p_start_send(Request* r);
void p2p_start_recv(Request* r);
// MPI_Send's short cut, with arguments already checked (contiguous type,
// dest a rank of c): when dest lives in this node process and the message
// fits a cell, sends it (complete on return) without a request and returns
// true; otherwise does nothing and returns false.
bool p2p_send_now(Comm* c, int dest, int tag, const void* buf, MPI_Count count,
                  const Datatype& type);
// Cancels a receive that has not matched yet; false when too late.
bool p2p_cancel_recv(Request* r);

// Looks for a message the caller could receive. With take, removes it from the
// queue and returns it in *taken (MPI_Mprobe).
bool p2p_probe(RankState* me, uint32_t context, int source, int tag, MPI_Status* status,
               Incoming** taken);
// Blocking form: waits until such a message exists.
void p2p_probe_wait(RankState* me, uint32_t context, int source, int tag, MPI_Status* status,
                    Incoming** taken);
// Receives a message taken by p2p_probe into r (MPI_Mrecv/Imrecv).
void p2p_receive_taken(Incoming* m, Request* r);

// Completes receive r with `bytes` bytes from (source, tag), copying them with
// `copy(dst, n)` where n = min(bytes, r's capacity); flags truncation. For
// transports that deliver into a matched receive.
void finish_receive(Request* r, int source, int tag, size_t bytes, size_t copied);
// Its first half: r's status (and truncation error), without completing r.
void set_receive_status(Request* r, int source, int tag, size_t bytes, size_t copied);
// Capacity in bytes of receive r's buffer.
size_t receive_capacity(const Request* r);

// Adds an unexpected message to rank dest (caller holds dest->match.lock), and
// arranges for a prober to be woken after the caller unlocks.
void enqueue_unexpected(RankState* dest, Incoming* m);
void wake_prober(RankState* dest);

// Blocking point-to-point on a communicator's collective context, for the
// collectives room: no argument checks, tags chosen by the caller.
void coll_send(Comm* c, const void* buf, int count, Datatype* type, int dest, int tag);
void coll_recv(Comm* c, void* buf, int count, Datatype* type, int source, int tag);
void coll_sendrecv(Comm* c, const void* sbuf, int scount, Datatype* stype, int dest, void* rbuf,
                   int rcount, Datatype* rtype, int source, int tag);
// Nonblocking forms: start r (a caller-owned request) and wait_complete(r) later.
void coll_start_send(Request* r, Comm* c, const void* buf, int count, Datatype* type, int dest,
                     int tag);
void coll_start_recv(Request* r, Comm* c, void* buf, int count, Datatype* type, int source,
                     int tag);

// Copies bytes from src to dst, the way a large intra-node message moves: from
// 64 KiB on, ranks that poll meanwhile copy chunks of it too (owner's own
// waits first; every rank's in collaborative mode). Returns once all is copied.
void shared_copy(const void* src, void* dst, size_t bytes, const RankState* owner);

// The remote transport, installed by the network layer at start-up.
struct RemoteTransport {
    void (*start_send)(Request* r, int dest_world_rank);
};
void set_remote_transport(const RemoteTransport* transport);

}  // namespace mpc::mpi
