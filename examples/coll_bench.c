/* OSU-style collective latency: the mean time of one call (the slowest rank's
 * mean) for every collective of MPI 3.1 chapter 5 and its nonblocking form
 * (the I-call followed at once by MPI_Wait), by message size. A standard MPI
 * program: build it with any mpicc to compare.
 *   mpcrun -n 4 ./coll_bench [-ops barrier,allreduce,igather,...] [-min B] [-max B]
 *                            [-sizes B1,B2,...] [-time S] [-iters N] [-reps R] [-sync 1]
 * Operations: barrier bcast reduce allreduce gather gatherv scatter scatterv
 * allgather allgatherv alltoall alltoallv alltoallw reduce_scatter
 * reduce_scatter_block scan exscan, and each with an "i" in front (ibarrier,
 * igather, ...); "all" (the default) is every one, "blocking" and
 * "nonblocking" the two halves. Sizes are powers of two from -min to -max
 * bytes (default 8 to 1 MiB; -sizes lists them instead) of one rank's block: what a rank sends to (or
 * receives from) one peer, the broadcast or reduced vector, a rank's part of
 * a Reduce_scatter. Roots are rank 0; the v and w forms move the same blocks
 * as the plain ones. Iterations per size are chosen so that a size takes
 * about -time seconds (default 0.2), unless -iters fixes them; with -reps R
 * each size is timed R times and the median printed. By default the calls
 * follow each other (a rooted collective whose members need not wait for
 * each other may then overlap the next call: throughput); with -sync 1 every
 * call starts after a barrier and only the call is timed, as the OSU
 * micro-benchmarks do (latency). Buffers are
 * MPI_DOUBLE (MPI_SUM for reductions) and the results of one call per size
 * are checked.
 *
 * Output, one line per operation and size, machine-readable:
 *   coll <op> <bytes> <ranks> <latency_us> <iterations>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV,
    ALLTOALL, ALLTOALLV, ALLTOALLW, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, SCAN, EXSCAN, NKINDS
};
static const char* kNames[NKINDS] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan"};
#define NOPS (2 * NKINDS) /* op k < NKINDS blocking, NKINDS + k its nonblocking form */

static int rank, size;
static double *sendbuf, *recvbuf;
static int *counts, *displs, *wcounts, *wdispls; /* v: n per rank at r*n; w: bytes */
static MPI_Datatype* wtypes;

/* True when the comma-separated list names the operation (whole names only:
 * "allreduce" does not select "reduce"). */
static int listed(const char* list, const char* name) {
    const size_t len = strlen(name);
    for (const char* p = list; p; p = strchr(p, ',')) {
        if (*p == ',') ++p;
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0')) return 1;
    }
    return 0;
}

static void op_name(int op, char* out) {
    sprintf(out, "%s%s", op >= NKINDS ? "i" : "", kNames[op % NKINDS]);
}

static void set_counts(int n) {
    for (int r = 0; r < size; ++r) {
        counts[r] = n;
        displs[r] = r * n;
        wcounts[r] = n;
        wdispls[r] = r * n * (int)sizeof(double);
        wtypes[r] = MPI_DOUBLE;
    }
}

static void run_once(int op, int n) {
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Datatype d = MPI_DOUBLE;
    double *s = sendbuf, *r = recvbuf;
    MPI_Request q = MPI_REQUEST_NULL;
    switch (op) {
    case BARRIER: MPI_Barrier(w); break;
    case BCAST: MPI_Bcast(s, n, d, 0, w); break;
    case REDUCE: MPI_Reduce(s, r, n, d, MPI_SUM, 0, w); break;
    case ALLREDUCE: MPI_Allreduce(s, r, n, d, MPI_SUM, w); break;
    case GATHER: MPI_Gather(s, n, d, r, n, d, 0, w); break;
    case GATHERV: MPI_Gatherv(s, n, d, r, counts, displs, d, 0, w); break;
    case SCATTER: MPI_Scatter(s, n, d, r, n, d, 0, w); break;
    case SCATTERV: MPI_Scatterv(s, counts, displs, d, r, n, d, 0, w); break;
    case ALLGATHER: MPI_Allgather(s, n, d, r, n, d, w); break;
    case ALLGATHERV: MPI_Allgatherv(s, n, d, r, counts, displs, d, w); break;
    case ALLTOALL: MPI_Alltoall(s, n, d, r, n, d, w); break;
    case ALLTOALLV: MPI_Alltoallv(s, counts, displs, d, r, counts, displs, d, w); break;
    case ALLTOALLW:
        MPI_Alltoallw(s, wcounts, wdispls, wtypes, r, wcounts, wdispls, wtypes, w);
        break;
    case REDUCE_SCATTER: MPI_Reduce_scatter(s, r, counts, d, MPI_SUM, w); break;
    case REDUCE_SCATTER_BLOCK: MPI_Reduce_scatter_block(s, r, n, d, MPI_SUM, w); break;
    case SCAN: MPI_Scan(s, r, n, d, MPI_SUM, w); break;
    case EXSCAN: MPI_Exscan(s, r, n, d, MPI_SUM, w); break;
    case NKINDS + BARRIER: MPI_Ibarrier(w, &q); break;
    case NKINDS + BCAST: MPI_Ibcast(s, n, d, 0, w, &q); break;
    case NKINDS + REDUCE: MPI_Ireduce(s, r, n, d, MPI_SUM, 0, w, &q); break;
    case NKINDS + ALLREDUCE: MPI_Iallreduce(s, r, n, d, MPI_SUM, w, &q); break;
    case NKINDS + GATHER: MPI_Igather(s, n, d, r, n, d, 0, w, &q); break;
    case NKINDS + GATHERV: MPI_Igatherv(s, n, d, r, counts, displs, d, 0, w, &q); break;
    case NKINDS + SCATTER: MPI_Iscatter(s, n, d, r, n, d, 0, w, &q); break;
    case NKINDS + SCATTERV: MPI_Iscatterv(s, counts, displs, d, r, n, d, 0, w, &q); break;
    case NKINDS + ALLGATHER: MPI_Iallgather(s, n, d, r, n, d, w, &q); break;
    case NKINDS + ALLGATHERV: MPI_Iallgatherv(s, n, d, r, counts, displs, d, w, &q); break;
    case NKINDS + ALLTOALL: MPI_Ialltoall(s, n, d, r, n, d, w, &q); break;
    case NKINDS + ALLTOALLV:
        MPI_Ialltoallv(s, counts, displs, d, r, counts, displs, d, w, &q);
        break;
    case NKINDS + ALLTOALLW:
        MPI_Ialltoallw(s, wcounts, wdispls, wtypes, r, wcounts, wdispls, wtypes, w, &q);
        break;
    case NKINDS + REDUCE_SCATTER: MPI_Ireduce_scatter(s, r, counts, d, MPI_SUM, w, &q); break;
    case NKINDS + REDUCE_SCATTER_BLOCK:
        MPI_Ireduce_scatter_block(s, r, n, d, MPI_SUM, w, &q);
        break;
    case NKINDS + SCAN: MPI_Iscan(s, r, n, d, MPI_SUM, w, &q); break;
    case NKINDS + EXSCAN: MPI_Iexscan(s, r, n, d, MPI_SUM, w, &q); break;
    }
    if (op >= NKINDS) MPI_Wait(&q, MPI_STATUS_IGNORE);
}

/* Element i of rank r's send buffer. */
static double input(int r, long i) {
    return r + 1 + i % 7;
}

/* Fills the inputs so that every result element is known, runs once, checks. */
static int check(int op, int n) {
    const int kind = op % NKINDS;
    for (long i = 0; i < (long)n * size; ++i) sendbuf[i] = input(rank, i);
    memset(recvbuf, 0, sizeof(double) * (size_t)n * (size_t)size);
    run_once(op, n);
    int ok = 1;
    const double rs = (double)size * (size + 1) / 2;
    for (long i = 0; i < n && ok; ++i) {
        const long mine = (long)rank * n + i; /* my block's element i in a vector of blocks */
        switch (kind) {
        case BCAST: ok = sendbuf[i] == input(0, i); break;
        case REDUCE: ok = rank != 0 || recvbuf[i] == rs + (double)size * (i % 7); break;
        case ALLREDUCE: ok = recvbuf[i] == rs + (double)size * (i % 7); break;
        case GATHER:
        case GATHERV:
            for (int r = 0; r < size && ok && rank == 0; ++r) ok = recvbuf[r * n + i] == input(r, i);
            break;
        case SCATTER:
        case SCATTERV: ok = recvbuf[i] == input(0, mine); break;
        case ALLGATHER:
        case ALLGATHERV:
            for (int r = 0; r < size && ok; ++r) ok = recvbuf[r * n + i] == input(r, i);
            break;
        case ALLTOALL:
        case ALLTOALLV:
        case ALLTOALLW:
            for (int r = 0; r < size && ok; ++r) ok = recvbuf[r * n + i] == input(r, mine);
            break;
        case REDUCE_SCATTER:
        case REDUCE_SCATTER_BLOCK: ok = recvbuf[i] == rs + (double)size * (mine % 7); break;
        case SCAN: ok = recvbuf[i] == (double)(rank + 1) * (rank + 2) / 2 + (rank + 1) * (i % 7); break;
        case EXSCAN: ok = rank == 0 || recvbuf[i] == (double)rank * (rank + 1) / 2 + rank * (i % 7); break;
        default: break;
        }
    }
    return ok;
}

static int sync_calls;

static double timed(int op, int n, int iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double mine = 0, slowest = 0;
    if (sync_calls) {
        for (int i = 0; i < iters; ++i) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            run_once(op, n);
            mine += MPI_Wtime() - start;
        }
        mine /= iters;
    } else {
        double start = MPI_Wtime();
        for (int i = 0; i < iters; ++i) run_once(op, n);
        mine = (MPI_Wtime() - start) / iters;
    }
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static int by_value(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t min = 8, max = 1 << 20;
    double target = 0.2;
    int fixed_iters = 0, reps = 1, want[NOPS];
    const char* size_list = NULL;
    for (int op = 0; op < NOPS; ++op) want[op] = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-min") == 0) min = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "-max") == 0) max = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "-time") == 0) target = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-iters") == 0) fixed_iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-sync") == 0) sync_calls = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-sizes") == 0) size_list = argv[i + 1];
        else if (strcmp(argv[i], "-ops") == 0) {
            const char* list = argv[i + 1];
            for (int op = 0; op < NOPS; ++op) {
                char name[32];
                op_name(op, name);
                want[op] = listed(list, name) || listed(list, "all") ||
                           (op < NKINDS && listed(list, "blocking")) ||
                           (op >= NKINDS && listed(list, "nonblocking"));
            }
        } else {
            if (rank == 0) fprintf(stderr, "coll_bench: unknown option %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (min < 8) min = 8;
    if (reps < 1) reps = 1;
    size_t sizes[64];
    int nsizes = 0;
    if (size_list) {
        for (const char* p = size_list; p && *p && nsizes < 64; p = strchr(p, ',')) {
            if (*p == ',') ++p;
            const size_t b = (size_t)atol(p);
            sizes[nsizes++] = b < 8 ? 8 : b;
            if (b > max) max = b;
        }
    } else {
        for (size_t b = min; b <= max && nsizes < 64; b *= 2) sizes[nsizes++] = b;
    }
    const size_t max_elems = max / sizeof(double) > 0 ? max / sizeof(double) : 1;
    sendbuf = (double*)malloc(sizeof(double) * max_elems * (size_t)size);
    recvbuf = (double*)malloc(sizeof(double) * max_elems * (size_t)size);
    counts = (int*)malloc(sizeof(int) * (size_t)size);
    displs = (int*)malloc(sizeof(int) * (size_t)size);
    wcounts = (int*)malloc(sizeof(int) * (size_t)size);
    wdispls = (int*)malloc(sizeof(int) * (size_t)size);
    wtypes = (MPI_Datatype*)malloc(sizeof(MPI_Datatype) * (size_t)size);
    double* samples = (double*)malloc(sizeof(double) * (size_t)reps);
    if (!sendbuf || !recvbuf || !counts || !displs || !wcounts || !wdispls || !wtypes || !samples)
        MPI_Abort(MPI_COMM_WORLD, 3);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    if (rank == 0)
        printf("# coll_bench, %d ranks, %s, %.60s\n# coll op bytes ranks latency_us iterations\n", size,
               sync_calls ? "each call after a barrier" : "calls back to back", version);
    int failures = 0;
    for (int op = 0; op < NOPS; ++op) {
        if (!want[op]) continue;
        char name[32];
        op_name(op, name);
        for (int si = 0; si < nsizes; ++si) {
            const size_t bytes = sizes[si];
            const int n = (int)(bytes / sizeof(double));
            if (op % NKINDS == BARRIER && si > 0) break;
            set_counts(n);
            int ok = check(op, n), all_ok = 0;
            MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            if (!all_ok) ++failures;
            int iters = fixed_iters;
            if (iters <= 0) {
                /* Calibrate on calls that take at least a tenth of the target
                 * (a few calls can fall in a quiet moment of a busy machine);
                 * everyone takes rank 0's count. */
                double t = 0;
                for (int k = 10; k <= 100000; k *= 4) {
                    t = timed(op, n, k);
                    int enough = t * k >= target / 10;
                    MPI_Bcast(&enough, 1, MPI_INT, 0, MPI_COMM_WORLD);
                    if (enough) break;
                }
                iters = t > 0 ? (int)(target / t) : 1000;
                if (iters < 10) iters = 10;
                if (iters > 200000) iters = 200000;
                MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
            }
            for (int i = 0; i < iters / 10 + 1; ++i) run_once(op, n); /* warm-up */
            for (int k = 0; k < reps; ++k) samples[k] = timed(op, n, iters);
            qsort(samples, (size_t)reps, sizeof(double), by_value);
            if (rank == 0)
                printf("coll %s %zu %d %.3f %d%s\n", name, op % NKINDS == BARRIER ? (size_t)0 : bytes,
                       size, samples[reps / 2] * 1e6, iters, all_ok ? "" : " WRONG");
            fflush(stdout);
        }
    }
    free(samples);
    free(wtypes);
    free(wdispls);
    free(wcounts);
    free(displs);
    free(counts);
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
