// Which libraries' thread-local storage follows a rank from one fiber switch
// to the next. Ranks sharing a virtual processor share its kernel thread, so
// the static TLS of every library loaded at start-up is one per VP, not one
// per rank. For most libraries that is right: libc's own state (errno aside,
// which the scheduler keeps per task), its malloc arenas and caches, the
// runtime's own thread-locals belong to the kernel thread. For a few, the
// state belongs to whatever code runs: the OpenMP runtime's (libgomp's
// current team, nesting level, internal control variables and thread pool;
// libomp's global thread id, hence its root, team and ICVs) and libstdc++'s
// (the exceptions being caught or thrown, call_once's callable). Those must
// never be shared by two ranks: a rank that blocks in MPI inside a parallel
// region (or a catch block) lets another rank run on the same kernel thread.
// This file finds their static TLS blocks; the scheduler swaps them with the
// program's own (Options::task_tls). It must never list libc's, the
// runtime's or an unknown library's block.
#pragma once

#include <string>
#include <vector>

#include "scheduler/scheduler.hpp"

namespace mpc::host {

struct LibraryTls {
    std::string path;
    sched::TlsRegion region;  // region.init points into `init`
    std::vector<char> init;   // the block's initial image (.tdata, then zeros)
};

// The static TLS blocks of the loaded OpenMP runtimes (libgomp, libomp,
// Intel's libiomp5), and of libstdc++ when `cxx` (the program or a user
// library is C++). A library whose block is not in static TLS (loaded with
// dlopen after start-up) is skipped with a warning.
std::vector<LibraryTls> rank_private_library_tls(bool cxx);

// True when a loaded library is an OpenMP runtime.
bool is_openmp_runtime(const std::string& path);

}  // namespace mpc::host
