// runtime/log: messages to the user and fatal errors.
//
// Every message names where it comes from ("mpcx: node 1 rank 5: ...") so that a
// user reading the output of a many-rank job knows which rank spoke. The upper
// layers tell this room who is running through set_identity_provider(); the
// runtime itself never learns what a rank or communicator is.
#pragma once

#include <cstdarg>

namespace mpc::runtime {

// Returns the calling context's world rank, or -1 when not inside a rank.
using IdentityProvider = int (*)();
void set_identity_provider(IdentityProvider provider);
void set_node_id(int node);

// printf-style; a newline is added. Safe to call from any thread.
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Debug output only when MPC_DEBUG=1 (checked once).
void debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
bool debug_enabled();
// Turns debug messages on or off from now on (MPC_DEBUG is read once, first).
void set_debug_enabled(bool on);

// Prints the message and ends the whole job (exit status 1). Never returns.
[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Like fatal but with a chosen status, used by MPI_Abort and error handlers.
[[noreturn]] void fatal_status(int status, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Installed by the launch glue: how to end the whole job (for example telling the
// PMI server to abort so that other node processes end too). Default: _exit.
using JobKiller = void (*)(int status, const char* message);
void set_job_killer(JobKiller killer);

}  // namespace mpc::runtime

// Invariant checks that stay on in release builds: a broken invariant in a
// runtime must stop the job with a message, not corrupt data silently.
#define MPC_CHECK(cond)                                                                    \
    do {                                                                                   \
        if (__builtin_expect(!(cond), 0))                                                  \
            ::mpc::runtime::fatal("internal error: %s failed at %s:%d", #cond, __FILE__, \
                                  __LINE__);                                               \
    } while (0)
