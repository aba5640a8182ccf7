// runtime/entry: the composition root of a node process (compiled into the
// shared library only, never into unit tests).
//
// It takes control of the process before the program's main runs, learns the
// job layout from the bootstrap, sets up MPI and the scheduler, runs the
// program's main once per rank in that rank's fiber, and ends the process with
// the highest exit status of its ranks.
#pragma once

namespace mpc::host {

using MainFn = int (*)(int, char**, char**);

// Runs the whole node process; returns its exit status.
int run(MainFn user_main, int argc, char** argv, char** envp);

// Ends the calling rank (exit() called by a rank); returns only when the
// caller is not a rank, in which case the process should exit normally.
void rank_exit(int status);

// Installs the crash reporters (SIGSEGV, SIGBUS, ...) on this thread's
// alternate stack; called on every VP thread.
void install_crash_handlers();
void setup_signal_stack();

}  // namespace mpc::host

namespace mpc::ib {
class Network;
}
namespace mpc::host {
// Prints the statistics report of this node process's ranks (MPC_STATS=1).
void report_statistics(ib::Network* net);
}  // namespace mpc::host
