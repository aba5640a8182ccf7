/* Ping-pong between ranks 0 and 1: latency and bandwidth by message size.
 *
 * A standard MPI program (builds with any mpicc: fibermpi's, Open MPI's,
 * MPICH's), so that the same source gives the side-by-side comparison:
 *   mpcrun -n 2 ./pingpong                 (fibermpi)
 *   mpirun -n 2 ./pingpong.openmpi         (Open MPI)
 * Options: -max BYTES (largest size, default 64 MiB), -min BYTES (default 1),
 * -time SECONDS (target time per size, default 0.2), -reps R (timed runs per
 * size, the fastest is reported, default 5), -nonblocking (each side posts
 * MPI_Irecv and MPI_Isend and completes both with MPI_Waitall, as halo exchanges
 * do, instead of MPI_Send then MPI_Recv). Ranks other than 0 and 1 only take
 * part in the barriers.
 *
 * Output, one line per size: bytes, one-way latency (half the round trip, us),
 * bandwidth (bytes / one-way time, MB/s with MB = 1e6 bytes). Rank 0 first prints
 * the memcpy bandwidth of a 4 MiB (in-cache) buffer for reference: an intra-node
 * message cannot beat one copy.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double memcpy_bandwidth(size_t bytes, double seconds) {
    char* a = (char*)malloc(bytes);
    char* b = (char*)malloc(bytes);
    if (!a || !b) return 0;
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    long iters = 0;
    double start = MPI_Wtime(), now;
    do {
        memcpy(iters % 2 ? a : b, iters % 2 ? b : a, bytes);
        ++iters;
        now = MPI_Wtime();
    } while (now - start < seconds);
    double bw = (double)bytes * (double)iters / (now - start) / 1e6;
    if (a[bytes / 2] == 3) printf("impossible\n"); /* keeps the copies */
    free(a);
    free(b);
    return bw;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = (size_t)64 << 20, min = 1;
    double target = 0.2;
    int reps = 5;
    int nonblocking = 0;
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "-nonblocking") == 0) nonblocking = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-max") == 0) max = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "-min") == 0) min = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "-time") == 0) target = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-reps") == 0) reps = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
    }
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "pingpong needs at least 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    char* buf = (char*)malloc(max ? max : 1);
    char* rbuf = (char*)malloc(max ? max : 1); /* -nonblocking receives here */
    memset(buf, rank, max ? max : 1);
    memset(rbuf, rank, max ? max : 1);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        char* nl = strchr(version, '\n');
        if (nl) *nl = '\0';
        printf("# pingpong%s, %d ranks, %s\n", nonblocking ? " (Irecv+Isend+Waitall)" : "", size,
               version);
        printf("# memcpy of 4 MiB: %.0f MB/s\n", memcpy_bandwidth((size_t)4 << 20, 0.3));
        printf("# %10s %12s %12s %10s\n", "bytes", "latency_us", "MB/s", "iters");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t n = min; n <= max; n *= 2) {
        /* Calibrate: double the round trips until they take 1/20 of the
         * target (rank 0 decides, everyone follows), then time `reps` runs
         * and keep the fastest: other load on the machine only ever adds time. */
        int iters = 1;
        double best = 1e30;
        for (int pass = -1; pass < reps;) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            for (int i = 0; i < iters && rank <= 1; ++i) {
                if (nonblocking) {
                    /* Rank 1 answers once the ping is in: still a round trip. */
                    MPI_Request rq[2];
                    int peer = 1 - rank;
                    MPI_Irecv(rbuf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &rq[0]);
                    if (rank == 1) MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
                    MPI_Isend(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &rq[1]);
                    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
                } else if (rank == 0) {
                    MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            double t = MPI_Wtime() - start;
            if (pass >= 0) {
                if (t < best) best = t;
                ++pass;
                continue;
            }
            int next = iters;
            if (t < target / reps / 20 && iters < 1000000) next = iters * 2;
            else pass = 0; /* calibrated: scale to the target and start timing */
            if (pass == 0) {
                double want = t > 0 ? target / reps * iters / t : 1e6;
                next = want > 1e6 ? 1000000 : want < 3 ? 3 : (int)want;
            }
            MPI_Bcast(&next, 1, MPI_INT, 0, MPI_COMM_WORLD);
            MPI_Bcast(&pass, 1, MPI_INT, 0, MPI_COMM_WORLD);
            iters = next;
        }
        if (rank == 0) {
            double one_way = best / iters / 2;
            printf("  %10zu %12.3f %12.1f %10d\n", n, one_way * 1e6, (double)n / one_way / 1e6, iters);
            fflush(stdout);
        }
        if (n > max / 2) break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
