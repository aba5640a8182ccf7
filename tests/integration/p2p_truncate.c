/* Truncation: a message longer than its receive buffer. With MPI_ERRORS_RETURN
 * the receive returns an error of class MPI_ERR_TRUNCATE (in the status too
 * when an array form returns MPI_ERR_IN_STATUS; a single-request call leaves
 * the status's MPI_ERROR alone), the buffer holds the first bytes of the message and nothing past it is
 * written; the sender is not affected. Covered for small (cell) and large
 * (rendezvous) messages, receive posted first or late, and completion by Recv,
 * Wait, Test, Waitall (MPI_ERR_IN_STATUS) and Mrecv. The job goes on normally
 * afterwards.
 */
#include "common.h"

typedef struct {
    int rank, nranks, left, right;
} Ctx;

static uint32_t seed_of(int sender, int id) { return (uint32_t)(sender * 7411 + id * 3); }

/* Receives `size` bytes sent as `size * 2 + 1` and checks the outcome. */
static void truncated(const Ctx* c, int id, int size, int late, int how) {
    const int sent = size * 2 + 1, tag = 300 + id;
    unsigned char* out = (unsigned char*)xmalloc((size_t)sent);
    unsigned char* in = (unsigned char*)xmalloc((size_t)size + 64);
    fill_pattern(out, (size_t)sent, seed_of(c->rank, id));
    memset(in, 0xEE, (size_t)size + 64);
    MPI_Request sreq, rreq = MPI_REQUEST_NULL;
    MPI_Status st;
    memset(&st, 0, sizeof(st));
    st.MPI_ERROR = -123; /* a single-request call leaves it */
    int rc = MPI_SUCCESS;
    const char* names[] = {"Recv", "Irecv+Wait", "Irecv+Test", "Irecv+Waitall", "Mprobe+Mrecv"};
    char what[96];
    snprintf(what, sizeof(what), "%s of %d bytes into %d (%s)", names[how], sent, size,
             late ? "late" : "posted first");

    if (!late && how != 0 && how != 4)
        MPI_OK(MPI_Irecv(in, size, MPI_BYTE, c->left, tag, MPI_COMM_WORLD, &rreq));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend(out, sent, MPI_BYTE, c->right, tag, MPI_COMM_WORLD, &sreq));
    if (late) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (late && how != 0 && how != 4)
        MPI_OK(MPI_Irecv(in, size, MPI_BYTE, c->left, tag, MPI_COMM_WORLD, &rreq));
    switch (how) {
        case 0: rc = MPI_Recv(in, size, MPI_BYTE, c->left, tag, MPI_COMM_WORLD, &st); break;
        case 1: rc = MPI_Wait(&rreq, &st); break;
        case 2: {
            int flag = 0;
            while (!flag) rc = MPI_Test(&rreq, &flag, &st);
            break;
        }
        case 3: {
            MPI_Request two[2] = {MPI_REQUEST_NULL, rreq};
            MPI_Status sts[2];
            rc = MPI_Waitall(2, two, sts);
            CHECK(error_class(rc) == MPI_ERR_IN_STATUS, "%s: Waitall returned class %d, expected MPI_ERR_IN_STATUS",
                  what, error_class(rc));
            CHECK(sts[0].MPI_ERROR == MPI_SUCCESS, "%s: the null request's status has error %d", what,
                  sts[0].MPI_ERROR);
            st = sts[1];
            rc = st.MPI_ERROR;
            break;
        }
        default: {
            MPI_Message msg;
            MPI_OK(MPI_Mprobe(c->left, tag, MPI_COMM_WORLD, &msg, &st));
            int n = -1;
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
            CHECK(n == sent, "%s: Mprobe count %d, expected %d", what, n, sent);
            rc = MPI_Mrecv(in, size, MPI_BYTE, &msg, &st);
            break;
        }
    }
    CHECK(error_class(rc) == MPI_ERR_TRUNCATE, "%s: returned %d (class %d), expected MPI_ERR_TRUNCATE",
          what, rc, error_class(rc));
    if (how == 3)
        CHECK(error_class(st.MPI_ERROR) == MPI_ERR_TRUNCATE,
              "%s: status error %d (class %d), expected MPI_ERR_TRUNCATE", what, st.MPI_ERROR,
              error_class(st.MPI_ERROR));
    else
        CHECK(st.MPI_ERROR == -123, "%s: a single-request call wrote MPI_ERROR (%d)", what,
              st.MPI_ERROR);
    CHECK(st.MPI_SOURCE == c->left && st.MPI_TAG == tag, "%s: status %d/%d", what, st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK_PATTERN(in, (size_t)size, seed_of(c->left, id), what);
    CHECK_GUARD(in + size, 64, 0xEE, what);
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE)); /* the sender sees no error */
    free(out);
    free(in);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Ctx c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    c.right = (c.rank + 1) % c.nranks;
    c.left = (c.rank - 1 + c.nranks) % c.nranks;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    static const int sizes[] = {0, 100, 8000, 100000};
    int id = 0;
    for (int s = 0; s < 4; ++s)
        for (int late = 0; late < 2; ++late)
            for (int how = 0; how < 5; ++how) truncated(&c, id++, sizes[s], late, how);

    /* Business as usual afterwards. */
    int v = c.rank, got = -1;
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, c.right, 1, &got, 1, MPI_INT, c.left, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    CHECK(got == c.left, "after truncations: got %d, expected %d", got, c.left);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (c.rank == 0) printf("p2p_truncate: passed on %d ranks\n", c.nranks);
    MPI_Finalize();
    return 0;
}
