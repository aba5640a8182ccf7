/* Partitioned communication from several threads (MPI 4.0 section 4.2):
 * each sender's threads fill their own partitions and mark each ready as
 * soon as it is written, while the receiver's threads wait for theirs with
 * MPI_Parrived and check them. Ranks in pairs (i to i + n/2, an odd last rank
 * to itself), 20 starts of the same requests.
 */
#include <pthread.h>

#include "common.h"

#define THREADS 4
#define PARTS 16
#define PER 2048 /* ints per partition: 8 KiB */
#define RUNS 20

static int me, n, from, to;
static int* sbuf;
static int* rbuf;
static MPI_Request sreq, rreq;
static int run;

static int elem(int r, long k) {
    return value(from * 31 + r, k);
}

static void* sender(void* arg) {
    const int t = (int)(long)arg;
    for (int i = t; i < PARTS; i += THREADS) {
        for (long k = (long)i * PER; k < (long)(i + 1) * PER; ++k) sbuf[k] = elem(run, k);
        MPI_OK(MPI_Pready(i, sreq));
    }
    return NULL;
}

static void* receiver(void* arg) {
    const int t = (int)(long)arg;
    for (int i = t; i < PARTS; i += THREADS) {
        int flag = 0;
        while (!flag) MPI_OK(MPI_Parrived(rreq, i, &flag));
        for (long k = (long)i * PER; k < (long)(i + 1) * PER; ++k)
            CHECK(rbuf[k] == elem(run, k), "run %d partition %d element %ld is %d", run, i, k,
                  rbuf[k]);
    }
    return NULL;
}

static void in_threads(void* (*fn)(void*)) {
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, fn, (void*)t);
    for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
}

int main(int argc, char** argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    /* Rank i sends to i + half (in another node process when there are
     * several); an odd last rank to itself. */
    const int half = n / 2;
    from = me < half ? me : me - half;
    to = me < half ? me + half : me;
    if (me == 2 * half) from = to = me;
    sbuf = ints(PARTS * PER, 0);
    rbuf = ints(PARTS * PER, -1);
    if (me == from)
        MPI_OK(
            MPI_Psend_init(sbuf, PARTS, PER, MPI_INT, to, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq));
    if (me == to)
        MPI_OK(MPI_Precv_init(rbuf, PARTS, PER, MPI_INT, from, 3, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &rreq));
    for (run = 1; run <= RUNS; ++run) {
        if (me == to) {
            for (long k = 0; k < PARTS * PER; ++k) rbuf[k] = -1;
            MPI_OK(MPI_Start(&rreq));
        }
        if (me == from) {
            MPI_OK(MPI_Start(&sreq));
            in_threads(sender);
        }
        if (me == to) {
            in_threads(receiver);
            MPI_OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        }
        if (me == from) MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    if (me == from) MPI_OK(MPI_Request_free(&sreq));
    if (me == to) MPI_OK(MPI_Request_free(&rreq));
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    if (me == 0) printf("partitioned_threads: %d ranks OK\n", n);
    return 0;
}
