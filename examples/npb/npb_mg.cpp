// NPB-style MG: V-cycle multigrid for the 3-D periodic Poisson-like problem
// A u = v on an n^3 grid, v zero except +1 at ten and -1 at ten random points
// (NPB MG's problem and operators: residual A, smoother S, full-weighting
// restriction, trilinear interpolation; see mg_grid.hpp). Each iteration is
// one V-cycle down to the 2^3 grid followed by a residual; the result is the
// residual's L2 norm after `nit` iterations.
//
// Distribution: slabs of z planes (power-of-two ranks, at least two planes
// each on the finest grid). Halos of whole planes go by Isend/Irecv to the
// neighbouring slabs. Once a coarse grid has a single plane per rank, the
// ranks gather it (MPI_Allgather) and do the coarser levels redundantly on
// whole grids, then take back their slab of the correction: tiny grids are
// not worth splitting further.
//
// Verification: rank 0 runs the same V-cycles on the whole grid without any
// MPI (classes S and W); the operators compute every point identically, so
// the norms agree to round-off of the final sum (checked to 1e-10 relative).
// Class A (256^3, 0.5 GB) compares with stored values from our own serial run
// (`npb_mg A --reference`; the parallel run on 1, 2 and 4 ranks matches them).
// The right-hand side's points are not NPB's, so neither are the norms (class
// A: 2.52e-6 here, 2.43e-6 in NPB, after the same four V-cycles).
//
//   mpcrun -n 4 npb_mg [S|W|A]
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "mg_grid.hpp"
#include "mpi_profile.h"
#include "npb_common.hpp"

namespace {

constexpr uint64_t rhs_seed = 314159265;
constexpr int charged_points = 10;  // +1 at ten points, -1 at ten others
constexpr mg::Stencil operator_a{-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};

struct Params {
    int n, nit;
    mg::Stencil smoother;
    double stored_rnm2, stored_rnmu;  // class A only
};

Params params_for(npb::ProblemClass cls) {
    // NPB's smoother for classes S, W and A (its larger classes use another).
    constexpr mg::Stencil smoother{-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0};
    switch (cls) {
        case npb::ProblemClass::S:
            return {32, 4, smoother, 0, 0};
        case npb::ProblemClass::W:
            return {128, 4, smoother, 0, 0};
        case npb::ProblemClass::A:
            return {256, 4, smoother, 2.52465360952362551e-06, 1.12911257665726517e-03};
    }
    return {};
}

struct Norms {
    double rnm2 = 0, rnmu = 0;
};

// The level hierarchy of one rank (or of the serial reference, with
// comm == MPI_COMM_NULL). Level l has 2^l points per side; levels above
// split_ are slabs, levels up to split_ are also kept whole (replicated).
class Multigrid {
  public:
    Multigrid(const Params& p, MPI_Comm comm) : p_(p), comm_(comm) {
        if (comm != MPI_COMM_NULL) {
            MPI_Comm_rank(comm, &rank_);
            MPI_Comm_size(comm, &size_);
            halo_ = mg::Halo(comm);
        }
        top_ = npb::log2_exact(p.n);
        split_ = std::max(bottom_, npb::log2_exact(size_));
        u_.resize(top_ + 1);
        r_.resize(top_ + 1);
        for (int l = split_; l <= top_; ++l) {
            const int n = 1 << l;
            u_[l] = mg::Grid(n, n, n / size_);
            r_[l] = mg::Grid(n, n, n / size_);
        }
        whole_u_.resize(split_ + 1);
        whole_r_.resize(split_ + 1);
        for (int l = bottom_; l <= split_ && split_ > bottom_; ++l) {
            whole_u_[l] = mg::Grid(1 << l, 1 << l, 1 << l);
            whole_r_[l] = mg::Grid(1 << l, 1 << l, 1 << l);
        }
        v_ = mg::Grid(p.n, p.n, p.n / size_);
        set_rhs();
    }

    Norms run(int nit) {
        mg::Grid& u = u_[top_];
        u.zero();
        mg::residual(u, v_, r_[top_], operator_a, halo_);
        for (int it = 0; it < nit; ++it) {
            v_cycle();
            mg::residual(u, v_, r_[top_], operator_a, halo_);
        }
        return norms(r_[top_]);
    }

  private:
    // Twenty distinct random points; each rank sets those in its slab.
    void set_rhs() {
        npb::Random46 rng(rhs_seed);
        std::vector<std::array<int, 3>> points;
        while (points.size() < 2 * charged_points) {
            std::array<int, 3> pt;
            for (int& c : pt) c = std::min(p_.n - 1, static_cast<int>(p_.n * rng.next()));
            if (std::find(points.begin(), points.end(), pt) == points.end()) points.push_back(pt);
        }
        const int first = rank_ * v_.nz;
        for (size_t m = 0; m < points.size(); ++m) {
            const int k = points[m][2] - first;
            if (k >= 0 && k < v_.nz)
                v_(points[m][0], points[m][1], k) = m < charged_points ? 1.0 : -1.0;
        }
    }

    // NPB's mg3P: restrict the residual down, smooth on the coarsest grid,
    // then interpolate, correct and smooth on the way up.
    void v_cycle() {
        for (int l = top_; l > split_; --l) mg::restrict_to(r_[l], r_[l - 1], halo_);
        if (split_ > bottom_) {
            coarse_levels_whole();
        } else {
            u_[bottom_].zero();
            mg::smooth(r_[bottom_], u_[bottom_], p_.smoother, halo_);
        }
        for (int l = split_ + 1; l < top_; ++l) correct(u_, r_, l, halo_);
        mg::interpolate_add(u_[top_ - 1], u_[top_], halo_);
        mg::residual(u_[top_], v_, r_[top_], operator_a, halo_);
        mg::smooth(r_[top_], u_[top_], p_.smoother, halo_);
    }

    // One step up at a level below the top: u = P u_coarse, r -= A u, u += S r.
    void correct(std::vector<mg::Grid>& u, std::vector<mg::Grid>& r, int l, const mg::Halo& halo) {
        u[l].zero();
        mg::interpolate_add(u[l - 1], u[l], halo);
        mg::residual(u[l], r[l], r[l], operator_a, halo);
        mg::smooth(r[l], u[l], p_.smoother, halo);
    }

    // Levels bottom_..split_ on whole grids: gather the residual at split_,
    // cycle below it on every rank alike, keep this rank's slab of u.
    void coarse_levels_whole() {
        mg::Grid& slab_r = r_[split_];
        mg::Grid& whole_r = whole_r_[split_];
        const int n = slab_r.nx, per_rank = n * n * slab_r.nz;
        std::vector<double> mine(per_rank), all(static_cast<size_t>(per_rank) * size_);
        for (int k = 0, m = 0; k < slab_r.nz; ++k)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) mine[m++] = slab_r(i, j, k);
        MPI_Allgather(mine.data(), per_rank, MPI_DOUBLE, all.data(), per_rank, MPI_DOUBLE, comm_);
        for (int k = 0, m = 0; k < n; ++k)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) whole_r(i, j, k) = all[m++];

        const mg::Halo local;
        for (int l = split_; l > bottom_; --l) mg::restrict_to(whole_r_[l], whole_r_[l - 1], local);
        whole_u_[bottom_].zero();
        mg::smooth(whole_r_[bottom_], whole_u_[bottom_], p_.smoother, local);
        for (int l = bottom_ + 1; l <= split_; ++l) correct(whole_u_, whole_r_, l, local);

        mg::Grid& slab_u = u_[split_];
        const int first = rank_ * slab_u.nz;
        for (int k = 0; k < slab_u.nz; ++k)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) slab_u(i, j, k) = whole_u_[split_](i, j, first + k);
    }

    Norms norms(const mg::Grid& r) const {
        double local[2];
        mg::local_norms(r, local[0], local[1]);
        Norms out;
        double sum = local[0], max = local[1];
        if (comm_ != MPI_COMM_NULL) {
            MPI_Allreduce(&local[0], &sum, 1, MPI_DOUBLE, MPI_SUM, comm_);
            MPI_Allreduce(&local[1], &max, 1, MPI_DOUBLE, MPI_MAX, comm_);
        }
        out.rnm2 = std::sqrt(sum / (static_cast<double>(p_.n) * p_.n * p_.n));
        out.rnmu = max;
        return out;
    }

    Params p_;
    MPI_Comm comm_;
    int rank_ = 0, size_ = 1;
    static constexpr int bottom_ = 1;
    int top_ = 0, split_ = 0;
    mg::Halo halo_;
    std::vector<mg::Grid> u_, r_, whole_u_, whole_r_;
    mg::Grid v_;
};

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    npb::Options opt;
    if (!npb::parse_options(argc, argv, "npb_mg", opt)) {
        MPI_Finalize();
        return 2;
    }
    const Params p = params_for(opt.cls);
    if (!npb::is_power_of_two(size) || size > p.n / 2) {
        npb::setup_error("npb_mg", "the number of ranks must be a power of two and at most " +
                                       std::to_string(p.n / 2) + " for class " +
                                       npb::class_letter(opt.cls) + " (got " +
                                       std::to_string(size) + ")");
        MPI_Finalize();
        return 2;
    }
    const bool serial_reference = opt.serial_reference || opt.cls != npb::ProblemClass::A;
    if (rank == 0)
        std::printf(
            "\n NAS Parallel Benchmarks style - MG (C++)\n Class %c: %d^3 grid,"
            " %d iterations, %d ranks\n\n",
            npb::class_letter(opt.cls), p.n, p.nit, size);

    Norms ref{p.stored_rnm2, p.stored_rnmu};
    if (rank == 0 && serial_reference) ref = Multigrid(p, MPI_COMM_NULL).run(p.nit);
    Multigrid solver(p, MPI_COMM_WORLD);
    solver.run(1);  // untimed warm-up, as NPB does; run() starts again from u = 0
    MPI_Barrier(MPI_COMM_WORLD);

    prof_reset();
    const double t0 = MPI_Wtime();
    const Norms got = solver.run(p.nit);
    const double local_time = MPI_Wtime() - t0;
    prof_report(MPI_COMM_WORLD, "mg");

    const double seconds = npb::max_over_ranks(local_time, MPI_COMM_WORLD);
    bool ok = false;
    if (rank == 0) {
        ok = npb::check_relative("residual L2 norm", got.rnm2, ref.rnm2);
        ok &= npb::check_relative("residual max norm", got.rnmu, ref.rnmu);
        if (opt.serial_reference)
            std::printf(" serial rnm2 %.17e rnmu %.17e\n", ref.rnm2, ref.rnmu);
    }
    const double points = static_cast<double>(p.n) * p.n * p.n;
    const npb::Summary summary{"MG",
                               opt.cls,
                               std::to_string(p.n) + "^3",
                               p.nit,
                               seconds,
                               58.0 * p.nit * points,
                               serial_reference ? "serial V-cycles on rank 0" : "stored values"};
    const int status = npb::finish(summary, ok, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
