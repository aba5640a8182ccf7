/* Partitioned send against the same data in separate Isends (issue 31): rank
 * 0 sends B bytes (default 1 MiB) in P parts (default 16) to rank 1 from T
 * OpenMP threads (default 4); each thread fills P/T parts, one after the
 * other, with W microseconds of compute per part (default 20), and hands each
 * part over as soon as it is written:
 *   partitioned: one MPI_Psend_init request, MPI_Start, MPI_Pready per part
 *                (from the thread that wrote it), MPI_Wait;
 *   isend:       one MPI_Isend of the part's bytes per part (tag = part,
 *                MPI_THREAD_MULTIPLE), MPI_Waitall of all of them.
 * Rank 1 (one thread) overlaps: it polls its parts (MPI_Parrived, or MPI_Test
 * on each of P MPI_Irecvs posted at the start) and consumes each as it
 * arrives (checks it, plus W/4 microseconds of compute), then MPI_Wait(all).
 * The line "compute" is the sender's threads alone (fill and compute, no
 * MPI): the bound both forms approach when the transfer hides entirely.
 *
 * A standard MPI 4 + OpenMP program: builds with any MPI's wrapper,
 *   mpicc -fopenmp -O2 part_bench.c -o part_bench
 * (Open MPI 4.1 has no partitioned calls, MPI 4 or its MPIX_ extension: there
 * it measures the Isend form only.)
 *   mpcrun -n 2 [-N 2] ./part_bench [-threads T] [-parts P] [-bytes B]
 *                                   [-work W] [-iters N] [-reps R]
 * Iterations run back to back (each side's completion needs the other's
 * part of the run); the forms alternate R times (default 5) and medians of
 * the slowest rank's mean time per iteration are printed, machine-readable:
 *   part <threads> <parts> <bytes> <work_us> <partitioned_us> <isend_us> <ratio> <compute_us>
 * with ratio = partitioned / isend ("-" when partitioned is not available).
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(FIBERMPI) || MPI_VERSION >= 4
#define HAVE_PARTITIONED 1
#endif

static int rank, size, threads = 4, parts = 16, iters = 200, reps = 5;
static long bytes = 1L << 20;
static double work_us = 20;
static double* buf;
static size_t per; /* doubles per part */
static int wrong;

static double elem(int it, size_t k) {
    return (double)(it * 7919 + (int)(k % 100003));
}

/* Busy compute for us microseconds (the work a real code does per part). */
static void compute(double us) {
    if (us <= 0) return;
    const double end = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < end) {
    }
}

static void fill(int it, int p) {
    double* d = buf + (size_t)p * per;
    for (size_t k = 0; k < per; ++k) d[k] = elem(it, (size_t)p * per + k);
    compute(work_us);
}

/* Checks part p of iteration it: every element in a checked iteration, the
 * ends otherwise (a full check of 1 MiB would dwarf the transfer). */
static void consume(int it, int p, int full) {
    const double* d = buf + (size_t)p * per;
    const size_t base = (size_t)p * per;
    for (size_t k = 0; k < per; k += full ? 1 : (per > 1 ? per - 1 : 1))
        if (d[k] != elem(it, base + k)) {
            if (!wrong)
                fprintf(stderr, "WRONG: iteration %d part %d element %zu is %g, expected %g\n", it,
                        p, k, d[k], elem(it, base + k));
            wrong = 1;
        }
    compute(work_us / 4);
}

/* The parts of thread t: t*P/T .. (t+1)*P/T - 1. */
static int first_part(int t, int nt) {
    return t * parts / nt;
}

#ifdef HAVE_PARTITIONED
static double run_partitioned(int n, int first_it) {
    MPI_Request req;
    if (rank == 0)
        MPI_Psend_init(buf, parts, (MPI_Count)per, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &req);
    else
        MPI_Precv_init(buf, parts, (MPI_Count)per, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &req);
    char* seen = calloc((size_t)parts, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
        const int it = first_it + i;
        MPI_Start(&req);
        if (rank == 0) {
#pragma omp parallel num_threads(threads)
            {
                const int t = omp_get_thread_num(), nt = omp_get_num_threads();
                for (int p = first_part(t, nt); p < first_part(t + 1, nt); ++p) {
                    fill(it, p);
                    MPI_Pready(p, req);
                }
            }
        } else {
            memset(seen, 0, (size_t)(unsigned)parts);
            for (int left = parts; left > 0;)
                for (int p = 0; p < parts; ++p) {
                    int flag = 0;
                    if (seen[p]) continue;
                    MPI_Parrived(req, p, &flag);
                    if (!flag) continue;
                    seen[p] = 1;
                    --left;
                    consume(it, p, i == 0 || i == n - 1);
                }
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    const double t = (MPI_Wtime() - t0) / n;
    free(seen);
    MPI_Request_free(&req);
    return t;
}
#endif

static double run_isend(int n, int first_it) {
    MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)parts);
    char* seen = calloc((size_t)parts, 1);
    const int count = (int)per;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
        const int it = first_it + i;
        if (rank == 0) {
#pragma omp parallel num_threads(threads)
            {
                const int t = omp_get_thread_num(), nt = omp_get_num_threads();
                for (int p = first_part(t, nt); p < first_part(t + 1, nt); ++p) {
                    fill(it, p);
                    MPI_Isend(buf + (size_t)p * per, count, MPI_DOUBLE, 1, p, MPI_COMM_WORLD,
                              &reqs[p]);
                }
            }
            MPI_Waitall(parts, reqs, MPI_STATUSES_IGNORE);
        } else {
            for (int p = 0; p < parts; ++p)
                MPI_Irecv(buf + (size_t)p * per, count, MPI_DOUBLE, 0, p, MPI_COMM_WORLD, &reqs[p]);
            memset(seen, 0, (size_t)(unsigned)parts);
            for (int left = parts; left > 0;)
                for (int p = 0; p < parts; ++p) {
                    int flag = 0;
                    if (seen[p]) continue;
                    MPI_Test(&reqs[p], &flag, MPI_STATUS_IGNORE);
                    if (!flag) continue;
                    seen[p] = 1;
                    --left;
                    consume(it, p, i == 0 || i == n - 1);
                }
        }
    }
    const double t = (MPI_Wtime() - t0) / n;
    free(seen);
    free(reqs);
    return t;
}

/* The sender's threads alone; the receiver waits in the barrier. */
static double run_compute(int n, int first_it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (rank == 0)
        for (int i = 0; i < n; ++i) {
#pragma omp parallel num_threads(threads)
            {
                const int t = omp_get_thread_num(), nt = omp_get_num_threads();
                for (int p = first_part(t, nt); p < first_part(t + 1, nt); ++p)
                    fill(first_it + i, p);
            }
        }
    const double t = (MPI_Wtime() - t0) / n;
    return t;
}

static double slowest(double t) {
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static int cmp(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char** argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) break;
        if (!strcmp(a, "-threads"))
            threads = atoi(v);
        else if (!strcmp(a, "-parts"))
            parts = atoi(v);
        else if (!strcmp(a, "-bytes"))
            bytes = atol(v);
        else if (!strcmp(a, "-work"))
            work_us = atof(v);
        else if (!strcmp(a, "-iters"))
            iters = atoi(v);
        else if (!strcmp(a, "-reps"))
            reps = atoi(v);
        else
            continue;
        ++i;
    }
    if (size != 2 || provided < MPI_THREAD_MULTIPLE || threads < 1 || parts < threads ||
        bytes < (long)(parts * sizeof(double)) || iters < 1 || reps < 1) {
        if (rank == 0)
            fprintf(stderr,
                    "part_bench: 2 ranks, MPI_THREAD_MULTIPLE (have %d), threads <= parts, "
                    "at least a double per part\n",
                    provided);
        MPI_Finalize();
        return 2;
    }
    per = (size_t)bytes / sizeof(double) / (size_t)parts;
    buf = malloc(per * (size_t)parts * sizeof(double));
    double* tp = malloc(sizeof(double) * (size_t)reps);
    double* ti = malloc(sizeof(double) * (size_t)reps);
    double* tc = malloc(sizeof(double) * (size_t)reps);
    int it = 0;
    /* Warm-up (connections, first touch, thread pools), checked too. */
#ifdef HAVE_PARTITIONED
    run_partitioned(2, it);
    it += 2;
#endif
    run_isend(2, it);
    it += 2;
    for (int r = 0; r < reps; ++r) {
        /* The first of each pair alternates, against drift in the machine. */
        for (int k = 0; k < 2; ++k) {
            if ((k + r) % 2 == 0) {
#ifdef HAVE_PARTITIONED
                tp[r] = slowest(run_partitioned(iters, it));
#else
                tp[r] = 0;
#endif
            } else {
                ti[r] = slowest(run_isend(iters, it));
            }
            it += iters;
        }
        tc[r] = slowest(run_compute(iters, it));
    }
    int any_wrong;
    MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        const double p = median(tp, reps) * 1e6, s = median(ti, reps) * 1e6,
                     c = median(tc, reps) * 1e6;
#ifdef HAVE_PARTITIONED
        printf("part %d %d %zu %g %.2f %.2f %.3f %.2f\n", threads, parts,
               per * (size_t)parts * sizeof(double), work_us, p, s, p / s, c);
#else
        printf("part %d %d %zu %g - %.2f - %.2f\n", threads, parts,
               per * (size_t)parts * sizeof(double), work_us, s, c);
        (void)p;
#endif
        if (any_wrong) printf("WRONG results\n");
    }
    free(tp);
    free(ti);
    free(tc);
    free(buf);
    MPI_Finalize();
    return any_wrong;
}
