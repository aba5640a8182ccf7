/* The victim side of the fault tests (fault_check.py): ranks in MPI traffic
 * with other node processes when something breaks underneath them.
 *
 *   fault_traffic traffic SECONDS   every rank exchanges messages of every
 *                                   protocol (eager, fragments, rendezvous)
 *                                   with its ring neighbours, and an
 *                                   allreduce, for SECONDS
 *   fault_traffic blocked           the ranks of node process 1 stop in a
 *                                   receive nobody answers; every other rank
 *                                   blocks in MPI_Waitall on a rendezvous send
 *                                   to and a receive from a rank of node 1
 *
 * Each rank prints "fault_traffic: rank R ready" once it is in traffic, so
 * that the checker strikes while ranks are inside MPI. A run nobody disturbs
 * ends after SECONDS with "fault_traffic: survived" and status 0, which the
 * checker reports as a fault that went unnoticed; in blocked mode such a run
 * never ends (the checker's time limit catches it).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const int kSizes[] = {8, 3000, 40000, 300000}; /* eager .. rendezvous */
enum { kNumSizes = sizeof kSizes / sizeof kSizes[0], kMaxSize = 300000 };

static void say_ready(int rank) {
    printf("fault_traffic: rank %d ready\n", rank);
    fflush(stdout);
}

static void traffic(int rank, int size, double seconds) {
    char* out = malloc(kMaxSize);
    char* in = malloc(kMaxSize);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const double end = MPI_Wtime() + seconds;
    int stop[2] = {0, 0}; /* ranks, and ranks out of time: all stop together */
    for (long iter = 0; !stop[1]; ++iter) {
        const int bytes = kSizes[iter % kNumSizes];
        fill_pattern(out, (size_t)bytes, (uint32_t)(rank * 1000003 + iter));
        MPI_Sendrecv(out, bytes, MPI_BYTE, right, 1, in, bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        size_t bad = find_mismatch(in, (size_t)bytes, (uint32_t)(left * 1000003 + iter));
        CHECK(bad == (size_t)bytes, "iteration %ld: byte %zu from rank %d", iter, bad, left);
        int mine[2] = {1, MPI_Wtime() >= end};
        MPI_Allreduce(mine, stop, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(stop[0] == size, "allreduce gave %d", stop[0]);
        if (iter == 8) say_ready(rank);
    }
    free(out);
    free(in);
}

/* Node 1's ranks are a block starting after node 0's: the ranks of node 0 are
 * those whose MPC_NODE_ID is 0, exchanged with an allgather. */
static void blocked(int rank, int size) {
    const char* node_env = getenv("MPC_NODE_ID");
    int node = node_env ? atoi(node_env) : 0;
    int* nodes = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&node, 1, MPI_INT, nodes, 1, MPI_INT, MPI_COMM_WORLD);
    int peer = -1;
    for (int r = 0; r < size && peer < 0; ++r)
        if (nodes[r] == 1) peer = r;
    CHECK(peer >= 0, "no rank runs on node process 1 (run with -N 2 or more)");
    char* big = malloc(kMaxSize);
    int token = 0;
    MPI_Request reqs[2];
    if (node == 1) {
        say_ready(rank);
        MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        memset(big, rank, kMaxSize);
        MPI_Isend(big, kMaxSize, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(&token, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &reqs[1]);
        say_ready(rank);
        /* Nobody answers: only the end of the job ends this wait. */
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    }
    free(big);
    free(nodes);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* mode = argc > 1 ? argv[1] : "traffic";
    const double seconds = argc > 2 ? atof(argv[2]) : 20.0;
    if (strcmp(mode, "traffic") == 0)
        traffic(rank, size, seconds);
    else if (strcmp(mode, "blocked") == 0)
        blocked(rank, size);
    else
        test_fail(__FILE__, __LINE__, "unknown mode %s", mode);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("fault_traffic: survived\n");
    MPI_Finalize();
    return 0;
}
