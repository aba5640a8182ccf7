/* Latency of a small MPI_Allreduce (one double, 8 bytes, MPI_SUM) at any rank
 * count. A standard MPI program: build it with any mpicc for comparisons.
 *   mpcrun -n 16 ./allreduce_bench [-iters N] [-count C] [-nonblocking]
 * Prints the mean time per Allreduce (slowest rank), after a warm-up, and
 * checks the result. With -nonblocking, each call is MPI_Iallreduce followed
 * at once by MPI_Wait (what a nonblocking collective costs when nothing
 * overlaps it).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void one_call(const double* in, double* out, int count, int nonblocking) {
    if (!nonblocking) {
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        return;
    }
    MPI_Request request;
    MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = 20000, count = 1, nonblocking = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-nonblocking") == 0) nonblocking = 1;
        else if (strcmp(argv[i], "-iters") == 0 && i + 1 < argc) iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "-count") == 0 && i + 1 < argc) count = atoi(argv[++i]);
    }
    double* in = (double*)malloc(sizeof(double) * (size_t)count);
    double* out = (double*)malloc(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; ++i) in[i] = rank + 1;
    const int warmup = iters / 10 + 10;
    for (int i = 0; i < warmup; ++i) one_call(in, out, count, nonblocking);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) one_call(in, out, count, nonblocking);
    double mine = (MPI_Wtime() - start) / iters, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    const double expect = (double)size * (size + 1) / 2;
    int ok = out[0] == expect, all_ok = 0;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s: %d ranks, %zu bytes, %d iterations: %.3f us per call%s\n",
               nonblocking ? "iallreduce+wait" : "allreduce", size,
               sizeof(double) * (size_t)count, iters, slowest * 1e6, all_ok ? "" : " (WRONG RESULT)");
    }
    free(in);
    free(out);
    MPI_Finalize();
    return all_ok || rank != 0 ? 0 : 1;
}
