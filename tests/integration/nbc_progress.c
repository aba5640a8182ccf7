/* The published effect for nonblocking collectives: a rank that computes
 * (no MPI call between MPI_Iallreduce and MPI_Wait) finds its reduction
 * already done by the other ranks of its node process, which wait inside MPI.
 * Rank 0 starts the operation and then only reads its receive buffer until the
 * full result shows there (or 10 s pass: a failure), for a small reduction
 * (published inline) and a large one (reduced in slices). Run with one VP per
 * rank (mpcrun -n 2 -c 2), in collaborative or thread progress mode: in wait
 * mode nobody else may progress rank 0's operation, and a rank sharing rank
 * 0's VP could not even start its own.
 */
#include "common.h"

/* Whether out[0..count) all hold want, read without MPI. */
static int result_there(const double* out, int count, double want) {
    for (int i = 0; i < count; ++i) {
        double v;
        __atomic_load((const double*)&out[i], &v, __ATOMIC_ACQUIRE);
        if (v != want) return 0;
    }
    return 1;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "nbc_progress needs at least 2 ranks");
    static const int counts[] = {1, 8192};
    for (int round = 0; round < 6; ++round) {
        const int count = counts[round % 2];
        double* in = xmalloc(sizeof(double) * (size_t)count);
        double* out = xmalloc(sizeof(double) * (size_t)count);
        for (int i = 0; i < count; ++i) in[i] = rank + round, out[i] = -1;
        const double want = (double)size * (size - 1) / 2 + (double)size * round;
        MPI_Request req;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req));
        if (rank == 0) {
            const double t0 = MPI_Wtime();
            int seen = 0;
            while (!(seen = result_there(out, count, want)) && MPI_Wtime() - t0 < 10) {
            }
            CHECK(seen, "round %d (%d doubles): rank 0's Iallreduce was not finished by the "
                  "other ranks while it computed", round, count);
        }
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < count; ++i)
            CHECK(out[i] == want, "round %d: element %d is %g, want %g", round, i, out[i], want);
        free(in);
        free(out);
    }
    MPI_Finalize();
    if (rank == 0) printf("nbc_progress: ok\n");
    return 0;
}
