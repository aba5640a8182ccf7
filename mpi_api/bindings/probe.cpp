// Probing and matched receives (Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv;
// the last two also in their large-count forms).
#include "mpi_api/handles.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/progress.hpp"
#include "requests.hpp"

using namespace mpc::mpi;

namespace {

struct MessageSlot {
    Incoming* message = nullptr;
    RankState* owner = nullptr;
};

HandlePool<MessageSlot, HandleKind::Message>& messages() {
    // Outlives every thread (handles.hpp).
    static auto* p = new HandlePool<MessageSlot, HandleKind::Message>(2);
    return *p;
}

int check_probe(RankState* me, int source, int tag, MPI_Comm comm, Comm** c) {
    (void)me;
    *c = nullptr;  // an invalid comm is raised on MPI_COMM_WORLD
    if (int e = check_comm(comm, c)) return e;
    if (int e = check_recv_rank(*c, source)) return e;
    return check_tag(tag, true);
}

void proc_null_status(MPI_Status* status) {
    status_out(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
}

MPI_Message wrap(RankState* me, Incoming* m) {
    int h;
    MessageSlot* s = messages().allocate(&h);
    s->message = m;
    s->owner = me;
    return h;
}

// Takes the message out of its handle; *m null for MPI_MESSAGE_NO_PROC.
int unwrap(RankState* me, MPI_Message* message, Incoming** m) {
    if (!message) return make_error(MPI_ERR_ARG, "message is NULL");
    *m = nullptr;
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    MessageSlot* s = messages().lookup(*message);
    if (!s || s->owner != me)
        return make_error(MPI_ERR_REQUEST, "0x%x is not a valid message of this rank", *message);
    *m = s->message;
    messages().release(*message);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

int setup_mrecv(RankState* me, Request* r, void* buf, MPI_Count count, MPI_Datatype datatype) {
    Datatype* t;
    if (int e = check_count(count)) return e;
    if (int e = check_type(datatype, &t)) return e;
    if (int e = check_buffer(buf, count, t)) return e;
    r->kind = Request::Kind::Recv;
    r->rank = me;
    r->comm = &me->world;
    r->buf = buf;
    r->count = count;
    r->type = t;
    return MPI_SUCCESS;
}

// MPI_Mrecv and MPI_Imrecv, int and large-count forms.
int mrecv(RankState* me, void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
          MPI_Status* status) {
    Request r;
    if (int e = setup_mrecv(me, &r, buf, count, datatype)) return raise(nullptr, e);
    Incoming* m;
    if (int e = unwrap(me, message, &m)) return raise(nullptr, e);
    if (!m) {
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    p2p_receive_taken(m, &r);
    wait_complete(&r);
    status_out(status, r.status);
    return raise(nullptr, r.status.MPI_ERROR);
}

int imrecv(RankState* me, void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
           MPI_Request* request) {
    Request tmp;
    if (int e = setup_mrecv(me, &tmp, buf, count, datatype)) return raise(nullptr, e);
    if (!request) return raise(nullptr, make_error(MPI_ERR_ARG, "request is NULL"));
    Incoming* m;
    if (int e = unwrap(me, message, &m)) return raise(nullptr, e);
    Request* r = request_allocate(Request::Kind::Recv, me, &me->world);
    r->buf = tmp.buf;
    r->count = tmp.count;
    r->type = tmp.type;
    r->held_type = datatype_retain(tmp.type);
    r->active = true;
    *request = r->handle;
    if (!m) {
        set_status(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
        complete(r);
        return MPI_SUCCESS;
    }
    p2p_receive_taken(m, r);
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Probe);
    Comm* c;
    if (int e = check_probe(me, source, tag, comm, &c)) return raise(c, e);
    if (source == MPI_PROC_NULL) {
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    p2p_probe_wait(me, c->context, source, tag, status, nullptr);
    return MPI_SUCCESS;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Iprobe);
    Comm* c;
    if (int e = check_probe(me, source, tag, comm, &c)) return raise(c, e);
    if (!flag) return raise(c, make_error(MPI_ERR_ARG, "flag is NULL"));
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    *flag = p2p_probe(me, c->context, source, tag, status, nullptr);
    if (!*flag) {
        progress_for_test();
        *flag = p2p_probe(me, c->context, source, tag, status, nullptr);
    }
    return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Mprobe);
    Comm* c;
    if (int e = check_probe(me, source, tag, comm, &c)) return raise(c, e);
    if (!message) return raise(c, make_error(MPI_ERR_ARG, "message is NULL"));
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    Incoming* m = nullptr;
    p2p_probe_wait(me, c->context, source, tag, status, &m);
    *message = wrap(me, m);
    return MPI_SUCCESS;
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                 MPI_Status* status) {
    MPC_ENTER_ACTIVE(Improbe);
    Comm* c;
    if (int e = check_probe(me, source, tag, comm, &c)) return raise(c, e);
    if (!flag || !message) return raise(c, make_error(MPI_ERR_ARG, "flag or message is NULL"));
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    Incoming* m = nullptr;
    *flag = p2p_probe(me, c->context, source, tag, status, &m);
    if (!*flag) {
        progress_for_test();
        *flag = p2p_probe(me, c->context, source, tag, status, &m);
    }
    if (*flag) *message = wrap(me, m);
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Status* status) {
    MPC_ENTER_ACTIVE(Mrecv);
    return mrecv(me, buf, count, datatype, message, status);
}

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                MPI_Request* request) {
    MPC_ENTER_ACTIVE(Imrecv);
    return imrecv(me, buf, count, datatype, message, request);
}

int PMPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                 MPI_Status* status) {
    MPC_ENTER_ACTIVE(Mrecv_c);
    return mrecv(me, buf, count, datatype, message, status);
}

int PMPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                  MPI_Request* request) {
    MPC_ENTER_ACTIVE(Imrecv_c);
    return imrecv(me, buf, count, datatype, message, request);
}

}  // extern "C"

MPC_WEAK(MPI_Probe)
MPC_WEAK(MPI_Iprobe)
MPC_WEAK(MPI_Mprobe)
MPC_WEAK(MPI_Improbe)
MPC_WEAK(MPI_Mrecv)
MPC_WEAK(MPI_Imrecv)
MPC_WEAK(MPI_Mrecv_c)
MPC_WEAK(MPI_Imrecv_c)
