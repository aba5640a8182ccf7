// What cannot be per rank in one process, reported when a rank changes it:
// the working directory (chdir, fchdir), the file creation mask (umask),
// resource limits (setrlimit, prlimit), signal dispositions (signal,
// sigaction and their variants: a handler of the runtime replaced, or
// another rank's), and fork (the child copies the whole node process).
//
// A rank gets one warning line per kind (per signal for dispositions), with
// its rank number (runtime::warn adds it) and the consequence; only changes
// that affect other ranks are reported (one rank alone in its node process
// may chdir freely). The calls themselves behave as libc's; the checks cost
// nothing outside these calls. Never called on a fast path, but may be
// called from signal handlers: the runtime's own handlers use
// libc_sigaction() (no lock, no check).
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <mutex>
#include <string>

#include "host.hpp"
#include "libc_state.hpp"
#include "runtime/log.hpp"

namespace mpc::host {
namespace {

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

enum Warned : uint32_t { kChdir = 1, kUmask = 2, kRlimit = 4, kFork = 8 };
// Kinds (and signals) each local rank was warned about already.
std::mutex g_lock;
struct RankWarnings {
    uint32_t kinds = 0;
    uint64_t signals[2] = {};
};
RankWarnings* g_warned = nullptr;  // per local rank, never freed
int g_warned_count = 0;
// Who installed each signal's disposition last (a local rank, or -1).
struct Installed {
    int local = -1;
    void* handler = nullptr;
};
Installed g_installed[NSIG];
std::atomic<bool> g_forked_child{false};

// Under g_lock: this local rank's record (null when out of range).
RankWarnings* warnings_of(int local) {
    if (!g_warned) {
        g_warned_count = local_rank_count();
        g_warned = new RankWarnings[static_cast<size_t>(g_warned_count)];
    }
    return local >= 0 && local < g_warned_count ? &g_warned[local] : nullptr;
}

// Under g_lock: true the first time for this rank and kind.
bool first_time(int local, uint32_t kind) {
    RankWarnings* w = warnings_of(local);
    if (!w || (w->kinds & kind)) return false;
    w->kinds |= kind;
    return true;
}

bool first_time_signal(int local, int sig) {
    RankWarnings* w = warnings_of(local);
    if (!w || sig <= 0 || sig >= 128) return false;
    uint64_t& bits = w->signals[sig / 64];
    const uint64_t bit = uint64_t{1} << (sig % 64);
    if (bits & bit) return false;
    bits |= bit;
    return true;
}

std::string current_directory() {
    char buf[PATH_MAX];
    return getcwd(buf, sizeof(buf)) ? std::string(buf) : std::string("?");
}

// The rank's call changed the working directory of every rank of the process.
template <class Change>
int change_directory(Change change) {
    const int local = caller_local();
    if (local < 0 || local_rank_count() < 2) return change();
    const std::string before = current_directory();
    const int rc = change();
    const int saved = errno;
    if (rc == 0) {
        const std::string after = current_directory();
        std::lock_guard<std::mutex> g(g_lock);
        if (after != before && first_time(local, kChdir))
            runtime::warn(
                "changed the working directory to %s: it is one per node process, so the %d "
                "ranks of this node process now resolve relative paths from there (use absolute "
                "paths, or have every rank change to the same directory before using one)",
                after.c_str(), local_rank_count());
    }
    errno = saved;
    return rc;
}

const char* limit_name(int resource) {
    switch (resource) {
        case RLIMIT_STACK:
            return "RLIMIT_STACK";
        case RLIMIT_NOFILE:
            return "RLIMIT_NOFILE";
        case RLIMIT_AS:
            return "RLIMIT_AS";
        case RLIMIT_CORE:
            return "RLIMIT_CORE";
        case RLIMIT_CPU:
            return "RLIMIT_CPU";
        case RLIMIT_DATA:
            return "RLIMIT_DATA";
        case RLIMIT_FSIZE:
            return "RLIMIT_FSIZE";
        case RLIMIT_MEMLOCK:
            return "RLIMIT_MEMLOCK";
        case RLIMIT_NPROC:
            return "RLIMIT_NPROC";
        default:
            return "a resource limit";
    }
}

// A new limit of the whole node process, set by a rank.
void check_limit(int resource, const struct rlimit* now) {
    const int local = caller_local();
    if (local < 0 || !now || local_rank_count() < 2) return;
    struct rlimit old {};
    if (getrlimit(static_cast<__rlimit_resource>(resource), &old) != 0) return;
    if (old.rlim_cur == now->rlim_cur && old.rlim_max == now->rlim_max) return;
    std::lock_guard<std::mutex> g(g_lock);
    if (first_time(local, kRlimit))
        runtime::warn(
            "set %s: resource limits are one per node process, so the new limit applies to the "
            "%d ranks of this node process together%s",
            limit_name(resource), local_rank_count(),
            resource == RLIMIT_STACK ? " (a rank's stack is MPC_STACK_SIZE, set at start-up)" : "");
}

SigactionFn g_real_sigaction = nullptr;  // early_libc's cache

SigactionFn real_sigaction() {
    return early_libc(&g_real_sigaction, "sigaction");
}

bool is_runtime_handler(void* handler) {
    if (handler == reinterpret_cast<void*>(SIG_DFL) || handler == reinterpret_cast<void*>(SIG_IGN))
        return false;
    Dl_info ours{}, theirs{};
    return dladdr(reinterpret_cast<void*>(&is_runtime_handler), &ours) &&
           dladdr(handler, &theirs) && ours.dli_fbase == theirs.dli_fbase;
}

const char* runtime_consequence(int sig) {
    return sig == SIGTERM ? "--timeout can no longer report what each rank was doing"
                          : "a crash is no longer reported with the rank that crashed";
}

// A language runtime's own handlers (gfortran's backtrace on SIGSEGV, say,
// which every Fortran main installs) are not the program's doing: no
// warning. Sanitizer runtimes pass the program's calls on: those are.
bool from_system_library(const void* caller) {
    Dl_info info{};
    if (!caller || !dladdr(caller, &info) || !info.dli_fname) return false;
    const char* path = info.dli_fname;
    if (strncmp(path, "/usr/", 5) != 0 && strncmp(path, "/lib", 4) != 0) return false;
    const char* slash = strrchr(path, '/');
    return !strstr(slash ? slash + 1 : path, "san");
}

// Set while this thread checks and changes a disposition: a signal handler
// that re-installs itself (signal(sig, handler), SysV style) while the
// thread was in here skips the check instead of waiting for its own lock.
thread_local bool tl_changing_signal = false;

// A rank makes `handler` the disposition of sig through install(): checked
// and installed under one lock, so that the record of who installed what
// follows the order the kernel saw.
template <class Install>
auto change_signal(int sig, void* handler, const void* caller, Install install) {
    const int local = caller_local();
    if (local < 0 || sig <= 0 || sig >= NSIG || tl_changing_signal || from_system_library(caller))
        return install();
    std::lock_guard<std::mutex> g(g_lock);
    tl_changing_signal = true;
    struct sigaction now {};
    void* current = real_sigaction()(sig, nullptr, &now) == 0
                        ? reinterpret_cast<void*>(now.sa_handler)  // sa_sigaction shares it
                        : handler;
    Installed& last = g_installed[sig];
    if (handler != current && is_runtime_handler(current)) {
        if (first_time_signal(local, sig))
            runtime::warn("replaced the runtime's handler of SIG%s: %s", sigabbrev_np(sig),
                          runtime_consequence(sig));
    } else if (handler != current && last.local >= 0 && last.local != local &&
               last.handler == current && local_rank_count() > 1) {
        if (first_time_signal(local, sig))
            runtime::warn(
                "replaced the handler of SIG%s that another rank of this node process installed: "
                "a disposition is one per node process, so SIG%s now runs this rank's handler "
                "whichever rank it interrupts",
                sigabbrev_np(sig), sigabbrev_np(sig));
    }
    const auto result = install();
    last.local = local;
    last.handler = handler;
    tl_changing_signal = false;
    return result;
}

void check_umask(mode_t old, mode_t mask) {
    const int local = caller_local();
    if (local < 0 || old == (mask & 0777) || local_rank_count() < 2) return;
    std::lock_guard<std::mutex> g(g_lock);
    if (first_time(local, kUmask))
        runtime::warn(
            "set the file creation mask to %03o: it is one per node process, so it applies to "
            "the files of the %d ranks of this node process",
            static_cast<unsigned>(mask & 0777), local_rank_count());
}

void check_fork() {
    const int local = caller_local();
    if (local < 0) return;
    std::lock_guard<std::mutex> g(g_lock);
    if (first_time(local, kFork))
        runtime::warn(
            "called fork: the child is a copy of the whole node process (its %d ranks, the "
            "runtime's threads and connections) in which only the calling thread runs; it may "
            "only exec or _exit (exit there ends it at once, without exit handlers)",
            local_rank_count());
}

void on_fork_child() {
    g_forked_child.store(true, std::memory_order_relaxed);
}

}  // namespace

int libc_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    return real_sigaction()(sig, act, old);
}

bool in_forked_child() {
    return g_forked_child.load(std::memory_order_relaxed);
}

void watch_forks() {
    pthread_atfork(nullptr, nullptr, on_fork_child);
}

}  // namespace mpc::host

namespace mpc::host {
namespace {

using SignalFn = sighandler_t (*)(int, sighandler_t);

// signal() and its other names: __sysv_signal is signal() under strict ISO C
// compilation.
MPC_EARLY sighandler_t set_handler(SignalFn* cache, const char* name, int sig, sighandler_t handler,
                                   const void* caller) {
    auto fn = early_libc(cache, name);
    if (!ranks_open()) return fn(sig, handler);
    return change_signal(sig, reinterpret_cast<void*>(handler), caller,
                         [&] { return fn(sig, handler); });
}

}  // namespace
}  // namespace mpc::host

using mpc::host::change_signal;
using mpc::host::set_handler;
using mpc::host::SignalFn;

extern "C" {

// Each wrapper: libc's function alone until the ranks exist (sanitizer
// runtimes call some of these before they can run instrumented code).

MPC_EARLY __attribute__((visibility("default"))) int chdir(const char* path) {
    static decltype(&::chdir) real;
    auto fn = mpc::host::early_libc(&real, "chdir");
    if (!mpc::host::ranks_open()) return fn(path);
    return mpc::host::change_directory([&] { return fn(path); });
}

MPC_EARLY __attribute__((visibility("default"))) int fchdir(int fd) {
    static decltype(&::fchdir) real;
    auto fn = mpc::host::early_libc(&real, "fchdir");
    if (!mpc::host::ranks_open()) return fn(fd);
    return mpc::host::change_directory([&] { return fn(fd); });
}

MPC_EARLY __attribute__((visibility("default"))) mode_t umask(mode_t mask) {
    static decltype(&::umask) real;
    const mode_t old = mpc::host::early_libc(&real, "umask")(mask);
    if (mpc::host::ranks_open()) mpc::host::check_umask(old, mask);
    return old;
}

// The build's 64-bit file offsets make the headers name setrlimit and prlimit
// setrlimit64 and prlimit64 (one function each in glibc on x86-64): both
// names are defined here by assembler name.
using RlimitFn = int (*)(int, const struct rlimit*);
using PrlimitFn = int (*)(pid_t, int, const struct rlimit*, struct rlimit*);
int mpc_setrlimit(int resource, const struct rlimit* limit) __asm__("setrlimit");
int mpc_setrlimit64(int resource, const struct rlimit* limit) __asm__("setrlimit64");
int mpc_prlimit(pid_t pid, int resource, const struct rlimit* limit,
                struct rlimit* old) __asm__("prlimit");
int mpc_prlimit64(pid_t pid, int resource, const struct rlimit* limit,
                  struct rlimit* old) __asm__("prlimit64");

MPC_EARLY __attribute__((visibility("default"))) int mpc_setrlimit(int resource,
                                                                   const struct rlimit* limit) {
    static RlimitFn real;
    auto fn = mpc::host::early_libc(&real, "setrlimit");
    if (mpc::host::ranks_open()) mpc::host::check_limit(resource, limit);
    return fn(resource, limit);
}

MPC_EARLY __attribute__((visibility("default"))) int mpc_setrlimit64(int resource,
                                                                     const struct rlimit* limit) {
    static RlimitFn real;
    auto fn = mpc::host::early_libc(&real, "setrlimit64");
    if (mpc::host::ranks_open()) mpc::host::check_limit(resource, limit);
    return fn(resource, limit);
}

MPC_EARLY __attribute__((visibility("default"))) int mpc_prlimit(pid_t pid, int resource,
                                                                 const struct rlimit* limit,
                                                                 struct rlimit* old) {
    static PrlimitFn real;
    auto fn = mpc::host::early_libc(&real, "prlimit");
    if (mpc::host::ranks_open() && (pid == 0 || pid == getpid()))
        mpc::host::check_limit(resource, limit);
    return fn(pid, resource, limit, old);
}

MPC_EARLY __attribute__((visibility("default"))) int mpc_prlimit64(pid_t pid, int resource,
                                                                   const struct rlimit* limit,
                                                                   struct rlimit* old) {
    static PrlimitFn real;
    auto fn = mpc::host::early_libc(&real, "prlimit64");
    if (mpc::host::ranks_open() && (pid == 0 || pid == getpid()))
        mpc::host::check_limit(resource, limit);
    return fn(pid, resource, limit, old);
}

MPC_EARLY __attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act,
                                                               struct sigaction* old) {
    auto fn = mpc::host::early_libc(&mpc::host::g_real_sigaction, "sigaction");
    if (!act || !mpc::host::ranks_open()) return fn(sig, act, old);
    return change_signal(sig, reinterpret_cast<void*>(act->sa_handler), __builtin_return_address(0),
                         [&] { return fn(sig, act, old); });
}

MPC_EARLY __attribute__((visibility("default"))) sighandler_t signal(int sig,
                                                                     sighandler_t handler) {
    static SignalFn real;
    return set_handler(&real, "signal", sig, handler, __builtin_return_address(0));
}

MPC_EARLY __attribute__((visibility("default"))) sighandler_t __sysv_signal(int sig,
                                                                            sighandler_t handler) {
    static SignalFn real;
    return set_handler(&real, "__sysv_signal", sig, handler, __builtin_return_address(0));
}

MPC_EARLY __attribute__((visibility("default"))) sighandler_t sysv_signal(int sig,
                                                                          sighandler_t handler) {
    static SignalFn real;
    return set_handler(&real, "sysv_signal", sig, handler, __builtin_return_address(0));
}

MPC_EARLY __attribute__((visibility("default"))) sighandler_t bsd_signal(int sig,
                                                                         sighandler_t handler) {
    static SignalFn real;
    return set_handler(&real, "bsd_signal", sig, handler, __builtin_return_address(0));
}

// SIG_HOLD blocks the signal: no disposition changes.
MPC_EARLY __attribute__((visibility("default"))) sighandler_t sigset(int sig,
                                                                     sighandler_t handler) {
    static SignalFn real;
    if (handler == SIG_HOLD) return mpc::host::early_libc(&real, "sigset")(sig, handler);
    return set_handler(&real, "sigset", sig, handler, __builtin_return_address(0));
}

MPC_EARLY __attribute__((visibility("default"))) pid_t fork() {
    static decltype(&::fork) real;
    auto fn = mpc::host::early_libc(&real, "fork");
    if (mpc::host::ranks_open()) mpc::host::check_fork();
    return fn();
}

}  // extern "C"
