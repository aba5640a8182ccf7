#include "mpi_api/session.hpp"

#include "mpi_api/errors.hpp"
#include "mpi_api/handles.hpp"

namespace mpc::mpi {
namespace {

HandlePool<Session, HandleKind::Session>& pool() {
    // Outlives every thread (handles.hpp); index 0 is MPI_SESSION_NULL.
    static auto* p = new HandlePool<Session, HandleKind::Session>(1);
    return *p;
}

}  // namespace

Session* session_create(RankState* me) {
    int h;
    Session* s = pool().allocate(&h);
    *s = Session{};
    s->handle = h;
    s->owner = me;
    me->sessions.fetch_add(1);
    return s;
}

Session* session_lookup(MPI_Session handle, const RankState* me) {
    if (handle == MPI_SESSION_NULL || !handle_is(handle, HandleKind::Session)) return nullptr;
    Session* s = pool().lookup(handle);
    return s && s->owner == me ? s : nullptr;
}

void session_free(Session* s) {
    RankState* me = s->owner;
    const int h = s->handle;
    s->handle = MPI_SESSION_NULL;
    s->owner = nullptr;
    pool().release(h);
    me->sessions.fetch_sub(1);
}

int raise_session(Session* s, int code) {
    if (code == MPI_SUCCESS) return code;
    return raise_object(s ? s->errhandler : MPI_ERRORS_ARE_FATAL, s ? s->handle : MPI_SESSION_NULL,
                        code, "a session");
}

}  // namespace mpc::mpi
