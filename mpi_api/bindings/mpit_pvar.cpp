// MPI_T: performance variables, sessions and handles (MPI 3.1 section 14.3.7).
//
// The registry gives raw values (totals since the node process started, for
// counters). A handle of a counter, aggregate or timer sees its own value:
// what was counted while it was started (continuous variables: since it was
// allocated), starting from 0, so that sessions never see each other's
// resets and writes. Start and stop open and close the variable's gate:
// counters that cost something are counted only while some handle runs.
// Levels, sizes and states are read as they are and cannot be written.
#include <algorithm>
#include <cstring>

#include "mpi_api/rank.hpp"
#include "mpit.hpp"

using namespace mpc::mpi;
using namespace mpc::mpi::tools;
namespace rt = mpc::runtime::tools;
using Handle = mpc_t_pvar_handle_s;
using SessionObj = mpc_t_pvar_session_s;

namespace {

bool is_relative(rt::Class c) {
    return c == rt::Class::Counter || c == rt::Class::Aggregate || c == rt::Class::Timer;
}

// value = accum + (started ? raw - base : 0), element by element.
template <class T>
void combine(const Handle& h, const void* raw, void* out) {
    const T* r = static_cast<const T*>(raw);
    const T* b = reinterpret_cast<const T*>(h.base.data());
    const T* a = reinterpret_cast<const T*>(h.accum.data());
    T* o = static_cast<T*>(out);
    for (int i = 0; i < h.count; ++i) o[i] = a[i] + (h.started ? T(r[i] - b[i]) : T(0));
}

void value_of(const Handle& h, const void* raw, void* out) {
    switch (h.var->type) {
        case rt::Type::Unsigned:
            combine<unsigned>(h, raw, out);
            break;
        case rt::Type::UnsignedLong:
            combine<unsigned long>(h, raw, out);
            break;
        case rt::Type::UnsignedLongLong:
            combine<unsigned long long>(h, raw, out);
            break;
        case rt::Type::Double:
            combine<double>(h, raw, out);
            break;
        case rt::Type::Int:
            combine<int>(h, raw, out);
            break;
        case rt::Type::Char:
            break;  // no relative strings
    }
}

size_t bytes_of(const Handle& h) {
    return static_cast<size_t>(h.count) * rt::type_size(h.var->type);
}

// Reads the raw value(s) of h's variable for the session's rank; false when
// its communicator is gone.
bool read_raw(const Handle& h, void* out) {
    rt::Subject subject;
    if (!subject_for(h.session->owner, h.var->bind, h.comm, &subject)) return false;
    h.var->read(subject, out);
    return true;
}

SessionObj* find_session(RankTools& t, MPI_T_pvar_session s) {
    for (auto& mine : t.sessions)
        if (mine.get() == s) return mine.get();
    return nullptr;
}

Handle* find_handle(SessionObj* s, MPI_T_pvar_handle h) {
    auto it = s->handles.find(h);
    return it == s->handles.end() ? nullptr : it->second.get();
}

// The session and handle of a call; MPI_T_PVAR_ALL_HANDLES gives handle null
// when `all` is allowed.
int resolve(RankTools& t, MPI_T_pvar_session session, MPI_T_pvar_handle handle, bool all,
            SessionObj** s, Handle** h) {
    *s = find_session(t, session);
    if (!*s) return MPI_T_ERR_INVALID_SESSION;
    *h = nullptr;
    if (handle == MPI_T_PVAR_ALL_HANDLES) return all ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
    *h = find_handle(*s, handle);
    return *h ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

int start(Handle& h) {
    if (!h.var->gate) return MPI_T_ERR_PVAR_NO_STARTSTOP;
    if (h.started) return MPI_SUCCESS;
    // The gate first: whatever happens from the base on is counted.
    h.var->gate->open();
    if (h.relative && !read_raw(h, h.base.data())) {
        h.var->gate->close();
        return MPI_T_ERR_INVALID_HANDLE;
    }
    h.started = true;
    return MPI_SUCCESS;
}

int stop(Handle& h) {
    if (!h.var->gate) return MPI_T_ERR_PVAR_NO_STARTSTOP;
    if (!h.started) return MPI_SUCCESS;
    if (h.relative) {
        std::vector<unsigned char> raw(bytes_of(h));
        if (!read_raw(h, raw.data())) return MPI_T_ERR_INVALID_HANDLE;
        value_of(h, raw.data(), h.accum.data());  // what the interval added, kept
    }
    h.started = false;
    h.var->gate->close();
    return MPI_SUCCESS;
}

// Sets the handle's value to `value` (null: the starting value, 0) as of now.
int assign(Handle& h, const void* value) {
    if (h.var->readonly || !h.relative) return MPI_T_ERR_PVAR_NO_WRITE;
    if (h.started && !read_raw(h, h.base.data())) return MPI_T_ERR_INVALID_HANDLE;
    if (value)
        memcpy(h.accum.data(), value, bytes_of(h));
    else
        std::fill(h.accum.begin(), h.accum.end(), 0);
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_T_pvar_get_num(int* num_pvar) {
    MPC_ENTER(T_pvar_get_num);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!num_pvar) return MPI_T_ERR_INVALID;
    *num_pvar = rt::num_pvars();
    return MPI_SUCCESS;
}

int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* readonly, int* continuous, int* atomic) {
    MPC_ENTER(T_pvar_get_info);
    ToolsCall call(me);
    if (call.error()) return call.error();
    auto v = rt::pvar(pvar_index);
    if (!v) return MPI_T_ERR_INVALID_INDEX;
    // Any output argument may be NULL: it is not returned.
    return_string(v->name, name, name_len);
    return_string(v->desc, desc, desc_len);
    if (verbosity) *verbosity = verbosity_of(v->verbosity);
    if (var_class) *var_class = class_of(v->var_class);
    if (datatype) *datatype = datatype_of(v->type);
    if (enumtype)
        *enumtype = v->enumeration
                        ? reinterpret_cast<MPI_T_enum>(const_cast<rt::Enumeration*>(v->enumeration))
                        : MPI_T_ENUM_NULL;
    if (bind) *bind = bind_of(v->bind);
    if (readonly) *readonly = v->readonly;
    if (continuous) *continuous = v->gate == nullptr;
    if (atomic) *atomic = v->atomic;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
    MPC_ENTER(T_pvar_get_index);
    ToolsCall call(me);
    if (call.error()) return call.error();
    rt::Class c;
    if (!name || !pvar_index || !class_from(var_class, &c)) return MPI_T_ERR_INVALID;
    const int i = rt::find_pvar(name, c);
    if (i < 0) return MPI_T_ERR_INVALID_NAME;
    *pvar_index = i;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
    MPC_ENTER(T_pvar_session_create);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!session) return MPI_T_ERR_INVALID;
    RankTools& t = call.state();
    if (static_cast<int>(t.sessions.size()) >= kMaxSessions) return MPI_T_ERR_OUT_OF_SESSIONS;
    auto s = std::make_unique<SessionObj>();
    s->owner = call.rank();
    *session = s.get();
    t.sessions.push_back(std::move(s));
    return MPI_SUCCESS;
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
    MPC_ENTER(T_pvar_session_free);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!session) return MPI_T_ERR_INVALID;
    RankTools& t = call.state();
    auto it = std::find_if(t.sessions.begin(), t.sessions.end(),
                           [&](const auto& mine) { return mine.get() == *session; });
    if (it == t.sessions.end()) return MPI_T_ERR_INVALID_SESSION;
    release_session(t, it->get());
    t.sessions.erase(it);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                             MPI_T_pvar_handle* handle, int* count) {
    MPC_ENTER(T_pvar_handle_alloc);
    ToolsCall call(me);
    if (call.error()) return call.error();
    RankTools& t = call.state();
    SessionObj* s = find_session(t, session);
    if (!s) return MPI_T_ERR_INVALID_SESSION;
    auto v = rt::pvar(pvar_index);
    if (!v) return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count) return MPI_T_ERR_INVALID;
    if (t.pvar_handles >= kMaxPvarHandles) return MPI_T_ERR_OUT_OF_HANDLES;
    auto h = std::make_unique<Handle>();
    h->session = s;
    if (int e = bound_comm(call.rank(), v->bind, obj_handle, &h->comm)) return e;
    rt::Subject subject;
    subject_for(call.rank(), v->bind, h->comm, &subject);
    h->count = rt::count_of(v->count, subject);
    h->var = std::move(v);
    h->relative = is_relative(h->var->var_class);
    if (h->relative) {
        h->base.assign(bytes_of(*h), 0);
        h->accum.assign(bytes_of(*h), 0);
    }
    // A continuous variable is started from its allocation on.
    if (!h->var->gate) {
        if (h->relative) read_raw(*h, h->base.data());
        h->started = true;
    }
    *count = h->count;
    *handle = h.get();
    s->handles.emplace(h.get(), std::move(h));
    ++t.pvar_handles;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
    MPC_ENTER(T_pvar_handle_free);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!handle) return MPI_T_ERR_INVALID;
    RankTools& t = call.state();
    SessionObj* s = nullptr;
    Handle* h = nullptr;
    if (int e = resolve(t, session, *handle, false, &s, &h)) return e;
    if (h->started && h->var->gate) h->var->gate->close();
    s->handles.erase(h);
    --t.pvar_handles;
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    MPC_ENTER(T_pvar_start);
    ToolsCall call(me);
    if (call.error()) return call.error();
    SessionObj* s = nullptr;
    Handle* h = nullptr;
    if (int e = resolve(call.state(), session, handle, true, &s, &h)) return e;
    if (h) return start(*h);
    // All handles of the session: continuous ones and those running are left alone.
    int rc = MPI_SUCCESS;
    for (auto& [key, each] : s->handles)
        if (each->var->gate && !each->started && start(*each) != MPI_SUCCESS)
            rc = MPI_T_ERR_PVAR_NO_STARTSTOP;
    return rc;
}

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    MPC_ENTER(T_pvar_stop);
    ToolsCall call(me);
    if (call.error()) return call.error();
    SessionObj* s = nullptr;
    Handle* h = nullptr;
    if (int e = resolve(call.state(), session, handle, true, &s, &h)) return e;
    if (h) return stop(*h);
    int rc = MPI_SUCCESS;
    for (auto& [key, each] : s->handles)
        if (each->var->gate && each->started && stop(*each) != MPI_SUCCESS)
            rc = MPI_T_ERR_PVAR_NO_STARTSTOP;
    return rc;
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
    MPC_ENTER(T_pvar_read);
    ToolsCall call(me);
    if (call.error()) return call.error();
    SessionObj* s = nullptr;
    Handle* h = nullptr;
    if (int e = resolve(call.state(), session, handle, false, &s, &h)) return e;
    if (!buf) return MPI_T_ERR_INVALID;
    if (!h->relative) return read_raw(*h, buf) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
    std::vector<unsigned char> raw(bytes_of(*h));
    if (h->started && !read_raw(*h, raw.data())) return MPI_T_ERR_INVALID_HANDLE;
    value_of(*h, raw.data(), buf);
    return MPI_SUCCESS;
}

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
    MPC_ENTER(T_pvar_write);
    ToolsCall call(me);
    if (call.error()) return call.error();
    SessionObj* s = nullptr;
    Handle* h = nullptr;
    if (int e = resolve(call.state(), session, handle, false, &s, &h)) return e;
    if (!buf) return MPI_T_ERR_INVALID;
    return assign(*h, buf);
}

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    MPC_ENTER(T_pvar_reset);
    ToolsCall call(me);
    if (call.error()) return call.error();
    SessionObj* s = nullptr;
    Handle* h = nullptr;
    if (int e = resolve(call.state(), session, handle, true, &s, &h)) return e;
    if (h) return assign(*h, nullptr);
    // All handles: read-only variables are left alone.
    int rc = MPI_SUCCESS;
    for (auto& [key, each] : s->handles)
        if (!each->var->readonly && assign(*each, nullptr) != MPI_SUCCESS)
            rc = MPI_T_ERR_PVAR_NO_WRITE;
    return rc;
}

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
    MPC_ENTER(T_pvar_readreset);
    ToolsCall call(me);
    if (call.error()) return call.error();
    SessionObj* s = nullptr;
    Handle* h = nullptr;
    if (int e = resolve(call.state(), session, handle, false, &s, &h)) return e;
    if (!buf) return MPI_T_ERR_INVALID;
    if (h->var->readonly || !h->relative) return MPI_T_ERR_PVAR_NO_WRITE;
    if (!h->var->atomic) return MPI_T_ERR_PVAR_NO_ATOMIC;
    // One raw reading is both the value returned and the new base: nothing
    // counted between the read and the reset is lost.
    std::vector<unsigned char> raw(bytes_of(*h));
    if (h->started && !read_raw(*h, raw.data())) return MPI_T_ERR_INVALID_HANDLE;
    value_of(*h, raw.data(), buf);
    if (h->started) memcpy(h->base.data(), raw.data(), raw.size());
    std::fill(h->accum.begin(), h->accum.end(), 0);
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_T_pvar_get_num)
MPC_WEAK(MPI_T_pvar_get_info)
MPC_WEAK(MPI_T_pvar_get_index)
MPC_WEAK(MPI_T_pvar_session_create)
MPC_WEAK(MPI_T_pvar_session_free)
MPC_WEAK(MPI_T_pvar_handle_alloc)
MPC_WEAK(MPI_T_pvar_handle_free)
MPC_WEAK(MPI_T_pvar_start)
MPC_WEAK(MPI_T_pvar_stop)
MPC_WEAK(MPI_T_pvar_read)
MPC_WEAK(MPI_T_pvar_write)
MPC_WEAK(MPI_T_pvar_reset)
MPC_WEAK(MPI_T_pvar_readreset)
