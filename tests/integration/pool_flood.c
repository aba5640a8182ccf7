/* A receive pool under siege: many senders flood one rank that stays away
 * from MPI for a while, so that their messages pile up in its node process's
 * receive pool (run it with a tiny MPC_NET_RECV_BUFFERS). Flow control must
 * hold the senders back instead of overrunning the pool, and every message
 * must still arrive intact and in order per sender once the rank comes back.
 *
 *   pool_flood [--rounds R] [--messages M] [--nap MS]
 *
 * Round r floods rank r % size with M messages from every other rank (sizes
 * from empty to rendezvous, nonblocking sends), while that rank naps MS
 * milliseconds before receiving with MPI_ANY_SOURCE / MPI_ANY_TAG; then every
 * rank floods every other one at once and receives late.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

static const int kSizes[] = {0, 64, 1000, 3000, 9000, 20000, 100000};
enum { kNumSizes = sizeof kSizes / sizeof kSizes[0], kMaxSize = 100000 };

static int size_of(int tag) {
    return kSizes[tag % kNumSizes];
}
static uint32_t seed_of(int src, int dst, int tag, int round) {
    return (uint32_t)(src * 7919 + dst * 104729 + tag * 31 + round * 1000003);
}

static void nap(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Sends `count` messages to each rank in dests[0..ndest) without waiting. */
static void flood(MPI_Comm comm, int rank, const int* dests, int ndest, int count, int round,
                  char** bufs, MPI_Request* reqs) {
    int k = 0;
    for (int d = 0; d < ndest; ++d)
        for (int tag = 0; tag < count; ++tag, ++k) {
            fill_pattern(bufs[k], (size_t)size_of(tag), seed_of(rank, dests[d], tag, round));
            MPI_Isend(bufs[k], size_of(tag), MPI_BYTE, dests[d], tag, comm, &reqs[k]);
        }
}

/* Receives `total` messages from anyone; each source's tags must come in order. */
static void drain(MPI_Comm comm, int rank, int size, int total, int round, char* buf) {
    int* next_tag = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < total; ++i) {
        MPI_Status st;
        MPI_Recv(buf, kMaxSize, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
        int n = -1;
        MPI_Get_count(&st, MPI_BYTE, &n);
        const int src = st.MPI_SOURCE, tag = st.MPI_TAG;
        CHECK(tag == next_tag[src], "round %d: from rank %d got tag %d, expected %d (order)", round,
              src, tag, next_tag[src]);
        CHECK(n == size_of(tag), "round %d: from rank %d tag %d: %d bytes, expected %d", round, src,
              tag, n, size_of(tag));
        size_t bad = find_mismatch(buf, (size_t)n, seed_of(src, rank, tag, round));
        CHECK(bad == (size_t)n, "round %d: from rank %d tag %d: byte %zu differs", round, src, tag,
              bad);
        next_tag[src]++;
    }
    free(next_tag);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = 3, messages = 150, nap_ms = 300;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--messages") == 0)
            messages = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--nap") == 0)
            nap_ms = atoi(argv[i + 1]);
    }
    const int most = messages * (size > 1 ? size - 1 : 1);
    char** bufs = malloc(sizeof(char*) * (size_t)most);
    for (int k = 0; k < most; ++k) bufs[k] = xmalloc(kMaxSize);
    MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)most);
    char* in = xmalloc(kMaxSize);
    int* others = malloc(sizeof(int) * (size_t)size);
    long total = 0;
    /* The all-to-all phase has its own communicator: its messages may reach a
     * sink still draining the many-to-one phase. */
    MPI_Comm all;
    MPI_Comm_dup(MPI_COMM_WORLD, &all);

    for (int round = 0; round < rounds; ++round) {
        /* Many to one: the sink naps while the others flood it. */
        const int sink = round % size;
        if (rank == sink) {
            nap(nap_ms);
            drain(MPI_COMM_WORLD, rank, size, messages * (size - 1), round, in);
        } else {
            flood(MPI_COMM_WORLD, rank, &sink, 1, messages, round, bufs, reqs);
            MPI_Waitall(messages, reqs, MPI_STATUSES_IGNORE);
        }
        total += (long)messages * (size - 1);
        /* All to all, received late: every pool is full at once. */
        int n = 0;
        for (int r = 0; r < size; ++r)
            if (r != rank) others[n++] = r;
        const int each = messages / 4 > 0 ? messages / 4 : 1;
        flood(all, rank, others, n, each, round + rounds, bufs, reqs);
        nap(nap_ms / 3);
        drain(all, rank, size, each * n, round + rounds, in);
        MPI_Waitall(each * n, reqs, MPI_STATUSES_IGNORE);
        total += (long)each * n * size;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("pool_flood: OK: %d rounds, %ld messages, %d ranks\n", rounds, total, size);
    MPI_Comm_free(&all);
    for (int k = 0; k < most; ++k) free(bufs[k]);
    free(bufs);
    free(reqs);
    free(in);
    free(others);
    MPI_Finalize();
    return 0;
}
