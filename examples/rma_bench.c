/* One-sided communication benchmarks, a standard MPI program (builds with any
 * mpicc, so the same source gives the side-by-side comparison):
 *   mpcrun -n 2 ./rma_bench latency          mpirun -n 2 ./rma_bench.openmpi latency
 *
 * Tests (the first argument):
 *   latency   rank 0 -> rank 1 under MPI_Win_lock_all: 8-byte Put + Win_flush,
 *             Get + Win_flush, Accumulate (MPI_SUM of a double) + Win_flush, and
 *             Fetch_and_op (MPI_SUM of a long) + Win_flush; us per operation.
 *             Other ranks, and rank 1, wait in MPI_Barrier meanwhile.
 *   bandwidth rank 0 puts -size BYTES (default 1 MiB) to rank 1, -window W
 *             puts (default 16) then one Win_flush, under lock_all; MB/s.
 *   fop       every rank does Fetch_and_op (MPI_SUM, long) + Win_flush on one
 *             counter of rank 0 under lock_all; total operations per second
 *             (the counter is checked: no increment may be lost).
 *   fence     MPI_Win_fence on every rank, us per fence.
 *   busy      rank 0 Gets 8 bytes (Get + Win_flush) from the last rank: first
 *             while that rank waits in MPI_Barrier (unloaded), then while it
 *             computes for -busy MS milliseconds (default 100) without any MPI
 *             call; prints both times (us) and their ratio. Meant for ranks in
 *             different node processes (mpcrun -N 2), where the target's node
 *             must answer the Get while the target computes.
 * Options: -reps R (timed repetitions, the median is printed with the best
 * and worst; default 7), -time S (seconds per repetition, default 0.2),
 * -create (MPI_Win_create on malloc'd memory instead of MPI_Win_allocate).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, reps = 7, use_create = 0;
static double seconds = 0.2;

static int compare_doubles(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* Median, best and worst of n samples (sorted in place). */
static void summary(const char* what, const char* unit, double* v, int n, int higher_better) {
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    double best = higher_better ? v[n - 1] : v[0], worst = higher_better ? v[0] : v[n - 1];
    printf("%-44s %12.3f %s  (best %.3f, worst %.3f, %d runs)\n", what, v[n / 2], unit, best,
           worst, n);
    fflush(stdout);
}

static MPI_Win make_window(MPI_Aint bytes, void** base) {
    MPI_Win win;
    if (use_create) {
        *base = calloc((size_t)bytes, 1);
        MPI_Win_create(*base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, base, &win);
        memset(*base, 0, (size_t)bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

static void free_window(MPI_Win* win, void* base) {
    MPI_Win_free(win);
    if (use_create) free(base);
}

/* Iterations that take about `seconds`, decided by rank 0 from a trial. */
static long calibrate(double per_op_guess) {
    long n = (long)(seconds / per_op_guess);
    if (n < 10) n = 10;
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return n;
}

enum Op { kPut, kGet, kAcc, kFop };

static double time_ops(MPI_Win win, enum Op op, long iters) {
    char buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double d = 1.0, dres;
    long one = 1, res;
    double start = MPI_Wtime();
    for (long i = 0; i < iters; ++i) {
        switch (op) {
            case kPut: MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win); break;
            case kGet: MPI_Get(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win); break;
            case kAcc: MPI_Accumulate(&d, 1, MPI_DOUBLE, 1, 8, 1, MPI_DOUBLE, MPI_SUM, win); break;
            case kFop: MPI_Fetch_and_op(&one, &res, MPI_LONG, 1, 16, MPI_SUM, win); break;
        }
        MPI_Win_flush(1, win);
    }
    (void)dres;
    return (MPI_Wtime() - start) / (double)iters * 1e6;
}

static void latency(void) {
    void* base;
    MPI_Win win = make_window(64, &base);
    const char* names[] = {"Put 8 B + Win_flush (us)", "Get 8 B + Win_flush (us)",
                           "Accumulate 8 B (SUM double) + flush (us)",
                           "Fetch_and_op (SUM long) + flush (us)"};
    for (int op = kPut; op <= kFop; ++op) {
        double v[64];
        long iters = 0;
        if (rank == 0) {
            MPI_Win_lock_all(0, win);
            double trial = time_ops(win, (enum Op)op, 200);
            MPI_Win_unlock_all(win);
            iters = (long)(seconds / (trial * 1e-6));
        }
        iters = calibrate(iters > 0 ? seconds / (double)iters : 1e-6);
        for (int r = 0; r < reps; ++r) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                MPI_Win_lock_all(0, win);
                v[r] = time_ops(win, (enum Op)op, iters);
                MPI_Win_unlock_all(win);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (rank == 0) summary(names[op], "us", v, reps, 0);
    }
    free_window(&win, base);
}

static void bandwidth(size_t bytes, int window) {
    void* base;
    MPI_Win win = make_window((MPI_Aint)bytes * window, &base);
    char* src = malloc(bytes * (size_t)window);
    memset(src, 7, bytes * (size_t)window);
    double v[64];
    long iters = calibrate(bytes * (double)window / 5e9);
    for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock_all(0, win);
            double start = MPI_Wtime();
            for (long i = 0; i < iters; ++i) {
                for (int k = 0; k < window; ++k)
                    MPI_Put(src + (size_t)k * bytes, (int)bytes, MPI_BYTE, 1,
                            (MPI_Aint)k * (MPI_Aint)bytes, (int)bytes, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - start;
            MPI_Win_unlock_all(win);
            v[r] = (double)bytes * window * (double)iters / t / 1e6;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) {
        char what[80];
        snprintf(what, sizeof what, "Put %zu B x %d + Win_flush (MB/s)", bytes, window);
        summary(what, "MB/s", v, reps, 1);
    }
    free(src);
    free_window(&win, base);
}

static void fop(void) {
    void* base;
    MPI_Win win = make_window(64, &base);
    double v[64];
    long iters = calibrate(1e-6 * size);
    long expected = 0;
    for (int r = 0; r < reps; ++r) {
        MPI_Win_lock_all(0, win);
        long one = 1, old;
        /* From a common start to the last rank's end: a rank that runs its
         * loop alone (the others not started yet) must not count as fast. */
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        for (long i = 0; i < iters; ++i) {
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double mine = MPI_Wtime() - start, slowest;
        MPI_Win_unlock_all(win);
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        v[r] = (double)iters * size / slowest / 1e6;
        expected += iters * size;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long got;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Get(&got, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
        MPI_Win_unlock(0, win);
        if (got != expected) {
            fprintf(stderr, "fop: the counter is %ld, expected %ld\n", got, expected);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        char what[80];
        snprintf(what, sizeof what, "Fetch_and_op on one counter, %d ranks (Mops/s)", size);
        summary(what, "Mops/s", v, reps, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free_window(&win, base);
}

static void fence(void) {
    void* base;
    MPI_Win win = make_window(64, &base);
    double v[64];
    MPI_Win_fence(0, win);
    long iters = calibrate(5e-6 * size);
    for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        for (long i = 0; i < iters; ++i) MPI_Win_fence(0, win);
        double mine = (MPI_Wtime() - start) / (double)iters * 1e6, slowest;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        v[r] = slowest;
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 0) {
        char what[80];
        snprintf(what, sizeof what, "Win_fence, %d ranks (us)", size);
        summary(what, "us", v, reps, 0);
    }
    free_window(&win, base);
}

/* Spins for ms milliseconds without calling MPI (MPI_Wtime is allowed: it is
 * local and needs no progress, but plain clock reads keep the point clear). */
#include <time.h>
static void compute(double ms) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile double x = 1.0;
    do {
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) * 1e-6 < ms);
}

static void busy(double busy_ms) {
    void* base;
    MPI_Win win = make_window(64, &base);
    const int target = size - 1;
    double idle[64], loaded[64];
    char buf[8];
    for (int r = 0; r < reps; ++r) {
        /* Unloaded: the target waits in MPI_Barrier. */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
            MPI_Get(buf, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
            MPI_Win_flush(target, win);
            double start = MPI_Wtime();
            for (int i = 0; i < 100; ++i) {
                MPI_Get(buf, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
                MPI_Win_flush(target, win);
            }
            idle[r] = (MPI_Wtime() - start) / 100 * 1e6;
            MPI_Win_unlock(target, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* Loaded: the target computes; rank 0 starts once it is under way. */
        if (rank == target) {
            compute(busy_ms);
        } else if (rank == 0) {
            compute(busy_ms / 10);
            MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
            double start = MPI_Wtime();
            MPI_Get(buf, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
            MPI_Win_flush(target, win);
            loaded[r] = (MPI_Wtime() - start) * 1e6;
            MPI_Win_unlock(target, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) {
        summary("Get 8 B + flush, target waiting in MPI (us)", "us", idle, reps, 0);
        char what[96];
        snprintf(what, sizeof what, "Get 8 B + flush (incl. lock), target computing %g ms (us)",
                 busy_ms);
        summary(what, "us", loaded, reps, 0);
        printf("%-44s %12.1f x\n", "ratio loaded / unloaded (medians)",
               loaded[reps / 2] / idle[reps / 2]);
    }
    free_window(&win, base);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* test = argc > 1 ? argv[1] : "latency";
    size_t bytes = 1 << 20;
    int window = 16;
    double busy_ms = 100;
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "-create") == 0) use_create = 1;
        else if (i + 1 < argc && strcmp(argv[i], "-reps") == 0) reps = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "-time") == 0) seconds = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "-size") == 0) bytes = (size_t)atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "-window") == 0) window = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "-busy") == 0) busy_ms = atof(argv[++i]);
    }
    if (reps < 1) reps = 1;
    if (reps > 64) reps = 64;
    if (size < 2 && strcmp(test, "fence") != 0 && strcmp(test, "fop") != 0) {
        if (rank == 0) fprintf(stderr, "rma_bench %s needs at least 2 ranks\n", test);
        MPI_Finalize();
        return 1;
    }
    if (strcmp(test, "latency") == 0) latency();
    else if (strcmp(test, "bandwidth") == 0) bandwidth(bytes, window);
    else if (strcmp(test, "fop") == 0) fop();
    else if (strcmp(test, "fence") == 0) fence();
    else if (strcmp(test, "busy") == 0) busy(busy_ms);
    else if (rank == 0) fprintf(stderr, "unknown test %s\n", test);
    MPI_Finalize();
    return 0;
}
