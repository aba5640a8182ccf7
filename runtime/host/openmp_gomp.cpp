// Entry points of GCC's OpenMP runtime interface (libgomp's GOMP_*, which
// libomp provides too) that the runtime takes over; each calls the OpenMP
// runtime's own (the next definition) but for what it changes:
//   GOMP_critical_start/end  the unnamed critical section is per rank (the
//                            OpenMP runtime has one per process);
//   GOMP_parallel            a warning when a rank that shares its VP starts
//                            a team of several threads (openmp.hpp), and,
//                            under ThreadSanitizer, the fork and join;
//   GOMP_barrier             under ThreadSanitizer, the barrier;
//   GOMP_atomic_start/end    under ThreadSanitizer, the lock that merges
//                            several reductions (and atomics the CPU lacks).
// ThreadSanitizer does not see the synchronisation inside an uninstrumented
// OpenMP runtime (Debian's libgomp), so it reported races on every variable
// a team shares across a fork, a join or a barrier: the annotations tell it
// what the runtime guarantees. Must never change what the program computes.
#include <dlfcn.h>

#include "openmp.hpp"
#include "rank_lock.hpp"
#include "runtime/sanitizers.hpp"

#ifdef MPC_TSAN
#include <sanitizer/tsan_interface.h>

#include "mpi_api/rank.hpp"
#endif

namespace {

template <class Fn>
Fn next_symbol(const char* name) {
    return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

using ParallelFn = void (*)(void (*)(void*), void*, unsigned, unsigned);

#ifdef MPC_TSAN
// A fork hands the region's data to the team; a join hands the team's
// results back.
struct ForkJoin {
    void (*fn)(void*);
    void* data;
    char fork, join;
};

void run_member(void* p) {
    auto* fj = static_cast<ForkJoin*>(p);
    __tsan_acquire(&fj->fork);
    fj->fn(fj->data);
    __tsan_release(&fj->join);
}

// One synchronisation object per rank for its barriers (coarser than one per
// team: threads of the same rank at different barriers look ordered).
char g_barrier_token[4096];
void* barrier_token() {
    auto* rank = static_cast<mpc::mpi::RankState*>(mpc::sched::current_owner());
    return &g_barrier_token[rank ? rank->local_index % sizeof(g_barrier_token) : 0];
}
#endif

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void GOMP_critical_start() {
    using Fn = void (*)();
    static Fn real = next_symbol<Fn>("GOMP_critical_start");
    if (mpc::host::RankLock* lock = mpc::host::rank_critical_lock())
        lock->lock();
    else if (real)
        real();
}

__attribute__((visibility("default"))) void GOMP_critical_end() {
    using Fn = void (*)();
    static Fn real = next_symbol<Fn>("GOMP_critical_end");
    if (mpc::host::RankLock* lock = mpc::host::rank_critical_lock())
        lock->unlock();
    else if (real)
        real();
}

__attribute__((visibility("default"))) void GOMP_parallel(void (*fn)(void*), void* data,
                                                          unsigned num_threads, unsigned flags) {
    static ParallelFn real = next_symbol<ParallelFn>("GOMP_parallel");
    using MaxThreadsFn = int (*)();
    static MaxThreadsFn max_threads = next_symbol<MaxThreadsFn>("omp_get_max_threads");
    mpc::host::check_team_size(num_threads   ? static_cast<int>(num_threads)
                               : max_threads ? max_threads()
                                             : 1);
#ifdef MPC_TSAN
    ForkJoin fj{fn, data, 0, 0};
    __tsan_release(&fj.fork);
    real(run_member, &fj, num_threads, flags);
    __tsan_acquire(&fj.join);
#else
    real(fn, data, num_threads, flags);
#endif
}

#ifdef MPC_TSAN
// libgomp's one lock for atomic blocks: one synchronisation object too.
char g_atomic_token;

__attribute__((visibility("default"))) void GOMP_atomic_start() {
    using Fn = void (*)();
    static Fn real = next_symbol<Fn>("GOMP_atomic_start");
    real();
    __tsan_acquire(&g_atomic_token);
}

__attribute__((visibility("default"))) void GOMP_atomic_end() {
    using Fn = void (*)();
    static Fn real = next_symbol<Fn>("GOMP_atomic_end");
    __tsan_release(&g_atomic_token);
    real();
}

__attribute__((visibility("default"))) void GOMP_barrier() {
    using Fn = void (*)();
    static Fn real = next_symbol<Fn>("GOMP_barrier");
    void* token = barrier_token();
    __tsan_release(token);
    real();
    __tsan_acquire(token);
}
#endif

}  // extern "C"
