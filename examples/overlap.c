/* Overlap benchmarks of the collaborative-polling papers, as a plain MPI
 * program (it builds with any MPI's mpicc).
 *
 * Run with 4 ranks over 2 nodes: ranks 0 and 1 on the first node, 2 and 3 on
 * the second (block distribution). Rank 0 talks to rank 2; ranks 1 and 3 stay
 * idle inside MPI (a barrier), which is what lets a thread-based MPI progress
 * the busy ranks' messages.
 *
 *   overlap [sizes...]       default sizes: 32K 1M 32M
 *
 * (a) Total time of Isend/Recv, Irecv/Send and Isend/Irecv against the work
 *     time: without overlap t = t_comm + t_work, with full overlap max of both.
 * (b) Overlap ratio T_work / T_total with the work on the sender, on the
 *     receiver, on both.
 * (c) Receiver's MPI_Wait time after computing well past the transfer time.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* Busy work for about `seconds`, with no MPI call. */
static void work(double seconds) {
    double t0 = MPI_Wtime(), x = 1.0;
    while (MPI_Wtime() - t0 < seconds)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
}

static size_t parse_size(const char* s) {
    char* end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k') v *= 1024;
    if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
    return (size_t)v;
}

enum Pattern { ISEND_RECV, IRECV_SEND, ISEND_IRECV };
static const char* pattern_name[] = {"Isend/Recv", "Irecv/Send", "Isend/Irecv"};

/* One exchange rank 0 -> rank 2 with `w` seconds of work on the chosen sides;
 * returns the time measured on the side that does the nonblocking call. */
static double exchange(int rank, char* buf, size_t n, enum Pattern p, double w_send, double w_recv) {
    MPI_Request req;
    double t0, t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        t0 = MPI_Wtime();
        if (p == IRECV_SEND) {
            work(w_send);
            MPI_Send(buf, (int)n, MPI_BYTE, 2, 0, MPI_COMM_WORLD);
        } else {
            MPI_Isend(buf, (int)n, MPI_BYTE, 2, 0, MPI_COMM_WORLD, &req);
            work(w_send);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t = MPI_Wtime() - t0;
    } else if (rank == 2) {
        t0 = MPI_Wtime();
        if (p == ISEND_RECV) {
            work(w_recv);
            MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req);
            work(w_recv);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t = MPI_Wtime() - t0;
    }
    /* The slowest of the two is the exchange's time. */
    double all;
    MPI_Allreduce(&t, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0) fprintf(stderr, "overlap: run with 4 ranks on 2 nodes (mpcrun -n 4 -N 2)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t sizes[16];
    int nsizes = 0;
    for (int i = 1; i < argc && nsizes < 16; ++i) sizes[nsizes++] = parse_size(argv[i]);
    if (nsizes == 0) {
        sizes[0] = 32 << 10;
        sizes[1] = 1 << 20;
        sizes[2] = 32 << 20;
        nsizes = 3;
    }
    size_t max = 0;
    for (int i = 0; i < nsizes; ++i) max = sizes[i] > max ? sizes[i] : max;
    char* buf = malloc(max);
    memset(buf, rank, max);

    for (int s = 0; s < nsizes; ++s) {
        size_t n = sizes[s];
        /* Communication time alone (median of 5). */
        double tc[5];
        for (int i = 0; i < 5; ++i) tc[i] = exchange(rank, buf, n, ISEND_IRECV, 0, 0);
        for (int i = 0; i < 5; ++i)
            for (int j = i + 1; j < 5; ++j)
                if (tc[j] < tc[i]) { double x = tc[i]; tc[i] = tc[j]; tc[j] = x; }
        double t_comm = tc[2];
        if (rank == 0) {
            printf("# size %zu bytes: t_comm %.1f us\n", n, t_comm * 1e6);
            printf("# (a) total time vs work time (work on both sides)\n");
            printf("%-12s %12s %12s %12s %12s\n", "pattern", "work(us)", "total(us)", "no-ovl(us)", "full(us)");
        }
        for (int p = 0; p < 3; ++p) {
            for (int k = 0; k <= 4; ++k) {
                double w = t_comm * k / 2.0;
                double t = exchange(rank, buf, n, (enum Pattern)p, w, w);
                if (rank == 0)
                    printf("%-12s %12.1f %12.1f %12.1f %12.1f\n", pattern_name[p], w * 1e6, t * 1e6,
                           (t_comm + w) * 1e6, (t_comm > w ? t_comm : w) * 1e6);
            }
        }
        if (rank == 0) printf("# (b) overlap ratio T_work/T_total, work = 2 x t_comm\n");
        const char* side_name[] = {"sender", "receiver", "both"};
        for (int side = 0; side < 3; ++side) {
            double w = 2 * t_comm;
            double t = exchange(rank, buf, n, ISEND_IRECV, side != 1 ? w : 0, side != 0 ? w : 0);
            if (rank == 0) printf("overlap-ratio %-9s %6.3f\n", side_name[side], w / t);
        }
        /* (c) receiver's Wait after computing past the transfer. */
        double waits[5];
        for (int i = 0; i < 5; ++i) {
            MPI_Request req;
            double t_wait = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                /* Send once the receiver is computing: its request to send
                 * arrives while no call of the receiver is inside MPI. */
                work(0.002);
                MPI_Send(buf, (int)n, MPI_BYTE, 2, 1, MPI_COMM_WORLD);
            } else if (rank == 2) {
                MPI_Irecv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req);
                work(3 * t_comm + 0.004);
                double t0 = MPI_Wtime();
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                t_wait = MPI_Wtime() - t0;
            }
            MPI_Allreduce(&t_wait, &waits[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        for (int i = 0; i < 5; ++i)
            for (int j = i + 1; j < 5; ++j)
                if (waits[j] < waits[i]) { double x = waits[i]; waits[i] = waits[j]; waits[j] = x; }
        if (rank == 0)
            printf("receiver-wait %zu median %.1f us (min %.1f, max %.1f; t_comm %.1f us)\n\n", n,
                   waits[2] * 1e6, waits[0] * 1e6, waits[4] * 1e6, t_comm * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
