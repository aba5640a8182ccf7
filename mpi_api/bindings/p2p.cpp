// Point-to-point: blocking, nonblocking and persistent sends and receives, in
// their int and large-count (_c, MPI 4.0) forms. Both forms run the same code
// with an MPI_Count count: widening an int costs nothing, and the engine counts
// bytes in size_t throughout.
#include "mpi_api/p2p.hpp"

#include <climits>
#include <vector>

#include "requests.hpp"

using namespace mpc::mpi;

namespace {

// MPI_Send and MPI_Rsend in the usual case, recognised in a few compares: a
// small message of a contiguous type to a rank of this node process goes into
// a cell at once, without a request. Anything else, errors included, returns
// false and takes the general path.
bool send_now(RankState* me, const void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm) {
    Comm* c = comm_lookup(me, comm);
    const Datatype* t = datatype_lookup(datatype);
    return plain_p2p_args(c, t, buf, count, dest, tag, false) &&
           p2p_send_now(c, dest, tag, buf, count, *t);
}

// Blocking send in any mode, on a request living on this stack frame.
int blocking_send(RankState* me, const void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
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

// Inlined into each caller, whose kind, mode and persistence are constants:
// a call of eleven arguments was a fifth of an MPI_Irecv's own instructions.
[[gnu::always_inline]] inline int nonblocking(RankState* me, Request::Kind kind, const void* buf,
                                              MPI_Count count, MPI_Datatype datatype, int peer,
                                              int tag, MPI_Comm comm, SendMode mode,
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

int blocking_recv(RankState* me, void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                  int tag, MPI_Comm comm, MPI_Status* status) {
    Request r;
    Comm* c;
    if (int e = setup_p2p(&r, me, Request::Kind::Recv, buf, count, datatype, source, tag, comm, &c))
        return raise(c, e);
    start_request(&r);
    wait_complete(&r);
    status_out(status, r.status);
    return raise(c, r.status.MPI_ERROR);
}

int sendrecv(RankState* me, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
             int dest, int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
             int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    Request rr, sr;
    Comm* c;
    if (int e = setup_p2p(&rr, me, Request::Kind::Recv, recvbuf, recvcount, recvtype, source,
                          recvtag, comm, &c))
        return raise(c, e);
    if (int e = setup_p2p(&sr, me, Request::Kind::Send, sendbuf, sendcount, sendtype, dest, sendtag,
                          comm, &c))
        return raise(c, e);
    start_request(&rr);
    start_request(&sr);
    wait_complete(&sr);
    wait_complete(&rr);
    status_out(status, rr.status);
    if (sr.status.MPI_ERROR) return raise(c, sr.status.MPI_ERROR);
    return raise(c, rr.status.MPI_ERROR);
}

int sendrecv_replace(RankState* me, void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                     int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    Request rr, sr;
    Comm* c;
    if (int e = setup_p2p(&rr, me, Request::Kind::Recv, buf, count, datatype, source, recvtag, comm,
                          &c))
        return raise(c, e);
    // The outgoing data is packed aside first, since the receive overwrites buf.
    std::vector<char> copy(static_cast<size_t>(count) * rr.type->size);
    pack(buf, static_cast<size_t>(count), *rr.type, 0, copy.data(), copy.size());
    if (int e = setup_p2p(&sr, me, Request::Kind::Send, copy.data(),
                          static_cast<MPI_Count>(copy.size()), MPI_BYTE, dest, sendtag, comm, &c))
        return raise(c, e);
    start_request(&rr);
    start_request(&sr);
    wait_complete(&sr);
    wait_complete(&rr);
    status_out(status, rr.status);
    return raise(c, rr.status.MPI_ERROR);
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
    MPI_Count n = 0;
    const int e = bsend_detach(me->bsend, buffer_addr, &n);
    *size = int_size(n);  // a buffer attached with MPI_Buffer_attach_c may not fit
    return raise(nullptr, e);
}

int PMPI_Buffer_attach_c(void* buffer, MPI_Count size) {
    MPC_ENTER_ACTIVE(Buffer_attach_c);
    return raise(nullptr, bsend_attach(me->bsend, buffer, size));
}

int PMPI_Buffer_detach_c(void* buffer_addr, MPI_Count* size) {
    MPC_ENTER_ACTIVE(Buffer_detach_c);
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
    return blocking_recv(me, buf, count, datatype, source, tag, comm, status);
}

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
    MPC_ENTER_ACTIVE(Irecv);
    return nonblocking(me, Request::Kind::Recv, buf, count, datatype, source, tag, comm,
                       SendMode::Standard, false, request);
}

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Sendrecv);
    return sendrecv(me, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                    source, recvtag, comm, status);
}

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Sendrecv_replace);
    return sendrecv_replace(me, buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
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

// ---- Large-count forms (MPI 4.0): the same code with MPI_Count counts ----

int PMPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Send_c);
    if (send_now(me, buf, count, datatype, dest, tag, comm)) return MPI_SUCCESS;
    return blocking_send(me, buf, count, datatype, dest, tag, comm, SendMode::Standard);
}

int PMPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Ssend_c);
    return blocking_send(me, buf, count, datatype, dest, tag, comm, SendMode::Synchronous);
}

int PMPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Rsend_c);
    if (send_now(me, buf, count, datatype, dest, tag, comm)) return MPI_SUCCESS;
    return blocking_send(me, buf, count, datatype, dest, tag, comm, SendMode::Ready);
}

int PMPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Bsend_c);
    return blocking_send(me, buf, count, datatype, dest, tag, comm, SendMode::Buffered);
}

int PMPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Recv_c);
    return blocking_recv(me, buf, count, datatype, source, tag, comm, status);
}

int PMPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Sendrecv_c);
    return sendrecv(me, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                    source, recvtag, comm, status);
}

int PMPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Status* status) {
    MPC_ENTER_ACTIVE(Sendrecv_replace_c);
    return sendrecv_replace(me, buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

// Nonblocking and persistent: (name, kind, mode, persistent).
#define MPC_P2P_REQUEST_C(Name, K, Mode, Persistent, Const)                                     \
    int PMPI_##Name(Const void* buf, MPI_Count count, MPI_Datatype datatype, int peer, int tag, \
                    MPI_Comm comm, MPI_Request* request) {                                      \
        MPC_ENTER_ACTIVE(Name);                                                                 \
        return nonblocking(me, Request::Kind::K, buf, count, datatype, peer, tag, comm,         \
                           SendMode::Mode, Persistent, request);                                \
    }
MPC_P2P_REQUEST_C(Isend_c, Send, Standard, false, const)
MPC_P2P_REQUEST_C(Issend_c, Send, Synchronous, false, const)
MPC_P2P_REQUEST_C(Irsend_c, Send, Ready, false, const)
MPC_P2P_REQUEST_C(Ibsend_c, Send, Buffered, false, const)
MPC_P2P_REQUEST_C(Irecv_c, Recv, Standard, false, )
MPC_P2P_REQUEST_C(Send_init_c, Send, Standard, true, const)
MPC_P2P_REQUEST_C(Ssend_init_c, Send, Synchronous, true, const)
MPC_P2P_REQUEST_C(Rsend_init_c, Send, Ready, true, const)
MPC_P2P_REQUEST_C(Bsend_init_c, Send, Buffered, true, const)
MPC_P2P_REQUEST_C(Recv_init_c, Recv, Standard, true, )
#undef MPC_P2P_REQUEST_C

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
MPC_WEAK(MPI_Send_c)
MPC_WEAK(MPI_Ssend_c)
MPC_WEAK(MPI_Rsend_c)
MPC_WEAK(MPI_Bsend_c)
MPC_WEAK(MPI_Buffer_attach_c)
MPC_WEAK(MPI_Buffer_detach_c)
MPC_WEAK(MPI_Isend_c)
MPC_WEAK(MPI_Issend_c)
MPC_WEAK(MPI_Irsend_c)
MPC_WEAK(MPI_Ibsend_c)
MPC_WEAK(MPI_Recv_c)
MPC_WEAK(MPI_Irecv_c)
MPC_WEAK(MPI_Sendrecv_c)
MPC_WEAK(MPI_Sendrecv_replace_c)
MPC_WEAK(MPI_Send_init_c)
MPC_WEAK(MPI_Ssend_init_c)
MPC_WEAK(MPI_Rsend_init_c)
MPC_WEAK(MPI_Bsend_init_c)
MPC_WEAK(MPI_Recv_init_c)
