// Point-to-point: blocking, nonblocking and persistent sends and receives.
#include <vector>

#include "mpi_api/p2p.hpp"
#include "requests.hpp"

using namespace mpc::mpi;

namespace {

// MPI_Send and MPI_Rsend in the usual case, recognised in a few compares: a
// small message of a contiguous type to a rank of this node process goes into
// a cell at once, without a request. Anything else, errors included, returns
// false and takes the general path.
bool send_now(RankState* me, const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm) {
    Comm* c = comm_lookup(me, comm);
    const Datatype* t = datatype_lookup(datatype);
    return plain_p2p_args(c, t, buf, count, dest, tag, false) &&
           p2p_send_now(c, dest, tag, buf, count, *t);
}

// Blocking send in any mode, on a request living on this stack frame.
int blocking_send(RankState* me, const void* buf, int count, MPI_Datatype datatype, int dest,
                  int tag, MPI_Comm comm, SendMode mode) {
    Request r;
    Comm* c;
    if (int e = setup_p2p(&r, me, Request::Kind::Send, buf, count, datatype, dest, tag, comm, &c))
        return raise(c, e);
    r.mode = mode;
    if (int e = start_request(&r)) return raise(c, e);
    wait_complete(&r);
    return raise(c, r.status.MPI_ERROR);
}

int nonblocking(RankState* me, Request::Kind kind, const void* buf, int count,
                MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, SendMode mode,
                bool persistent, MPI_Request* request) {
    // Checked straight into a pool request (given back on an error): no
    // second request to fill and copy over on the way.
    Request* r = request_allocate(kind, me, nullptr);
    Comm* c;
    int e = setup_p2p(r, me, kind, buf, count, datatype, peer, tag, comm, &c);
    if (!e && !request) e = make_error(MPI_ERR_ARG, "request is NULL");
    if (e) {
        request_release(r);
        return raise(c, e);
    }
    r->held_type = datatype_retain(r->type);
    r->mode = mode;
    r->persistent = persistent;
    *request = r->handle;
    if (persistent) {
        r->state.store(Request::kComplete, std::memory_order_relaxed);  // inactive
        return MPI_SUCCESS;
    }
    if ((e = start_request(r))) {
        request_release(r);
        *request = MPI_REQUEST_NULL;
        return raise(c, e);
    }
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Send);
    if (send_now(me, buf, count, datatype, dest, tag, comm)) return MPI_SUCCESS;
    return blocking_send(me, buf, count, datatype, dest, tag, comm, SendMode::Standard);
}

int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Ssend);
    return blocking_send(me, buf, count, datatype, dest, tag, comm, SendMode::Synchronous);
}

int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Rsend);
    if (send_now(me, buf, count, datatype, dest, tag, comm)) return MPI_SUCCESS;
    return blocking_send(me, buf, count, datatype, dest, tag, comm, SendMode::Ready);
}

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Bsend);
    return blocking_send(me, buf, count, datatype, dest, tag, comm, SendMode::Buffered);
}

int PMPI_Buffer_attach(void* buffer, int size) {
    MPC_ENTER_ACTIVE(Buffer_attach);
    return raise(nullptr, bsend_attach(me->bsend, buffer, size));
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
    MPC_ENTER_ACTIVE(Buffer_detach);
    if (!buffer_addr || !size)
        return raise(nullptr, make_error(MPI_ERR_ARG, "buffer_addr or size is NULL"));
    return raise(nullptr, bsend_detach(me->bsend, buffer_addr, size));
}

int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Isend);
    return nonblocking(me, Request::Kind::Send, buf, count, datatype, dest, tag, comm,
                       SendMode::Standard, false, request);
}

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Issend);
    return nonblocking(me, Request::Kind::Send, buf, count, datatype, dest, tag, comm,
                       SendMode::Synchronous, false, request);
}

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Irsend);
    return nonblocking(me, Request::Kind::Send, buf, count, datatype, dest, tag, comm,
                       SendMode::Ready, false, request);
}

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ibsend);
    return nonblocking(me, Request::Kind::Send, buf, count, datatype, dest, tag, comm,
                       SendMode::Buffered, false, request);
}

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
    MPC_ENTER_ACTIVE(Recv);
    Request r;
    Comm* c;
    if (int e = setup_p2p(&r, me, Request::Kind::Recv, buf, count, datatype, source, tag, comm,
                          &c))
        return raise(c, e);
    start_request(&r);
    wait_complete(&r);
    status_out(status, r.status);
    return raise(c, r.status.MPI_ERROR);
}

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
    MPC_ENTER_ACTIVE(Irecv);
    return nonblocking(me, Request::Kind::Recv, buf, count, datatype, source, tag, comm,
                       SendMode::Standard, false, request);
}

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Sendrecv);
    Request rr, sr;
    Comm* c;
    if (int e = setup_p2p(&rr, me, Request::Kind::Recv, recvbuf, recvcount, recvtype, source,
                          recvtag, comm, &c))
        return raise(c, e);
    if (int e = setup_p2p(&sr, me, Request::Kind::Send, sendbuf, sendcount, sendtype, dest,
                          sendtag, comm, &c))
        return raise(c, e);
    start_request(&rr);
    start_request(&sr);
    wait_complete(&sr);
    wait_complete(&rr);
    status_out(status, rr.status);
    if (sr.status.MPI_ERROR) return raise(c, sr.status.MPI_ERROR);
    return raise(c, rr.status.MPI_ERROR);
}

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Sendrecv_replace);
    Request rr, sr;
    Comm* c;
    if (int e = setup_p2p(&rr, me, Request::Kind::Recv, buf, count, datatype, source, recvtag,
                          comm, &c))
        return raise(c, e);
    // The outgoing data is packed aside first, since the receive overwrites buf.
    std::vector<char> copy(static_cast<size_t>(count) * rr.type->size);
    pack(buf, static_cast<size_t>(count), *rr.type, 0, copy.data(), copy.size());
    if (int e = setup_p2p(&sr, me, Request::Kind::Send, copy.data(), static_cast<int>(copy.size()),
                          MPI_BYTE, dest, sendtag, comm, &c))
        return raise(c, e);
    start_request(&rr);
    start_request(&sr);
    wait_complete(&sr);
    wait_complete(&rr);
    status_out(status, rr.status);
    return raise(c, rr.status.MPI_ERROR);
}

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Send_init);
    return nonblocking(me, Request::Kind::Send, buf, count, datatype, dest, tag, comm,
                       SendMode::Standard, true, request);
}

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Ssend_init);
    return nonblocking(me, Request::Kind::Send, buf, count, datatype, dest, tag, comm,
                       SendMode::Synchronous, true, request);
}

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Rsend_init);
    return nonblocking(me, Request::Kind::Send, buf, count, datatype, dest, tag, comm,
                       SendMode::Ready, true, request);
}

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Bsend_init);
    return nonblocking(me, Request::Kind::Send, buf, count, datatype, dest, tag, comm,
                       SendMode::Buffered, true, request);
}

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                   MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Recv_init);
    return nonblocking(me, Request::Kind::Recv, buf, count, datatype, source, tag, comm,
                       SendMode::Standard, true, request);
}

int PMPI_Start(MPI_Request* request) {
    MPC_ENTER_ACTIVE(Start);
    if (!request) return raise(nullptr, make_error(MPI_ERR_REQUEST, "request is NULL"));
    Request* r = request_lookup(*request);
    if (!r || !r->persistent)
        return raise(nullptr, make_error(MPI_ERR_REQUEST, "not a persistent request"));
    if (r->active) return raise(r->comm, make_error(MPI_ERR_REQUEST, "request is already active"));
    return raise(r->comm, start_request(r));
}

int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
    MPC_ENTER_ACTIVE(Startall);
    if (count < 0) return raise(nullptr, make_error(MPI_ERR_COUNT, "negative count %d", count));
    if (count > 0 && !array_of_requests)
        return raise(nullptr, make_error(MPI_ERR_ARG, "array_of_requests is NULL"));
    for (int i = 0; i < count; ++i) {
        Request* r = request_lookup(array_of_requests[i]);
        if (!r || !r->persistent || r->active)
            return raise(r ? r->comm : nullptr,
                         make_error(MPI_ERR_REQUEST,
                                    "request %d is not an inactive persistent request", i));
    }
    for (int i = 0; i < count; ++i) {
        Request* r = request_lookup(array_of_requests[i]);
        if (int e = start_request(r)) return raise(r->comm, e);
    }
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Send)
MPC_WEAK(MPI_Ssend)
MPC_WEAK(MPI_Rsend)
MPC_WEAK(MPI_Bsend)
MPC_WEAK(MPI_Buffer_attach)
MPC_WEAK(MPI_Buffer_detach)
MPC_WEAK(MPI_Isend)
MPC_WEAK(MPI_Issend)
MPC_WEAK(MPI_Irsend)
MPC_WEAK(MPI_Ibsend)
MPC_WEAK(MPI_Recv)
MPC_WEAK(MPI_Irecv)
MPC_WEAK(MPI_Sendrecv)
MPC_WEAK(MPI_Sendrecv_replace)
MPC_WEAK(MPI_Send_init)
MPC_WEAK(MPI_Ssend_init)
MPC_WEAK(MPI_Rsend_init)
MPC_WEAK(MPI_Bsend_init)
MPC_WEAK(MPI_Recv_init)
MPC_WEAK(MPI_Start)
MPC_WEAK(MPI_Startall)
