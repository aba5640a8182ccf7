// Symbols this library takes over from libc, so that ordinary programs become
// rank-hosting node processes without any change to their source:
//   __libc_start_main  to run the program's main once per rank (the library is
//                      a direct dependency of the program, so the program's
//                      call binds here before libc);
//   exit               so that a rank that exits ends only itself (and a child
//                      a rank forked ends at once);
//   on_exit            so that a rank's on_exit handlers run at its end;
//   pthread_create     so that threads created by a rank belong to that rank;
//   pthread_join       so that a rank waiting for its threads does not block
//                      its virtual processor (and the ranks sharing it);
//   __cxa_thread_atexit_impl, __cxa_atexit
//                      so that a rank's C++ thread_local objects, atexit
//                      handlers and static objects are destroyed when the rank
//                      ends (host.hpp says why);
//   write              so that what a rank writes on descriptors 1 and 2 can be
//                      marked with its rank (mpcrun --tag-output; a flag
//                      test otherwise);
//   free, realloc, munmap, mremap, madvise
//                      so that network registrations of memory going away are
//                      invalidated (the registration cache must never hand out
//                      a registration of pages a range no longer has).
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "host.hpp"
#include "ib/network.hpp"
#include "rank_threads.hpp"
#include "openmp.hpp"
#include "runtime/log.hpp"
#include "runtime/sanitizers.hpp"
#include "runtime/topology.hpp"
#include "scheduler/scheduler.hpp"

namespace {

mpc::host::MainFn g_user_main = nullptr;

template <class Fn>
Fn next_symbol(const char* name) {
    void* sym = dlsym(RTLD_NEXT, name);
    if (!sym) {
        // No logging machinery may be usable this early: write and die.
        static const char msg[] = "fibermpi: cannot find a libc symbol to wrap\n";
        ssize_t ignored = write(2, msg, sizeof(msg) - 1);
        (void)ignored;
        _exit(127);
    }
    return reinterpret_cast<Fn>(sym);
}

int hosted_main(int argc, char** argv, char** envp) {
    return mpc::host::run(g_user_main, argc, argv, envp);
}

// Not instrumented by ThreadSanitizer: under it, this runs before the
// sanitizer's own start routine has set up the new thread (its pthread_create
// interceptor calls ours), so instrumented code or an intercepted call (free)
// would crash here. The record outlives this (rank_threads.hpp).
__attribute__((no_sanitize("thread"))) void* thread_trampoline(void* p) {
    auto* t = static_cast<mpc::host::RankThread*>(p);
    void* (*fn)(void*) = t->fn;
    void* arg = t->arg;
    if (t->has_affinity) (void)sched_setaffinity(0, sizeof(cpu_set_t), &t->affinity);
    mpc::sched::set_thread_owner(t->owner);
    mpc::host::rank_thread_started(t);
    return fn(arg);
}

// ThreadSanitizer's pthread_join interceptor calls ours as a blocking call:
// on the caller's context it ignores memory accesses and does not see atomics
// or locks. Ours runs the other tasks of the VP meanwhile, which is fine (each
// is its own TSan fiber), but the progress hook it would run on the caller's
// context delivers and frees other ranks' messages: hidden from TSan, that
// broke its happens-before chains, and it reported races between rank threads
// that never were (two constructions of one recycled message cell). Under
// TSan the joining task leaves the polling to the other tasks and the VP's
// idle loop.
constexpr bool kPollWhileJoining = !mpc::runtime::kUnderTsan;

}  // namespace

extern "C" {

using StartMain = int (*)(int (*)(int, char**, char**), int, char**, void (*)(), void (*)(),
                          void (*)(), void*);

__attribute__((visibility("default"))) int __libc_start_main(
    int (*main)(int, char**, char**), int argc, char** argv, void (*init)(), void (*fini)(),
    void (*rtld_fini)(), void* stack_end) {
    static StartMain real = next_symbol<StartMain>("__libc_start_main");
    g_user_main = main;
    return real(hosted_main, argc, argv, init, fini, rtld_fini, stack_end);
}

__attribute__((visibility("default"), noreturn)) void exit(int status) {
    using ExitFn = void (*)(int);
    static ExitFn real = next_symbol<ExitFn>("exit");
    if (mpc::host::in_forked_child()) {
        // The runtime's threads are not there: its exit handlers would hang.
        fflush(nullptr);
        _exit(status);
    }
    mpc::host::rank_exit(status);  // returns only when the caller is no rank
    real(status);
    __builtin_unreachable();
}

__attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                          const pthread_attr_t* attr,
                                                          void* (*fn)(void*), void* arg) {
    using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static CreateFn real = next_symbol<CreateFn>("pthread_create");
    void* owner = mpc::sched::current_owner();
    if (!owner) return real(thread, attr, fn, arg);
    // The creator runs on a VP bound to one core; the rank's thread gets the
    // node process's cores, as a thread of an MPI process would.
    // (Unless the caller chose the thread's cores itself.)
    const cpu_set_t* affinity = mpc::runtime::Topology::instance().initial_affinity();
    cpu_set_t chosen;
    if (attr && pthread_attr_getaffinity_np(attr, sizeof(chosen), &chosen) == 0 &&
        CPU_COUNT(&chosen) < CPU_SETSIZE)
        affinity = nullptr;
    cpu_set_t rank_cores;  // an OpenMP runtime's thread: its rank's cores
    affinity = mpc::host::openmp_thread_cores(owner, fn, attr, affinity, &rank_cores);
    mpc::host::RankThread* record = mpc::host::rank_thread_prepare(fn, arg, owner, affinity);
    int rc = real(thread, attr, thread_trampoline, record);
    mpc::host::rank_thread_created(record, *thread, rc == 0);
    return rc;
}

// A rank's task that waits for a thread would otherwise block its VP: the
// other ranks of that VP, whose progress the thread may need (a collective
// with them, a context id agreement one of them holds), would never run.
// It parks until the thread's end wakes it (rank_threads.hpp), then joins
// the thread, which is about done. A thread the registry does not know (made
// before the rank ran, say) is polled for instead, with brief naps when no
// other task can run. (libc's tryjoin directly: a sanitizer intercepting
// pthread_join already accounts for this join.)
__attribute__((visibility("default"))) int pthread_join(pthread_t thread, void** retval) {
    using JoinFn = int (*)(pthread_t, void**);
    static JoinFn real = next_symbol<JoinFn>("pthread_join");
    if (!mpc::sched::in_task()) return real(thread, retval);
    if (mpc::host::rank_thread_await(thread)) return real(thread, retval);
    static JoinFn try_join = next_symbol<JoinFn>("pthread_tryjoin_np");
    for (;;) {
        const int rc = try_join(thread, retval);
        if (rc != EBUSY) return rc;
        mpc::sched::yield(kPollWhileJoining);
        if (!mpc::sched::others_runnable()) {
            const timespec nap{0, 50'000};
            nanosleep(&nap, nullptr);
        }
    }
}

__attribute__((visibility("default"))) int on_exit(void (*fn)(int, void*), void* arg) {
    using OnExitFn = int (*)(void (*)(int, void*), void*);
    static OnExitFn real = next_symbol<OnExitFn>("on_exit");
    if (mpc::host::defer_on_exit(fn, arg)) return 0;
    return real(fn, arg);
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void* buf, size_t len) {
    using WriteFn = ssize_t (*)(int, const void*, size_t);
    static WriteFn real = next_symbol<WriteFn>("write");
    if (mpc::host::output_intercept(fd, buf, len)) return static_cast<ssize_t>(len);
    return real(fd, buf, len);
}

// libstdc++ registers the destructor of every thread_local object through
// this glibc function; our definition comes first in the global scope.
__attribute__((visibility("default"))) int __cxa_thread_atexit_impl(void (*dtor)(void*),
                                                                    void* object, void* dso) {
    using AtExitFn = int (*)(void (*)(void*), void*, void*);
    static AtExitFn real = next_symbol<AtExitFn>("__cxa_thread_atexit_impl");
    if (mpc::host::defer_rank_thread_local(dtor, object, dso)) return 0;
    return real(dtor, object, dso);
}

// atexit() and static destructors register here: glibc keeps them, we note
// which object registered (the handlers of a rank's images run at its end).
// Not instrumented, no guarded static: sanitizer runtimes call it (through
// their own interceptor) while they set themselves up; they pass no dso.
__attribute__((visibility("default"), no_sanitize("address"), no_sanitize("thread"))) int
__cxa_atexit(void (*fn)(void*), void* arg, void* dso) {
    using AtExitFn = int (*)(void (*)(void*), void*, void*);
    static AtExitFn real = nullptr;
    if (!real) real = reinterpret_cast<AtExitFn>(dlsym(RTLD_NEXT, "__cxa_atexit"));
    if (!real) _exit(127);  // no libc: nothing sensible is left to do
    if (dso) mpc::host::note_exit_handler(dso);
    return real(fn, arg, dso);
}

}  // extern "C"

// ---- Memory hooks ----------------------------------------------------------------

namespace {

using FreeFn = void (*)(void*);
using ReallocFn = void* (*)(void*, size_t);
FreeFn g_real_free = nullptr;
ReallocFn g_real_realloc = nullptr;

// Resolved before main: dlsym may itself allocate and free, so the wrappers
// must not depend on it once the program runs.
__attribute__((constructor)) void resolve_allocator() {
    g_real_free = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free"));
    g_real_realloc = reinterpret_cast<ReallocFn>(dlsym(RTLD_NEXT, "realloc"));
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void free(void* p) {
    if (!g_real_free) return;  // during dlsym's own start-up: a harmless leak
    if (p) mpc::ib::memory_released(p, malloc_usable_size(p));
    g_real_free(p);
}

__attribute__((visibility("default"))) void* realloc(void* p, size_t size) {
    if (!g_real_realloc) return nullptr;
    // The block may move: its registrations are stale either way.
    if (p) mpc::ib::memory_released(p, malloc_usable_size(p));
    return g_real_realloc(p, size);
}

__attribute__((visibility("default"))) int munmap(void* addr, size_t length) {
    mpc::ib::memory_released(addr, length);
    return static_cast<int>(syscall(SYS_munmap, addr, length));
}

__attribute__((visibility("default"))) void* mremap(void* old, size_t old_size, size_t new_size,
                                                    int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    void* new_address = va_arg(ap, void*);
    va_end(ap);
    mpc::ib::memory_released(old, old_size);
    long r = syscall(SYS_mremap, old, old_size, new_size, flags, new_address);
    return r == -1 ? MAP_FAILED : reinterpret_cast<void*>(r);  // syscall() set errno
}

__attribute__((visibility("default"))) int madvise(void* addr, size_t length, int advice) {
    if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE)
        mpc::ib::memory_released(addr, length);
    return static_cast<int>(syscall(SYS_madvise, addr, length, advice));
}

}  // extern "C"
