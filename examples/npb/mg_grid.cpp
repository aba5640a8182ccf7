// The grids and operators of npb_mg: see mg_grid.hpp.
#include "mg_grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mg {

namespace {

constexpr int tag_upward = 31;    // a slab's top plane, going to the rank above
constexpr int tag_downward = 32;  // its bottom plane, going to the rank below

// Sums over the neighbours of line (j, k) that lie off the line, for every i
// from -1 to nx (index i + 1): the four face neighbours in y and z, and the
// four edge neighbours in the y-z plane. A 27-point stencil on the line then
// needs only these two arrays and the line itself (NPB's trick: fewer loads).
void line_sums(const Grid& g, int j, int k, std::vector<double>& s1, std::vector<double>& s2) {
    const double* ym = g.line(j - 1, k);
    const double* yp = g.line(j + 1, k);
    const double* zm = g.line(j, k - 1);
    const double* zp = g.line(j, k + 1);
    const double* ymzm = g.line(j - 1, k - 1);
    const double* ypzm = g.line(j + 1, k - 1);
    const double* ymzp = g.line(j - 1, k + 1);
    const double* ypzp = g.line(j + 1, k + 1);
    for (int i = 0; i < g.nx + 2; ++i) {
        s1[i] = ym[i] + yp[i] + zm[i] + zp[i];
        s2[i] = ymzm[i] + ypzm[i] + ymzp[i] + ypzp[i];
    }
}

// The stencil at point i of a line (c is the line from its ghost).
inline double apply(const Stencil& w, const double* c, const double* s1, const double* s2, int i) {
    return w.centre * c[i + 1] + w.face * (c[i] + c[i + 2] + s1[i + 1]) +
           w.edge * (s2[i + 1] + s1[i] + s1[i + 2]) + w.corner * (s2[i] + s2[i + 2]);
}

}  // namespace

Halo::Halo(MPI_Comm comm) : comm_(comm) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    up_ = (rank + 1) % size;
    down_ = (rank + size - 1) % size;
}

void Halo::fill(Grid& g) const {
    for (int k = 0; k < g.nz; ++k) {
        for (int j = 0; j < g.ny; ++j) {
            g(-1, j, k) = g(g.nx - 1, j, k);
            g(g.nx, j, k) = g(0, j, k);
        }
        std::memcpy(g.line(-1, k), g.line(g.ny - 1, k), sizeof(double) * (g.nx + 2));
        std::memcpy(g.line(g.ny, k), g.line(0, k), sizeof(double) * (g.nx + 2));
    }
    const int count = g.plane_size();
    if (comm_ == MPI_COMM_NULL) {
        std::memcpy(g.plane(-1), g.plane(g.nz - 1), sizeof(double) * count);
        std::memcpy(g.plane(g.nz), g.plane(0), sizeof(double) * count);
        return;
    }
    MPI_Request requests[4];
    MPI_Irecv(g.plane(-1), count, MPI_DOUBLE, down_, tag_upward, comm_, &requests[0]);
    MPI_Irecv(g.plane(g.nz), count, MPI_DOUBLE, up_, tag_downward, comm_, &requests[1]);
    MPI_Isend(g.plane(g.nz - 1), count, MPI_DOUBLE, up_, tag_upward, comm_, &requests[2]);
    MPI_Isend(g.plane(0), count, MPI_DOUBLE, down_, tag_downward, comm_, &requests[3]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
}

void residual(Grid& u, const Grid& v, Grid& r, const Stencil& a, const Halo& halo) {
    halo.fill(u);
    std::vector<double> s1(u.nx + 2), s2(u.nx + 2);
    for (int k = 0; k < u.nz; ++k)
        for (int j = 0; j < u.ny; ++j) {
            line_sums(u, j, k, s1, s2);
            const double* c = u.line(j, k);
            const double* vl = v.line(j, k);
            double* rl = r.line(j, k);
            for (int i = 0; i < u.nx; ++i)
                rl[i + 1] = vl[i + 1] - apply(a, c, s1.data(), s2.data(), i);
        }
}

void smooth(Grid& r, Grid& u, const Stencil& s, const Halo& halo) {
    halo.fill(r);
    std::vector<double> s1(r.nx + 2), s2(r.nx + 2);
    for (int k = 0; k < r.nz; ++k)
        for (int j = 0; j < r.ny; ++j) {
            line_sums(r, j, k, s1, s2);
            const double* c = r.line(j, k);
            double* ul = u.line(j, k);
            for (int i = 0; i < r.nx; ++i) ul[i + 1] += apply(s, c, s1.data(), s2.data(), i);
        }
}

void restrict_to(Grid& fine, Grid& coarse, const Halo& fine_halo) {
    static constexpr Stencil weights{0.5, 0.25, 0.125, 0.0625};
    fine_halo.fill(fine);
    std::vector<double> s1(fine.nx + 2), s2(fine.nx + 2);
    for (int k = 0; k < coarse.nz; ++k)
        for (int j = 0; j < coarse.ny; ++j) {
            line_sums(fine, 2 * j, 2 * k, s1, s2);
            const double* c = fine.line(2 * j, 2 * k);
            double* out = coarse.line(j, k);
            for (int i = 0; i < coarse.nx; ++i)
                out[i + 1] = apply(weights, c, s1.data(), s2.data(), 2 * i);
        }
}

void interpolate_add(Grid& coarse, Grid& fine, const Halo& coarse_halo) {
    coarse_halo.fill(coarse);
    const int n = coarse.nx;
    std::vector<double> t(n + 1);
    for (int k = 0; k < coarse.nz; ++k)
        for (int dk = 0; dk < 2; ++dk)
            for (int j = 0; j < coarse.ny; ++j)
                for (int dj = 0; dj < 2; ++dj) {
                    // The coarse values averaged in y and z for this fine line,
                    // for coarse i from 0 to n (the ghost).
                    const double* a = coarse.line(j, k) + 1;
                    const double* b = coarse.line(j + dj, k) + 1;
                    const double* c = coarse.line(j, k + dk) + 1;
                    const double* d = coarse.line(j + dj, k + dk) + 1;
                    for (int i = 0; i <= n; ++i) t[i] = 0.25 * ((a[i] + b[i]) + (c[i] + d[i]));
                    double* f = fine.line(2 * j + dj, 2 * k + dk) + 1;
                    for (int i = 0; i < n; ++i) {
                        f[2 * i] += t[i];
                        f[2 * i + 1] += 0.5 * (t[i] + t[i + 1]);
                    }
                }
}

void local_norms(const Grid& g, double& sum_squares, double& max_abs) {
    sum_squares = 0;
    max_abs = 0;
    for (int k = 0; k < g.nz; ++k)
        for (int j = 0; j < g.ny; ++j) {
            const double* l = g.line(j, k) + 1;
            for (int i = 0; i < g.nx; ++i) {
                sum_squares += l[i] * l[i];
                max_abs = std::max(max_abs, std::fabs(l[i]));
            }
        }
}

}  // namespace mg
