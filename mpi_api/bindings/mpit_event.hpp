// MPI_T events (MPI 4.1 section 15.3.8): what the bindings keep of a tool's
// event registrations, shared by mpit_event*.cpp.
//
// A registration belongs to one rank (the MPI process that allocated it) and
// lists the callbacks of each safety level. Raised events reach it through
// the runtime's sink (runtime/tool_events.hpp): where they are raised the
// runtime may hold a matching lock and run on any thread of the node process,
// so only callbacks registered as MPI_T_CB_REQUIRE_THREAD_SAFE or stronger are
// called there, at once; otherwise the event is buffered (at most
// kMaxPending, then counted as dropped) and delivered to the least demanding
// callback from the rank's own thread, outside any lock, at its next MPI_T
// call. Never call a tool's function while holding g_mutex.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "mpit.hpp"
#include "runtime/tool_events.hpp"

using InfoHints = std::vector<std::pair<std::string, std::string>>;

// An event occurrence, valid for the length of the callback that receives it.
struct mpc_t_event_instance_s {
    static constexpr uint32_t kMagic = 0x65766e74;  // "evnt"
    uint32_t magic = kMagic;
    int64_t time_ns = 0;
    const mpc::runtime::tools::EventType* type = nullptr;
    const std::vector<size_t>* offsets = nullptr;
    size_t bytes = 0;
    unsigned char data[mpc::runtime::tools::kMaxEventBytes] = {};
};

struct mpc_t_event_registration_s {
    struct Callback {
        MPI_T_event_cb_function* fn = nullptr;
        void* user_data = nullptr;
        InfoHints hints;
    };
    struct Pending {
        int64_t time_ns;
        size_t bytes;
        unsigned char data[mpc::runtime::tools::kMaxEventBytes];
    };
    int event = -1;
    mpc::mpi::RankState* owner = nullptr;
    int local = -1;
    std::shared_ptr<const mpc::runtime::tools::EventType> type;
    std::vector<size_t> offsets;
    InfoHints hints;
    Callback callbacks[4];  // by MPI_T_cb_safety
    MPI_T_event_dropped_cb_function* dropped = nullptr;
    std::deque<Pending> pending;
    unsigned long long dropped_count = 0;
    bool listening = false;  // has a callback: its event's gate is held open
    // Callbacks running now; a registration freed meanwhile is deleted (and
    // its free callback called) by whoever ends the last one.
    int in_flight = 0;
    bool freed = false;
    MPI_T_event_free_cb_function* free_fn = nullptr;
    void* free_user_data = nullptr;
};

namespace mpc::mpi::tools {

inline constexpr size_t kMaxPending = 1024;     // buffered events per registration
inline constexpr int kMaxRegistrations = 4096;  // per rank (MPI_T_ERR_OUT_OF_HANDLES)

// Guards every registration of the node process.
extern std::mutex g_event_mutex;
// The live registration `r` of rank `me`, or null (mutex held).
mpc_t_event_registration_s* find_registration(RankState* me, MPI_T_event_registration r);
// Delivers what was buffered for `me`'s registrations: call it at a safe point
// (the rank's own thread, no lock held), before ToolsCall.
void deliver_pending(RankState* me);
// Frees every registration of `me` without calling back (its last
// MPI_T_finalize).
void release_events(RankState* me);
// An info object's hints (MPI_INFO_NULL: none); false when `info` is invalid.
bool hints_of(MPI_Info info, InfoHints* out);
// A new info object holding `hints`.
MPI_Info info_of(const InfoHints& hints);

}  // namespace mpc::mpi::tools
