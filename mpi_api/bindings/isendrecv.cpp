// MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0 section 3.10.1): a send
// and a receive behind one request.
//
// Both halves are posted in the call, in the same order as MPI_Sendrecv (the
// receive first), so that the non-overtaking rule holds against the caller's
// later sends and receives on the communicator. The request is a composite
// one: a Progressable owning the two internal requests (and, for the replace
// form, the packed copy of the outgoing data) finishes it once both are done,
// whoever polls. It must never complete the user's request before both halves
// are, nor touch the user's buffers after that.
#include <memory>
#include <vector>

#include "mpi_api/progress_engine.hpp"
#include "object_checks.hpp"
#include "requests.hpp"

using namespace mpc::mpi;

namespace {

class SendRecv final : public Progressable {
  public:
    Request send, recv;
    std::vector<char> staged;  // Isendrecv_replace: the outgoing data, packed

    ~SendRecv() override {
        datatype_release(send_type_);
        datatype_release(recv_type_);
    }

    void hold_types() {
        send_type_ = datatype_retain(send.type);
        recv_type_ = datatype_retain(recv.type);
    }

    bool progress() override {
        if (!send.is_complete() || !recv.is_complete()) return false;
        // The receive's status is the operation's; an error of either half
        // is its error (the send's first: it is the one with no other trace).
        request->status = recv.status;
        request->status.MPI_ERROR =
            send.status.MPI_ERROR ? send.status.MPI_ERROR : recv.status.MPI_ERROR;
        return true;
    }

    // MPI_Cancel: a started send is always delivered here (p2p.cpp), so the
    // pair cannot be cancelled as a whole; the cancel fails and the
    // operation completes as usual (MPI_Test_cancelled says false).
    bool cancel() override { return true; }

  private:
    Datatype* send_type_ = nullptr;
    Datatype* recv_type_ = nullptr;
};

// Posts both halves of op (set up already) under a new request of c's owner.
int post(RankState* me, Comm* c, std::unique_ptr<SendRecv> op, MPI_Request* request) {
    op->hold_types();
    op->send.notify = me;
    op->recv.notify = me;
    Request* r = request_allocate(Request::Kind::Collective, me, c);
    r->active = true;
    SendRecv* raw = op.release();
    r->operation = raw;  // freed with the request
    raw->request = r;
    start_request(&raw->recv);
    start_request(&raw->send);
    *request = r->handle;
    progress_add(me, raw);
    return MPI_SUCCESS;
}

int isendrecv(RankState* me, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
              int dest, int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
              int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
    auto op = std::make_unique<SendRecv>();
    Comm* c;
    if (int e = setup_p2p(&op->recv, me, Request::Kind::Recv, recvbuf, recvcount, recvtype, source,
                          recvtag, comm, &c))
        return raise(c, e);
    if (int e = setup_p2p(&op->send, me, Request::Kind::Send, sendbuf, sendcount, sendtype, dest,
                          sendtag, comm, &c))
        return raise(c, e);
    MPC_TRY(c, check_not_null(request, "request"));
    return post(me, c, std::move(op), request);
}

int isendrecv_replace(RankState* me, void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                      int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
    auto op = std::make_unique<SendRecv>();
    Comm* c;
    if (int e = setup_p2p(&op->recv, me, Request::Kind::Recv, buf, count, datatype, source, recvtag,
                          comm, &c))
        return raise(c, e);
    // The send must be checked with the user's arguments (its rank and tag
    // rules differ from the receive's) before its data is staged.
    if (int e = setup_p2p(&op->send, me, Request::Kind::Send, buf, count, datatype, dest, sendtag,
                          comm, &c))
        return raise(c, e);
    MPC_TRY(c, check_not_null(request, "request"));
    // The receive overwrites buf while the send may still be reading it: the
    // outgoing data goes from a packed copy the request owns.
    const size_t bytes = static_cast<size_t>(count) * op->recv.type->size;
    op->staged.resize(bytes);
    if (bytes) pack(buf, static_cast<size_t>(count), *op->recv.type, 0, op->staged.data(), bytes);
    op->send.buf = op->staged.data();
    op->send.count = static_cast<MPI_Count>(bytes);
    op->send.type = datatype_lookup(MPI_BYTE);
    return post(me, c, std::move(op), request);
}

}  // namespace

extern "C" {

int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Isendrecv);
    return isendrecv(me, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                     source, recvtag, comm, request);
}

int PMPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Isendrecv_c);
    return isendrecv(me, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                     source, recvtag, comm, request);
}

int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Isendrecv_replace);
    return isendrecv_replace(me, buf, count, datatype, dest, sendtag, source, recvtag, comm,
                             request);
}

int PMPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request* request) {
    MPC_ENTER_ACTIVE(Isendrecv_replace_c);
    return isendrecv_replace(me, buf, count, datatype, dest, sendtag, source, recvtag, comm,
                             request);
}

}  // extern "C"

MPC_WEAK(MPI_Isendrecv)
MPC_WEAK(MPI_Isendrecv_c)
MPC_WEAK(MPI_Isendrecv_replace)
MPC_WEAK(MPI_Isendrecv_replace_c)
