// Per-rank parsing state: the getopt family and strtok (see libc_state.hpp).
//
// getopt: glibc's scan state is static and out of reach, so every rank
// (local rank 0 included) runs our parser (getopt_engine.hpp) on its own
// state and its own copies of optind, optarg, opterr and optopt: the rank
// image's, which the program reads (rank 0's are the originals libc also
// uses). With --shared-globals the ranks run one image and so share those
// four variables, as threads would; each keeps its own scan.
#include <getopt.h>
#include <string.h>

#include "libc_state.hpp"

namespace mpc::host {
namespace {

int rank_getopt(RankLibc& r, int argc, char* const* argv, const char* optstring,
                const struct option* longopts, int* longindex, bool long_only, bool posix) {
    int* rank_optind = rank_variable_as<int>(r, kOptind);
    GetoptState& s = r.getopt;
    s.optind = *rank_optind;
    s.opterr = *rank_variable_as<int>(r, kOpterr);
    // As glibc's, the parser permutes argv although the prototype says const.
    const int c = getopt_step(s, argc, const_cast<char**>(argv), optstring, longopts, longindex,
                              long_only, posix);
    *rank_optind = s.optind;
    *rank_variable_as<char*>(r, kOptarg) = s.optarg;
    *rank_variable_as<int>(r, kOptopt) = s.optopt;
    return c;
}

}  // namespace
}  // namespace mpc::host

using mpc::host::RankLibc;

extern "C" {

__attribute__((visibility("default"))) int getopt(int argc, char* const* argv,
                                                  const char* optstring) {
    if (RankLibc* r = mpc::host::rank_libc())
        return mpc::host::rank_getopt(*r, argc, argv, optstring, nullptr, nullptr, false, false);
    return MPC_LIBC(getopt)(argc, argv, optstring);
}

// What getopt is called under strict POSIX compilation (POSIXLY_CORRECT's
// ordering whatever the environment says).
int __posix_getopt(int argc, char* const* argv, const char* optstring);
__attribute__((visibility("default"))) int __posix_getopt(int argc, char* const* argv,
                                                          const char* optstring) {
    if (RankLibc* r = mpc::host::rank_libc())
        return mpc::host::rank_getopt(*r, argc, argv, optstring, nullptr, nullptr, false, true);
    return MPC_LIBC(__posix_getopt)(argc, argv, optstring);
}

__attribute__((visibility("default"))) int getopt_long(int argc, char* const* argv,
                                                       const char* optstring,
                                                       const struct option* longopts,
                                                       int* longindex) {
    if (RankLibc* r = mpc::host::rank_libc())
        return mpc::host::rank_getopt(*r, argc, argv, optstring, longopts, longindex, false, false);
    return MPC_LIBC(getopt_long)(argc, argv, optstring, longopts, longindex);
}

__attribute__((visibility("default"))) int getopt_long_only(int argc, char* const* argv,
                                                            const char* optstring,
                                                            const struct option* longopts,
                                                            int* longindex) {
    if (RankLibc* r = mpc::host::rank_libc())
        return mpc::host::rank_getopt(*r, argc, argv, optstring, longopts, longindex, true, false);
    return MPC_LIBC(getopt_long_only)(argc, argv, optstring, longopts, longindex);
}

// strtok's position: libc's for local rank 0, the rank's own for the others.
__attribute__((visibility("default"))) char* strtok(char* s, const char* delim) {
    if (RankLibc* r = mpc::host::private_libc()) return strtok_r(s, delim, &r->strtok_next);
    return MPC_LIBC(strtok)(s, delim);
}

}  // extern "C"
