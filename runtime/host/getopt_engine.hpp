// The getopt family's parser, with its state in an object instead of libc's
// static data, so that every rank scans its own command line (libc_parse.cpp
// keeps one per rank). It behaves as glibc's getopt, __posix_getopt,
// getopt_long and getopt_long_only do, error messages included (the unit test
// runs both side by side): argv permuted unless POSIXLY_CORRECT is set or the
// option string starts with '+', non-options returned as option 1 after a
// leading '-', a leading ':' silences errors and reports a missing argument
// as ':', "x::" takes an optional argument, "W;" makes "-W foo" mean
// "--foo", long options may be abbreviated while unambiguous, and "--" ends
// the options.
//
// Pure: no rank, no global variable; the caller copies optind and opterr in
// before a step and optind, optarg and optopt out after it (as glibc's
// getopt does with its global variables). Must never read or write libc's
// own getopt state.
#pragma once

#include <getopt.h>

namespace mpc::host {

struct GetoptState {
    // Exchanged with the caller's variables around every step.
    int optind = 1;
    int opterr = 1;
    int optopt = 0;  // glibc's static data starts at 0, copied out on every call
    char* optarg = nullptr;
    // The scan itself.
    enum class Order : unsigned char { Permute, RequireOrder, ReturnInOrder };
    bool initialized = false;
    char* nextchar = nullptr;  // the rest of a cluster of short options ("-abc")
    Order order = Order::Permute;
    int first_nonopt = 0;  // the non-options skipped so far: argv[first_nonopt, last_nonopt)
    int last_nonopt = 0;
};

// One call of the family: getopt (longopts null), getopt_long, getopt_long_only
// (long_only), __posix_getopt (posixly_correct).
int getopt_step(GetoptState& s, int argc, char** argv, const char* optstring,
                const struct option* longopts, int* longindex, bool long_only,
                bool posixly_correct);

}  // namespace mpc::host
