// Per-rank pseudo-random generators (see libc_state.hpp): rand/srand and
// random/srandom/initstate/setstate share one generator per rank, as they
// share glibc's one per process, and the drand48 family another. A rank's
// generators start as a fresh process's do (glibc's default state is the one
// initstate(1, buffer, 128) makes; drand48's starts all zero), so a rank's
// sequence after srand(seed) is what a process of its own would draw. Local
// rank 0 uses libc's own generators.
#include <stdlib.h>

#include <cstdint>
#include <mutex>

#include "libc_state.hpp"

namespace mpc::host {
namespace {

// Under the rank's lock (its threads may draw at once, as a process's may).
random_data& generator(RankLibc& r) {
    if (!r.random_ready) {
        initstate_r(1, reinterpret_cast<char*>(r.random_table), sizeof(r.random_table), &r.random);
        r.random_ready = true;
    }
    return r.random;
}

// What initstate and setstate return: the buffer the state lives in (its
// first word holds the generator's type, the state follows).
char* state_buffer(const random_data& d) {
    return reinterpret_cast<char*>(d.state - 1);
}

long draw(RankLibc& r) {
    std::lock_guard<std::mutex> g(r.random_lock);
    int32_t x = 0;
    random_r(&generator(r), &x);
    return x;
}

void seed(RankLibc& r, unsigned value) {
    std::lock_guard<std::mutex> g(r.random_lock);
    srandom_r(value, &generator(r));
}

}  // namespace
}  // namespace mpc::host

using mpc::host::private_libc;
using mpc::host::RankLibc;

extern "C" {

__attribute__((visibility("default"))) int rand() {
    if (RankLibc* r = private_libc()) return static_cast<int>(mpc::host::draw(*r));
    return MPC_LIBC(rand)();
}

__attribute__((visibility("default"))) void srand(unsigned seed) {
    if (RankLibc* r = private_libc()) return mpc::host::seed(*r, seed);
    MPC_LIBC(srand)(seed);
}

__attribute__((visibility("default"))) long random() {
    if (RankLibc* r = private_libc()) return mpc::host::draw(*r);
    return MPC_LIBC(random)();
}

__attribute__((visibility("default"))) void srandom(unsigned seed) {
    if (RankLibc* r = private_libc()) return mpc::host::seed(*r, seed);
    MPC_LIBC(srandom)(seed);
}

__attribute__((visibility("default"))) char* initstate(unsigned seed, char* state, size_t n) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(initstate)(seed, state, n);
    std::lock_guard<std::mutex> g(r->random_lock);
    char* old = mpc::host::state_buffer(mpc::host::generator(*r));
    return initstate_r(seed, state, n, &r->random) == 0 ? old : nullptr;
}

__attribute__((visibility("default"))) char* setstate(char* state) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(setstate)(state);
    std::lock_guard<std::mutex> g(r->random_lock);
    char* old = mpc::host::state_buffer(mpc::host::generator(*r));
    return setstate_r(state, &r->random) == 0 ? old : nullptr;
}

// ---- drand48 and friends: one 48-bit generator per rank (erand48, nrand48
// and jrand48 take the caller's state but the rank's multiplier, which
// lcong48 may have changed).

__attribute__((visibility("default"))) double drand48() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(drand48)();
    double x = 0;
    drand48_r(&r->drand48, &x);
    return x;
}

__attribute__((visibility("default"))) double erand48(unsigned short xsubi[3]) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(erand48)(xsubi);
    double x = 0;
    erand48_r(xsubi, &r->drand48, &x);
    return x;
}

__attribute__((visibility("default"))) long lrand48() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(lrand48)();
    long x = 0;
    lrand48_r(&r->drand48, &x);
    return x;
}

__attribute__((visibility("default"))) long nrand48(unsigned short xsubi[3]) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(nrand48)(xsubi);
    long x = 0;
    nrand48_r(xsubi, &r->drand48, &x);
    return x;
}

__attribute__((visibility("default"))) long mrand48() {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(mrand48)();
    long x = 0;
    mrand48_r(&r->drand48, &x);
    return x;
}

__attribute__((visibility("default"))) long jrand48(unsigned short xsubi[3]) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(jrand48)(xsubi);
    long x = 0;
    jrand48_r(xsubi, &r->drand48, &x);
    return x;
}

__attribute__((visibility("default"))) void srand48(long seed) {
    if (RankLibc* r = private_libc()) {
        srand48_r(seed, &r->drand48);
        return;
    }
    MPC_LIBC(srand48)(seed);
}

__attribute__((visibility("default"))) unsigned short* seed48(unsigned short seed[3]) {
    RankLibc* r = private_libc();
    if (!r) return MPC_LIBC(seed48)(seed);
    seed48_r(seed, &r->drand48);
    return r->drand48.__old_x;  // the previous state, as glibc returns it
}

__attribute__((visibility("default"))) void lcong48(unsigned short param[7]) {
    if (RankLibc* r = private_libc()) {
        lcong48_r(param, &r->drand48);
        return;
    }
    MPC_LIBC(lcong48)(param);
}

}  // extern "C"
