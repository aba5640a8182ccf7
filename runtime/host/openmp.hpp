// runtime/host/openmp: every rank of an OpenMP program is, for the OpenMP
// runtime (GCC's libgomp or LLVM's libomp), what a process would be: its own
// team, nesting level, internal control variables, thread pool, threadprivate
// data and unnamed critical section, its threads on its own cores.
//
// How (docs/openmp.md explains it; docs/performance/notes.md has the measurements):
//  - A rank whose team has more than one thread gets a virtual processor (a
//    kernel thread) of its own: the master thread of a team waits for its
//    workers at barriers, locks and taskwaits inside the OpenMP runtime, in
//    the kernel, where no other rank could run on that kernel thread; with a
//    VP of its own, a rank blocked there blocks only itself, as a process
//    would. Ranks whose teams have one thread (more ranks than cores, or
//    OMP_NUM_THREADS=1) stay fibers sharing VPs.
//  - Ranks that share a VP each carry their own copy of the OpenMP runtime's
//    static TLS (and libstdc++'s; rank_tls.hpp), swapped at every switch, so
//    that a rank blocking in MPI inside a parallel region lets the next rank
//    start its own regions from its own state.
//  - Cores: the node process's cores are split into contiguous blocks, one
//    per rank (its VP's core when ranks outnumber cores). A rank's team
//    defaults to as many threads as its block has cores (OMP_NUM_THREADS
//    overrides), and the threads the OpenMP runtime starts for it run on its
//    block; libgomp's places (OMP_PLACES, OMP_PROC_BIND) are laid out inside
//    it, as they would be in a process that mpirun bound to those cores.
//  - The unnamed critical section (GOMP_critical_start) is per rank: libgomp
//    keeps one lock per process, which ranks calling MPI inside it (under
//    MPI_THREAD_SERIALIZED) would share. Named ones live in the program's
//    image, per rank already.
//  - libomp keeps one pool of worker threads for the whole process: a thread
//    that served one rank's team may serve another's next. An OMPT tool
//    makes each worker the rank of the team it works for.
// Must never change anything for a program without an OpenMP runtime (no
// TLS region added, no VP moved), apart from libstdc++'s TLS in C++ programs.
#pragma once

#include <pthread.h>
#include <sched.h>

#include "scheduler/scheduler.hpp"

namespace mpc::host {

// Before the scheduler is made, once the VPs and their cores are known: the
// VPs and cores of an OpenMP program's ranks (see above), and the TLS regions
// that follow ranks sharing a VP. `vps_chosen`: the user set the VP count.
void plan_rank_threads(sched::Options* opts, int nlocal, bool vps_chosen);

// First thing on VP `vp`'s thread, once the scheduler bound it to its core:
// the VP of a rank whose block has several cores runs on all of them, as the
// process mpirun bound to them would (omp_get_num_procs counts them).
void start_openmp_vp(int vp);

// In rank `local`'s fiber, before its main: its OpenMP defaults.
void start_openmp_rank(int local);

// The cores a thread that rank `owner` creates to run fn (with attr) should
// take: the rank's block for the OpenMP runtime's threads (a place of libgomp
// mapped into it, *scratch), else `fallback`.
const cpu_set_t* openmp_thread_cores(void* owner, void* (*fn)(void*), const pthread_attr_t* attr,
                                     const cpu_set_t* fallback, cpu_set_t* scratch);

// The calling rank's unnamed critical section (openmp_gomp.cpp), or null
// when the caller is no rank of an OpenMP program.
class RankLock;
RankLock* rank_critical_lock();

// A rank starts a team of `threads` threads: warns (once) when the rank
// shares its VP with others (see above).
void check_team_size(int threads);

// A worker of the OpenMP runtime's shared pool that now works for rank
// `owner` (openmp_ompt.cpp): it moves to that rank's cores.
void move_openmp_worker(void* owner);

}  // namespace mpc::host
