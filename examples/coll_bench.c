/* OSU-style collective latency: the mean time of one call (the slowest rank's
 * mean) for Barrier, Bcast, Reduce, Allreduce, Allgather and Alltoall, by
 * message size. A standard MPI program: build it with any mpicc to compare.
 *   mpcrun -n 4 ./coll_bench [-ops barrier,allreduce,...] [-min B] [-max B]
 *                            [-time S] [-iters N]
 * Sizes are powers of two from -min to -max bytes per rank (default 8 to 1 MiB);
 * iterations per size are chosen so that a size takes about -time seconds
 * (default 0.2), unless -iters fixes them. Buffers are MPI_DOUBLE (MPI_SUM for
 * reductions) and the results of the last call are checked.
 *
 * Output, one line per operation and size, machine-readable:
 *   coll <op> <bytes> <ranks> <latency_us> <iterations>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, ALLGATHER, ALLTOALL, NOPS };
static const char* kNames[NOPS] = {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall"};

static int rank, size;

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
static double *sendbuf, *recvbuf;

static void run_once(int op, int n) {
    switch (op) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(sendbuf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(sendbuf, recvbuf, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(sendbuf, recvbuf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLGATHER:
        MPI_Allgather(sendbuf, n, MPI_DOUBLE, recvbuf, n, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(sendbuf, n, MPI_DOUBLE, recvbuf, n, MPI_DOUBLE, MPI_COMM_WORLD);
        break;
    }
}

/* Fills the inputs so that every result element is known, runs once, checks. */
static int check(int op, int n) {
    for (int i = 0; i < n * size; ++i) sendbuf[i] = rank + 1 + i % 7;
    memset(recvbuf, 0, sizeof(double) * (size_t)n * (size_t)size);
    run_once(op, n);
    int ok = 1;
    for (int i = 0; i < n && ok; ++i) {
        const double sum = (double)size * (size + 1) / 2 + (double)size * (i % 7);
        switch (op) {
        case BCAST: ok = sendbuf[i] == 1 + i % 7; break;
        case REDUCE: ok = rank != 0 || recvbuf[i] == sum; break;
        case ALLREDUCE: ok = recvbuf[i] == sum; break;
        case ALLGATHER:
        case ALLTOALL:
            for (int r = 0; r < size && ok; ++r) ok = recvbuf[r * n + i] == r + 1 + (i + (op == ALLTOALL ? rank * n : 0)) % 7;
            break;
        default: break;
        }
    }
    return ok;
}

static double timed(int op, int n, int iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) run_once(op, n);
    double mine = (MPI_Wtime() - start) / iters, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t min = 8, max = 1 << 20;
    double target = 0.2;
    int fixed_iters = 0, want[NOPS] = {1, 1, 1, 1, 1, 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-min") == 0) min = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "-max") == 0) max = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "-time") == 0) target = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-iters") == 0) fixed_iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-ops") == 0) {
            for (int op = 0; op < NOPS; ++op) want[op] = listed(argv[i + 1], kNames[op]);
        } else {
            if (rank == 0) fprintf(stderr, "coll_bench: unknown option %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (min < 8) min = 8;
    const size_t max_elems = max / sizeof(double) > 0 ? max / sizeof(double) : 1;
    sendbuf = (double*)malloc(sizeof(double) * max_elems * (size_t)size);
    recvbuf = (double*)malloc(sizeof(double) * max_elems * (size_t)size);
    if (!sendbuf || !recvbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    if (rank == 0) printf("# coll_bench, %d ranks, %.60s\n# coll op bytes ranks latency_us iterations\n", size, version);
    int failures = 0;
    for (int op = 0; op < NOPS; ++op) {
        if (!want[op]) continue;
        for (size_t bytes = min; bytes <= max; bytes *= 2) {
            const int n = (int)(bytes / sizeof(double));
            if (op == BARRIER && bytes > min) break;
            int ok = check(op, n), all_ok = 0;
            MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            if (!all_ok) ++failures;
            int iters = fixed_iters;
            if (iters <= 0) {
                /* Calibrate on a few calls; everyone takes rank 0's count. */
                double t = timed(op, n, 10);
                iters = t > 0 ? (int)(target / t) : 1000;
                if (iters < 10) iters = 10;
                if (iters > 200000) iters = 200000;
                MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
            }
            for (int i = 0; i < iters / 10 + 1; ++i) run_once(op, n); /* warm-up */
            double t = timed(op, n, iters);
            if (rank == 0)
                printf("coll %s %zu %d %.3f %d%s\n", kNames[op], op == BARRIER ? (size_t)0 : bytes, size,
                       t * 1e6, iters, all_ok ? "" : " WRONG");
        }
    }
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return failures ? 1 : 0;
}
