// Shared parts of the NPB-style kernels (npb_cg, npb_mg, npb_is, npb_ft): the
// command line (problem class), a deterministic random stream in the style of
// NPB's randlc, verification lines and the NPB-style summary. Every kernel is
// self-verifying: rank 0 recomputes the result serially (or, where that is too
// slow, compares with stored values of our own serial run) and the run prints
// VERIFICATION SUCCESSFUL or VERIFICATION FAILED.
// Nothing here is timed: the helpers run before prof_reset() or after
// prof_report().
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

namespace npb {

enum class ProblemClass { S, W, A };

char class_letter(ProblemClass cls);

// What the command line asked for: `prog [S|W|A] [--reference]`. --reference
// forces the serial recomputation even where stored values would be used
// (it is how the stored values were produced).
struct Options {
    ProblemClass cls = ProblemClass::S;
    bool serial_reference = false;
};

// Parses argv; on a bad argument rank 0 prints the usage line and the result
// is false (the caller then finalizes and exits 2).
bool parse_options(int argc, char** argv, const char* prog, Options& out);

// Rank 0 prints "prog: why" on stderr; the caller finalizes and exits 2. Used
// for the rank count checks, which every rank evaluates alike.
void setup_error(const char* prog, const std::string& why);

constexpr bool is_power_of_two(long v) {
    return v > 0 && (v & (v - 1)) == 0;
}
int log2_exact(long v);

// A 46-bit multiplicative congruential generator x <- a x mod 2^46, the
// generator NPB specifies, kept in integers: the low 46 bits of a 64-bit
// product are exact, so no floating point splitting is needed. skip(n) jumps
// ahead in O(log n), which lets each rank draw its own slice of one stream.
class Random46 {
  public:
    static constexpr uint64_t npb_multiplier = 1220703125ull;  // 5^13

    explicit Random46(uint64_t seed, uint64_t multiplier = npb_multiplier)
        : state_(seed & mask), multiplier_(multiplier & mask) {}

    double next() {
        state_ = (state_ * multiplier_) & mask;
        return static_cast<double>(state_) * 0x1p-46;
    }
    void skip(uint64_t draws);

  private:
    static constexpr uint64_t mask = (uint64_t{1} << 46) - 1;
    uint64_t state_;
    uint64_t multiplier_;
};

// Verification checks, called on rank 0: each prints one line and says
// whether it holds.
bool check_relative(const char* what, double got, double want, double rtol = 1e-10);
// For values near round-off (residual norms of converged solves).
bool check_absolute(const char* what, double got, double want, double atol);
bool check_exact(const char* what, long long got, long long want);

// The end of a run. Rank 0 prints the NPB-style summary; every rank learns
// rank 0's verdict and gets the exit status to return from main (0 or 1).
struct Summary {
    const char* kernel;  // "CG"
    ProblemClass cls;
    std::string size;  // "14000 rows, 1.9M nonzeros"
    int iterations;
    double seconds;         // timed region, max over ranks
    double operations;      // counted operations of the timed region
    const char* reference;  // "serial on rank 0" or "stored values"
};
int finish(const Summary& s, bool verified_on_rank0, MPI_Comm comm);

// Max over the communicator of a local time.
double max_over_ranks(double local, MPI_Comm comm);

}  // namespace npb
