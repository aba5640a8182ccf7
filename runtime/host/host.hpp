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

struct sigaction;

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
// on_exit() called by a rank with images of its own: the handler joins the
// rank's exit handlers (in registration order with its atexit handlers) and
// gets the rank's exit status; false when the process should keep it.
bool defer_on_exit(void (*fn)(int, void*), void* arg);
// Runs the calling rank's thread-local destructors (last registered first),
// then the exit handlers of the objects loaded at `objects` (load bases);
// on_exit handlers get `status`.
void run_rank_exit(const std::vector<uintptr_t>& objects, int status);
// The load bases of the images only the calling rank runs (its program copy
// first), or null outside ranks; empty when the ranks share the images.
const std::vector<uintptr_t>* caller_images();

// process_guard.cpp: libc's sigaction, without the checks (for the runtime's
// own handlers, signal-safe); whether this process is a child a rank forked
// (its exit then ends it at once); the watch for such children.
int libc_sigaction(int sig, const struct sigaction* act, struct sigaction* old);
bool in_forked_child();
void watch_forks();

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

// What the host decided at start, for the tools interface's control variables.
struct HostSettings {
    int ranks = 1;                // MPC_NRANKS: ranks of the job
    int vps = 1;                  // MPC_VPS
    std::vector<int> cores;       // MPC_CORES: the cores the VPs are bound to
    bool bind = true;             // MPC_BIND
    size_t stack_size = 0;        // MPC_STACK_SIZE
    bool shared_globals = false;  // MPC_SHARED_GLOBALS (in force)
    int map = 0;                  // MPC_MAP: 0 block, 1 cyclic
};
// Registers the host's variables (MPI_T) and those of the rooms below that the
// MPI engine does not register itself (network, collectives). Once, before
// the ranks run.
void register_tool_variables(const HostSettings& settings);
}  // namespace mpc::host
