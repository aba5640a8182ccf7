/* MPI_THREAD_MULTIPLE: several pthreads per rank communicate at the same time.
 *
 * Init_thread grants MPI_THREAD_MULTIPLE (Query_thread agrees). Each rank
 * starts THREADS-1 pthreads; its main thread is worker 0. A thread created by a
 * rank is that rank for MPI (Comm_rank), and only the main thread is the main
 * thread (Is_thread_main). Worker t of rank r exchanges messages with worker t
 * of its neighbours on tag t (so the threads' traffic never cross-matches):
 * Sendrecv, Isend/Irecv/Waitall and Probe+Recv, small and large messages, with
 * the data checked.
 *
 * The main thread joins its workers only after a barrier: a rank blocked in
 * pthread_join blocks the core it shares with other ranks, and those must have
 * started their own workers first (a documented limit of ranks as fibers).
 */
#include <pthread.h>

#include "common.h"

#define THREADS 4
#define ITERS 30

typedef struct {
    int rank, nranks, left, right;
    int worker;
    int seen_rank; /* Comm_rank seen by the thread */
    int is_main;     /* Is_thread_main seen by the thread */
} Worker;

static uint32_t seed_of(int sender, int worker, int iter) {
    return (uint32_t)(sender * 100003 + worker * 1009 + iter);
}

static size_t size_of(int worker, int iter) {
    static const size_t sizes[] = {4, 100, 16385, 70000, 0, 2000};
    return sizes[(worker + iter) % 6];
}

static void* work(void* p) {
    Worker* w = (Worker*)p;
    const int tag = w->worker;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &w->seen_rank));
    MPI_OK(MPI_Is_thread_main(&w->is_main));
    int provided = -1;
    MPI_OK(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "worker %d: Query_thread gave %d", w->worker, provided);

    unsigned char* out = (unsigned char*)xmalloc(70000);
    unsigned char* in = (unsigned char*)xmalloc(70000);
    for (int it = 0; it < ITERS; ++it) {
        const size_t size = size_of(w->worker, it);
        fill_pattern(out, size, seed_of(w->rank, w->worker, it));
        memset(in, 0, size);
        MPI_Status st;
        char what[96];
        snprintf(what, sizeof(what), "worker %d iteration %d (%zu bytes)", w->worker, it, size);
        switch (it % 3) {
            case 0:
                MPI_OK(MPI_Sendrecv(out, (int)size, MPI_BYTE, w->right, tag, in, (int)size, MPI_BYTE,
                                    w->left, tag, MPI_COMM_WORLD, &st));
                break;
            case 1: {
                MPI_Request reqs[2];
                MPI_Status sts[2];
                MPI_OK(MPI_Irecv(in, (int)size, MPI_BYTE, w->left, tag, MPI_COMM_WORLD, &reqs[0]));
                MPI_OK(MPI_Isend(out, (int)size, MPI_BYTE, w->right, tag, MPI_COMM_WORLD, &reqs[1]));
                MPI_OK(MPI_Waitall(2, reqs, sts));
                st = sts[0];
                break;
            }
            default: {
                MPI_Request req;
                MPI_OK(MPI_Isend(out, (int)size, MPI_BYTE, w->right, tag, MPI_COMM_WORLD, &req));
                MPI_OK(MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
                CHECK(st.MPI_SOURCE == w->left, "%s: probe source %d", what, st.MPI_SOURCE);
                MPI_OK(MPI_Recv(in, (int)size, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, &st));
                MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
                break;
            }
        }
        CHECK(st.MPI_SOURCE == w->left && st.MPI_TAG == tag, "%s: status %d/%d", what,
              st.MPI_SOURCE, st.MPI_TAG);
        CHECK_PATTERN(in, size, seed_of(w->left, w->worker, it), what);
    }
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char** argv) {
    int provided = -1;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "Init_thread provided %d", provided);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int flag = 0;
    MPI_OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "Is_thread_main false in the thread that called MPI_Init_thread");

    Worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        Worker* w = &workers[t];
        w->rank = rank;
        w->nranks = nranks;
        w->right = (rank + 1) % nranks;
        w->left = (rank - 1 + nranks) % nranks;
        w->worker = t;
        w->seen_rank = -1;
        w->is_main = -1;
    }
    for (int t = 1; t < THREADS; ++t)
        CHECK(pthread_create(&threads[t], NULL, work, &workers[t]) == 0, "pthread_create");
    work(&workers[0]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 1; t < THREADS; ++t) CHECK(pthread_join(threads[t], NULL) == 0, "pthread_join");

    for (int t = 0; t < THREADS; ++t) {
        CHECK(workers[t].seen_rank == rank, "worker %d of rank %d says it is rank %d", t, rank,
              workers[t].seen_rank);
        CHECK(workers[t].is_main == (t == 0), "worker %d: Is_thread_main %d", t,
              workers[t].is_main);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("thread_multiple: passed on %d ranks x %d threads\n", nranks, THREADS);
    MPI_Finalize();
    return 0;
}
