/* EulerMHD-style benchmark: the domain decomposition and the ghost-cell
 * exchange. The rank grid comes from MPI_Dims_create + MPI_Cart_create
 * (periodic both ways). Each step, the NG-deep strips and corners a neighbour
 * needs are packed into contiguous buffers and exchanged with
 * MPI_Isend/MPI_Irecv with the 8 neighbours (the MUSCL-Hancock predictor of a
 * ghost cell next to a face uses its transverse slope, hence the corners);
 * MPI_Waitall then completes them and the ghosts are unpacked. */
#include <stdlib.h>
#include <string.h>

#include "euler.h"

/* Directions: E, W, N, S, NE, NW, SE, SW. A message travelling in direction
 * d carries tag d, so two directions reaching the same rank (a grid 1 or 2
 * ranks wide, periodic) never mix. */
static const int kDx[8] = {1, -1, 0, 0, 1, -1, 1, -1};
static const int kDy[8] = {0, 0, 1, -1, 1, 1, -1, -1};
static const int kOpposite[8] = {1, 0, 3, 2, 7, 6, 5, 4};

/* Cells along one axis of the region toward `delta`: the owned cells next to
 * that side (ghost = 0) or the ghost cells beyond it (ghost = 1). */
static void span(int delta, int n, int ghost, int* lo, int* hi) {
    if (delta == 0) {
        *lo = 0;
        *hi = n;
        return;
    }
    if (delta > 0)
        *lo = ghost ? n : n - NG;
    else
        *lo = ghost ? -NG : 0;
    *hi = *lo + NG;
}

static void block(int n, int parts, int p, int* count, int* first) {
    *count = n / parts + (p < n % parts);
    *first = p * (n / parts) + (p < n % parts ? p : n % parts);
}

int grid_init(Grid* g, MPI_Comm base, int gnx, int gny) {
    memset(g, 0, sizeof *g);
    MPI_Comm_size(base, &g->size);
    MPI_Dims_create(g->size, 2, g->dims);
    if (gny > gnx) { /* more ranks along the longer side */
        const int t = g->dims[0];
        g->dims[0] = g->dims[1];
        g->dims[1] = t;
    }
    const int periodic[2] = {1, 1};
    MPI_Cart_create(base, 2, g->dims, periodic, 0, &g->cart);
    MPI_Comm_rank(g->cart, &g->rank);
    MPI_Cart_coords(g->cart, g->rank, 2, g->coords);
    g->gnx = gnx;
    g->gny = gny;
    block(gnx, g->dims[0], g->coords[0], &g->nx, &g->x0);
    block(gny, g->dims[1], g->coords[1], &g->ny, &g->y0);
    g->stride = g->nx + 2 * NG;
    g->dx = 1.0 / gnx;
    g->dy = 1.0 / gny;
    for (int d = 0; d < 8; ++d) {
        int c[2] = {(g->coords[0] + kDx[d] + g->dims[0]) % g->dims[0],
                    (g->coords[1] + kDy[d] + g->dims[1]) % g->dims[1]};
        MPI_Cart_rank(g->cart, c, &g->neighbour[d]);
    }
    /* The smallest block: ranks with the lowest coordinates own the most. */
    return gnx / g->dims[0] >= 2 * NG && gny / g->dims[1] >= 2 * NG ? 0 : -1;
}

void halo_init(Halo* h, const Grid* g) {
    for (int d = 0; d < 8; ++d) {
        int i0, i1, j0, j1;
        span(kDx[d], g->nx, 0, &i0, &i1);
        span(kDy[d], g->ny, 0, &j0, &j1);
        h->count[d] = (i1 - i0) * (j1 - j0) * NV;
        h->send[d] = malloc(sizeof(double) * (size_t)h->count[d]);
        h->recv[d] = malloc(sizeof(double) * (size_t)h->count[d]);
    }
}

void halo_free(Halo* h) {
    for (int d = 0; d < 8; ++d) {
        free(h->send[d]);
        free(h->recv[d]);
    }
}

/* Copies the region of direction d between the field and a buffer. */
static void copy_region(const Grid* g, int d, int ghost, double* field, double* buffer,
                        int to_buffer) {
    int i0, i1, j0, j1;
    span(kDx[d], g->nx, ghost, &i0, &i1);
    span(kDy[d], g->ny, ghost, &j0, &j1);
    const size_t row = (size_t)(i1 - i0) * NV * sizeof(double);
    for (int j = j0; j < j1; ++j, buffer += (i1 - i0) * NV) {
        double* cells = field + cell_at(g, i0, j);
        if (to_buffer)
            memcpy(buffer, cells, row);
        else
            memcpy(cells, buffer, row);
    }
}

void halo_start(Halo* h, const Grid* g, const double* U) {
    for (int d = 0; d < 8; ++d)
        MPI_Irecv(h->recv[d], h->count[d], MPI_DOUBLE, g->neighbour[d], kOpposite[d], g->cart,
                  &h->req[d]);
    for (int d = 0; d < 8; ++d) {
        copy_region(g, d, 0, (double*)U, h->send[d], 1);
        MPI_Isend(h->send[d], h->count[d], MPI_DOUBLE, g->neighbour[d], d, g->cart, &h->req[8 + d]);
    }
}

void halo_finish(Halo* h, const Grid* g, double* U) {
    /* Real statuses, not MPI_STATUSES_IGNORE: under fibermpi's rank images the
     * sentinel a rank image passes is not the library's (copy relocation), and
     * the library would write 16 statuses over the image's globals. */
    MPI_Waitall(16, h->req, h->status);
    for (int d = 0; d < 8; ++d) copy_region(g, d, 1, U, h->recv[d], 0);
}
