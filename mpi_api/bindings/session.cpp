// The sessions model (MPI 4.0 section 11.3): sessions, process sets, and
// communicators made from groups without a parent communicator.
//
// A session opens MPI for its rank without MPI_Init (and beside it); the
// world model's state (MPI_Initialized, MPI_Finalized) is untouched. New
// communicators are agreed among the group's members only, through internal
// messages on the rank's own MPI_COMM_WORLD object (it exists from the start,
// initialized or not), the stringtag hashed into the agreement's tag. Errors
// of a call on a session go to the session's handler; those of the
// constructors to the handler they are given. Nothing here may block but
// the two collective constructors and, until the session's buffered messages
// have left, MPI_Session_detach_buffer, _flush_buffer and _finalize.
#include "mpi_api/session.hpp"

#include <strings.h>

#include <cstring>
#include <string>

#include "mpi_api/alloc_kinds.hpp"
#include "mpi_api/comm_ops.hpp"
#include "mpi_api/pset.hpp"
#include "mpit.hpp"
#include "object_checks.hpp"
#include "requests.hpp"

using namespace mpc::mpi;

namespace {

// A session of the caller's, or MPI_ERR_SESSION (raised on the initial
// handler: the object is not there to have one).
int check_session(RankState* me, MPI_Session handle, Session** out) {
    *out = session_lookup(handle, me);
    if (*out) return MPI_SUCCESS;
    if (handle == MPI_SESSION_NULL) return make_error(MPI_ERR_SESSION, "MPI_SESSION_NULL passed");
    return make_error(MPI_ERR_SESSION,
                      "0x%x is not a session of this rank (finalized, or never one)", handle);
}

int check_errhandler(MPI_Errhandler h) {
    if (h == MPI_ERRHANDLER_NULL || !errhandler_lookup(h))
        return make_error(MPI_ERR_ERRHANDLER, "0x%x is not a valid error handler", h);
    return MPI_SUCCESS;
}

const char* const kThreadLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                     "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

// MPI 4.0 section 11.3.1: the info key "thread_level" asks for a level (we
// provide any); without it a session is MPI_THREAD_SINGLE.
int requested_level(const Info* info) {
    const std::string* v = info ? info->find("thread_level") : nullptr;
    if (!v) return MPI_THREAD_SINGLE;
    for (int l = 0; l < 4; ++l)
        if (strcasecmp(v->c_str(), kThreadLevels[l]) == 0) return l;
    return MPI_THREAD_SINGLE;
}

// Copies name into out as MPI_Info_get_string does: *len in is out's size
// (NUL included), out the size name needs; 0 asks for the size only.
void copy_sized(const std::string& name, char* out, int* len) {
    if (*len > 0) {
        const size_t n = std::min(name.size(), static_cast<size_t>(*len - 1));
        memcpy(out, name.data(), n);
        out[n] = '\0';
    }
    *len = static_cast<int>(name.size()) + 1;
}

// The agreement tag of a stringtag (the same at every member): FNV-1a, kept
// clear of the tags MPI_Comm_create_group's users pass (bit 28 set, below
// 2^29) so the two kinds of agreement on MPI_COMM_WORLD's context differ.
int tag_of(const char* stringtag, uint32_t salt = 0) {
    uint32_t h = 2166136261u ^ salt;
    for (const char* p = stringtag; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
    return static_cast<int>((1u << 28) | (h & ((1u << 28) - 1)));
}

int check_stringtag(const char* stringtag) {
    if (!stringtag) return make_error(MPI_ERR_ARG, "stringtag is NULL");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return make_error(MPI_ERR_ARG, "stringtag longer than MPI_MAX_STRINGTAG_LEN - 1");
    return MPI_SUCCESS;
}

int check_group_arg(MPI_Group handle, Group** out) {
    *out = group_lookup(handle);
    if (!*out) return make_error(MPI_ERR_GROUP, "0x%x is not a valid group", handle);
    return MPI_SUCCESS;
}

// The info hints and the handler a new communicator starts with.
void adopt(Comm* n, const Info* info, MPI_Errhandler errhandler) {
    n->errhandler = errhandler;
    n->hints.clear();
    if (info)
        for (const auto& [k, v] : info->entries)
            if (k.rfind("mpi_assert_", 0) == 0 && (v == "true" || v == "false")) n->hints[k] = v;
}

}  // namespace

extern "C" {

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
    MPC_ENTER(Session_init);
    RankState* r = me;
    if (!r && !mpc::sched::current_scheduler()) r = attach_unhosted();
    if (!r)
        mpc::runtime::fatal("MPI_Session_init was called from a thread that belongs to no rank");
    Info* i = nullptr;
    if (int e = check_errhandler(errhandler)) return raise(nullptr, e);
    if (int e = check_info_arg(info, &i))
        return raise_object(errhandler, MPI_SESSION_NULL, e, "a session");
    if (!session)
        return raise_object(errhandler, MPI_SESSION_NULL,
                            make_error(MPI_ERR_ARG, "session is NULL"), "a session");
    Session* s = session_create(r);
    s->errhandler = errhandler;
    s->thread_level = requested_level(i);
    // MPI 4.1 section 12.4.3: the kinds the info asks for take precedence
    // over the startup's.
    const std::string* kinds = i ? i->find(kAllocKindsKey) : nullptr;
    s->alloc_kinds = kinds ? supported_alloc_kinds(*kinds) : world_alloc_kinds();
    *session = s->handle;
    return MPI_SUCCESS;
}

int PMPI_Session_finalize(MPI_Session* session) {
    MPC_ENTER(Session_finalize);
    Session* s = nullptr;
    if (!session) return raise(nullptr, make_error(MPI_ERR_ARG, "session is NULL"));
    if (int e = check_session(me, *session, &s)) return raise(nullptr, e);
    // An attached buffer is detached: its messages leave first (MPI 4.1 3.6.1).
    bsend_flush(s->bsend.get());
    s->bsend.reset();
    session_free(s);
    *session = MPI_SESSION_NULL;
    return MPI_SUCCESS;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int* npset_names) {
    MPC_ENTER(Session_get_num_psets);
    Session* s = nullptr;
    Info* i = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (int e = check_info_arg(info, &i)) return raise_session(s, e);
    if (int e = check_not_null(npset_names, "npset_names")) return raise_session(s, e);
    *npset_names = static_cast<int>(pset_names().size());
    return MPI_SUCCESS;
}

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int* pset_len,
                              char* pset_name) {
    MPC_ENTER(Session_get_nth_pset);
    Session* s = nullptr;
    Info* i = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (int e = check_info_arg(info, &i)) return raise_session(s, e);
    if (int e = check_not_null(pset_len, "pset_len")) return raise_session(s, e);
    const std::vector<std::string> names = pset_names();
    if (n < 0 || n >= static_cast<int>(names.size()))
        return raise_session(
            s, make_error(MPI_ERR_ARG, "pset number %d: there are %zu", n, names.size()));
    if (*pset_len < 0)
        return raise_session(s, make_error(MPI_ERR_ARG, "negative pset_len %d", *pset_len));
    if (*pset_len > 0 && !pset_name)
        return raise_session(s, make_error(MPI_ERR_ARG, "pset_name is NULL"));
    copy_sized(names[static_cast<size_t>(n)], pset_name, pset_len);
    return MPI_SUCCESS;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char* pset_name, MPI_Info* info) {
    MPC_ENTER(Session_get_pset_info);
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (!pset_name || !info)
        return raise_session(s, make_error(MPI_ERR_ARG, "pset_name or info is NULL"));
    std::vector<int> members;
    if (!pset_members(pset_name, me, &members))
        return raise_session(s, make_error(MPI_ERR_ARG, "\"%s\" is no process set", pset_name));
    Info out;
    out.set("mpi_size", std::to_string(members.size()));
    *info = info_create(std::move(out));
    return MPI_SUCCESS;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
    MPC_ENTER(Session_get_info);
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (int e = check_not_null(info_used, "info_used")) return raise_session(s, e);
    Info out;
    out.set("thread_level", kThreadLevels[s->thread_level]);
    out.set(kAllocKindsKey, s->alloc_kinds);
    *info_used = info_create(std::move(out));
    return MPI_SUCCESS;
}

int PMPI_Group_from_session_pset(MPI_Session session, const char* pset_name, MPI_Group* newgroup) {
    MPC_ENTER(Group_from_session_pset);
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (!pset_name || !newgroup)
        return raise_session(s, make_error(MPI_ERR_ARG, "pset_name or newgroup is NULL"));
    std::vector<int> members;
    if (!pset_members(pset_name, me, &members))
        return raise_session(s, make_error(MPI_ERR_ARG, "\"%s\" is no process set", pset_name));
    *newgroup = group_create(group_from_world_ranks(std::move(members)));
    // Communicators made from it use the session's buffered-send buffer.
    group_lookup(*newgroup)->session = s->handle;
    return MPI_SUCCESS;
}

// MPI 4.0 section 7.4.2: collective over the group's members only.
int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_create_from_group);
    Group* g = nullptr;
    Info* i = nullptr;
    if (int e = check_errhandler(errhandler)) return raise(nullptr, e);
    auto fail = [&](int e) {
        return raise_object(errhandler, MPI_COMM_NULL, e, "a new communicator");
    };
    if (int e = check_group_arg(group, &g)) return fail(e);
    if (int e = check_stringtag(stringtag)) return fail(e);
    if (int e = check_info_arg(info, &i)) return fail(e);
    if (int e = check_not_null(newcomm, "newcomm")) return fail(e);
    if (g->data->rank_of(me->world_rank) == MPI_UNDEFINED)
        return fail(make_error(MPI_ERR_GROUP, "the calling rank is not a member of the group"));
    Comm* n = nullptr;
    if (int e = comm_create_group(&me->world, g->data, tag_of(stringtag), &n)) return fail(e);
    adopt(n, i, errhandler);
    if (n) n->session = g->session;
    *newcomm = handle_or_null(n);
    return MPI_SUCCESS;
}

// MPI 4.0 section 7.6.2: collective over both groups; the local group agrees
// first (its own communicator, for the time of the call), then the leaders
// meet over the world communicator as MPI_Intercomm_create's do.
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char* stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm* newintercomm) {
    MPC_ENTER_ACTIVE(Intercomm_create_from_groups);
    Group *lg = nullptr, *rg = nullptr;
    Info* i = nullptr;
    if (int e = check_errhandler(errhandler)) return raise(nullptr, e);
    auto fail = [&](int e) {
        return raise_object(errhandler, MPI_COMM_NULL, e, "a new communicator");
    };
    if (int e = check_group_arg(local_group, &lg)) return fail(e);
    if (int e = check_group_arg(remote_group, &rg)) return fail(e);
    if (int e = check_stringtag(stringtag)) return fail(e);
    if (int e = check_info_arg(info, &i)) return fail(e);
    if (int e = check_not_null(newintercomm, "newintercomm")) return fail(e);
    const GroupData& l = *lg->data;
    const GroupData& r = *rg->data;
    if (l.rank_of(me->world_rank) == MPI_UNDEFINED)
        return fail(make_error(MPI_ERR_GROUP, "the calling rank is not in local_group"));
    if (local_leader < 0 || local_leader >= l.size)
        return fail(make_error(MPI_ERR_RANK, "local_leader %d: the group has %d ranks",
                               local_leader, l.size));
    if (remote_leader < 0 || remote_leader >= r.size)
        return fail(make_error(MPI_ERR_RANK, "remote_leader %d: the group has %d ranks",
                               remote_leader, r.size));
    if (r.rank_of(me->world_rank) != MPI_UNDEFINED)
        return fail(make_error(MPI_ERR_GROUP, "the groups overlap: the calling rank is in both"));
    // The local agreement's tag differs between the two sides (their lowest
    // members differ: the groups are disjoint).
    int lowest = l.world_rank(0);
    for (int k = 1; k < l.size; ++k) lowest = std::min(lowest, l.world_rank(k));
    Comm* local = nullptr;
    if (int e = comm_create_group(&me->world, lg->data,
                                  tag_of(stringtag, static_cast<uint32_t>(lowest) * 2654435761u),
                                  &local))
        return fail(e);
    Comm* n = nullptr;
    const int e = intercomm_create(local, local_leader, &me->world, r.world_rank(remote_leader),
                                   tag_of(stringtag), &n);
    comm_free(local);
    if (e) return fail(e);
    adopt(n, i, errhandler);
    if (n) n->session = lg->session;
    *newintercomm = handle_or_null(n);
    return MPI_SUCCESS;
}

// MPI 4.1 section 3.6.1: the session's buffered-send buffer, used by the
// communicators made from its groups that have none of their own.
// Both forms of attach and detach (the _c ones take MPI_Count sizes).
static int session_attach(RankState* me, MPI_Session session, void* buffer, MPI_Count size) {
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    return raise_session(s, bsend_attach(s->bsend, buffer, size));
}

static int session_detach(RankState* me, MPI_Session session, void* buffer_addr,
                          MPI_Count* size) {
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (!buffer_addr || !size)
        return raise_session(s, make_error(MPI_ERR_ARG, "buffer_addr or size is NULL"));
    return raise_session(s, bsend_detach(s->bsend, buffer_addr, size));
}

int PMPI_Session_attach_buffer(MPI_Session session, void* buffer, int size) {
    MPC_ENTER(Session_attach_buffer);
    return session_attach(me, session, buffer, size);
}

int PMPI_Session_attach_buffer_c(MPI_Session session, void* buffer, MPI_Count size) {
    MPC_ENTER(Session_attach_buffer_c);
    return session_attach(me, session, buffer, size);
}

int PMPI_Session_detach_buffer(MPI_Session session, void* buffer_addr, int* size) {
    MPC_ENTER(Session_detach_buffer);
    MPI_Count n = 0;
    const int e = session_detach(me, session, buffer_addr, size ? &n : nullptr);
    if (size) *size = int_size(n);
    return e;
}

int PMPI_Session_detach_buffer_c(MPI_Session session, void* buffer_addr, MPI_Count* size) {
    MPC_ENTER(Session_detach_buffer_c);
    return session_detach(me, session, buffer_addr, size);
}

int PMPI_Session_flush_buffer(MPI_Session session) {
    MPC_ENTER(Session_flush_buffer);
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    bsend_flush(s->bsend.get());
    return MPI_SUCCESS;
}

int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request* request) {
    MPC_ENTER(Session_iflush_buffer);
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (!request) return raise_session(s, make_error(MPI_ERR_ARG, "request is NULL"));
    return raise_session(s, bsend_iflush(me, nullptr, s->bsend, request));
}

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function* session_errhandler_fn,
                                   MPI_Errhandler* errhandler) {
    MPC_ENTER(Session_create_errhandler);
    if (!session_errhandler_fn || !errhandler)
        return raise(nullptr, make_error(MPI_ERR_ARG, "function or errhandler is NULL"));
    // Same calling convention as a communicator's: (handle*, int*, ...).
    return errhandler_create(reinterpret_cast<MPI_Comm_errhandler_function*>(session_errhandler_fn),
                             errhandler, ErrObject::Session);
}

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
    MPC_ENTER(Session_set_errhandler);
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (int e = check_errhandler(errhandler)) return raise_session(s, e);
    s->errhandler = errhandler;
    return MPI_SUCCESS;
}

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler* errhandler) {
    MPC_ENTER(Session_get_errhandler);
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    if (int e = check_not_null(errhandler, "errhandler")) return raise_session(s, e);
    *errhandler = s->errhandler;
    return MPI_SUCCESS;
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
    MPC_ENTER(Session_call_errhandler);
    Session* s = nullptr;
    if (int e = check_session(me, session, &s)) return raise(nullptr, e);
    raise_session(s, errorcode);
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Session_init)
MPC_WEAK(MPI_Session_finalize)
MPC_WEAK(MPI_Session_get_num_psets)
MPC_WEAK(MPI_Session_get_nth_pset)
MPC_WEAK(MPI_Session_get_pset_info)
MPC_WEAK(MPI_Session_get_info)
MPC_WEAK(MPI_Group_from_session_pset)
MPC_WEAK(MPI_Comm_create_from_group)
MPC_WEAK(MPI_Intercomm_create_from_groups)
MPC_WEAK(MPI_Session_create_errhandler)
MPC_WEAK(MPI_Session_set_errhandler)
MPC_WEAK(MPI_Session_get_errhandler)
MPC_WEAK(MPI_Session_call_errhandler)
MPC_WEAK(MPI_Session_attach_buffer)
MPC_WEAK(MPI_Session_detach_buffer)
MPC_WEAK(MPI_Session_attach_buffer_c)
MPC_WEAK(MPI_Session_detach_buffer_c)
MPC_WEAK(MPI_Session_flush_buffer)
MPC_WEAK(MPI_Session_iflush_buffer)
