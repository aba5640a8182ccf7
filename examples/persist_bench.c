/* Persistent collectives against their blocking forms (issue 31): the time of
 * one operation, blocking (MPI_X back to back) and persistent (MPI_X_init
 * once, then MPI_Start + MPI_Wait back to back), and the ratio
 * persistent / blocking. A standard MPI program: build it with any mpicc to
 * compare (MPI 4's MPI_X_init, or Open MPI 4.1's MPIX_X_init of its pcollreq
 * extension).
 *   mpcrun -n 4 ./persist_bench [-ops allreduce,bcast,...] [-sizes 8,65536]
 *                               [-iters N] [-time S] [-reps R]
 * Operations: barrier bcast reduce allreduce allgather alltoall ("all", the
 * default, is every one). Sizes in bytes of one rank's block (MPI_DOUBLE,
 * MPI_SUM for reductions, root 0). Iterations per size are chosen so that a
 * blocking run takes about -time seconds (default 0.1), unless -iters fixes
 * them; the blocking and the persistent runs alternate R times (default 5,
 * the first of each pair alternating too) and the medians are printed. A run's
 * time is the slowest rank's mean. Both forms are checked with new data
 * before and after the timing (a persistent request reads its buffers at each
 * start).
 *
 * Output, one line per operation and size, machine-readable:
 *   persist <op> <bytes> <ranks> <blocking_us> <persistent_us> <ratio> <iterations>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(FIBERMPI) || MPI_VERSION >= 4
#define HAVE_PERSISTENT 1
#define PINIT(name) MPI_##name##_init
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define HAVE_PERSISTENT 1
#define PINIT(name) MPIX_##name##_init
#endif
#endif

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, ALLGATHER, ALLTOALL, NKINDS };
static const char* kNames[NKINDS] = {"barrier",   "bcast",     "reduce",
                                     "allreduce", "allgather", "alltoall"};

static int rank, size;
static double *sendbuf, *recvbuf;

static int listed(const char* list, const char* name) {
    const size_t len = strlen(name);
    for (const char* p = list; p; p = strchr(p, ',')) {
        if (*p == ',') ++p;
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0')) return 1;
    }
    return 0;
}

static void blocking(int op, int n) {
    MPI_Comm w = MPI_COMM_WORLD;
    switch (op) {
        case BARRIER:
            MPI_Barrier(w);
            break;
        case BCAST:
            MPI_Bcast(recvbuf, n, MPI_DOUBLE, 0, w);
            break;
        case REDUCE:
            MPI_Reduce(sendbuf, recvbuf, n, MPI_DOUBLE, MPI_SUM, 0, w);
            break;
        case ALLREDUCE:
            MPI_Allreduce(sendbuf, recvbuf, n, MPI_DOUBLE, MPI_SUM, w);
            break;
        case ALLGATHER:
            MPI_Allgather(sendbuf, n, MPI_DOUBLE, recvbuf, n, MPI_DOUBLE, w);
            break;
        case ALLTOALL:
            MPI_Alltoall(sendbuf, n, MPI_DOUBLE, recvbuf, n, MPI_DOUBLE, w);
            break;
    }
}

#ifdef HAVE_PERSISTENT
static MPI_Request persistent_init(int op, int n) {
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info i = MPI_INFO_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    switch (op) {
        case BARRIER:
            PINIT(Barrier)(w, i, &r);
            break;
        case BCAST:
            PINIT(Bcast)(recvbuf, n, MPI_DOUBLE, 0, w, i, &r);
            break;
        case REDUCE:
            PINIT(Reduce)(sendbuf, recvbuf, n, MPI_DOUBLE, MPI_SUM, 0, w, i, &r);
            break;
        case ALLREDUCE:
            PINIT(Allreduce)(sendbuf, recvbuf, n, MPI_DOUBLE, MPI_SUM, w, i, &r);
            break;
        case ALLGATHER:
            PINIT(Allgather)(sendbuf, n, MPI_DOUBLE, recvbuf, n, MPI_DOUBLE, w, i, &r);
            break;
        case ALLTOALL:
            PINIT(Alltoall)(sendbuf, n, MPI_DOUBLE, recvbuf, n, MPI_DOUBLE, w, i, &r);
            break;
    }
    return r;
}
#endif

/* Runs op once (persistent: starts *req) with data made from seed; returns
 * whether this rank's result is right. */
static int check(int op, int n, int seed, MPI_Request* req) {
    const int total = n * size;
    for (int i = 0; i < total; ++i) {
        sendbuf[i] = rank * 1000 + seed + i;
        recvbuf[i] = -1;
    }
    if (op == BCAST && rank == 0)
        for (int i = 0; i < n; ++i) recvbuf[i] = seed + i;
    if (req) {
        MPI_Start(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    } else {
        blocking(op, n);
    }
    const double ranks_sum = 1000.0 * size * (size - 1) / 2;
    for (int i = 0; i < n; ++i) {
        double want = 0;
        switch (op) {
            case BARRIER:
                return 1;
            case BCAST:
                want = seed + i;
                break;
            case REDUCE:
                if (rank != 0) return 1;
                /* fall through */
            case ALLREDUCE:
                want = ranks_sum + (double)size * (seed + i);
                break;
            case ALLGATHER:
                for (int r = 0; r < size; ++r)
                    if (recvbuf[r * n + i] != r * 1000 + seed + i) return 0;
                continue;
            case ALLTOALL:
                for (int r = 0; r < size; ++r)
                    if (recvbuf[r * n + i] != r * 1000 + seed + rank * n + i) return 0;
                continue;
        }
        if (recvbuf[i] != want) return 0;
    }
    return 1;
}

/* The slowest rank's mean time of iters operations (req null: blocking). */
static double timed(int op, int n, int iters, MPI_Request* req) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (req) {
        for (int i = 0; i < iters; ++i) {
            MPI_Start(req);
            MPI_Wait(req, MPI_STATUS_IGNORE);
        }
    } else {
        for (int i = 0; i < iters; ++i) blocking(op, n);
    }
    double mine = (MPI_Wtime() - start) / iters, slowest = 0;
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
    const char* ops = "all";
    const char* size_list = "8,65536";
    double target = 0.1;
    int fixed_iters = 0, reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-ops") == 0)
            ops = argv[i + 1];
        else if (strcmp(argv[i], "-sizes") == 0)
            size_list = argv[i + 1];
        else if (strcmp(argv[i], "-time") == 0)
            target = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-iters") == 0)
            fixed_iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-reps") == 0)
            reps = atoi(argv[i + 1]);
        else {
            if (rank == 0) fprintf(stderr, "persist_bench: unknown option %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (reps < 1) reps = 1;
    size_t sizes[32], max = 8;
    int nsizes = 0;
    for (const char* p = size_list; p && *p && nsizes < 32; p = strchr(p, ',')) {
        if (*p == ',') ++p;
        size_t b = (size_t)atol(p);
        if (b < 8) b = 8;
        sizes[nsizes++] = b;
        if (b > max) max = b;
    }
    const size_t elems = max / sizeof(double) * (size_t)size;
    sendbuf = (double*)malloc(sizeof(double) * elems);
    recvbuf = (double*)malloc(sizeof(double) * elems);
    double* bs = (double*)malloc(sizeof(double) * (size_t)reps);
    double* ps = (double*)malloc(sizeof(double) * (size_t)reps);
    if (!sendbuf || !recvbuf || !bs || !ps) MPI_Abort(MPI_COMM_WORLD, 3);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
#ifndef HAVE_PERSISTENT
    if (rank == 0)
        printf("# persist_bench: %.60s has no persistent collectives: nothing to compare\n",
               version);
    MPI_Finalize();
    return 0;
#else
    if (rank == 0)
        printf(
            "# persist_bench, %d ranks, %.60s\n"
            "# persist op bytes ranks blocking_us persistent_us ratio iterations\n",
            size, version);
    int failures = 0;
    for (int op = 0; op < NKINDS; ++op) {
        if (!listed(ops, kNames[op]) && !listed(ops, "all")) continue;
        for (int si = 0; si < nsizes; ++si) {
            if (op == BARRIER && si > 0) break;
            const int n = (int)(sizes[si] / sizeof(double));
            MPI_Request req = persistent_init(op, n);
            int ok = check(op, n, 1, NULL) && check(op, n, 2, &req) && check(op, n, 3, &req);
            int iters = fixed_iters;
            if (iters <= 0) {
                double t = 0;
                for (int k = 10; k <= 1000000; k *= 4) {
                    t = timed(op, n, k, NULL);
                    int enough = t * k >= target / 10;
                    MPI_Bcast(&enough, 1, MPI_INT, 0, MPI_COMM_WORLD);
                    if (enough) break;
                }
                iters = t > 0 ? (int)(target / t) : 1000;
                if (iters < 10) iters = 10;
                if (iters > 1000000) iters = 1000000;
                MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
            }
            timed(op, n, iters / 10 + 1, &req); /* warm-up */
            for (int k = 0; k < reps; ++k) {
                if (k % 2 == 0) {
                    bs[k] = timed(op, n, iters, NULL);
                    ps[k] = timed(op, n, iters, &req);
                } else {
                    ps[k] = timed(op, n, iters, &req);
                    bs[k] = timed(op, n, iters, NULL);
                }
            }
            ok = ok && check(op, n, 4, &req) && check(op, n, 5, NULL);
            MPI_Request_free(&req);
            int all_ok = 0;
            MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            if (!all_ok) ++failures;
            qsort(bs, (size_t)reps, sizeof(double), by_value);
            qsort(ps, (size_t)reps, sizeof(double), by_value);
            const double b = bs[reps / 2], p = ps[reps / 2];
            if (rank == 0)
                printf("persist %s %zu %d %.3f %.3f %.2f %d%s\n", kNames[op],
                       op == BARRIER ? (size_t)0 : sizes[si], size, b * 1e6, p * 1e6,
                       b > 0 ? p / b : 0.0, iters, all_ok ? "" : " WRONG");
            fflush(stdout);
        }
    }
    free(ps);
    free(bs);
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return failures ? 1 : 0;
#endif
}
