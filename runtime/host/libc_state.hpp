// Per-rank C library state: what libc keeps in static variables (getopt's
// scan, strtok's position, the random generators, the static result buffers,
// the environment) kept once per rank instead, so that a program written for
// processes sees its own state in every rank. The libc_*.cpp files take over
// the functions, each family in its file; this one finds the calling rank's
// state and the rank's copies of libc's variables (optind, environ, ...).
//
// Rules every family follows:
//  - Created on the rank's first call (a rank that never calls these pays
//    nothing) and never freed: a thread of the rank may outlive it.
//  - Local rank 0 of a node process keeps the process's own state where
//    glibc's is one per process (rand, strtok, localtime's buffer, ...): it is
//    the state the program's constructors and libc see. Where glibc's state
//    is per thread (strerror's, inet_ntoa's buffers) every rank has its own,
//    since the ranks of a core share its thread; getopt's is out of reach, so
//    every rank runs our parser.
//  - Outside ranks (the runtime's threads, before and after the ranks) every
//    call goes to libc unchanged.
//  - Never switches fibers (a name service lookup may block its core, as any
//    system call does): no other rank of the core runs in the middle of a
//    call, so a rank's state needs a lock only against its own threads.
//  - Wrappers that sanitizer runtimes call while starting are MPC_EARLY.
#pragma once

#include <dlfcn.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "getopt_engine.hpp"

namespace mpc::host {

// libc's variables that a program may read directly, by index: each rank has
// its own of the first six; the time zone's are the process's, which a
// rank's program copy follows (libc_buffers.cpp).
enum LibcVariable : int {
    kOptind,
    kOptarg,
    kOpterr,
    kOptopt,
    kEnviron,
    kGetdateErr,
    kTzname,
    kTimezone,
    kDaylight,
    kLibcVariables
};

struct RankLibc {
    int local = 0;       // index among the ranks of the node process
    int world_rank = 0;  // for messages

    GetoptState getopt;           // libc_parse.cpp
    char* strtok_next = nullptr;  // libc_parse.cpp

    // libc_random.cpp: rand/random's generator (glibc's TYPE_3 by default),
    // drand48's (all zero, as in a fresh process). Locked like glibc's.
    std::mutex random_lock;
    bool random_ready = false;
    random_data random{};
    int32_t random_table[32] = {};  // 128 bytes: glibc's default state size
    drand48_data drand48{};

    // libc_buffers.cpp: static results (tm shared by gmtime, localtime and
    // ctime, as glibc's is).
    struct tm tm {};
    char asctime[64] = {};
    char strerror[256] = {};
    char strsignal[256] = {};
    char inet_ntoa[16] = {};
    struct Larger;  // the big ones, made on first use (larger())
    std::atomic<Larger*> larger{nullptr};

    // libc_multibyte.cpp: the conversion state each function keeps when the
    // caller gives none.
    enum Multibyte : int {
        kMbtowc,
        kWctomb,
        kMbrtowc,
        kMbrlen,
        kWcrtomb,
        kMbsrtowcs,
        kWcsrtombs,
        kMbsnrtowcs,
        kWcsnrtombs,
        kMultibyteStates
    };
    mbstate_t multibyte[kMultibyteStates] = {};

    // libc_env.cpp: this rank's environment once it changed it (before: the
    // node process's at start-up).
    bool env_private = false;
    char** env = nullptr;
    size_t env_count = 0, env_capacity = 0;

    // Where a variable lives when no image of the rank has a copy of it.
    int optind_cell = 1, opterr_cell = 1, optopt_cell = '?';
    char* optarg_cell = nullptr;
    char** environ_cell = nullptr;
    int getdate_err_cell = 0;
};

// A buffer that grows, for the name service's results (malloc'd: no
// exception may leave a C function).
struct GrowBuffer {
    char* data = nullptr;
    size_t size = 0;
    bool grow() {  // to 1 KiB, then twice as large; false when out of memory
        const size_t want = size ? size * 2 : 1024;
        char* p = want > (size_t{1} << 30) ? nullptr : static_cast<char*>(realloc(data, want));
        if (!p) return false;
        data = p;
        size = want;
        return true;
    }
};

struct RankLibc::Larger {
    // libc_buffers.cpp
    char ttyname[4096] = {};
    char tmpnam[L_tmpnam] = {};
    char ctermid[L_ctermid] = {};
    char cuserid[L_cuserid] = {};
    char ptsname[128] = {};
    char l64a[8] = {};
    char ecvt[20] = {};   // glibc's sizes (17 digits and 3)
    char fcvt[328] = {};  // and DBL_MAX_10_EXP more
    char getlogin[257] = {};
    // libc_lookup.cpp
    GrowBuffer passwd_buffer, group_buffer, host_buffer, service_buffer, protocol_buffer,
        network_buffer;
    struct passwd passwd {};
    struct group group {};
    struct hostent host {};
    struct servent service {};
    struct protoent protocol {};
    struct netent network {};
    struct tm getdate {};  // libc_buffers.cpp
    hsearch_data table{};  // hcreate/hsearch/hdestroy
};
RankLibc::Larger& larger(RankLibc& rank);

namespace elf {
struct LoadedObject;
}
// Set up by the host before the ranks' images load.
void libc_ranks_open(int nlocal);
// Called by images.cpp for each rank with copies of its own (owner: its
// RankState), once they are loaded and before their constructors run
// (program first, then the user's libraries): references to libc's
// variables the loader bound to rank 0's now reach the rank's.
void bind_rank_variables(void* owner, const std::vector<const elf::LoadedObject*>& copies);

// The calling rank's state, created on first use; nullptr outside ranks.
RankLibc* rank_libc();
// The same for a rank whose state is not the process's: nullptr for local
// rank 0 and outside ranks (the caller then uses libc's own functions).
RankLibc* private_libc();
// The caller's index among the ranks of the node process, or -1 outside
// ranks; and a rank's state if it has one already (never creates it: for
// calls the runtime itself makes in every rank, such as getenv).
int caller_local();
RankLibc* existing_libc(int local);
// World rank of the caller, or -1 (for warnings without a state).
int calling_world_rank();
// Ranks in this node process (0 before the host set them up).
int local_rank_count();

// The rank's copy of a libc variable: the one the rank's program image reads
// (rank 0 and shared images: the process's); for the time zone's, the
// process's.
void* rank_variable(RankLibc& rank, LibcVariable which);
// The rank's program copy's own copy of a variable (relocation COPY: the
// program reads it directly), or nullptr (none, or no copy of its own).
void* program_copy(RankLibc& rank, LibcVariable which);
// Whether the rank runs images of its own (not rank 0's, not shared ones).
bool rank_has_own_images(const RankLibc& rank);
template <class T>
T* rank_variable_as(RankLibc& rank, LibcVariable which) {
    return static_cast<T*>(rank_variable(rank, which));
}

// The environment a rank starts with (the node process's at start-up).
char** startup_environment();

// libc's own definition of a function this library takes over.
template <class Fn>
Fn next_libc(const char* name) {
    void* sym = dlsym(RTLD_NEXT, name);
    if (!sym) {
        static const char msg[] = "fibermpi: cannot find a libc function to wrap\n";
        ssize_t ignored = write(2, msg, sizeof(msg) - 1);
        (void)ignored;
        _exit(127);
    }
    return reinterpret_cast<Fn>(sym);
}
// Wrappers that sanitizer runtimes call while they start up (setrlimit,
// sigaction, getenv, ...) run before any instrumented code may: they are not
// instrumented, and until the host opens the ranks they only call libc
// (early_libc, no guarded static).
#define MPC_EARLY __attribute__((no_sanitize("address", "thread", "undefined")))
extern bool g_ranks_open;
MPC_EARLY inline bool ranks_open() {
    return __atomic_load_n(&g_ranks_open, __ATOMIC_ACQUIRE);
}
template <class Fn>
MPC_EARLY inline Fn early_libc(Fn* cache, const char* name) {
    Fn fn = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (!fn) {
        fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
        if (!fn) _exit(127);  // no libc: nothing sensible is left to do
        __atomic_store_n(cache, fn, __ATOMIC_RELAXED);
    }
    return fn;
}

// libc's definition of the function `name`, looked up once per call site.
#define MPC_LIBC(name)                                                           \
    ([] {                                                                        \
        static const auto fn = ::mpc::host::next_libc<decltype(&::name)>(#name); \
        return fn;                                                               \
    }())

}  // namespace mpc::host
