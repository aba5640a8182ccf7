/* EulerMHD-style benchmark: the numerics, no MPI. A second-order unsplit
 * MUSCL-Hancock finite-volume scheme: minmod-limited slopes of the primitive
 * variables, a half-step predictor with the primitive-variable Jacobians in x
 * and y, an HLL Riemann solver (Davis wave speeds) at every face, and a
 * conservative update from the face fluxes, so mass, momentum and energy are
 * conserved to round-off. Every formula is written so that mirroring x or y,
 * or swapping x and y on a square mesh, maps each rounding to the same one:
 * symmetric problems stay symmetric bit for bit (see eulermhd.c). */
#include <math.h>
#include <stdlib.h>

#include "euler.h"

static double* field_alloc(const Grid* g) {
    double* f = calloc(field_size(g), sizeof(double));
    if (!f) abort();
    return f;
}

void work_init(Work* w, const Grid* g) {
    w->W = field_alloc(g);
    w->Wh = field_alloc(g);
    w->dWx = field_alloc(g);
    w->dWy = field_alloc(g);
    w->Fx = field_alloc(g);
    w->Fy = field_alloc(g);
}

void work_free(Work* w) {
    free(w->W);
    free(w->Wh);
    free(w->dWx);
    free(w->dWy);
    free(w->Fx);
    free(w->Fy);
}

double primitives(const Grid* g, const double* U, Work* w, Rect r) {
    double dt = INFINITY;
    for (int j = r.j0; j < r.j1; ++j)
        for (int i = r.i0; i < r.i1; ++i) {
            const double* u = U + cell_at(g, i, j);
            double* p = w->W + cell_at(g, i, j);
            const double rho = u[0], vx = u[1] / rho, vy = u[2] / rho;
            const double pressure = (GAMMA - 1.0) * (u[3] - 0.5 * rho * (vx * vx + vy * vy));
            p[0] = rho;
            p[1] = vx;
            p[2] = vy;
            p[3] = pressure;
            const double c = sqrt(GAMMA * pressure / rho);
            const double step = fmin(g->dx / (fabs(vx) + c), g->dy / (fabs(vy) + c));
            if (step < dt) dt = step;
        }
    return dt;
}

/* Zero at an extremum, else the smaller difference: symmetric and odd. */
static inline double minmod(double a, double b) {
    if (a * b <= 0.0) return 0.0;
    return fabs(a) < fabs(b) ? a : b;
}

/* Limited slopes and the half-step state of the cells of r. */
static void predict(const Grid* g, Work* w, double dt, Rect r) {
    const double hx = 0.5 * dt / g->dx, hy = 0.5 * dt / g->dy;
    const size_t east = NV, north = (size_t)g->stride * NV;
    for (int j = r.j0; j < r.j1; ++j)
        for (int i = r.i0; i < r.i1; ++i) {
            const size_t c = cell_at(g, i, j);
            const double* W = w->W + c;
            double* sx = w->dWx + c;
            double* sy = w->dWy + c;
            double* h = w->Wh + c;
            for (int k = 0; k < NV; ++k) {
                sx[k] = minmod(W[k] - W[k - east], W[k + east] - W[k]);
                sy[k] = minmod(W[k] - W[k - north], W[k + north] - W[k]);
            }
            const double rho = W[0], u = W[1], v = W[2], p = W[3];
            /* W_t + A W_x + B W_y = 0 in primitive variables. */
            const double ax[NV] = {u * sx[0] + rho * sx[1], u * sx[1] + sx[3] / rho, u * sx[2],
                                   u * sx[3] + GAMMA * p * sx[1]};
            const double by[NV] = {v * sy[0] + rho * sy[2], v * sy[1], v * sy[2] + sy[3] / rho,
                                   v * sy[3] + GAMMA * p * sy[2]};
            int positive = 1;
            for (int k = 0; k < NV; ++k) h[k] = W[k] - (hx * ax[k] + hy * by[k]);
            for (int k = 0; k < NV; k += 3) /* density and pressure on all four faces */
                positive &= h[k] - 0.5 * fabs(sx[k]) > 0.0 && h[k] + 0.5 * fabs(sx[k]) > 0.0 &&
                            h[k] - 0.5 * fabs(sy[k]) > 0.0 && h[k] + 0.5 * fabs(sy[k]) > 0.0;
            if (!positive) /* first order in this cell rather than a negative state */
                for (int k = 0; k < NV; ++k) {
                    h[k] = W[k];
                    sx[k] = sy[k] = 0.0;
                }
        }
}

/* Conserved state and flux of a primitive state w = (rho, normal velocity,
 * tangential velocity, p) through a face. */
static inline void normal_flux(const double* w, double* u, double* f) {
    const double rho = w[0], un = w[1], ut = w[2], p = w[3];
    const double E = p / (GAMMA - 1.0) + 0.5 * rho * (un * un + ut * ut);
    u[0] = rho;
    u[1] = rho * un;
    u[2] = rho * ut;
    u[3] = E;
    f[0] = rho * un;
    f[1] = rho * un * un + p;
    f[2] = rho * un * ut;
    f[3] = (E + p) * un;
}

/* HLL flux between a left and a right state, in the face's normal frame. */
static void hll(const double* wl, const double* wr, double* flux) {
    double ul[NV], ur[NV], fl[NV], fr[NV];
    normal_flux(wl, ul, fl);
    normal_flux(wr, ur, fr);
    const double cl = sqrt(GAMMA * wl[3] / wl[0]), cr = sqrt(GAMMA * wr[3] / wr[0]);
    const double sl = fmin(wl[1] - cl, wr[1] - cr), sr = fmax(wl[1] + cl, wr[1] + cr);
    if (sl >= 0.0) {
        for (int k = 0; k < NV; ++k) flux[k] = fl[k];
    } else if (sr <= 0.0) {
        for (int k = 0; k < NV; ++k) flux[k] = fr[k];
    } else {
        const double inv = 1.0 / (sr - sl);
        for (int k = 0; k < NV; ++k)
            flux[k] = ((sr * fl[k] - sl * fr[k]) + sl * sr * (ur[k] - ul[k])) * inv;
    }
}

/* Face state: half-step state of the cell plus `side` half a slope. */
static inline void face_state(const double* h, const double* s, double side, double* out) {
    for (int k = 0; k < NV; ++k) out[k] = h[k] + side * 0.5 * s[k];
}

void advance(const Grid* g, const double* U, double* Unew, Work* w, double dt, Rect r) {
    const Rect wide = {r.i0 - 1, r.i1 + 1, r.j0 - 1, r.j1 + 1};
    predict(g, w, dt, wide);
    const size_t east = NV, north = (size_t)g->stride * NV;
    for (int j = r.j0; j < r.j1 + 1; ++j)
        for (int i = r.i0; i < r.i1 + 1; ++i) {
            const size_t c = cell_at(g, i, j);
            double l[NV], rt[NV], f[NV];
            if (j < r.j1) { /* left face: x-normal frame is (rho, u, v, p) */
                face_state(w->Wh + c - east, w->dWx + c - east, 1.0, l);
                face_state(w->Wh + c, w->dWx + c, -1.0, rt);
                hll(l, rt, w->Fx + c);
            }
            if (i < r.i1) { /* bottom face: y-normal frame is (rho, v, u, p) */
                double bl[NV], br[NV];
                face_state(w->Wh + c - north, w->dWy + c - north, 1.0, l);
                face_state(w->Wh + c, w->dWy + c, -1.0, rt);
                bl[0] = l[0], bl[1] = l[2], bl[2] = l[1], bl[3] = l[3];
                br[0] = rt[0], br[1] = rt[2], br[2] = rt[1], br[3] = rt[3];
                hll(bl, br, f);
                double* fy = w->Fy + c;
                fy[0] = f[0], fy[1] = f[2], fy[2] = f[1], fy[3] = f[3];
            }
        }
    const double cx = dt / g->dx, cy = dt / g->dy;
    for (int j = r.j0; j < r.j1; ++j)
        for (int i = r.i0; i < r.i1; ++i) {
            const size_t c = cell_at(g, i, j);
            const double *fx = w->Fx + c, *fy = w->Fy + c;
            for (int k = 0; k < NV; ++k)
                Unew[c + k] =
                    U[c + k] - (cx * (fx[k + east] - fx[k]) + cy * (fy[k + north] - fy[k]));
        }
}
