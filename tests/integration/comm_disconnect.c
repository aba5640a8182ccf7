/* MPI_Comm_disconnect (MPI 3.1 section 10.5.4) on communicators of the job:
 * collective, it returns once the caller's pending operations on the
 * communicator completed (a freed send among them) and sets the handle to
 * MPI_COMM_NULL; on an intercommunicator too. MPI_COMM_WORLD cannot be
 * disconnected.
 */
#include "common.h"

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    /* A large send (a rendezvous within a node process), freed at once: it
     * is pending until its receive takes it. */
    enum { N = 100000 };
    int* out = malloc(N * sizeof(int));
    int* in = malloc(N * sizeof(int));
    for (int i = 0; i < N; ++i) out[i] = rank + i;
    MPI_Request r;
    MPI_OK(MPI_Isend(out, N, MPI_INT, right, 0, c, &r));
    MPI_OK(MPI_Request_free(&r));
    MPI_OK(MPI_Recv(in, N, MPI_INT, left, 0, c, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_disconnect(&c));
    CHECK(c == MPI_COMM_NULL, "the handle is not MPI_COMM_NULL");
    for (int i = 0; i < N; ++i) CHECK(in[i] == left + i, "int %d is %d", i, in[i]);
    /* The send buffer may be reused now: the send completed. */
    memset(out, 0, N * sizeof(int));

    if (size > 1) {
        MPI_Comm half, inter;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter));
        /* Local rank i talks to remote rank i, where both exist. */
        int lrank, rsize, v = rank, w = -1;
        MPI_OK(MPI_Comm_rank(inter, &lrank));
        MPI_OK(MPI_Comm_remote_size(inter, &rsize));
        if (lrank < rsize)
            MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, lrank, 1, &w, 1, MPI_INT, lrank, 1, inter,
                                MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL, "intercommunicator handle not MPI_COMM_NULL");
        MPI_OK(MPI_Comm_disconnect(&half));
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm world = MPI_COMM_WORLD;
    const int rc = MPI_Comm_disconnect(&world);
    CHECK(error_class(rc) == MPI_ERR_COMM, "disconnecting MPI_COMM_WORLD returned %d", rc);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
