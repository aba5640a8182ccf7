// mpi_api/api: what every MPI entry point does first, and argument checks.
//
// MPC_ENTER(Name) names the calling rank `me`, records the function for error
// messages, hang reports and statistics, and times it when statistics are on.
// The check_* helpers return MPI_SUCCESS or a detailed error code; the entry
// point raises it on the right communicator (see errors.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "mpi.h"
#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_tables.inc"
#include "runtime/tools.hpp"

namespace mpc::mpi {

inline constexpr int kTagUpperBound = 0x3fffffff;

struct FnStats {
    uint64_t calls = 0;
    uint64_t ns = 0;
};

// MPC_STATS: the node process prints its statistics report at the end. Any
// thread may change it (an MPI_T control variable): atomic.
extern std::atomic<bool> g_stats_enabled;
// Statistics of every MPI function of a rank, made on first use; counted while
// runtime::tools::g_functions is open (MPC_STATS, or an MPI_T handle of theirs).
FnStats* rank_fn_stats(RankState* rank);
// Turns the report on or off, and with it the counting it reports (opens or
// closes the transport and function gates once).
void set_stats_report(bool on);

// Records the MPI function a rank is in for the length of a call: in the rank
// for its own task (what the hang watch and error messages read), in a
// thread_local for the threads a rank created (with MPI_THREAD_MULTIPLE
// several of them are in MPI at once). Inline: every MPI call runs it twice.
class ApiScope {
public:
    // The caller as the scheduler knows it: a rank's state is its owner.
    ApiScope(sched::Caller caller, gen::Fn fn)
        : me_(static_cast<RankState*>(caller.owner)), in_task_(caller.in_task), fn_(fn) {
        if (!me_) return;
        const int f = static_cast<int>(fn);
        if (in_task_) {
            outer_ = me_->current_fn.load(std::memory_order_relaxed);
            me_->current_fn.store(f, std::memory_order_relaxed);
        } else {
            outer_ = swap_thread_fn(f);
        }
        if (__builtin_expect(runtime::tools::g_functions.on(), 0)) start_stats();
    }
    ~ApiScope() {
        if (!me_) return;
        if (in_task_) me_->current_fn.store(outer_, std::memory_order_relaxed);
        else swap_thread_fn(outer_);
        // Timed when the gate was open at the start (it may close meanwhile).
        if (__builtin_expect(start_ != 0, 0)) end_stats();
    }
    ApiScope(const ApiScope&) = delete;
    ApiScope& operator=(const ApiScope&) = delete;
    RankState* rank() const { return me_; }  // the calling rank, or nullptr

private:
    // The function a rank's thread is in: sets it, returns the previous one.
    static int swap_thread_fn(int fn);
    void start_stats();
    void end_stats();

    RankState* me_;
    bool in_task_;  // called from the rank's own task
    gen::Fn fn_;
    int outer_ = -1;
    int64_t start_ = 0;
};

// The MPI function the rank is in (for error and hang messages).
const char* current_fn_name(RankState* me);

// Ends the job: an MPI function other than the few allowed before MPI_Init
// (or after MPI_Finalize) was called.
[[noreturn]] void not_initialized(RankState* me, gen::Fn fn);

inline bool active(const RankState* me) {
    return me && (me->phase.load(std::memory_order_relaxed) == RankState::Initialized ||
                  me->sessions.load(std::memory_order_relaxed) > 0);
}

int check_comm(MPI_Comm handle, Comm** out);
int check_type(MPI_Datatype handle, Datatype** out, bool need_commit = true);
// Counts are MPI_Count: the large-count (_c) calls pass more than an int holds.
int check_count(MPI_Count count);
int check_buffer(const void* buf, MPI_Count count, const Datatype* type);
// check_buffer's bound: every byte count computed from count and the type
// (data, packed, external32, span in memory) fits the address space, or it
// would wrap.
inline uint64_t bytes_per_element(const Datatype& t) {
    const uint64_t span = static_cast<uint64_t>(t.extent < 0 ? -t.extent : t.extent);
    return std::max<uint64_t>({t.size, t.external_size, span});
}
inline bool count_fits(MPI_Count count, const Datatype& t) {
    uint64_t bytes = 0;
    return count <= 0 || (!__builtin_mul_overflow(static_cast<uint64_t>(count),
                                                  bytes_per_element(t), &bytes) &&
                          bytes <= static_cast<uint64_t>(PTRDIFF_MAX));
}
int check_send_rank(const Comm* comm, int rank);                   // or PROC_NULL
int check_recv_rank(const Comm* comm, int rank);                   // or PROC_NULL / ANY_SOURCE
int check_tag(int tag, bool allow_any);
int check_root(const Comm* comm, int root);

}  // namespace mpc::mpi

#define MPC_ENTER(Name)                                                        \
    ::mpc::mpi::ApiScope mpc_api_scope_(::mpc::sched::current_caller(),        \
                                        ::mpc::mpi::gen::Fn::Name);            \
    [[maybe_unused]] ::mpc::mpi::RankState* const me = mpc_api_scope_.rank()

// Functions that need MPI to be initialized and not finalized.
#define MPC_ENTER_ACTIVE(Name)                                                 \
    MPC_ENTER(Name);                                                           \
    if (__builtin_expect(!::mpc::mpi::active(me), 0))                          \
    ::mpc::mpi::not_initialized(me, ::mpc::mpi::gen::Fn::Name)

// Returns through the error handler of `comm` (a Comm*) when `expr` is an error.
#define MPC_TRY(comm, expr)                                       \
    do {                                                          \
        int mpc_err_ = (expr);                                    \
        if (__builtin_expect(mpc_err_ != MPI_SUCCESS, 0))         \
            return ::mpc::mpi::raise((comm), mpc_err_);           \
    } while (0)

// The profiling interface: MPI_x is a weak alias of PMPI_x, defined in the same
// translation unit.
#define MPC_WEAK(name) \
    extern "C" __typeof__(P##name) name __attribute__((weak, alias("P" #name)));
