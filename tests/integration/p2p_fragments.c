/* Many unexpected messages of the size the network sends in fragments (above
 * its eager size, below rendezvous), received in order while more arrive:
 * each pair (2k, 2k+1) streams rounds of messages that the receiver starts
 * receiving only once hundreds of them are waiting. The network finds a
 * message whose fragments are arriving by its sender's id; a key that named
 * two messages once ids had been reused a few hundred times made it drop
 * fragments of a newer message when an older one was received (the receive
 * hung, or got stale bytes). Every message's contents are checked.
 */
#include "common.h"

#define ROUNDS 6
#define PER_ROUND 600
#define BACKLOG 300
#define LEN 10000 /* ints: 40 000 bytes */

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int* buf = malloc(LEN * sizeof(int));
    CHECK(buf != NULL, "out of memory");
    const int peer = rank ^ 1;
    for (int round = 0; round < ROUNDS && peer < size; ++round) {
        if (rank % 2 == 0) {
            for (int i = 0; i < PER_ROUND; ++i) {
                for (int j = 0; j < LEN; ++j) buf[j] = round * 1000003 + i * 7 + j;
                MPI_OK(MPI_Send(buf, LEN, MPI_INT, peer, 1, MPI_COMM_WORLD));
                /* The receiver starts once this many wait for it. */
                if (i == BACKLOG) MPI_OK(MPI_Send(&i, 1, MPI_INT, peer, 2, MPI_COMM_WORLD));
            }
        } else {
            int go;
            MPI_OK(MPI_Recv(&go, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < PER_ROUND; ++i) {
                MPI_Status st;
                MPI_OK(MPI_Recv(buf, LEN, MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
                int n = -1;
                MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
                CHECK(n == LEN, "round %d message %d: %d ints", round, i, n);
                for (int j = 0; j < LEN; ++j)
                    CHECK(buf[j] == round * 1000003 + i * 7 + j,
                          "round %d message %d: int %d is %d, expected %d", round, i, j, buf[j],
                          round * 1000003 + i * 7 + j);
            }
        }
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
