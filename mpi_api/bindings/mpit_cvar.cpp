// MPI_T: enumerations and control variables (MPI 3.1 sections 14.3.5, 14.3.6).
// A control variable is one of the runtime's MPC_* settings as its room
// registered it; a handle reads or writes it for the calling rank.
#include <algorithm>
#include <cstring>

#include "mpi_api/rank.hpp"
#include "mpit.hpp"

using namespace mpc::mpi;
using namespace mpc::mpi::tools;
namespace rt = mpc::runtime::tools;

namespace {

const rt::Enumeration* enumeration_of(MPI_T_enum e) {
    auto* p = reinterpret_cast<const rt::Enumeration*>(e);
    return p && rt::known_enumeration(p) ? p : nullptr;
}

MPI_T_enum enum_handle(const rt::Enumeration* e) {
    return e ? reinterpret_cast<MPI_T_enum>(const_cast<rt::Enumeration*>(e)) : MPI_T_ENUM_NULL;
}

// The rank's handle h, or null when h is not one of them.
mpc_t_cvar_handle_s* find_handle(RankTools& t, MPI_T_cvar_handle h) {
    auto it = t.cvar_handles.find(h);
    return it == t.cvar_handles.end() ? nullptr : it->second.get();
}

}  // namespace

extern "C" {

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
    MPC_ENTER(T_enum_get_info);
    ToolsCall call(me);
    if (call.error()) return call.error();
    const rt::Enumeration* e = enumeration_of(enumtype);
    if (!e) return MPI_T_ERR_INVALID_HANDLE;
    if (!num) return MPI_T_ERR_INVALID;
    *num = static_cast<int>(e->items.size());
    return_string(e->name, name, name_len);
    return MPI_SUCCESS;
}

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int* value, char* name, int* name_len) {
    MPC_ENTER(T_enum_get_item);
    ToolsCall call(me);
    if (call.error()) return call.error();
    const rt::Enumeration* e = enumeration_of(enumtype);
    if (!e) return MPI_T_ERR_INVALID_HANDLE;
    if (index < 0 || static_cast<size_t>(index) >= e->items.size()) return MPI_T_ERR_INVALID_ITEM;
    if (!value) return MPI_T_ERR_INVALID;
    const auto& item = e->items[static_cast<size_t>(index)];
    *value = item.first;
    return_string(item.second, name, name_len);
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_num(int* num_cvar) {
    MPC_ENTER(T_cvar_get_num);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!num_cvar) return MPI_T_ERR_INVALID;
    *num_cvar = rt::num_cvars();
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* scope) {
    MPC_ENTER(T_cvar_get_info);
    ToolsCall call(me);
    if (call.error()) return call.error();
    auto v = rt::cvar(cvar_index);
    if (!v) return MPI_T_ERR_INVALID_INDEX;
    // Any output argument may be NULL: it is not returned (MPI 3.1 14.3.6).
    return_string(v->name, name, name_len);
    return_string(v->desc, desc, desc_len);
    if (verbosity) *verbosity = verbosity_of(v->verbosity);
    if (datatype) *datatype = datatype_of(v->type);
    if (enumtype) *enumtype = enum_handle(v->enumeration);
    if (bind) *bind = bind_of(v->bind);
    if (scope) *scope = scope_of(v->scope);
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
    MPC_ENTER(T_cvar_get_index);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!name || !cvar_index) return MPI_T_ERR_INVALID;
    const int i = rt::find_cvar(name);
    if (i < 0) return MPI_T_ERR_INVALID_NAME;
    *cvar_index = i;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle,
                             int* count) {
    MPC_ENTER(T_cvar_handle_alloc);
    ToolsCall call(me);
    if (call.error()) return call.error();
    auto v = rt::cvar(cvar_index);
    if (!v) return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count) return MPI_T_ERR_INVALID;
    RankTools& t = call.state();
    if (static_cast<int>(t.cvar_handles.size()) >= kMaxCvarHandles) return MPI_T_ERR_OUT_OF_HANDLES;
    auto h = std::make_unique<mpc_t_cvar_handle_s>();
    if (int e = bound_comm(call.rank(), v->bind, obj_handle, &h->comm)) return e;
    rt::Subject subject;
    subject_for(call.rank(), v->bind, h->comm, &subject);
    h->count = rt::count_of(v->count, subject);
    h->var = std::move(v);
    *count = h->count;
    *handle = h.get();
    t.cvar_handles.emplace(h.get(), std::move(h));
    return MPI_SUCCESS;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
    MPC_ENTER(T_cvar_handle_free);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!handle) return MPI_T_ERR_INVALID;
    RankTools& t = call.state();
    if (!t.cvar_handles.erase(*handle)) return MPI_T_ERR_INVALID_HANDLE;
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
    MPC_ENTER(T_cvar_read);
    ToolsCall call(me);
    if (call.error()) return call.error();
    mpc_t_cvar_handle_s* h = find_handle(call.state(), handle);
    if (!h) return MPI_T_ERR_INVALID_HANDLE;
    if (!buf) return MPI_T_ERR_INVALID;
    rt::Subject subject;
    if (!subject_for(call.rank(), h->var->bind, h->comm, &subject))
        return MPI_T_ERR_INVALID_HANDLE;  // its communicator was freed
    h->var->read(subject, buf);
    return MPI_SUCCESS;
}

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
    MPC_ENTER(T_cvar_write);
    ToolsCall call(me);
    if (call.error()) return call.error();
    mpc_t_cvar_handle_s* h = find_handle(call.state(), handle);
    if (!h) return MPI_T_ERR_INVALID_HANDLE;
    if (!buf) return MPI_T_ERR_INVALID;
    const rt::Cvar& v = *h->var;
    if (!v.write || v.scope == rt::Scope::Constant || v.scope == rt::Scope::ReadOnly)
        return MPI_T_ERR_CVAR_SET_NEVER;
    rt::Subject subject;
    if (!subject_for(call.rank(), v.bind, h->comm, &subject)) return MPI_T_ERR_INVALID_HANDLE;
    switch (v.write(subject, buf)) {
        case rt::WriteStatus::Ok:
            return MPI_SUCCESS;
        case rt::WriteStatus::NotNow:
            return MPI_T_ERR_CVAR_SET_NOT_NOW;
        case rt::WriteStatus::Never:
            return MPI_T_ERR_CVAR_SET_NEVER;
        case rt::WriteStatus::Invalid:
            return MPI_T_ERR_INVALID;
    }
    return MPI_T_ERR_INVALID;
}

}  // extern "C"

MPC_WEAK(MPI_T_enum_get_info)
MPC_WEAK(MPI_T_enum_get_item)
MPC_WEAK(MPI_T_cvar_get_num)
MPC_WEAK(MPI_T_cvar_get_info)
MPC_WEAK(MPI_T_cvar_get_index)
MPC_WEAK(MPI_T_cvar_handle_alloc)
MPC_WEAK(MPI_T_cvar_handle_free)
MPC_WEAK(MPI_T_cvar_read)
MPC_WEAK(MPI_T_cvar_write)
