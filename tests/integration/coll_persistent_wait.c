/* Waiting for persistent collectives (MPI 4.0 section 6.13) whose last member
 * to start is late, and late because it waits for something only the others'
 * progress can finish: the waits must keep the others going. Each run, every
 * rank but the last starts a persistent Allreduce (and a persistent Barrier)
 * and waits for it, rank 0 with a large nonblocking send to the last rank
 * pending meanwhile; the last rank first receives that message (and, in odd
 * runs, computes a while), then starts. Waits alternate between MPI_Wait,
 * MPI_Waitall and MPI_Test loops (which must progress too: with more ranks
 * than VPs the late rank is a fiber of the waiter's VP). Values change every
 * run and are checked.
 */
#include "common.h"

#define RUNS 40
#define BIG (256 * 1024) /* ints: beyond any eager limit */

static void wait_one(MPI_Request* r, int how) {
    if (how == 0) {
        MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
    } else if (how == 1) {
        MPI_OK(MPI_Waitall(1, r, MPI_STATUSES_IGNORE));
    } else {
        int flag = 0;
        while (!flag) MPI_OK(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char** argv) {
    int me, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const int last = n - 1;
    int in = 0, out = 0;
    MPI_Request sum, bar;
    MPI_OK(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &sum));
    MPI_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &bar));
    int* big = ints(BIG, 0);
    for (int run = 0; run < RUNS; ++run) {
        in = value(me, run);
        const int how = run % 3;
        if (me == last && n > 1) {
            MPI_OK(MPI_Recv(big, BIG, MPI_INT, 0, run, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < BIG; i += BIG / 8)
                CHECK(big[i] == value(run, i), "run %d: element %d is %d", run, i, big[i]);
            if (run % 2) {
                const double until = MPI_Wtime() + 200e-6;
                while (MPI_Wtime() < until) {
                }
            }
        }
        MPI_Request send = MPI_REQUEST_NULL;
        if (me == 0 && n > 1) {
            for (int i = 0; i < BIG; ++i) big[i] = value(run, i);
            MPI_OK(MPI_Isend(big, BIG, MPI_INT, last, run, MPI_COMM_WORLD, &send));
        }
        MPI_OK(MPI_Start(&sum));
        MPI_OK(MPI_Start(&bar));
        wait_one(&sum, how);
        wait_one(&bar, (how + 1) % 3);
        MPI_OK(MPI_Wait(&send, MPI_STATUS_IGNORE));
        int expect = 0;
        for (int r = 0; r < n; ++r) expect += value(r, run);
        CHECK(out == expect, "run %d: sum %d, expected %d", run, out, expect);
    }
    free(big);
    MPI_OK(MPI_Request_free(&sum));
    MPI_OK(MPI_Request_free(&bar));
    MPI_Finalize();
    return 0;
}
