// mpi_api/hang_watch: the hang watchdog of a node process (MPC_HANG_TIMEOUT).
//
// With MPC_HANG_TIMEOUT=S a thread samples the node process's ranks ten times
// a second. A rank is stalled while it waits in MPI (inside an MPI call at
// every sample, or calling MPI again and again, as an MPI_Test loop does)
// and none of its requests completes; a rank computing outside MPI, or one
// whose main returned, is not. When every rank still running has been stalled
// for S seconds, the watchdog prints, per rank, the MPI function it is in and
// what it waits for (its requests: peer, tag, size, transport and protocol;
// its posted receives; messages that arrived and matched nothing) and ends
// the job with status 124. While armed, a SIGTERM (mpcrun ending the job,
// after --timeout for example) prints the same report before the process dies.
//
// What it cannot see: ranks on other node processes (S must exceed the
// longest time a rank legitimately waits for another node), threads of a rank
// other than its main task. It costs the ranks nothing when off, and when on
// relaxed per-rank counter increments per poll and per completion (it holds
// the transport gate of runtime/tools.hpp open, so the messages per path are
// counted then too).
#pragma once

#include <atomic>

namespace mpc::mpi {

// True while the watchdog runs; the MPI layer counts polls and completions
// then. Atomic: the network's progress thread reads it too (relaxed loads).
extern std::atomic<bool> g_hang_watch;
inline bool hang_watch_on() {
    return g_hang_watch.load(std::memory_order_relaxed);
}

// Reads MPC_HANG_TIMEOUT and starts the watchdog when it is set (> 0). Call
// after process_setup(), before the ranks run.
void hang_watch_start();
// Stops it (the ranks have ended); the default SIGTERM action is restored.
void hang_watch_stop();

}  // namespace mpc::mpi
