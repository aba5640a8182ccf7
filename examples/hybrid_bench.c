/* Hybrid MPI + OpenMP benchmark: a multi-zone solver in the style of the NPB
 * multi-zone benchmarks (NPB-MZ), and the per-thread Sendrecv loop of a
 * hybrid code that calls MPI from every OpenMP thread.
 *
 * A standard MPI + OpenMP program: builds with any MPI's wrapper,
 *   mpicc -fopenmp -O2 hybrid_bench.c -o hybrid_bench      (fibermpi, Open MPI, MPICH)
 * and runs with the same OMP_* settings under each:
 *   OMP_NUM_THREADS=2 mpcrun -n 2 ./hybrid_bench mz
 *   OMP_NUM_THREADS=2 mpirun.openmpi -np 2 ./hybrid_bench mz
 *
 * hybrid_bench mz [-zones ZX ZY] [-size NX NY] [-steps S] [-uneven] [-verify]
 *   A 2-D domain of ZX x ZY zones (default 4 x 4) of NX x NY points each
 *   (default 96 x 96). Zones go to ranks by size (largest first, to the least
 *   loaded rank, as NPB-MZ balances them); -uneven makes zone widths grow
 *   along x (ratio 1 to 4), so that ranks get unequal work. Every step, twice:
 *   a Jacobi sweep of a Poisson problem in each zone, OpenMP loops over the
 *   zone's rows (forks and joins per zone and sweep, as NPB-MZ's loops), then
 *   the zones' boundary exchange (MPI_Isend/Irecv/Waitall between ranks,
 *   copies within one); every 10 steps the residual
 *   through MPI_Allreduce. Prints the time of the steps (slowest rank) and a
 *   checksum; -verify reruns the whole domain serially on rank 0 and
 *   compares (the result does not depend on the decomposition).
 *
 * hybrid_bench sendrecv [-bytes B] [-iters I] [-reps R]
 *   Thread t of rank r calls MPI_Sendrecv with thread t of rank r^1 on tag t,
 *   I times (default 20000, 8 bytes), inside one parallel region: the time
 *   per call (us, slowest thread), best of R runs (default 5). Needs
 *   MPI_THREAD_MULTIPLE and an even number of ranks.
 */
#include <mpi.h>
#include <omp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int id, zx, zy; /* position in the zone grid */
    int nx, ny;     /* interior points */
    int owner;
    double *u, *v;  /* (nx + 2) x (ny + 2), with a halo of one point */
} Zone;

typedef struct {
    int zx, zy, nx, ny, steps, uneven, verify;
} Problem;

#define AT(z, p, i, j) ((p)[(size_t)(j) * (size_t)((z)->nx + 2) + (size_t)(i)])

static void usage(void) __attribute__((noreturn));
static void usage(void) {
    fprintf(stderr,
            "usage: hybrid_bench mz [-zones ZX ZY] [-size NX NY] [-steps S] [-uneven] [-verify]\n"
            "       hybrid_bench sendrecv [-bytes B] [-iters I] [-reps R]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static int zone_width(const Problem* p, int zx) {
    return p->uneven ? p->nx * (1 + 3 * zx / (p->zx > 1 ? p->zx - 1 : 1)) / 2 : p->nx;
}

/* The source term at global point (gx, gy). */
static double source(int gx, int gy) { return 1e-3 * (double)((gx * 7 + gy * 13) % 11); }

/* Largest zone first to the least loaded rank. */
static void assign(Zone* zones, int n, int ranks) {
    double* load = (double*)calloc((size_t)ranks, sizeof(double));
    int* order = (int*)malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; ++i) order[i] = i;
    for (int i = 1; i < n; ++i)
        for (int k = i; k > 0 && zones[order[k]].nx * zones[order[k]].ny >
                                      zones[order[k - 1]].nx * zones[order[k - 1]].ny;
             --k) {
            int t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (int i = 0; i < n; ++i) {
        int best = 0;
        for (int r = 1; r < ranks; ++r)
            if (load[r] < load[best]) best = r;
        zones[order[i]].owner = best;
        load[best] += (double)zones[order[i]].nx * zones[order[i]].ny;
    }
    free(load);
    free(order);
}

static int x_offset(const Problem* p, int zx) {
    int off = 0;
    for (int k = 0; k < zx; ++k) off += zone_width(p, k);
    return off;
}

/* One Jacobi sweep in one zone; returns the squared change. */
static double sweep(Zone* z, int gx0, int gy0) {
    double change = 0;
#pragma omp parallel for schedule(static) reduction(+ : change)
    for (int j = 1; j <= z->ny; ++j)
        for (int i = 1; i <= z->nx; ++i) {
            const double nu = 0.25 * (AT(z, z->u, i - 1, j) + AT(z, z->u, i + 1, j) +
                                      AT(z, z->u, i, j - 1) + AT(z, z->u, i, j + 1) +
                                      source(gx0 + i, gy0 + j));
            const double d = nu - AT(z, z->u, i, j);
            change += d * d;
            AT(z, z->v, i, j) = nu;
        }
    /* Interior only: the halo keeps the neighbours' (or the wall's) values. */
#pragma omp parallel for schedule(static)
    for (int j = 1; j <= z->ny; ++j)
        memcpy(&AT(z, z->u, 1, j), &AT(z, z->v, 1, j), sizeof(double) * (size_t)z->nx);
    return change;
}

static Zone* zone_at(Zone* zones, const Problem* p, int zx, int zy) {
    if (zx < 0 || zy < 0 || zx >= p->zx || zy >= p->zy) return NULL;
    return &zones[zy * p->zx + zx];
}

/* Face f of zone z: 0 west, 1 east, 2 south, 3 north. Packs the boundary
 * (out) or unpacks into the halo (in). Faces shared by two zones have equal
 * lengths (zones of a column share a width, of a row a height). */
static int face_len(const Zone* z, int f) { return f < 2 ? z->ny : z->nx; }
static void face_pack(const Zone* z, int f, double* buf) {
    const int n = face_len(z, f);
    for (int k = 0; k < n; ++k)
        buf[k] = f == 0   ? AT(z, z->u, 1, k + 1)
                 : f == 1 ? AT(z, z->u, z->nx, k + 1)
                 : f == 2 ? AT(z, z->u, k + 1, 1)
                          : AT(z, z->u, k + 1, z->ny);
}
static void face_unpack(Zone* z, int f, const double* buf) {
    const int n = face_len(z, f);
    for (int k = 0; k < n; ++k) {
        if (f == 0) AT(z, z->u, 0, k + 1) = buf[k];
        else if (f == 1) AT(z, z->u, z->nx + 1, k + 1) = buf[k];
        else if (f == 2) AT(z, z->u, k + 1, 0) = buf[k];
        else AT(z, z->u, k + 1, z->ny + 1) = buf[k];
    }
}

static Zone* neighbour(Zone* zones, const Problem* p, const Zone* z, int f) {
    static const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
    return zone_at(zones, p, z->zx + dx[f], z->zy + dy[f]);
}

static void exchange(Zone* zones, const Problem* p, int rank, double** bufs, MPI_Request* reqs) {
    int nreq = 0;
    const int nz = p->zx * p->zy;
    for (int k = 0; k < nz; ++k) {
        Zone* z = &zones[k];
        if (z->owner != rank) continue;
        for (int f = 0; f < 4; ++f) {
            Zone* o = neighbour(zones, p, z, f);
            if (!o || o->owner == rank) continue;
            double* in = bufs[k * 8 + f];
            double* out = bufs[k * 8 + 4 + f];
            face_pack(z, f, out);
            MPI_Irecv(in, face_len(z, f), MPI_DOUBLE, o->owner, o->id * 4 + (f ^ 1), MPI_COMM_WORLD,
                      &reqs[nreq++]);
            MPI_Isend(out, face_len(z, f), MPI_DOUBLE, o->owner, z->id * 4 + f, MPI_COMM_WORLD,
                      &reqs[nreq++]);
        }
    }
    /* Zones of the same rank: straight copies. */
    double* tmp = bufs[nz * 8];
    for (int k = 0; k < nz; ++k) {
        Zone* z = &zones[k];
        if (z->owner != rank) continue;
        for (int f = 0; f < 4; ++f) {
            Zone* o = neighbour(zones, p, z, f);
            if (!o || o->owner != rank) continue;
            face_pack(o, f ^ 1, tmp);
            face_unpack(z, f, tmp);
        }
    }
    MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
    for (int k = 0; k < nz; ++k) {
        Zone* z = &zones[k];
        if (z->owner != rank) continue;
        for (int f = 0; f < 4; ++f) {
            Zone* o = neighbour(zones, p, z, f);
            if (o && o->owner != rank) face_unpack(z, f, bufs[k * 8 + f]);
        }
    }
}

static double checksum_of(const Zone* z) {
    double s = 0;
    for (int j = 1; j <= z->ny; ++j)
        for (int i = 1; i <= z->nx; ++i) s += AT(z, z->u, i, j) * (1 + (i + j) % 3);
    return s;
}

/* The whole domain as one zone, serially, for -verify. */
static double serial_checksum(const Problem* p) {
    Zone all = {0, 0, 0, x_offset(p, p->zx), p->ny * p->zy, 0, NULL, NULL};
    const size_t n = (size_t)(all.nx + 2) * (size_t)(all.ny + 2);
    all.u = (double*)calloc(n, sizeof(double));
    all.v = (double*)calloc(n, sizeof(double));
    omp_set_num_threads(1);
    for (int s = 0; s < 2 * p->steps; ++s) sweep(&all, 0, 0);
    /* The same weights as the zones' sums: by global position. */
    double sum = 0;
    for (int zy = 0; zy < p->zy; ++zy)
        for (int zx = 0; zx < p->zx; ++zx) {
            const int w = zone_width(p, zx), x0 = x_offset(p, zx), y0 = zy * p->ny;
            for (int j = 1; j <= p->ny; ++j)
                for (int i = 1; i <= w; ++i)
                    sum += AT(&all, all.u, x0 + i, y0 + j) * (1 + (i + j) % 3);
        }
    free(all.u);
    free(all.v);
    return sum;
}

static int run_mz(int argc, char** argv, int rank, int size) {
    Problem p = {4, 4, 96, 96, 100, 0, 0};
    for (int i = 2; i < argc; ++i) {
        if (!strcmp(argv[i], "-zones") && i + 2 < argc) {
            p.zx = atoi(argv[++i]);
            p.zy = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-size") && i + 2 < argc) {
            p.nx = atoi(argv[++i]);
            p.ny = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-steps") && i + 1 < argc) {
            p.steps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-uneven")) {
            p.uneven = 1;
        } else if (!strcmp(argv[i], "-verify")) {
            p.verify = 1;
        } else {
            usage();
        }
    }
    if (p.zx < 1 || p.zy < 1 || p.nx < 2 || p.ny < 2 || p.steps < 1) usage();
    const int nz = p.zx * p.zy;
    Zone* zones = (Zone*)calloc((size_t)nz, sizeof(Zone));
    for (int zy = 0; zy < p.zy; ++zy)
        for (int zx = 0; zx < p.zx; ++zx) {
            Zone* z = &zones[zy * p.zx + zx];
            z->id = zy * p.zx + zx;
            z->zx = zx;
            z->zy = zy;
            z->nx = zone_width(&p, zx);
            z->ny = p.ny;
        }
    assign(zones, nz, size);
    double** bufs = (double**)calloc((size_t)nz * 8 + 1, sizeof(double*));
    int longest = 0;
    for (int k = 0; k < nz; ++k) {
        Zone* z = &zones[k];
        longest = z->nx > longest ? z->nx : longest;
        longest = z->ny > longest ? z->ny : longest;
        if (z->owner != rank) continue;
        const size_t n = (size_t)(z->nx + 2) * (size_t)(z->ny + 2);
        z->u = (double*)calloc(n, sizeof(double));
        z->v = (double*)calloc(n, sizeof(double));
        for (int f = 0; f < 8; ++f)
            bufs[k * 8 + f] = (double*)malloc(sizeof(double) * (size_t)(face_len(z, f % 4) + 1));
    }
    bufs[nz * 8] = (double*)malloc(sizeof(double) * (size_t)(longest + 1));
    MPI_Request* reqs = (MPI_Request*)malloc(sizeof(MPI_Request) * (size_t)nz * 8);

    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    double residual = 0;
    for (int s = 0; s < p.steps; ++s) {
        double change = 0;
        for (int pass = 0; pass < 2; ++pass) {
            change = 0;
            for (int k = 0; k < nz; ++k) {
                Zone* z = &zones[k];
                if (z->owner == rank) change += sweep(z, x_offset(&p, z->zx), z->zy * p.ny);
            }
            exchange(zones, &p, rank, bufs, reqs);
        }
        if (s % 10 == 9 || s == p.steps - 1)
            MPI_Allreduce(&change, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    const double elapsed = MPI_Wtime() - start;
    double local = 0, sum = 0, slowest = 0;
    for (int k = 0; k < nz; ++k)
        if (zones[k].owner == rank) local += checksum_of(&zones[k]);
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int status = 0;
    if (rank == 0) {
        printf("mz zones %dx%d of %dx%d%s, %d steps, %d ranks x %d threads: %.4f s, residual %.6e, "
               "checksum %.12e\n",
               p.zx, p.zy, p.nx, p.ny, p.uneven ? " (uneven)" : "", p.steps, size,
               omp_get_max_threads(), slowest, sqrt(residual), sum);
        if (p.verify) {
            const double want = serial_checksum(&p);
            const int ok = fabs(sum - want) <= 1e-9 * fabs(want);
            printf("%s (serial checksum %.12e)\n",
                   ok ? "VERIFICATION SUCCESSFUL" : "VERIFICATION FAILED", want);
            status = !ok;
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int k = 0; k < nz * 8 + 1; ++k) free(bufs[k]);
    for (int k = 0; k < nz; ++k) {
        free(zones[k].u);
        free(zones[k].v);
    }
    free(bufs);
    free(reqs);
    free(zones);
    return status;
}

static int run_sendrecv(int argc, char** argv, int rank, int size) {
    int bytes = 8, iters = 20000, reps = 5;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-bytes")) bytes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-iters")) iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-reps")) reps = atoi(argv[i + 1]);
        else usage();
    }
    if (size % 2 || bytes < 1 || iters < 1 || reps < 1) usage();
    const int peer = rank ^ 1;
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        double slowest_thread = 0;
        MPI_Barrier(MPI_COMM_WORLD);
#pragma omp parallel reduction(max : slowest_thread)
        {
            const int t = omp_get_thread_num();
            char* out = (char*)calloc((size_t)bytes, 1);
            char* in = (char*)calloc((size_t)bytes, 1);
            /* Warm-up exchange, then the timed loop. */
            MPI_Sendrecv(out, bytes, MPI_BYTE, peer, t, in, bytes, MPI_BYTE, peer, t,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            const double start = MPI_Wtime();
            for (int i = 0; i < iters; ++i) {
                out[0] = (char)i;
                MPI_Sendrecv(out, bytes, MPI_BYTE, peer, t, in, bytes, MPI_BYTE, peer, t,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            slowest_thread = MPI_Wtime() - start;
            free(out);
            free(in);
        }
        double slowest = 0;
        MPI_Allreduce(&slowest_thread, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (slowest < best) best = slowest;
    }
    if (rank == 0)
        printf("sendrecv %d bytes, %d ranks x %d threads: %.3f us per call (best of %d)\n", bytes,
               size, omp_get_max_threads(), best / iters * 1e6, reps);
    return 0;
}

int main(int argc, char** argv) {
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int status = 2;
    if (argc > 1 && !strcmp(argv[1], "mz")) {
        status = run_mz(argc, argv, rank, size);
    } else if (argc > 1 && !strcmp(argv[1], "sendrecv")) {
        if (provided < MPI_THREAD_MULTIPLE) {
            if (rank == 0) fprintf(stderr, "hybrid_bench sendrecv: MPI_THREAD_MULTIPLE missing\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        status = run_sendrecv(argc, argv, rank, size);
    } else {
        usage();
    }
    MPI_Finalize();
    return status;
}
