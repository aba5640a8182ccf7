// An OMPT tool (OpenMP 5.0 tools interface) that makes every worker of an
// OpenMP team the rank of the team's master, for OpenMP runtimes that share
// their worker threads among the whole process (LLVM's libomp keeps one pool:
// a thread one rank's team released serves another rank's next team; libgomp
// keeps a pool per master thread and has no OMPT). The rank a thread works
// for is set when it begins its implicit task, from what the master noted at
// the region's start; a worker that changes ranks moves to its new rank's
// cores. Must never do more than that per region (and the warning of
// check_team_size): no other callback.
//
// The few OMPT types used are declared here (the ABI the standard fixes), so
// that building the runtime needs no OpenMP headers. A user's own tool
// (OMP_TOOL_LIBRARIES) takes precedence: this one then stays out.
#include <sched.h>

#include <cstdint>
#include <cstdlib>

#include "openmp.hpp"
#include "scheduler/scheduler.hpp"

namespace {

union OmptData {
    uint64_t value;
    void* ptr;
};
using OmptCallback = void (*)();
using OmptLookup = OmptCallback (*)(const char* name);
using OmptSetCallback = int (*)(int event, OmptCallback callback);
struct OmptStartToolResult {
    int (*initialize)(OmptLookup lookup, int initial_device_num, OmptData* tool_data);
    void (*finalize)(OmptData* tool_data);
    OmptData tool_data;
};
constexpr int kParallelBegin = 3;  // ompt_callback_parallel_begin
constexpr int kImplicitTask = 7;   // ompt_callback_implicit_task
constexpr int kScopeBegin = 1;     // ompt_scope_begin

// On the thread that starts a region: the region carries its rank.
void on_parallel_begin(OmptData*, const void*, OmptData* parallel_data, unsigned requested, int,
                       const void*) {
    if (parallel_data) parallel_data->ptr = mpc::sched::current_owner();
    mpc::host::check_team_size(static_cast<int>(requested));
}

// On every thread of the team, as it begins its share.
void on_implicit_task(int endpoint, OmptData* parallel_data, OmptData*, unsigned, unsigned, int) {
    if (endpoint != kScopeBegin || !parallel_data || !parallel_data->ptr) return;
    const mpc::sched::Caller me = mpc::sched::current_caller();
    if (me.in_task || me.owner == parallel_data->ptr) return;
    mpc::sched::set_thread_owner(parallel_data->ptr);
    mpc::host::move_openmp_worker(parallel_data->ptr);
}

int initialize(OmptLookup lookup, int, OmptData*) {
    auto set = reinterpret_cast<OmptSetCallback>(lookup("ompt_set_callback"));
    if (!set) return 0;
    set(kParallelBegin, reinterpret_cast<OmptCallback>(on_parallel_begin));
    set(kImplicitTask, reinterpret_cast<OmptCallback>(on_implicit_task));
    return 1;  // keep the tool active
}

void finalize(OmptData*) {}

OmptStartToolResult g_tool{initialize, finalize, {0}};

}  // namespace

extern "C" __attribute__((visibility("default"))) OmptStartToolResult* ompt_start_tool(
    unsigned int, const char*) {
    const char* user_tools = getenv("OMP_TOOL_LIBRARIES");
    if (user_tools && *user_tools) return nullptr;
    return &g_tool;
}
