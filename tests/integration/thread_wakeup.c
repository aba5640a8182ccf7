/* A rank's own thread waiting in MPI must be woken as soon as what it waits
 * for arrives, and a rank waiting for its thread must not hold up the others:
 * 2000 times, each rank starts a thread that receives one int from every rank
 * (MPI_ANY_SOURCE), sends one int to every rank from its main thread, joins
 * the thread and enters a barrier. Each iteration takes about 0.15 ms here
 * (Open MPI: 0.09); a wake-up that waits for a timeout, or a virtual
 * processor that spins through the join and keeps the core from the thread,
 * costs milliseconds per iteration, which the check below catches.
 */
#include <pthread.h>

#include "common.h"

#define ITERATIONS 2000

typedef struct {
    int size, iteration;
} Round;

static void* receive_all(void* p) {
    const Round* r = (const Round*)p;
    for (int i = 0; i < r->size; ++i) {
        int v = -1;
        MPI_Status st;
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
        CHECK(v == r->iteration * 1000 + st.MPI_SOURCE, "iteration %d: got %d from %d",
              r->iteration, v, st.MPI_SOURCE);
    }
    return NULL;
}

int main(int argc, char** argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const double start = MPI_Wtime();
    for (int it = 0; it < ITERATIONS; ++it) {
        Round r = {size, it};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, receive_all, &r) == 0, "pthread_create");
        const int v = it * 1000 + rank;
        for (int dest = 0; dest < size; ++dest)
            MPI_OK(MPI_Send(&v, 1, MPI_INT, dest, 5, MPI_COMM_WORLD));
        CHECK(pthread_join(t, NULL) == 0, "pthread_join");
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    const double per = (MPI_Wtime() - start) / ITERATIONS;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    /* 20 times the time it takes here: the late wake-ups took 4 to 16 ms. */
    CHECK(per < 3e-3, "%.2f ms per iteration: threads are woken late", per * 1e3);
#endif
    if (rank == 0) printf("thread_wakeup: %.3f ms per iteration\n", per * 1e3);
    MPI_Finalize();
    return 0;
}
