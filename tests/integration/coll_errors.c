/* Argument errors of the collectives, with MPI_ERRORS_RETURN: each erroneous
 * call is made by every rank (so no rank starts a collective the others
 * skip) and must return the standard's error class; then the communicator
 * must still work. Also MPI_Cancel on a nonblocking collective (an error),
 * intercommunicators (MPI_IN_PLACE refused, Scan undefined there), and the
 * operation-handle functions.
 */
#include "common.h"

#define EXPECT_CLASS(call, cls)                                                            \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        if (error_class(rc_) != (cls))                                                     \
            test_fail(__FILE__, __LINE__, "%s returned class %d, expected %s (%d)", #call, \
                      error_class(rc_), #cls, (cls));                                      \
    } while (0)

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm w = MPI_COMM_WORLD;
    int buf[64] = {0}, out[64] = {0};
    int* big = (int*)xmalloc(sizeof(int) * 64 * (size_t)n);
    int* counts = (int*)xmalloc(sizeof(int) * (size_t)n);
    int* displs = (int*)xmalloc(sizeof(int) * (size_t)n);
    MPI_Datatype* types = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int i = 0; i < n; ++i) counts[i] = 1, displs[i] = i, types[i] = MPI_INT;
    MPI_Request req;

    /* Communicator. */
    EXPECT_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Ibarrier(MPI_COMM_NULL, &req), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Ibarrier(w, NULL), MPI_ERR_ARG);

    /* Counts, types, roots. */
    EXPECT_CLASS(MPI_Bcast(buf, -1, MPI_INT, 0, w), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, w), MPI_ERR_TYPE);
    MPI_Datatype uncommitted;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    EXPECT_CLASS(MPI_Bcast(buf, 1, uncommitted, 0, w), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Allreduce(buf, out, 1, uncommitted, MPI_SUM, w), MPI_ERR_TYPE);
    MPI_OK(MPI_Type_free(&uncommitted));
    EXPECT_CLASS(MPI_Bcast(buf, 1, MPI_INT, n, w), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Ibcast(buf, 1, MPI_INT, -1, w, &req), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, n, w), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Gather(buf, 1, MPI_INT, big, 1, MPI_INT, -2, w), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Scatterv(big, counts, displs, MPI_INT, buf, 1, MPI_INT, n, w), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Allgather(buf, -1, MPI_INT, big, 1, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Alltoall(buf, 1, MPI_INT, big, -3, MPI_INT, w), MPI_ERR_COUNT);
    counts[n - 1] = -1;
    EXPECT_CLASS(MPI_Allgatherv(buf, 1, MPI_INT, big, counts, displs, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_scatter(big, out, counts, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    counts[n - 1] = 1;
    EXPECT_CLASS(MPI_Allgatherv(buf, 1, MPI_INT, big, NULL, displs, MPI_INT, w), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Alltoallw(big, counts, displs, NULL, big, counts, displs, types, w),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Reduce_scatter_block(big, out, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    /* Gatherv: the root has no counts, the others a negative count. */
    EXPECT_CLASS(MPI_Gatherv(buf, me == 0 ? 1 : -1, MPI_INT, big, NULL, displs, MPI_INT, 0, w),
                 me == 0 ? MPI_ERR_ARG : MPI_ERR_COUNT);

    /* Operations. */
    EXPECT_CLASS(MPI_Allreduce(buf, out, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Allreduce(buf, out, 1, MPI_DOUBLE, MPI_BAND, w), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Iallreduce(buf, out, 1, MPI_DOUBLE_INT, MPI_SUM, w, &req), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Scan(buf, out, 1, MPI_INT, MPI_REPLACE, w), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Reduce_local(buf, out, 1, MPI_FLOAT, MPI_LXOR), MPI_ERR_OP);
    MPI_Op sum = MPI_SUM;
    EXPECT_CLASS(MPI_Op_free(&sum), MPI_ERR_OP);
    MPI_Op none;
    EXPECT_CLASS(MPI_Op_create(NULL, 1, &none), MPI_ERR_ARG);
    int commute;
    EXPECT_CLASS(MPI_Op_commutative(MPI_OP_NULL, &commute), MPI_ERR_OP);

    /* MPI_IN_PLACE where it is not allowed. */
    EXPECT_CLASS(MPI_Allreduce(buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Reduce_local(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    /* Root: recvbuf MPI_IN_PLACE; others: sendbuf MPI_IN_PLACE (root only). */
    EXPECT_CLASS(MPI_Gather(me == 0 ? buf : MPI_IN_PLACE, 1, MPI_INT, me == 0 ? MPI_IN_PLACE : big,
                            1, MPI_INT, 0, w),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(
        MPI_Scatter(big, 1, MPI_INT, me == 0 ? buf : MPI_IN_PLACE, me == 0 ? -1 : 1, MPI_INT, 0, w),
        me == 0 ? MPI_ERR_COUNT : MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Reduce(me == 0 ? MPI_IN_PLACE : MPI_IN_PLACE, me == 0 ? MPI_IN_PLACE : out, 1,
                            MPI_INT, MPI_SUM, 0, w),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Alltoall(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w), MPI_ERR_BUFFER);

    /* A nonblocking collective cannot be cancelled; it still completes. */
    MPI_OK(MPI_Ibarrier(w, &req));
    EXPECT_CLASS(MPI_Cancel(&req), MPI_ERR_REQUEST);
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* Intercommunicators: no MPI_IN_PLACE, no Scan (intercomm_coll.c checks
     * the collectives themselves). */
    if (n >= 2) {
        MPI_Comm half, inter;
        MPI_OK(MPI_Comm_split(w, me < n / 2, me, &half));
        MPI_OK(MPI_Intercomm_create(half, 0, w, me < n / 2 ? n / 2 : 0, 17, &inter));
        MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
        EXPECT_CLASS(MPI_Allreduce(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
        EXPECT_CLASS(MPI_Iscan(buf, out, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM);
        EXPECT_CLASS(MPI_Ibcast(buf, 1, MPI_INT, n, inter, &req), MPI_ERR_ROOT);
        MPI_OK(MPI_Barrier(inter));
        MPI_OK(MPI_Comm_free(&inter));
        MPI_OK(MPI_Comm_free(&half));
    }

    /* The communicator still works. */
    int x = me + 1, s = 0;
    MPI_OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, w));
    CHECK(s == n * (n + 1) / 2, "Allreduce after the errors: %d", s);
    free(big), free(counts), free(displs), free(types);
    if (me == 0) printf("coll_errors: %d ranks OK\n", n);
    MPI_Finalize();
    return 0;
}
