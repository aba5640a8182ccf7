// Shared by the point-to-point and completion bindings: starting a request,
// finishing one (status out, release), buffered sends.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>

#include "mpi_api/api.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/request.hpp"

namespace mpc::mpi {

// The arguments of nearly every point-to-point call (a valid communicator, a
// committed contiguous type, a real buffer, a peer and a tag in range; a
// wildcard for receives), recognised in a few compares. False means "look
// closer" (check_p2p), not "wrong": MPI_BOTTOM, PROC_NULL and derived types
// that are not contiguous are valid too.
inline bool plain_p2p_args(const Comm* c, const Datatype* t, const void* buf, MPI_Count count,
                           int peer, int tag, bool recv) {
    if (!c || !t || !t->committed || !t->contiguous || count < 0 || (!buf && count)) return false;
    if (!count_fits(count, *t)) return false;
    const bool peer_ok = peer >= 0 ? peer < c->remote_size() : recv && peer == MPI_ANY_SOURCE;
    const bool tag_ok = tag >= 0 ? tag <= kTagUpperBound : recv && tag == MPI_ANY_TAG;
    return peer_ok && tag_ok;
}

// Every check of a point-to-point call's arguments, in the order MPI users
// expect errors reported; on error returns the code and sets *comm_out to the
// communicator to raise it on (may be null).
[[gnu::cold]] int check_p2p(Request::Kind kind, const void* buf, MPI_Count count,
                            MPI_Datatype datatype, int peer, int tag, MPI_Comm comm,
                            Comm** comm_out, Datatype** type_out);

// Checks the arguments of a point-to-point call and fills r. On error returns
// the code and sets *comm_out to the communicator to raise it on (may be null).
// count is MPI_Count for both the int calls and their large-count (_c) forms.
// Inlined: a call of ten arguments cost a third of it (every Isend and Irecv).
[[gnu::always_inline]] inline int setup_p2p(Request* r, RankState* me, Request::Kind kind,
                                            const void* buf, MPI_Count count, MPI_Datatype datatype,
                                            int peer, int tag, MPI_Comm comm, Comm** comm_out) {
    Comm* c = comm_lookup(me, comm);
    Datatype* t = datatype_lookup(datatype);
    *comm_out = c;
    if (!plain_p2p_args(c, t, buf, count, peer, tag, kind == Request::Kind::Recv))
        if (int e = check_p2p(kind, buf, count, datatype, peer, tag, comm, comm_out, &t)) return e;
    r->kind = kind;
    r->rank = me;
    r->comm = c;
    r->buf = const_cast<void*>(buf);
    r->count = count;
    r->type = t;
    r->peer = peer;
    r->tag = tag;
    r->context = c->context;
    return MPI_SUCCESS;
}

// Buffered sends (MPI_Buffer_attach/detach, Bsend, Ibsend, Bsend_init, and
// MPI 4.1's buffers of communicators and sessions): slot is the holder's
// buffer (a rank's, communicator's or session's).
int bsend_start(Request* r);
int bsend_attach(std::shared_ptr<BsendBuffer>& slot, void* buffer, MPI_Count size);
// *size: the attached size (int_size gives it to an int form).
int bsend_detach(std::shared_ptr<BsendBuffer>& slot, void* buffer_addr, MPI_Count* size);
// An attached size for an int form: MPI_UNDEFINED when it does not fit
// (a buffer attached with an _c call).
inline int int_size(MPI_Count n) { return n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n); }
// Blocks until the messages buffered in b (may be null) have left it.
void bsend_flush(BsendBuffer* b);
// The same as a request of rank me raised on c (may be null); b may be null.
int bsend_iflush(RankState* me, Comm* c, const std::shared_ptr<BsendBuffer>& b,
                 MPI_Request* request);

// Completes r at once: its peer is MPI_PROC_NULL.
void start_null(Request* r);

// Starts a persistent collective or partitioned request (set pending).
int start_other(Request* r);

// Issues the operation of r (PROC_NULL, buffered and normal sends, receives,
// persistent collectives and partitioned operations). Returns an error code
// for failures detected at start (buffered send space).
inline int start_request(Request* r) {
    r->state.store(0, std::memory_order_relaxed);
    r->status = MPI_Status{};
    r->active = true;
    if (r->kind == Request::Kind::Collective || r->kind == Request::Kind::Partitioned)
        return start_other(r);
    if (r->peer == MPI_PROC_NULL) {
        start_null(r);
    } else if (r->kind == Request::Kind::Recv) {
        p2p_start_recv(r);
    } else if (r->mode == SendMode::Buffered) {
        return bsend_start(r);
    } else {
        p2p_start_send(r);
    }
    return MPI_SUCCESS;
}

// After r completed: copies its status out, releases it (non-persistent) and
// sets *handle to MPI_REQUEST_NULL. Returns the operation's error code (for a
// generalized request, its query_fn's or free_fn's).
int finish_request(Request* r, MPI_Request* handle, MPI_Status* status);
// A completed generalized request's status, from its query_fn (whose return
// code this returns), copied to status (MPI_ERROR aside; may be ignored).
int grequest_query(Request* r, MPI_Status* status);

// True when the request handle refers to nothing to wait for (null handle, or
// an inactive persistent request).
bool request_inactive(MPI_Request handle, Request* r);

}  // namespace mpc::mpi
