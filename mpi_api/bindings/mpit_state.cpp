// MPI_T: initialisation and finalisation (reference counted per rank), the
// per-rank state, and what every MPI_T call shares (strings, mpi.h values of
// the registry's enums, bound objects). See mpit.hpp.
#include <algorithm>
#include <cstring>
#include <map>

#include "mpi_api/rank.hpp"
#include "mpit.hpp"
#include "mpit_event.hpp"

using namespace mpc::mpi;
namespace rt = mpc::runtime::tools;

namespace mpc::mpi::tools {
namespace {

std::mutex g_ranks_mutex;
// By rank: a rank's state lives as long as the process (ranks do too).
std::map<const RankState*, std::unique_ptr<RankTools>>& ranks() {
    static auto* m = new std::map<const RankState*, std::unique_ptr<RankTools>>();
    return *m;
}

}  // namespace

RankTools* rank_tools(RankState* me, RankState** who) {
    // A program the runtime did not host has no rank yet before MPI_Init.
    if (!me && !sched::current_scheduler()) me = attach_unhosted();
    *who = me;
    if (!me) return nullptr;
    std::lock_guard<std::mutex> g(g_ranks_mutex);
    auto& slot = ranks()[me];
    if (!slot) slot = std::make_unique<RankTools>();
    return slot.get();
}

ToolsCall::ToolsCall(RankState* me) {
    state_ = rank_tools(me, &rank_);
    if (!state_) {
        error_ = MPI_T_ERR_NOT_INITIALIZED;
        return;
    }
    lock_ = std::unique_lock<std::mutex>(state_->mutex);
    if (state_->init_count == 0) {
        lock_.unlock();
        error_ = MPI_T_ERR_NOT_INITIALIZED;
    }
}

void release_session(RankTools& t, mpc_t_pvar_session_s* s) {
    for (auto& [key, h] : s->handles)
        if (h->started && h->var->gate) h->var->gate->close();
    t.pvar_handles -= static_cast<int>(s->handles.size());
    s->handles.clear();
}

void release_all(RankTools& t) {
    for (auto& s : t.sessions) release_session(t, s.get());
    t.sessions.clear();
    t.cvar_handles.clear();
}

void return_string(const std::string& s, char* buf, int* len) {
    if (!len) return;
    if (buf && *len > 0) {
        const size_t n = std::min(s.size(), static_cast<size_t>(*len - 1));
        memcpy(buf, s.data(), n);
        buf[n] = '\0';
    }
    *len = static_cast<int>(s.size()) + 1;
}

MPI_Datatype datatype_of(rt::Type t) {
    switch (t) {
        case rt::Type::Int:
            return MPI_INT;
        case rt::Type::Unsigned:
            return MPI_UNSIGNED;
        case rt::Type::UnsignedLong:
            return MPI_UNSIGNED_LONG;
        case rt::Type::UnsignedLongLong:
            return MPI_UNSIGNED_LONG_LONG;
        case rt::Type::Double:
            return MPI_DOUBLE;
        case rt::Type::Char:
            return MPI_CHAR;
    }
    return MPI_DATATYPE_NULL;
}

int verbosity_of(rt::Verbosity v) {
    static constexpr int kValues[] = {
        MPI_T_VERBOSITY_USER_BASIC,   MPI_T_VERBOSITY_USER_DETAIL,   MPI_T_VERBOSITY_USER_ALL,
        MPI_T_VERBOSITY_TUNER_BASIC,  MPI_T_VERBOSITY_TUNER_DETAIL,  MPI_T_VERBOSITY_TUNER_ALL,
        MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL};
    return kValues[static_cast<int>(v)];
}

int bind_of(rt::Bind b) {
    return b == rt::Bind::Comm ? MPI_T_BIND_MPI_COMM : MPI_T_BIND_NO_OBJECT;
}

int scope_of(rt::Scope s) {
    static constexpr int kValues[] = {MPI_T_SCOPE_CONSTANT, MPI_T_SCOPE_READONLY, MPI_T_SCOPE_LOCAL,
                                      MPI_T_SCOPE_GROUP,    MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL,
                                      MPI_T_SCOPE_ALL_EQ};
    return kValues[static_cast<int>(s)];
}

namespace {
constexpr int kClassValues[] = {MPI_T_PVAR_CLASS_STATE,         MPI_T_PVAR_CLASS_LEVEL,
                                MPI_T_PVAR_CLASS_SIZE,          MPI_T_PVAR_CLASS_PERCENTAGE,
                                MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LOWWATERMARK,
                                MPI_T_PVAR_CLASS_COUNTER,       MPI_T_PVAR_CLASS_AGGREGATE,
                                MPI_T_PVAR_CLASS_TIMER,         MPI_T_PVAR_CLASS_GENERIC};
}  // namespace

int class_of(rt::Class c) {
    return kClassValues[static_cast<int>(c)];
}

bool class_from(int value, rt::Class* out) {
    for (size_t i = 0; i < std::size(kClassValues); ++i) {
        if (kClassValues[i] != value) continue;
        *out = static_cast<rt::Class>(i);
        return true;
    }
    return false;
}

bool subject_for(RankState* me, rt::Bind bind, MPI_Comm comm, rt::Subject* out) {
    out->local = me->local_index;
    out->object = nullptr;
    if (bind != rt::Bind::Comm) return true;
    out->object = comm_lookup(me, comm);
    return out->object != nullptr;
}

int bound_comm(RankState* me, rt::Bind bind, const void* obj_handle, MPI_Comm* out) {
    *out = MPI_COMM_NULL;
    if (bind != rt::Bind::Comm) return MPI_SUCCESS;
    if (!obj_handle) return MPI_T_ERR_INVALID;
    const MPI_Comm comm = *static_cast<const MPI_Comm*>(obj_handle);
    if (!comm_lookup(me, comm)) return MPI_T_ERR_INVALID_HANDLE;
    *out = comm;
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi::tools

using namespace mpc::mpi::tools;

extern "C" {

int PMPI_T_init_thread(int required, int* provided) {
    MPC_ENTER(T_init_thread);
    RankState* who = nullptr;
    RankTools* t = rank_tools(me, &who);
    // A thread of the node process that no rank created (none does this).
    if (!t) return MPI_T_ERR_CANNOT_INIT;
    if (!provided) return MPI_T_ERR_INVALID;
    std::lock_guard<std::mutex> g(t->mutex);
    ++t->init_count;
    // Every MPI_T call is thread safe: whatever level is asked is given.
    *provided = required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                                               : required;
    return MPI_SUCCESS;
}

int PMPI_T_finalize(void) {
    MPC_ENTER(T_finalize);
    deliver_pending(me);
    ToolsCall call(me);
    if (call.error()) return call.error();
    RankTools& t = call.state();
    // The last matching call ends the rank's use of the interface: its
    // sessions, handles and event registrations are freed, as if the tool
    // had freed them (without their free callbacks).
    if (--t.init_count == 0) {
        release_all(t);
        release_events(call.rank());
    }
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_T_init_thread)
MPC_WEAK(MPI_T_finalize)
