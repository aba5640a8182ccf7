// Per-rank environment (see libc_state.hpp). Every rank starts with the node
// process's environment as it was when the ranks started; what a rank
// changes (setenv, unsetenv, putenv, clearenv) only it sees, through getenv
// and through its `environ` (the rank image's copy; rank 0's is libc's own).
// A rank that never changes its environment shares the start-up one and
// costs nothing.
//
// Local rank 0's environment is the node process's, changed by libc's own
// functions: what libc reads for itself (TZ, the PATH of execvp, the
// environment of children started by system or popen) is rank 0's. The
// start-up environment the other ranks read is a copy of ours, so that rank
// 0's changes (glibc reallocates its arrays) never reach them.
//
// Arrays and strings a rank drops are never freed (as glibc never frees the
// strings): another thread of the rank may still be reading them.
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include <cerrno>
#include <mutex>
#include <vector>

#include "libc_state.hpp"

extern char** environ;

namespace mpc::host {
namespace {

// One lock for every rank's changes: they are rare.
std::mutex g_change_lock;

// Every array and string made here, under g_change_lock: never freed (a
// thread of the rank may still read one the rank dropped), and reachable, as
// glibc keeps its strings, so that leak checkers do not count them.
void* keep(void* p) {
    static std::vector<void*>* kept = new std::vector<void*>;
    if (p) kept->push_back(p);
    return p;
}

char* find(char** env, const char* name) {
    if (!env || !name[0]) return nullptr;
    const size_t length = strlen(name);
    for (char** e = env; *e; ++e)
        if (strncmp(*e, name, length) == 0 && (*e)[length] == '=') return *e + length + 1;
    return nullptr;
}

bool valid_name(const char* name) {
    if (name && name[0] && !strchr(name, '=')) return true;
    errno = EINVAL;
    return false;
}

// The caller's environment when it is not the process's (ranks > 0).
char** rank_env(RankLibc& r) {
    return r.env_private ? r.env : startup_environment();
}

// The rank's environ variable now says `env` (the program may read it).
// Ranks sharing rank 0's image (--shared-globals) share its environ too.
void publish(RankLibc& r, char** env) {
    auto* variable = rank_variable_as<char**>(r, kEnviron);
    if (r.local > 0 && variable == &environ) return;
    *variable = env;
}

// Room for one more entry; a new array when full (the old one stays valid).
bool reserve_one(RankLibc& r) {
    if (r.env_count + 1 < r.env_capacity) return true;
    const size_t capacity = r.env_capacity ? r.env_capacity * 2 : r.env_count + 16;
    auto* grown = static_cast<char**>(keep(malloc(capacity * sizeof(char*))));
    if (!grown) {
        errno = ENOMEM;
        return false;
    }
    if (r.env_count) memcpy(grown, r.env, r.env_count * sizeof(char*));
    grown[r.env_count] = nullptr;
    r.env = grown;
    r.env_capacity = capacity;
    return true;
}

// The rank's own array, made from the start-up environment on its first change.
bool make_private(RankLibc& r) {
    if (r.env_private) return true;
    char** from = startup_environment();
    size_t n = 0;
    while (from && from[n]) ++n;
    auto* env = static_cast<char**>(keep(malloc((n + 16) * sizeof(char*))));
    if (!env) {
        errno = ENOMEM;
        return false;
    }
    if (n) memcpy(env, from, n * sizeof(char*));
    env[n] = nullptr;
    r.env = env;
    r.env_count = n;
    r.env_capacity = n + 16;
    r.env_private = true;
    return true;
}

size_t index_of(const RankLibc& r, const char* name, size_t length) {
    for (size_t i = 0; i < r.env_count; ++i)
        if (strncmp(r.env[i], name, length) == 0 && r.env[i][length] == '=') return i;
    return r.env_count;
}

// Sets (replaces or adds) the entry of `name` (length bytes) to `entry`.
int put(RankLibc& r, const char* name, size_t length, char* entry) {
    const size_t i = index_of(r, name, length);
    if (i < r.env_count) {
        r.env[i] = entry;
    } else {
        if (!reserve_one(r)) return -1;
        r.env[r.env_count + 1] = nullptr;
        r.env[r.env_count++] = entry;
    }
    publish(r, r.env);
    return 0;
}

int rank_setenv(RankLibc& r, const char* name, const char* value, int overwrite) {
    if (!valid_name(name)) return -1;
    std::lock_guard<std::mutex> g(g_change_lock);
    if (!make_private(r)) return -1;
    const size_t length = strlen(name);
    if (!overwrite && index_of(r, name, length) < r.env_count) return 0;
    const size_t value_length = strlen(value);
    auto* entry = static_cast<char*>(keep(malloc(length + value_length + 2)));
    if (!entry) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(entry, name, length);
    entry[length] = '=';
    memcpy(entry + length + 1, value, value_length + 1);
    return put(r, name, length, entry);
}

int rank_unsetenv(RankLibc& r, const char* name) {
    if (!valid_name(name)) return -1;
    std::lock_guard<std::mutex> g(g_change_lock);
    if (!make_private(r)) return -1;
    const size_t length = strlen(name);
    size_t kept = 0;
    for (size_t i = 0; i < r.env_count; ++i)
        if (!(strncmp(r.env[i], name, length) == 0 && r.env[i][length] == '='))
            r.env[kept++] = r.env[i];
    r.env[kept] = nullptr;
    r.env_count = kept;
    publish(r, r.env);
    return 0;
}

}  // namespace
}  // namespace mpc::host

using mpc::host::private_libc;
using mpc::host::RankLibc;

extern "C" {

// Creates no state: the runtime reads its variables in every rank. Before
// the ranks exist (sanitizer runtimes starting up), a plain scan.
MPC_EARLY __attribute__((visibility("default"))) char* getenv(const char* name) {
    if (!mpc::host::ranks_open()) {
        const size_t length = __builtin_strlen(name);
        for (char** e = environ; e && *e && name[0]; ++e)
            if (__builtin_strncmp(*e, name, length) == 0 && (*e)[length] == '=')
                return *e + length + 1;
        return nullptr;
    }
    const int local = mpc::host::caller_local();
    if (local <= 0) return mpc::host::find(environ, name);
    RankLibc* r = mpc::host::existing_libc(local);
    return mpc::host::find(r ? mpc::host::rank_env(*r) : mpc::host::startup_environment(), name);
}

MPC_EARLY __attribute__((visibility("default"))) char* secure_getenv(const char* name) {
    return getauxval(AT_SECURE) ? nullptr : getenv(name);
}

__attribute__((visibility("default"))) int setenv(const char* name, const char* value,
                                                  int overwrite) {
    if (RankLibc* r = private_libc()) return mpc::host::rank_setenv(*r, name, value, overwrite);
    return MPC_LIBC(setenv)(name, value, overwrite);
}

__attribute__((visibility("default"))) int unsetenv(const char* name) {
    if (RankLibc* r = private_libc()) return mpc::host::rank_unsetenv(*r, name);
    return MPC_LIBC(unsetenv)(name);
}

// glibc's: "NAME=value" puts the caller's string itself; "NAME" removes NAME.
__attribute__((visibility("default"))) int putenv(char* string) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(putenv)(string);
    const char* equals = strchr(string, '=');
    if (!equals) return mpc::host::rank_unsetenv(*r, string);
    std::lock_guard<std::mutex> g(mpc::host::g_change_lock);
    if (!mpc::host::make_private(*r)) return -1;
    return mpc::host::put(*r, string, static_cast<size_t>(equals - string), string);
}

// As glibc's: environ becomes null, the environment empty.
__attribute__((visibility("default"))) int clearenv() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(clearenv)();
    std::lock_guard<std::mutex> g(mpc::host::g_change_lock);
    if (!mpc::host::make_private(*r)) return -1;
    r->env_count = 0;
    r->env[0] = nullptr;
    mpc::host::publish(*r, nullptr);
    return 0;
}

}  // extern "C"
