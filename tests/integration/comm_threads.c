/* Communicators created concurrently by several threads of each rank
 * (MPI_THREAD_MULTIPLE): each thread duplicates, splits and frees its own
 * parent communicator in a loop while the others do the same, so the context
 * id agreements of one rank overlap and must take turns. Every new
 * communicator is checked with an allreduce, and all of them must have
 * distinct context ids: a message sent on one must not be received on another.
 */
#include <pthread.h>

#include "common.h"

#define THREADS 3
#define ROUNDS 60

typedef struct {
    MPI_Comm parent;
    int rank, size, id;
} Work;

static void* worker(void* arg) {
    Work* w = (Work*)arg;
    for (int i = 0; i < ROUNDS; ++i) {
        MPI_Comm d, s;
        MPI_OK(MPI_Comm_dup(w->parent, &d));
        MPI_OK(MPI_Comm_split(d, w->rank & 1, w->rank, &s));
        int sum = 0, expect = 0;
        for (int r = w->rank & 1; r < w->size; r += 2) expect += r + 1000 * w->id;
        const int mine = w->rank + 1000 * w->id;
        MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, s));
        CHECK(sum == expect, "thread %d round %d: sum %d, expected %d", w->id, i, sum, expect);
        /* A message on d reaches d's receive, tagged with the thread. */
        const int right = (w->rank + 1) % w->size, left = (w->rank + w->size - 1) % w->size;
        int out = 100 * w->id + i, in = -1;
        MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, d,
                            MPI_STATUS_IGNORE));
        CHECK(in == out, "thread %d round %d: got %d on its communicator", w->id, i, in);
        MPI_OK(MPI_Comm_free(&s));
        MPI_OK(MPI_Comm_free(&d));
    }
    return NULL;
}

int main(int argc, char** argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    Work work[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        work[t].rank = rank, work[t].size = size, work[t].id = t;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &work[t].parent));
    }
    /* The rank's own task is worker 0. It joins the others only after its
     * share: pthread_join blocks the virtual processor, and other ranks of that
     * processor must have started their threads before (they have: worker 0
     * of every rank took part in the same collectives). */
    for (int t = 1; t < THREADS; ++t)
        CHECK(pthread_create(&threads[t], NULL, worker, &work[t]) == 0, "pthread_create");
    worker(&work[0]);
    for (int t = 1; t < THREADS; ++t) pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; ++t) MPI_OK(MPI_Comm_free(&work[t].parent));
    MPI_OK(MPI_Finalize());
    if (rank == 0) printf("comm_threads: OK (%d ranks, %d threads each)\n", size, THREADS);
    return 0;
}
