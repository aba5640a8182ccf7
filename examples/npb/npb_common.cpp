// Shared parts of the NPB-style kernels: see npb_common.hpp.
#include "npb_common.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace npb {

namespace {

int world_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

}  // namespace

char class_letter(ProblemClass cls) {
    switch (cls) {
        case ProblemClass::S:
            return 'S';
        case ProblemClass::W:
            return 'W';
        case ProblemClass::A:
            return 'A';
    }
    return '?';
}

bool parse_options(int argc, char** argv, const char* prog, Options& out) {
    bool ok = argc <= 3;
    for (int i = 1; ok && i < argc; ++i) {
        const char* arg = argv[i];
        if (std::strcmp(arg, "--reference") == 0) {
            out.serial_reference = true;
        } else if (i == 1 && std::strlen(arg) == 1 && std::strchr("SWA", arg[0]) != nullptr) {
            out.cls = arg[0] == 'S'   ? ProblemClass::S
                      : arg[0] == 'W' ? ProblemClass::W
                                      : ProblemClass::A;
        } else {
            ok = false;
        }
    }
    if (!ok && world_rank() == 0) {
        std::fprintf(stderr, "usage: %s [S|W|A] [--reference]\n", prog);
    }
    return ok;
}

void setup_error(const char* prog, const std::string& why) {
    if (world_rank() == 0) std::fprintf(stderr, "%s: %s\n", prog, why.c_str());
}

int log2_exact(long v) {
    int k = 0;
    while ((1L << k) < v) ++k;
    return k;
}

void Random46::skip(uint64_t draws) {
    // state * a^draws: square-and-multiply on the multiplier, all mod 2^46.
    uint64_t power = multiplier_;
    while (draws != 0) {
        if (draws & 1) state_ = (state_ * power) & mask;
        power = (power * power) & mask;
        draws >>= 1;
    }
}

bool check_relative(const char* what, double got, double want, double rtol) {
    const double err = want != 0 ? std::fabs((got - want) / want) : std::fabs(got);
    const bool ok = err <= rtol;  // false for NaN too
    std::printf(" %-28s %s: %.15e  reference %.15e  rel.err %.2e\n", what, ok ? "ok  " : "FAIL",
                got, want, err);
    return ok;
}

bool check_absolute(const char* what, double got, double want, double atol) {
    const double err = std::fabs(got - want);
    const bool ok = err <= atol;
    std::printf(" %-28s %s: %.15e  reference %.15e  abs.err %.2e\n", what, ok ? "ok  " : "FAIL",
                got, want, err);
    return ok;
}

bool check_exact(const char* what, long long got, long long want) {
    const bool ok = got == want;
    std::printf(" %-28s %s: %lld  reference %lld\n", what, ok ? "ok  " : "FAIL", got, want);
    return ok;
}

double max_over_ranks(double local, MPI_Comm comm) {
    double max = 0;
    MPI_Allreduce(&local, &max, 1, MPI_DOUBLE, MPI_MAX, comm);
    return max;
}

int finish(const Summary& s, bool verified_on_rank0, MPI_Comm comm) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int verified = verified_on_rank0 ? 1 : 0;
    MPI_Bcast(&verified, 1, MPI_INT, 0, comm);
    if (rank == 0) {
        const double mops = s.seconds > 0 ? s.operations / s.seconds * 1e-6 : 0;
        std::printf("\n %s Benchmark Completed (NPB style, C++)\n", s.kernel);
        std::printf(" Class           =  %c\n", class_letter(s.cls));
        std::printf(" Size            =  %s\n", s.size.c_str());
        std::printf(" Iterations      =  %d\n", s.iterations);
        std::printf(" Time in seconds =  %.3f\n", s.seconds);
        std::printf(" Total ranks     =  %d\n", size);
        std::printf(" Mop/s total     =  %.2f\n", mops);
        std::printf(" Mop/s/rank      =  %.2f\n", mops / size);
        std::printf(" Reference       =  %s\n", s.reference);
        std::printf(" Verification    =  %s\n", verified ? "SUCCESSFUL" : "FAILED");
        std::printf("%s\n", verified ? "VERIFICATION SUCCESSFUL" : "VERIFICATION FAILED");
        std::fflush(stdout);
    }
    return verified ? 0 : 1;
}

}  // namespace npb
