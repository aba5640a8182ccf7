// runtime/host: the composition root of a node process (compiled into the
// shared library only, never into unit tests).
//
// It takes control of the process before the program's main runs, learns the
// job layout from the bootstrap, sets up MPI and the scheduler, runs the
// program's main once per rank in that rank's fiber, and ends the process with
// the highest exit status of its ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

// The end of a rank does what exit() does in a process, in the rank's fiber
// (its thread-locals installed, MPI finalized as the handlers expect):
//  - C++ thread_local destructors. glibc would run them at the exit of the VP
//    thread, once per rank that touched them and all on the same address (the
//    program's TLS block is one per VP, swapped per rank): the runtime keeps
//    the ranks' registrations instead.
//  - atexit handlers and static destructors of the rank's own images (program
//    and user libraries); without this they would run when the node process
//    ends, outside any rank (MPI_Finalized would say no).
//
// The program's static TLS block lies `offset` bytes below the thread pointer.
void set_program_tls(std::ptrdiff_t offset, size_t size);
// Called for every thread_local registration; false when the object is not a
// rank's (the caller is not a rank's fiber, or the object belongs to the
// runtime or a library shared by the ranks): glibc then keeps it.
bool defer_rank_thread_local(void (*dtor)(void*), void* object, void* dso);
// Called for every exit handler registration (__cxa_atexit): remembers dso.
void note_exit_handler(void* dso);
// Runs the calling rank's thread-local destructors (last registered first),
// then the exit handlers of the objects loaded at `objects` (load bases).
void run_rank_exit(const std::vector<uintptr_t>& objects);

// The ranks' output marked by rank, or in a file per rank (rank_output.cpp):
// set up from MPC_OUTPUT_LABEL / MPC_OUTPUT_DIR before the rank images load;
// output_intercept takes a write(2) on descriptor 1 or 2 when marking is on
// (true: taken); output_finish sends out the last unfinished lines.
void output_setup();
bool output_intercept(int fd, const void* buf, size_t len);
void output_finish();

}  // namespace mpc::host

namespace mpc::ib {
class Network;
}
namespace mpc::host {
// Prints the statistics report of this node process's ranks (MPC_STATS=1).
void report_statistics(ib::Network* net);
}  // namespace mpc::host
