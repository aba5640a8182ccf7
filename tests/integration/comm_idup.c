/* MPI_Comm_idup: the duplicate is made while the caller goes on. Checks that it
 * does not block (rank 0 sends to rank 1 after starting it, rank 1 receives
 * before starting its own), that collectives on the parent started before the
 * wait keep matching, that several duplications may be in flight with a
 * blocking one among them, that attributes are copied, and that the new
 * communicators (of intra- and intercommunicators) work.
 */
#include "common.h"

static int copies;

static int copy_attr(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
    (void)comm;
    (void)keyval;
    (void)extra;
    ++copies;
    *(void**)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void check_works(MPI_Comm parent, MPI_Comm dup) {
    int result, prank, drank, size;
    MPI_OK(MPI_Comm_compare(parent, dup, &result));
    CHECK(result == MPI_CONGRUENT, "compare gives %d, want MPI_CONGRUENT", result);
    MPI_OK(MPI_Comm_rank(parent, &prank));
    MPI_OK(MPI_Comm_rank(dup, &drank));
    MPI_OK(MPI_Comm_size(dup, &size));
    CHECK(prank == drank, "rank %d in the duplicate, %d in the parent", drank, prank);
    long x = drank + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, dup));
    CHECK(sum == (long)size * (size + 1) / 2, "allreduce on the duplicate gives %ld", sum);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int keyval;
    MPI_OK(MPI_Comm_create_keyval(copy_attr, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &copies));

    /* Not blocking: a blocking duplication would wait for rank 1, which waits
     * for rank 0's message first. */
    MPI_Comm a;
    MPI_Request ra;
    int token = 42;
    if (rank == 1) MPI_OK(MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &ra));
    if (rank == 0 && size > 1) MPI_OK(MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));

    /* Collectives on the parent meanwhile, a second duplication and a blocking one. */
    long x = rank, total = 0;
    MPI_OK(MPI_Allreduce(&x, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == (long)size * (size - 1) / 2, "allreduce on the parent gives %ld", total);
    MPI_Comm b, c;
    MPI_Request rb;
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &b, &rb));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request both[2] = {ra, rb};
    MPI_OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    CHECK(both[0] == MPI_REQUEST_NULL && both[1] == MPI_REQUEST_NULL, "requests not freed");
    check_works(MPI_COMM_WORLD, a);
    check_works(MPI_COMM_WORLD, b);
    check_works(MPI_COMM_WORLD, c);
    int* seen = NULL;
    int flag = 0;
    MPI_OK(MPI_Comm_get_attr(a, keyval, &seen, &flag));
    CHECK(flag && seen == &copies, "the attribute was not copied to the duplicate");
    CHECK(copies == 3, "copy callback ran %d times, want 3", copies);

    /* Duplicates of a split communicator, tested with MPI_Test. */
    MPI_Comm half, half_dup;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MPI_Request rh;
    MPI_OK(MPI_Comm_idup(half, &half_dup, &rh));
    int done = 0;
    while (!done) MPI_OK(MPI_Test(&rh, &done, MPI_STATUS_IGNORE));
    check_works(half, half_dup);

    /* An intercommunicator between the two halves. */
    if (size >= 2) {
        MPI_Comm inter, inter_dup;
        MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 99, &inter));
        MPI_Request ri;
        MPI_OK(MPI_Comm_idup(inter, &inter_dup, &ri));
        MPI_OK(MPI_Wait(&ri, MPI_STATUS_IGNORE));
        int result, remote;
        MPI_OK(MPI_Comm_compare(inter, inter_dup, &result));
        CHECK(result == MPI_CONGRUENT, "intercommunicator compare gives %d", result);
        MPI_OK(MPI_Comm_remote_size(inter_dup, &remote));
        const int want = rank % 2 ? (size + 1) / 2 : size / 2;  /* the other half */
        CHECK(remote == want, "remote size %d, want %d", remote, want);
        /* A message across the duplicate. */
        int lrank, got = -1;
        MPI_OK(MPI_Comm_rank(inter_dup, &lrank));
        if (lrank == 0) {
            int mine = rank;
            MPI_OK(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, inter_dup,
                                MPI_STATUS_IGNORE));
            CHECK(got == (rank % 2 ? 0 : 1), "leader got %d across the duplicate", got);
        }
        MPI_OK(MPI_Comm_free(&inter_dup));
        MPI_OK(MPI_Comm_free(&inter));
    }

    /* Errors: a NULL request, an invalid communicator. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad;
    CHECK(error_class(MPI_Comm_idup(MPI_COMM_WORLD, &bad, NULL)) == MPI_ERR_ARG, "NULL request");
    MPI_Request rbad;
    CHECK(error_class(MPI_Comm_idup(MPI_COMM_NULL, &bad, &rbad)) == MPI_ERR_COMM, "MPI_COMM_NULL");

    MPI_OK(MPI_Comm_free(&half_dup));
    MPI_OK(MPI_Comm_free(&half));
    MPI_OK(MPI_Comm_free(&a));
    MPI_OK(MPI_Comm_free(&b));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_free_keyval(&keyval));
    MPI_Finalize();
    return 0;
}
