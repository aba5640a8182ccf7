/* Many unexpected messages of the size the network sends in fragments (above
 * its eager size, below rendezvous), received in order while more arrive:
 * rank 0 streams rounds of messages to the last rank, which starts receiving
 * only once hundreds of them wait for it. The network finds a message whose
 * fragments are arriving by its sender's id; a key that named two messages
 * once ids had been reused a few hundred times made it drop fragments of a
 * newer message when an older one was received (the receive hung, or got
 * stale bytes). Every message's contents are checked.
 *
 * The sender's MPI_Send returns before the receive is posted because the
 * network buffers eager fragments (the point of the test): the two ranks
 * must be in different node processes (mpcrun -N 2 or more).
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
    const int last = size - 1;
    /* Rank 0 and the last rank must not share a node process. */
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int node_size;
    MPI_OK(MPI_Comm_size(node, &node_size));
    MPI_OK(MPI_Comm_free(&node));
    CHECK(size > 1 && node_size < size, "run across node processes (mpcrun -N 2)");
    int* buf = malloc(LEN * sizeof(int));
    CHECK(buf != NULL, "out of memory");
    for (int round = 0; round < ROUNDS; ++round) {
        if (rank == 0) {
            for (int i = 0; i < PER_ROUND; ++i) {
                for (int j = 0; j < LEN; ++j) buf[j] = round * 1000003 + i * 7 + j;
                MPI_OK(MPI_Send(buf, LEN, MPI_INT, last, 1, MPI_COMM_WORLD));
                /* The receiver starts once this many wait for it. */
                if (i == BACKLOG) MPI_OK(MPI_Send(&i, 1, MPI_INT, last, 2, MPI_COMM_WORLD));
            }
        } else if (rank == last) {
            int go;
            MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < PER_ROUND; ++i) {
                MPI_Status st;
                MPI_OK(MPI_Recv(buf, LEN, MPI_INT, 0, 1, MPI_COMM_WORLD, &st));
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
