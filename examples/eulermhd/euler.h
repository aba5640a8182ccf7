/* EulerMHD-style benchmark: the shared definitions of a 2-D compressible Euler
 * solver (ideal gas, gamma 1.4) on a periodic Cartesian mesh split over a
 * periodic Cartesian grid of MPI ranks. A rank owns an nx x ny block of cells
 * surrounded by NG = 2 ghost layers; the data of a cell are interleaved:
 * conserved (rho, rho*u, rho*v, E) or primitive (rho, u, v, p).
 * euler_kernel.c holds the numerics (never MPI), halo.c the ghost exchange,
 * eulermhd.c the problems, the time loop and the verification. */
#ifndef EULERMHD_EULER_H
#define EULERMHD_EULER_H

#include <mpi.h>
#include <stddef.h>

#define NV 4 /* variables per cell */
#define NG 2 /* ghost layers: MUSCL reconstruction of the ghost cell next to a face */
#define GAMMA 1.4

/* One rank's share of the mesh and its place in the rank grid. */
typedef struct {
    MPI_Comm cart; /* periodic 2-D Cartesian communicator */
    int rank, size;
    int dims[2], coords[2]; /* [0] along x, [1] along y */
    int gnx, gny;           /* global mesh */
    int nx, ny;             /* owned cells */
    int x0, y0;             /* global index of the first owned cell */
    int stride;             /* cells per stored row: nx + 2*NG */
    double dx, dy;
    int neighbour[8]; /* ranks in the directions of halo.c's direction table */
} Grid;

/* Offset of cell (i, j), owned cells 0 <= i < nx, 0 <= j < ny, ghosts outside. */
static inline size_t cell_at(const Grid* g, int i, int j) {
    return ((size_t)(j + NG) * (size_t)g->stride + (size_t)(i + NG)) * NV;
}
static inline size_t field_size(const Grid* g) {
    return (size_t)g->stride * (size_t)(g->ny + 2 * NG) * NV;
}

/* A rectangle of owned cells [i0, i1) x [j0, j1). */
typedef struct {
    int i0, i1, j0, j1;
} Rect;

/* Scratch of the kernel, laid out like a field: primitive states, their
 * limited slopes, the half-step predicted states and the face fluxes (Fx at a
 * cell is the flux through its left face, Fy through its bottom face). */
typedef struct {
    double *W, *Wh, *dWx, *dWy, *Fx, *Fy;
} Work;

/* euler_kernel.c */
void work_init(Work* w, const Grid* g);
void work_free(Work* w);
/* Primitive states of the cells of r (ghosts allowed); returns the largest
 * stable time step over those cells, CFL number 1. */
double primitives(const Grid* g, const double* U, Work* w, Rect r);
/* One MUSCL-Hancock step of the cells of r: reads the primitive states of r
 * widened by NG, writes Unew over r. */
void advance(const Grid* g, const double* U, double* Unew, Work* w, double dt, Rect r);

/* halo.c: the ghost exchange with the 8 neighbours (sides and corners). */
typedef struct {
    double* send[8];
    double* recv[8];
    int count[8];
    MPI_Request req[16];
    MPI_Status status[16];
} Halo;
/* Collective over base: rank grid, neighbours, owned block. Returns 0, or -1 when some
 * rank would own fewer than 2*NG cells in a direction. */
int grid_init(Grid* g, MPI_Comm base, int gnx, int gny);
void halo_init(Halo* h, const Grid* g);
void halo_start(Halo* h, const Grid* g, const double* U); /* Irecv, pack, Isend */
void halo_finish(Halo* h, const Grid* g, double* U);      /* Waitall, unpack */
void halo_free(Halo* h);

#endif
