/* Sendrecv and Sendrecv_replace around a ring (small and large messages, the
 * send and receive sizes differing), and MPI_PROC_NULL as the peer of every
 * point-to-point call: the operation completes at once, sends nothing,
 * receives nothing (buffer untouched) and gives the status source
 * MPI_PROC_NULL, tag MPI_ANY_TAG, count 0.
 */
#include "common.h"

typedef struct {
    int rank, nranks, left, right;
} Ctx;

static uint32_t seed_of(int sender, int id) { return (uint32_t)(sender * 31337 + id * 101); }

static void sendrecv_ring(const Ctx* c) {
    static const int sizes[] = {0, 1, 5000, 16385, 1 << 20};
    for (int s = 0; s < 5; ++s) {
        /* Every rank sends sizes[s] + rank bytes, so send and receive sizes differ. */
        const int out_size = sizes[s] + c->rank, in_size = sizes[s] + c->left;
        unsigned char* out = (unsigned char*)xmalloc((size_t)out_size);
        unsigned char* in = (unsigned char*)xmalloc((size_t)in_size + 32);
        fill_pattern(out, (size_t)out_size, seed_of(c->rank, s));
        memset(in, 0xEE, (size_t)in_size + 32);
        MPI_Status st;
        MPI_OK(MPI_Sendrecv(out, out_size, MPI_BYTE, c->right, s, in, in_size + 32, MPI_BYTE,
                            c->left, s, MPI_COMM_WORLD, &st));
        CHECK_PATTERN(in, (size_t)in_size, seed_of(c->left, s), "Sendrecv");
        CHECK_GUARD(in + in_size, 32, 0xEE, "Sendrecv");
        CHECK(st.MPI_SOURCE == c->left && st.MPI_TAG == s, "Sendrecv status %d/%d", st.MPI_SOURCE,
              st.MPI_TAG);
        int n = -1;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(n == in_size, "Sendrecv count %d, expected %d", n, in_size);
        CHECK_PATTERN(out, (size_t)out_size, seed_of(c->rank, s), "Sendrecv send buffer changed");

        /* With wildcards. */
        memset(in, 0xEE, (size_t)in_size + 32);
        MPI_OK(MPI_Sendrecv(out, out_size, MPI_BYTE, c->right, 100 + s, in, in_size + 32, MPI_BYTE,
                            MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK_PATTERN(in, (size_t)in_size, seed_of(c->left, s), "Sendrecv(ANY_SOURCE, ANY_TAG)");
        CHECK(st.MPI_SOURCE == c->left && st.MPI_TAG == 100 + s, "Sendrecv wildcard status %d/%d",
              st.MPI_SOURCE, st.MPI_TAG);
        free(out);
        free(in);
    }
}

static void sendrecv_replace_ring(const Ctx* c) {
    static const int counts[] = {0, 3, 5000, 300000}; /* of MPI_INT */
    for (int s = 0; s < 4; ++s) {
        const int count = counts[s];
        int* buf = (int*)xmalloc(sizeof(int) * (size_t)count + 64);
        fill_pattern(buf, sizeof(int) * (size_t)count + 64, seed_of(c->rank, 10 + s));
        MPI_Status st;
        MPI_OK(MPI_Sendrecv_replace(buf, count, MPI_INT, c->right, 7, c->left, 7, MPI_COMM_WORLD,
                                    &st));
        /* The first count ints come from the left neighbour; the rest is ours. */
        unsigned char* expect = (unsigned char*)xmalloc(sizeof(int) * (size_t)count + 64);
        fill_pattern(expect, sizeof(int) * (size_t)count + 64, seed_of(c->left, 10 + s));
        CHECK(memcmp(buf, expect, sizeof(int) * (size_t)count) == 0,
              "Sendrecv_replace of %d ints: wrong data", count);
        fill_pattern(expect, sizeof(int) * (size_t)count + 64, seed_of(c->rank, 10 + s));
        CHECK(memcmp((char*)buf + sizeof(int) * (size_t)count,
                     expect + sizeof(int) * (size_t)count, 64) == 0,
              "Sendrecv_replace of %d ints wrote past the buffer", count);
        CHECK(st.MPI_SOURCE == c->left && st.MPI_TAG == 7, "Sendrecv_replace status");
        int n = -1;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == count, "Sendrecv_replace count %d, expected %d", n, count);
        free(buf);
        free(expect);
    }
}

static void check_null_status(const MPI_Status* st, const char* what) {
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d, expected MPI_PROC_NULL", what,
          st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d, expected MPI_ANY_TAG", what, st->MPI_TAG);
    int n = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n == 0, "%s: count %d, expected 0", what, n);
}

static void proc_null_everywhere(void) {
    int buf[16];
    const int P = MPI_PROC_NULL;
    const MPI_Comm W = MPI_COMM_WORLD;
    for (int i = 0; i < 16; ++i) buf[i] = 1000 + i;
    MPI_Status st;
    MPI_Request r, rs[6];

    /* Blocking sends in every mode. */
    MPI_OK(MPI_Send(buf, 16, MPI_INT, P, 1, W));
    MPI_OK(MPI_Ssend(buf, 16, MPI_INT, P, 1, W));
    MPI_OK(MPI_Rsend(buf, 16, MPI_INT, P, 1, W));
    MPI_OK(MPI_Bsend(buf, 16, MPI_INT, P, 1, W)); /* needs no attached buffer */

    /* Blocking receive. */
    MPI_OK(MPI_Recv(buf, 16, MPI_INT, P, 1, W, &st));
    check_null_status(&st, "Recv(PROC_NULL)");
    MPI_OK(MPI_Recv(buf, 16, MPI_INT, P, MPI_ANY_TAG, W, &st));
    check_null_status(&st, "Recv(PROC_NULL, ANY_TAG)");

    /* Nonblocking. */
    MPI_OK(MPI_Isend(buf, 16, MPI_INT, P, 1, W, &rs[0]));
    MPI_OK(MPI_Issend(buf, 16, MPI_INT, P, 1, W, &rs[1]));
    MPI_OK(MPI_Irsend(buf, 16, MPI_INT, P, 1, W, &rs[2]));
    MPI_OK(MPI_Ibsend(buf, 16, MPI_INT, P, 1, W, &rs[3]));
    MPI_OK(MPI_Irecv(buf, 16, MPI_INT, P, 1, W, &rs[4]));
    MPI_OK(MPI_Irecv(buf, 16, MPI_INT, P, MPI_ANY_TAG, W, &rs[5]));
    int flag = 0;
    MPI_OK(MPI_Test(&rs[4], &flag, &st)); /* complete at once: Test is enough */
    CHECK(flag, "Irecv(PROC_NULL) not complete at once");
    check_null_status(&st, "Irecv(PROC_NULL)+Test");
    MPI_Status sts[6];
    MPI_OK(MPI_Waitall(6, rs, sts));
    check_null_status(&sts[5], "Irecv(PROC_NULL)+Waitall");
    for (int i = 0; i < 6; ++i) CHECK(rs[i] == MPI_REQUEST_NULL, "request %d not freed", i);

    /* Persistent. */
    MPI_Request ps[5];
    MPI_OK(MPI_Send_init(buf, 16, MPI_INT, P, 1, W, &ps[0]));
    MPI_OK(MPI_Ssend_init(buf, 16, MPI_INT, P, 1, W, &ps[1]));
    MPI_OK(MPI_Rsend_init(buf, 16, MPI_INT, P, 1, W, &ps[2]));
    MPI_OK(MPI_Bsend_init(buf, 16, MPI_INT, P, 1, W, &ps[3]));
    MPI_OK(MPI_Recv_init(buf, 16, MPI_INT, P, 1, W, &ps[4]));
    for (int round = 0; round < 2; ++round) {
        MPI_Status pst[5];
        MPI_OK(MPI_Startall(5, ps));
        MPI_OK(MPI_Waitall(5, ps, pst));
        check_null_status(&pst[4], "Recv_init(PROC_NULL)");
    }
    for (int i = 0; i < 5; ++i) MPI_OK(MPI_Request_free(&ps[i]));

    /* Sendrecv with one or both sides null. */
    MPI_OK(MPI_Sendrecv(buf, 16, MPI_INT, P, 1, buf, 16, MPI_INT, P, 1, W, &st));
    check_null_status(&st, "Sendrecv(PROC_NULL, PROC_NULL)");
    MPI_OK(MPI_Sendrecv_replace(buf, 16, MPI_INT, P, 1, P, 1, W, &st));
    check_null_status(&st, "Sendrecv_replace(PROC_NULL)");

    /* Zero-size messages need no buffer. */
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, P, 1, NULL, 0, MPI_INT, P, 1, W, &st));

    /* Nothing was received into buf. */
    for (int i = 0; i < 16; ++i) CHECK(buf[i] == 1000 + i, "PROC_NULL receive wrote buf[%d]", i);

    /* Waitany / Testany over requests that are all null. */
    MPI_Request nulls[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int idx = 0;
    MPI_OK(MPI_Waitany(2, nulls, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany over null requests gave index %d", idx);
    flag = 0;
    MPI_OK(MPI_Testany(2, nulls, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany over null requests");
    int out = 0;
    MPI_OK(MPI_Waitsome(2, nulls, &out, &idx, MPI_STATUSES_IGNORE));
    CHECK(out == MPI_UNDEFINED, "Waitsome over null requests gave %d", out);
    MPI_OK(MPI_Wait(&nulls[0], &st));
    r = MPI_REQUEST_NULL;
    MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "Test of MPI_REQUEST_NULL");
}

/* Empty messages with NULL buffers, to a real peer. */
static void empty_messages(const Ctx* c) {
    MPI_Request r;
    MPI_Status st;
    MPI_OK(MPI_Irecv(NULL, 0, MPI_BYTE, c->left, 50, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, c->right, 50, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == c->left && st.MPI_TAG == 50, "empty message status");
    int n = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == 0, "empty message count %d", n);
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, c->right, 51, NULL, 0, MPI_INT, c->left, 51,
                        MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 0 && st.MPI_SOURCE == c->left, "empty Sendrecv");
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Ctx c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    c.right = (c.rank + 1) % c.nranks;
    c.left = (c.rank - 1 + c.nranks) % c.nranks;

    sendrecv_ring(&c);
    sendrecv_replace_ring(&c);
    proc_null_everywhere();
    empty_messages(&c);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (c.rank == 0) printf("p2p_sendrecv: passed on %d ranks\n", c.nranks);
    MPI_Finalize();
    return 0;
}
