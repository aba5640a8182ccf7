/* Partitioned transfers (MPI 4.0 chapter 4) whose receiver polls
 * MPI_Parrived and then stops polling: partitions marked ready while it
 * polled must still arrive while it only waits (MPI_Wait, or MPI_Test in a
 * loop), even though the sender does not complete its request before the
 * receiver answers. Rank pairs (i, i + n/2); the receiver of each run polls
 * partition 0 until it arrives, then waits for the whole request and sends
 * an acknowledgement; the sender marks partition 0, then the others in quick
 * succession, receives the acknowledgement, and only then waits for its
 * request. Runs alternate Wait and Test loops; values change every run.
 */
#include "common.h"

#define PARTS 8
#define PER 4096 /* ints per partition */
#define RUNS 60

int main(int argc, char** argv) {
    int me, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const int half = n / 2;
    if (half == 0 || me >= 2 * half) { /* one rank alone, or an odd last one */
        MPI_Finalize();
        return 0;
    }
    const int sender = me < half, peer = sender ? me + half : me - half;
    int* buf = ints((size_t)PARTS * PER, 0);
    MPI_Request req;
    if (sender)
        MPI_OK(
            MPI_Psend_init(buf, PARTS, PER, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    else
        MPI_OK(
            MPI_Precv_init(buf, PARTS, PER, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int run = 0; run < RUNS; ++run) {
        MPI_OK(MPI_Start(&req));
        int ack = 0;
        if (sender) {
            const int base = me * 131 + run;  /* value() takes a rank-sized first argument */
            for (long k = 0; k < (long)PARTS * PER; ++k) buf[k] = value(base, k);
            MPI_OK(MPI_Pready(0, req));
            for (int p = 1; p < PARTS; ++p) MPI_OK(MPI_Pready(p, req));
            MPI_OK(MPI_Recv(&ack, 1, MPI_INT, peer, run, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(ack == run + 1, "run %d: acknowledgement %d", run, ack);
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            int flag = 0;
            while (!flag) MPI_OK(MPI_Parrived(req, 0, &flag));
            if (run % 2) {
                MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            } else {
                for (flag = 0; !flag;) MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            }
            const int base = peer * 131 + run;
            for (long k = 0; k < (long)PARTS * PER; ++k)
                CHECK(buf[k] == value(base, k), "run %d: element %ld is %d, expected %d", run, k,
                      buf[k], value(base, k));
            ack = run + 1;
            MPI_OK(MPI_Send(&ack, 1, MPI_INT, peer, run, MPI_COMM_WORLD));
        }
    }
    MPI_OK(MPI_Request_free(&req));
    free(buf);
    MPI_Finalize();
    return 0;
}
