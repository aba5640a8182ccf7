// The grids and operators of npb_mg: a 3-D periodic grid stored with one ghost
// layer, decomposed over ranks by slabs of z planes, and NPB MG's four 27-point
// operators (residual, smoother, restriction, trilinear interpolation). An
// operator fills its input's ghosts first, then computes every output point
// the same way whatever the decomposition, so a serial run and a parallel one
// give bitwise equal grids (only the norms' reductions differ).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace mg {

// Coefficients of a 27-point stencil by distance class: the centre, the 6 face
// neighbours, the 12 edge neighbours and the 8 corners.
struct Stencil {
    double centre, face, edge, corner;
};

// nx * ny * nz interior points; indices run from -1 to n (ghosts).
class Grid {
  public:
    Grid() = default;
    Grid(int nx, int ny, int nz)
        : nx(nx), ny(ny), nz(nz), data_(static_cast<size_t>(nx + 2) * (ny + 2) * (nz + 2), 0.0) {}

    size_t index(int i, int j, int k) const {
        return static_cast<size_t>(i + 1) +
               static_cast<size_t>(nx + 2) *
                   (static_cast<size_t>(j + 1) + static_cast<size_t>(ny + 2) * (k + 1));
    }
    double& operator()(int i, int j, int k) { return data_[index(i, j, k)]; }
    double operator()(int i, int j, int k) const { return data_[index(i, j, k)]; }
    // The line (j, k) from its ghost at i = -1: line(j, k)[i + 1] is (i, j, k).
    double* line(int j, int k) { return &data_[index(-1, j, k)]; }
    const double* line(int j, int k) const { return &data_[index(-1, j, k)]; }
    double* plane(int k) { return &data_[index(-1, -1, k)]; }
    int plane_size() const { return (nx + 2) * (ny + 2); }
    void zero() { data_.assign(data_.size(), 0.0); }

    int nx = 0, ny = 0, nz = 0;

  private:
    std::vector<double> data_;
};

// How the ghosts of a grid are filled. x and y are always periodic within the
// grid; z ghosts come from the neighbouring slabs (Isend/Irecv of whole
// planes) or, without a communicator, from the grid's own opposite plane.
class Halo {
  public:
    Halo() = default;  // whole grid, no communication
    explicit Halo(MPI_Comm comm);
    void fill(Grid& g) const;

  private:
    MPI_Comm comm_ = MPI_COMM_NULL;
    int up_ = 0, down_ = 0;
};

// r = v - A u (r may be v).
void residual(Grid& u, const Grid& v, Grid& r, const Stencil& a, const Halo& halo);
// u += S r.
void smooth(Grid& r, Grid& u, const Stencil& s, const Halo& halo);
// coarse = R fine: full weighting around the fine points (2i, 2j, 2k).
void restrict_to(Grid& fine, Grid& coarse, const Halo& fine_halo);
// fine += P coarse: trilinear interpolation.
void interpolate_add(Grid& coarse, Grid& fine, const Halo& coarse_halo);

// Local sum of squares and max of |g| over the interior.
void local_norms(const Grid& g, double& sum_squares, double& max_abs);

}  // namespace mg
