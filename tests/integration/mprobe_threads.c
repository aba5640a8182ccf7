/* Matched probes from several threads of each rank at once
 * (MPI_THREAD_MULTIPLE): thread t of rank r exchanges with thread t of rank
 * r^1 on tag t, finding each message with MPI_Mprobe or a loop of
 * MPI_Improbe and receiving it with MPI_Mrecv or MPI_Imrecv. Message sizes
 * cycle through every transport's protocol (a few words, a cell, an
 * intra-node rendezvous / network fragments, a network rendezvous), the
 * sender runs ahead so that messages wait unexpected, and each received
 * message must be the one probed: its status, its size and every byte.
 */
#include <pthread.h>

#include "common.h"

#define THREADS 4
#define ROUNDS 300

static const int kSizes[] = {3, 200, 10000, 30000};  /* ints */
#define NSIZES ((int)(sizeof(kSizes) / sizeof(kSizes[0])))

typedef struct {
    int rank, peer, t;
} Work;

static int pattern(int from, int t, int i, int j) {
    return from * 1000000 + t * 100000 + (i * 31 + j) % 100000;
}

static void* worker(void* p) {
    const Work* w = (const Work*)p;
    int* out = malloc(2 * 30000 * sizeof(int));
    int* in = malloc(30000 * sizeof(int));
    CHECK(out && in, "out of memory");
    MPI_Request sends[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int i = 0; i < ROUNDS; ++i) {
        const int n = kSizes[i % NSIZES];
        /* Two sends in flight, from two buffers: the receiver finds messages
         * waiting. */
        MPI_OK(MPI_Wait(&sends[i % 2], MPI_STATUS_IGNORE));
        int* o = out + (i % 2) * 30000;
        for (int j = 0; j < n; ++j) o[j] = pattern(w->rank, w->t, i, j);
        MPI_OK(MPI_Isend(o, n, MPI_INT, w->peer, w->t, MPI_COMM_WORLD, &sends[i % 2]));

        MPI_Message msg;
        MPI_Status st;
        int flag = 0;
        st.MPI_ERROR = -3;
        if (i % 3 == 0) {
            MPI_OK(MPI_Mprobe(w->peer, w->t, MPI_COMM_WORLD, &msg, &st));
        } else {
            const int source = i % 3 == 1 ? w->peer : MPI_ANY_SOURCE;
            while (!flag) MPI_OK(MPI_Improbe(source, w->t, MPI_COMM_WORLD, &flag, &msg, &st));
        }
        int count = -1;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(st.MPI_SOURCE == w->peer && st.MPI_TAG == w->t && count == n && st.MPI_ERROR == -3,
              "thread %d round %d: probed source %d tag %d count %d (want %d) error %d", w->t,
              i, st.MPI_SOURCE, st.MPI_TAG, count, n, st.MPI_ERROR);
        if (i % 2 == 0) {
            MPI_OK(MPI_Mrecv(in, n, MPI_INT, &msg, &st));
        } else {
            MPI_Request r;
            MPI_OK(MPI_Imrecv(in, n, MPI_INT, &msg, &r));
            CHECK(msg == MPI_MESSAGE_NULL, "Imrecv left the message handle");
            MPI_OK(MPI_Wait(&r, &st));
        }
        CHECK(st.MPI_ERROR == -3, "thread %d round %d: the receive wrote MPI_ERROR", w->t, i);
        for (int j = 0; j < n; ++j)
            CHECK(in[j] == pattern(w->peer, w->t, i, j),
                  "thread %d round %d (%d ints): int %d is %d, expected %d", w->t, i, n, j,
                  in[j], pattern(w->peer, w->t, i, j));
    }
    MPI_OK(MPI_Waitall(2, sends, MPI_STATUSES_IGNORE));
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char** argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((rank ^ 1) < size) {
        Work w[THREADS];
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; ++t) {
            w[t] = (Work){rank, rank ^ 1, t};
            CHECK(pthread_create(&th[t], NULL, worker, &w[t]) == 0, "pthread_create");
        }
        for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
