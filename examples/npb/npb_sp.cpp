// NPB-style SP/BT-like kernel: a pipelined line solver. The 3-D heat equation
// u_t = nu lap(u) + f (zero Dirichlet boundaries, random initial data) is
// stepped with the approximate factorization NPB SP and BT use,
//   (I - s Dxx)(I - s Dyy)(I - s Dzz) du = s lap_h(u) + dt f,   u += du,
// (s = nu dt / h^2): an explicit right-hand side, then one tridiagonal solve
// along every x line, every y line and every z line (scalar tridiagonal here,
// where SP has 5x5 pentadiagonal and BT block systems).
//
// Distribution: slabs of z planes (any number of ranks up to n; uneven slabs
// are fine). The right-hand side needs one ghost plane from each neighbour
// (Isend/Irecv); the x and y solves are local; the z lines cross every rank,
// so their Thomas sweeps are pipelined: the lines are cut into blocks of
// rows, a rank eliminates a block as soon as the rank below sent that block's
// last plane (MPI_Recv / MPI_Isend), and back-substitution runs the same
// pipeline downwards. The pipeline fills and drains once per sweep.
//
// Verification: rank 0 repeats the run on the whole grid without MPI (every
// class: it costs about what one rank's share of the parallel run does on two
// cores); each line is solved in the same order, so the final RMS norms of u
// and of the last update agree to 1e-10 relative.
//
//   mpcrun -n 4 npb_sp [S|W|A]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <vector>

#include "mpi_profile.h"
#include "npb_common.hpp"

namespace {

constexpr double sigma = 0.5;     // nu dt / h^2: beyond explicit stability
constexpr double forcing = 1e-3;  // dt f, uniform
constexpr int pipeline_blocks = 8;
constexpr uint64_t data_seed = 271828183;
constexpr int tag_forward = 41, tag_backward = 42, tag_up = 43, tag_down = 44;

struct Params {
    int n, steps;
};

Params params_for(npb::ProblemClass cls) {
    switch (cls) {
        case npb::ProblemClass::S:
            return {32, 20};
        case npb::ProblemClass::W:
            return {64, 60};
        case npb::ProblemClass::A:
            return {128, 60};
    }
    return {};
}

struct Norms {
    double u = 0, du = 0;
};

// Thomas coefficients of tridiag(-s, 1 + 2s, -s) of size n, shared by every
// line: the forward sweep is d'_k = (d_k + s d'_{k-1}) m_k, the backward one
// x_k = d'_k - c'_k x_{k+1}.
struct Thomas {
    std::vector<double> m, c;
    explicit Thomas(int n) : m(n), c(n) {
        double c_prev = 0;
        for (int k = 0; k < n; ++k) {
            m[k] = 1.0 / (1 + 2 * sigma + sigma * c_prev);
            c[k] = -sigma * m[k];
            c_prev = c[k];
        }
    }
};

// One rank's slab (or, with comm == MPI_COMM_NULL, the whole grid): planes
// [first_, first_ + nz_) with a zero ghost layer all round; ghost planes hold
// the neighbours' planes when there are neighbours.
class LineSolver {
  public:
    LineSolver(const Params& p, MPI_Comm comm) : p_(p), comm_(comm), thomas_(p.n) {
        int size = 1;
        if (comm != MPI_COMM_NULL) {
            MPI_Comm_rank(comm, &rank_);
            MPI_Comm_size(comm, &size);
        }
        const int base = p.n / size, extra = p.n % size;
        nz_ = base + (rank_ < extra ? 1 : 0);
        first_ = rank_ * base + std::min(rank_, extra);
        below_ = comm != MPI_COMM_NULL && rank_ > 0 ? rank_ - 1 : MPI_PROC_NULL;
        above_ = comm != MPI_COMM_NULL && rank_ + 1 < size ? rank_ + 1 : MPI_PROC_NULL;
        line_ = p.n + 2;
        plane_ = line_ * line_;
        u_.assign(static_cast<size_t>(plane_) * (nz_ + 2), 0.0);
        du_ = u_;
        npb::Random46 rng(data_seed);
        rng.skip(static_cast<uint64_t>(first_) * p.n * p.n);
        for (int k = 0; k < nz_; ++k)
            for (int j = 0; j < p.n; ++j)
                for (int i = 0; i < p.n; ++i) u_[at(i, j, k)] = rng.next();
    }

    Norms run() {
        for (int step = 0; step < p_.steps; ++step) {
            exchange_ghost_planes();
            right_hand_side();
            solve_x();
            solve_y();
            solve_z_pipelined();
            for (int k = 0; k < nz_; ++k)
                for (int j = 0; j < p_.n; ++j)
                    for (int i = 0; i < p_.n; ++i) u_[at(i, j, k)] += du_[at(i, j, k)];
        }
        return norms();
    }

  private:
    size_t at(int i, int j, int k) const {
        return static_cast<size_t>(i + 1) + static_cast<size_t>(line_) * (j + 1) +
               static_cast<size_t>(plane_) * (k + 1);
    }
    double* plane(std::vector<double>& g, int k) {
        return &g[static_cast<size_t>(plane_) * (k + 1)];
    }

    void exchange_ghost_planes() {
        if (comm_ == MPI_COMM_NULL) return;
        MPI_Request req[4];
        MPI_Irecv(plane(u_, -1), plane_, MPI_DOUBLE, below_, tag_up, comm_, &req[0]);
        MPI_Irecv(plane(u_, nz_), plane_, MPI_DOUBLE, above_, tag_down, comm_, &req[1]);
        MPI_Isend(plane(u_, nz_ - 1), plane_, MPI_DOUBLE, above_, tag_up, comm_, &req[2]);
        MPI_Isend(plane(u_, 0), plane_, MPI_DOUBLE, below_, tag_down, comm_, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    }

    // du = s (7-point Laplacian of u) + dt f.
    void right_hand_side() {
        const std::ptrdiff_t dy = line_, dz = plane_;
        for (int k = 0; k < nz_; ++k)
            for (int j = 0; j < p_.n; ++j) {
                const size_t row = at(0, j, k);
                const double* u = &u_[row];
                double* d = &du_[row];
                for (int i = 0; i < p_.n; ++i) {
                    const double sum =
                        (u[i - 1] + u[i + 1]) + (u[i - dy] + u[i + dy]) + (u[i - dz] + u[i + dz]);
                    d[i] = sigma * (sum - 6 * u[i]) + forcing;
                }
            }
    }

    void solve_x() {
        const Thomas& t = thomas_;
        for (int k = 0; k < nz_; ++k)
            for (int j = 0; j < p_.n; ++j) {
                double* d = &du_[at(0, j, k)];
                d[0] *= t.m[0];
                for (int i = 1; i < p_.n; ++i) d[i] = (d[i] + sigma * d[i - 1]) * t.m[i];
                for (int i = p_.n - 2; i >= 0; --i) d[i] -= t.c[i] * d[i + 1];
            }
    }

    // All lines of a plane at once: row j of the sweep is the i-loop.
    void solve_y() {
        const Thomas& t = thomas_;
        for (int k = 0; k < nz_; ++k) {
            double* d = &du_[at(0, 0, k)];
            for (int i = 0; i < p_.n; ++i) d[i] *= t.m[0];
            for (int j = 1; j < p_.n; ++j)
                for (int i = 0; i < p_.n; ++i)
                    d[j * line_ + i] = (d[j * line_ + i] + sigma * d[(j - 1) * line_ + i]) * t.m[j];
            for (int j = p_.n - 2; j >= 0; --j)
                for (int i = 0; i < p_.n; ++i) d[j * line_ + i] -= t.c[j] * d[(j + 1) * line_ + i];
        }
    }

    // Rows [j0, j1) of every z line: forward sweep upwards through the ranks,
    // then back-substitution downwards, one block of rows at a time. The
    // ghost plane below holds the lower rank's d' (zero at the bottom), the
    // one above the upper rank's x (zero at the top).
    void solve_z_pipelined() {
        const int blocks = std::min(pipeline_blocks, p_.n);
        std::vector<MPI_Request> sends;
        auto rows = [&](int b, int& j0, int& j1) {
            j0 = b * p_.n / blocks;
            j1 = (b + 1) * p_.n / blocks;
        };
        auto chunk = [&](int k, int j0) { return &du_[at(-1, j0, k)]; };
        for (int b = 0; b < blocks; ++b) {
            int j0, j1;
            rows(b, j0, j1);
            const int count = (j1 - j0) * line_;
            if (below_ != MPI_PROC_NULL)
                MPI_Recv(chunk(-1, j0), count, MPI_DOUBLE, below_, tag_forward, comm_,
                         MPI_STATUS_IGNORE);
            for (int k = 0; k < nz_; ++k) {
                const double m = thomas_.m[first_ + k];
                for (int j = j0; j < j1; ++j) {
                    double* d = &du_[at(0, j, k)];
                    const double* prev = &du_[at(0, j, k - 1)];
                    for (int i = 0; i < p_.n; ++i) d[i] = (d[i] + sigma * prev[i]) * m;
                }
            }
            if (above_ != MPI_PROC_NULL) {
                sends.emplace_back();
                MPI_Isend(chunk(nz_ - 1, j0), count, MPI_DOUBLE, above_, tag_forward, comm_,
                          &sends.back());
            }
        }
        for (int b = 0; b < blocks; ++b) {
            int j0, j1;
            rows(b, j0, j1);
            const int count = (j1 - j0) * line_;
            if (above_ != MPI_PROC_NULL)
                MPI_Recv(chunk(nz_, j0), count, MPI_DOUBLE, above_, tag_backward, comm_,
                         MPI_STATUS_IGNORE);
            for (int k = nz_ - 1; k >= 0; --k) {
                const double c = thomas_.c[first_ + k];
                for (int j = j0; j < j1; ++j) {
                    double* d = &du_[at(0, j, k)];
                    const double* next = &du_[at(0, j, k + 1)];
                    for (int i = 0; i < p_.n; ++i) d[i] -= c * next[i];
                }
            }
            if (below_ != MPI_PROC_NULL) {
                sends.emplace_back();
                MPI_Isend(chunk(0, j0), count, MPI_DOUBLE, below_, tag_backward, comm_,
                          &sends.back());
            }
        }
        if (!sends.empty())
            MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    }

    Norms norms() {
        double local[2] = {0, 0}, global[2];
        for (int k = 0; k < nz_; ++k)
            for (int j = 0; j < p_.n; ++j)
                for (int i = 0; i < p_.n; ++i) {
                    local[0] += u_[at(i, j, k)] * u_[at(i, j, k)];
                    local[1] += du_[at(i, j, k)] * du_[at(i, j, k)];
                }
        global[0] = local[0];
        global[1] = local[1];
        if (comm_ != MPI_COMM_NULL) MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, comm_);
        const double points = static_cast<double>(p_.n) * p_.n * p_.n;
        return {std::sqrt(global[0] / points), std::sqrt(global[1] / points)};
    }

    Params p_;
    MPI_Comm comm_;
    Thomas thomas_;
    int rank_ = 0, nz_ = 0, first_ = 0, below_ = MPI_PROC_NULL, above_ = MPI_PROC_NULL;
    int line_ = 0, plane_ = 0;
    std::vector<double> u_, du_;
};

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    npb::Options opt;
    if (!npb::parse_options(argc, argv, "npb_sp", opt)) {
        MPI_Finalize();
        return 2;
    }
    const Params p = params_for(opt.cls);
    if (size > p.n) {
        npb::setup_error("npb_sp", "at most " + std::to_string(p.n) + " ranks for class " +
                                       npb::class_letter(opt.cls) + " (one z plane each)");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        std::printf(
            "\n NAS Parallel Benchmarks style - SP-like line solver (C++)\n Class %c:"
            " %d^3 grid, %d steps, %d ranks\n\n",
            npb::class_letter(opt.cls), p.n, p.steps, size);

    Norms ref;
    if (rank == 0) ref = LineSolver(p, MPI_COMM_NULL).run();
    LineSolver solver(p, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);

    prof_reset();
    const double t0 = MPI_Wtime();
    const Norms got = solver.run();
    const double local_time = MPI_Wtime() - t0;
    prof_report(MPI_COMM_WORLD, "sp");

    const double seconds = npb::max_over_ranks(local_time, MPI_COMM_WORLD);
    bool ok = false;
    if (rank == 0) {
        ok = npb::check_relative("RMS of u", got.u, ref.u);
        ok &= npb::check_relative("RMS of the last update", got.du, ref.du);
    }
    // Per point and step: 11 for the right-hand side, 5 per line solve, 1 update.
    const double ops = 27.0 * p.steps * p.n * p.n * static_cast<double>(p.n);
    const npb::Summary summary{"SP-like", opt.cls, std::to_string(p.n) + "^3",    p.steps,
                               seconds,   ops,     "serial line solves on rank 0"};
    const int status = npb::finish(summary, ok, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
