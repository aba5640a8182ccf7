// Symbols this library takes over from libc, so that ordinary programs become
// rank-hosting node processes without any change to their source:
//   __libc_start_main  to run the program's main once per rank (the library is
//                      a direct dependency of the program, so the program's
//                      call binds here before libc);
//   exit               so that a rank that exits ends only itself;
//   pthread_create     so that threads created by a rank belong to that rank.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdlib>

#include "host.hpp"
#include "runtime/log.hpp"
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

struct ThreadStart {
    void* (*fn)(void*);
    void* arg;
    void* owner;
};

void* thread_trampoline(void* p) {
    ThreadStart start = *static_cast<ThreadStart*>(p);
    delete static_cast<ThreadStart*>(p);
    mpc::sched::set_thread_owner(start.owner);
    return start.fn(start.arg);
}

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
    auto* start = new ThreadStart{fn, arg, owner};
    int rc = real(thread, attr, thread_trampoline, start);
    if (rc != 0) delete start;
    return rc;
}

}  // extern "C"
