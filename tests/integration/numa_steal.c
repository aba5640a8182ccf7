/* Collaborative polling across NUMA nodes of a described machine: run with
 * HWLOC_SYNTHETIC="pack:2 numa:1 core:2 pu:1" and MPC_CORES=1,2,3 on 6 ranks
 * over 2 node processes, so that the three ranks of node process 1 sit on
 * cores 1 (NUMA node 0), 2 and 3 (NUMA node 1). Rank 4 (core 2) receives
 * eager and rendezvous messages from rank 0 while it computes; of its two
 * neighbours one computes too and the other waits inside MPI: that one takes
 * rank 4's work. "numa_steal other": the idle one is rank 3 (the other NUMA
 * node); "numa_steal same": rank 5 (the same NUMA node). The statistics
 * (--stats), checked by the test, must count the work as stolen from the
 * other NUMA node or from the same one; the program checks the data.
 */
#include "common.h"

enum { kMessages = 16, kSmall = 512, kLarge = 1 << 20 };

static void compute(double seconds) {
    volatile double x = 1;
    const double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 6 && argc == 2, "usage: mpcrun -n 6 -N 2 numa_steal other|same");
    const int idle = strcmp(argv[1], "other") == 0 ? 3 : 5;
    const int busy = idle == 3 ? 5 : 3;
    unsigned char* buf[kMessages];
    MPI_Request req[kMessages];
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < kMessages; ++i) {
            const size_t n = i % 2 ? kLarge : kSmall;
            buf[i] = xmalloc(n);
            fill_pattern(buf[i], n, (uint32_t)i);
            MPI_OK(MPI_Isend(buf[i], (int)n, MPI_BYTE, 4, i, MPI_COMM_WORLD, &req[i]));
        }
        MPI_OK(MPI_Waitall(kMessages, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < kMessages; ++i) free(buf[i]);
    } else if (rank == 4) {
        for (int i = 0; i < kMessages; ++i) {
            const size_t n = i % 2 ? kLarge : kSmall;
            buf[i] = xmalloc(n);
            MPI_OK(MPI_Irecv(buf[i], (int)n, MPI_BYTE, 0, i, MPI_COMM_WORLD, &req[i]));
        }
        compute(1.0);  /* no MPI call: only the idle neighbour can progress */
        MPI_OK(MPI_Waitall(kMessages, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < kMessages; ++i) {
            CHECK_PATTERN(buf[i], i % 2 ? (size_t)kLarge : (size_t)kSmall, (uint32_t)i, "message");
            free(buf[i]);
        }
    } else if (rank == busy) {
        compute(1.2);
    }
    /* The idle rank (and the others) wait here. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
