/* Several threads of each rank creating communicators at once
 * (MPI_THREAD_MULTIPLE): each thread duplicates its own parent communicator
 * with MPI_Comm_dup and MPI_Comm_idup in turn, while the others do the same,
 * the rank's own task among them; the threads of different ranks use the
 * parents in different orders, so a rank is often in another call than its
 * partners and its context id agreements overlap theirs. One thread also
 * keeps several MPI_Comm_idup on different parents outstanding before
 * waiting for all of them; and ranks duplicate two parents in different
 * orders (two threads at once here, one after the other there). No
 * creation may hold up another: every
 * communicator must come, be distinct from the others (a message on one
 * stays on it) and work.
 */
#include <pthread.h>

#include "common.h"

#define THREADS 4
#define ROUNDS 30

typedef struct {
    MPI_Comm parent;
    int rank, size, id;
} Work;

static void use(MPI_Comm c, int rank, int size, int id, int round) {
    int sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "thread %d round %d: allreduce %d", id, round, sum);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = 1000 * id + round, in = -1;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, c,
                        MPI_STATUS_IGNORE));
    CHECK(in == out, "thread %d round %d: got %d on its communicator", id, round, in);
}

static void* worker(void* p) {
    const Work* w = (const Work*)p;
    for (int i = 0; i < ROUNDS; ++i) {
        MPI_Comm c;
        if ((i + w->id) % 2) {
            MPI_OK(MPI_Comm_dup(w->parent, &c));
        } else {
            MPI_Request r;
            MPI_OK(MPI_Comm_idup(w->parent, &c, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        use(c, w->rank, w->size, w->id, i);
        MPI_OK(MPI_Comm_free(&c));
    }
    return NULL;
}

static void* dup_once(void* p) {
    const Work* w = (const Work*)p;
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(w->parent, &c));
    use(c, w->rank, w->size, w->id, -2);
    MPI_OK(MPI_Comm_free(&c));
    return NULL;
}

int main(int argc, char** argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parents[THREADS];
    for (int t = 0; t < THREADS; ++t) MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]));
    /* Thread t of rank r works on parent (t + r) % THREADS. */
    Work w[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        w[t] = (Work){parents[(t + rank) % THREADS], rank, size, (t + rank) % THREADS};
        if (t > 0) CHECK(pthread_create(&th[t], NULL, worker, &w[t]) == 0, "pthread_create");
    }
    worker(&w[0]);
    for (int t = 1; t < THREADS; ++t) pthread_join(th[t], NULL);

    /* The same duplications in orders that differ between ranks: on even
     * ranks two threads duplicate parents 0 and 1 at once; on odd ranks one
     * thread duplicates 1, then 0. The odd ranks reach parent 0's agreement
     * only after parent 1's, which the even ranks must not hold up while
     * they wait in parent 0's. */
    for (int round = 0; round < 5; ++round) {
        Work pair[2] = {{parents[0], rank, size, 0}, {parents[1], rank, size, 1}};
        if (rank % 2 == 0) {
            pthread_t other;
            CHECK(pthread_create(&other, NULL, dup_once, &pair[1]) == 0, "pthread_create");
            dup_once(&pair[0]);
            pthread_join(other, NULL);
        } else {
            dup_once(&pair[1]);
            dup_once(&pair[0]);
        }
    }

    /* Several idups outstanding from one thread, on different parents. */
    MPI_Comm dups[THREADS];
    MPI_Request reqs[THREADS];
    for (int t = 0; t < THREADS; ++t) MPI_OK(MPI_Comm_idup(parents[t], &dups[t], &reqs[t]));
    MPI_OK(MPI_Waitall(THREADS, reqs, MPI_STATUSES_IGNORE));
    for (int t = 0; t < THREADS; ++t) {
        use(dups[t], rank, size, t, -1);
        MPI_OK(MPI_Comm_free(&dups[t]));
        MPI_OK(MPI_Comm_free(&parents[t]));
    }
    MPI_Finalize();
    return 0;
}
