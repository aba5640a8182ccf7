/* Programs that never finish, for the hang report (MPC_HANG_TIMEOUT, mpcrun
 * --timeout): each rank pairs with its neighbour (rank ^ 1) and
 *   recv    both receive first (the classic deadlock): MPI_Recv from the peer;
 *   ssend   both send first with MPI_Ssend, which waits for a matching receive;
 *   waitall each starts a nonblocking receive of a tag nobody sends and a
 *           rendezvous-sized send, then waits for both in MPI_Waitall;
 *   compute the ranks compute for --seconds without calling MPI (not a hang);
 *   late_sender  even ranks receive 1 MiB from their peer, odd ranks start
 *           that send and then compute for --seconds without calling MPI:
 *           in wait progress mode nobody answers the receiver's ACK, so the
 *           receiver's node reports a rendezvous waiting for its data.
 * An odd rank count leaves the last rank waiting in MPI_Barrier.
 */
#include <time.h>

#include "common.h"

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char* mode = argc > 1 ? argv[1] : "recv";
    const int peer = rank ^ 1;
    int value = rank;
    if (peer >= size) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    } else if (!strcmp(mode, "recv")) {
        MPI_OK(MPI_Recv(&value, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(&value, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
    } else if (!strcmp(mode, "ssend")) {
        MPI_OK(MPI_Ssend(&value, 1, MPI_INT, peer, 8, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(&value, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (!strcmp(mode, "waitall")) {
        const int n = 1 << 18; /* 1 MiB of ints: rendezvous on every transport */
        int* out = ints((size_t)n, rank);
        int in = 0;
        MPI_Request reqs[2];
        MPI_OK(MPI_Irecv(&in, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, &reqs[0]));
        MPI_OK(MPI_Isend(out, n, MPI_INT, peer, 9, MPI_COMM_WORLD, &reqs[1]));
        MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        free(out);
    } else if (!strcmp(mode, "late_sender")) {
        const int n = 1 << 18;
        int* buf = ints((size_t)n, rank);
        if (rank % 2 == 0) {
            MPI_OK(MPI_Recv(buf, n, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            MPI_Request req;
            MPI_OK(MPI_Isend(buf, n, MPI_INT, peer, 3, MPI_COMM_WORLD, &req));
            const double seconds = argc > 2 ? atof(argv[2]) : 30;
            const double start = MPI_Wtime();
            volatile double x = 0;
            while (MPI_Wtime() - start < seconds)
                for (int i = 0; i < 100000; ++i) x += i * 1e-9;
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        free(buf);
    } else if (!strcmp(mode, "compute")) {
        const double seconds = argc > 2 ? atof(argv[2]) : 3;
        const double start = MPI_Wtime();
        volatile double x = 0;
        while (MPI_Wtime() - start < seconds) /* MPI_Wtime is not waiting in MPI */
            for (int i = 0; i < 100000; ++i) x += i * 1e-9;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        test_fail(__FILE__, __LINE__, "unknown mode %s", mode);
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
