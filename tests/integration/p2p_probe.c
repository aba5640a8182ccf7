/* Probing, matched receives and cancellation, in a ring (rank r sends to r+1).
 *
 * - Probe / Iprobe report source, tag and size of the first matching message
 *   without receiving it; the following Recv gets exactly that message.
 * - Iprobe says "no" for a message that was never sent, and an Iprobe loop ends
 *   once the message arrives (the sender may share the prober's core).
 * - Mprobe / Improbe take the message out of matching: a later Recv with the
 *   same envelope gets the next message; Mrecv / Imrecv deliver the taken one.
 *   Small (cell) and large (rendezvous) messages.
 * - MPI_PROC_NULL probes give MPI_MESSAGE_NO_PROC and an empty status.
 * - Cancel of a posted receive (plain and persistent): Wait completes it,
 *   Test_cancelled is true, and a message sent later goes to the next receive.
 *   Cancel of a receive that already matched: Test_cancelled is false.
 * - Cancel of a send: whether or not it succeeds, the receiver gets the
 *   message exactly when Test_cancelled is false.
 */
#include "common.h"

typedef struct {
    int rank, nranks, left, right;
} Ctx;

static uint32_t seed_of(int sender, int id) { return (uint32_t)(sender * 92821 + id * 13); }

static void check_status(const MPI_Status* st, int source, int tag, int count, const char* what) {
    CHECK(st->MPI_SOURCE == source, "%s: source %d, expected %d", what, st->MPI_SOURCE, source);
    CHECK(st->MPI_TAG == tag, "%s: tag %d, expected %d", what, st->MPI_TAG, tag);
    int n = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(n == count, "%s: count %d, expected %d", what, n, count);
}

static void probe_then_receive(const Ctx* c) {
    static const int sizes[] = {0, 10, 16385, 300000};
    for (int s = 0; s < 4; ++s) {
        const int size = sizes[s], id = s, tag = 20 + s;
        unsigned char* out = (unsigned char*)xmalloc((size_t)size);
        fill_pattern(out, (size_t)size, seed_of(c->rank, id));
        MPI_Request req;
        MPI_OK(MPI_Isend(out, size, MPI_BYTE, c->right, tag, MPI_COMM_WORLD, &req));

        MPI_Status st;
        if (s % 2 == 0) {
            MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        } else {
            int flag = 0;
            while (!flag) MPI_OK(MPI_Iprobe(c->left, tag, MPI_COMM_WORLD, &flag, &st));
        }
        check_status(&st, c->left, tag, size, "probe");
        /* Probing again finds the same message: probing does not consume. */
        int flag = 0;
        MPI_Status st2;
        MPI_OK(MPI_Iprobe(c->left, tag, MPI_COMM_WORLD, &flag, &st2));
        CHECK(flag, "the probed message vanished");
        check_status(&st2, c->left, tag, size, "second probe");

        int count;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
        unsigned char* in = (unsigned char*)xmalloc((size_t)count);
        MPI_OK(MPI_Recv(in, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        check_status(&st2, c->left, tag, size, "receive after probe");
        CHECK_PATTERN(in, (size_t)size, seed_of(c->left, id), "receive after probe");
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        free(in);
        free(out);
    }
    /* Nothing was ever sent with this tag. */
    int flag = 1;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Iprobe found a message that was never sent");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Two messages with one envelope: the first taken by (I)mprobe, the second must
 * then be what a plain receive gets. */
static void matched_probe(const Ctx* c) {
    static const int sizes[] = {64, 200000};
    for (int variant = 0; variant < 4; ++variant) {
        const int size = sizes[variant % 2], tag = 40 + variant;
        unsigned char* out[2];
        MPI_Request sreq[2];
        for (int k = 0; k < 2; ++k) {
            out[k] = (unsigned char*)xmalloc((size_t)size);
            fill_pattern(out[k], (size_t)size, seed_of(c->rank, 100 + variant * 2 + k));
            MPI_OK(MPI_Isend(out[k], size, MPI_BYTE, c->right, tag, MPI_COMM_WORLD, &sreq[k]));
        }
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        if (variant < 2) {
            MPI_OK(MPI_Mprobe(c->left, tag, MPI_COMM_WORLD, &msg, &st));
        } else {
            int flag = 0;
            while (!flag) MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &msg, &st));
        }
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "no message handle");
        check_status(&st, c->left, tag, size, "mprobe");

        /* The second message, by a plain receive, while the first is held. */
        unsigned char* in = (unsigned char*)xmalloc((size_t)size);
        MPI_Status st2;
        MPI_OK(MPI_Recv(in, size, MPI_BYTE, c->left, tag, MPI_COMM_WORLD, &st2));
        check_status(&st2, c->left, tag, size, "receive after mprobe");
        CHECK_PATTERN(in, (size_t)size, seed_of(c->left, 100 + variant * 2 + 1),
                      "a receive after Mprobe must get the second message");

        memset(in, 0, (size_t)size);
        if (variant % 2 == 0) {
            MPI_OK(MPI_Mrecv(in, size, MPI_BYTE, &msg, &st2));
        } else {
            MPI_Request r;
            MPI_OK(MPI_Imrecv(in, size, MPI_BYTE, &msg, &r));
            MPI_OK(MPI_Wait(&r, &st2));
        }
        CHECK(msg == MPI_MESSAGE_NULL, "the message handle was not reset");
        check_status(&st2, c->left, tag, size, "mrecv");
        CHECK_PATTERN(in, (size_t)size, seed_of(c->left, 100 + variant * 2),
                      "Mrecv must get the probed (first) message");
        MPI_OK(MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE));
        free(in);
        free(out[0]);
        free(out[1]);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void check_proc_null_status(const MPI_Status* st, const char* what) {
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d", what, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d", what, st->MPI_TAG);
    int n = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(n == 0, "%s: count %d", what, n);
}

static void probe_proc_null(void) {
    MPI_Status st;
    int flag = 0;
    MPI_OK(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_proc_null_status(&st, "Probe(PROC_NULL)");
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "Iprobe(PROC_NULL) flag 0");
    check_proc_null_status(&st, "Iprobe(PROC_NULL)");
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) gave %d", (int)msg);
    check_proc_null_status(&st, "Mprobe(PROC_NULL)");
    char buf[4] = {1, 2, 3, 4};
    MPI_OK(MPI_Mrecv(buf, 4, MPI_BYTE, &msg, &st));
    check_proc_null_status(&st, "Mrecv(NO_PROC)");
    CHECK(buf[0] == 1 && buf[3] == 4, "Mrecv(NO_PROC) wrote the buffer");
    flag = 0;
    msg = MPI_MESSAGE_NULL;
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL)");
    MPI_Request r;
    MPI_OK(MPI_Imrecv(buf, 4, MPI_BYTE, &msg, &r));
    MPI_OK(MPI_Wait(&r, &st));
    check_proc_null_status(&st, "Imrecv(NO_PROC)");
}

static void cancel_receives(const Ctx* c) {
    /* A receive nobody will match, cancelled. */
    char buf[32];
    MPI_Request r;
    MPI_Status st;
    int flag = 0;
    MPI_OK(MPI_Irecv(buf, 32, MPI_BYTE, c->left, 77, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "cancelled request not freed");
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "Test_cancelled false for a cancelled, never matched receive");

    /* A persistent receive, cancelled, then restarted and matched. */
    MPI_OK(MPI_Recv_init(buf, 32, MPI_BYTE, c->left, 78, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "Test_cancelled false for a cancelled persistent receive");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* no message of tag 78 before every cancel */
    MPI_OK(MPI_Start(&r));
    char out[32];
    fill_pattern(out, 32, seed_of(c->rank, 500));
    MPI_OK(MPI_Send(out, 32, MPI_BYTE, c->right, 78, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "Test_cancelled true for a matched persistent receive");
    check_status(&st, c->left, 78, 32, "restarted persistent receive");
    CHECK_PATTERN(buf, 32, seed_of(c->left, 500), "restarted persistent receive");
    MPI_OK(MPI_Request_free(&r));

    /* The cancelled receive must not steal a later message: post, cancel, then
     * a message with the same envelope goes to the next receive. */
    MPI_OK(MPI_Irecv(buf, 32, MPI_BYTE, MPI_ANY_SOURCE, 79, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "Test_cancelled false (ANY_SOURCE receive)");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    fill_pattern(out, 32, seed_of(c->rank, 501));
    MPI_OK(MPI_Send(out, 32, MPI_BYTE, c->right, 79, MPI_COMM_WORLD));
    memset(buf, 0, 32);
    MPI_OK(MPI_Recv(buf, 32, MPI_BYTE, c->left, 79, MPI_COMM_WORLD, &st));
    CHECK_PATTERN(buf, 32, seed_of(c->left, 501), "receive after a cancelled one");

    /* Too late to cancel: the receive has matched. */
    MPI_OK(MPI_Irecv(buf, 32, MPI_BYTE, c->left, 80, MPI_COMM_WORLD, &r));
    fill_pattern(out, 32, seed_of(c->rank, 502));
    MPI_OK(MPI_Send(out, 32, MPI_BYTE, c->right, 80, MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every message of tag 80 has been sent */
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "Test_cancelled true for a receive that had matched");
    check_status(&st, c->left, 80, 32, "receive that could not be cancelled");
    CHECK_PATTERN(buf, 32, seed_of(c->left, 502), "receive that could not be cancelled");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Cancelling a send may fail (MPI lets it), but the outcome must be
 * consistent: the receiver gets the message exactly when Test_cancelled says
 * the send was not cancelled. */
static void cancel_send(const Ctx* c) {
    for (int s = 0; s < 2; ++s) {
        const int size = s == 0 ? 16 : 100000, tag = 90 + s;
        unsigned char* out = (unsigned char*)xmalloc((size_t)size);
        fill_pattern(out, (size_t)size, seed_of(c->rank, 600 + s));
        MPI_Request r;
        MPI_Status st;
        MPI_OK(MPI_Issend(out, size, MPI_BYTE, c->right, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Cancel(&r));
        int cancelled = -1;
        if (s == 0) {
            /* The receive is posted only after the cancel: the send either was
             * cancelled or completes when that receive comes. */
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        /* Tell the receiver whether to expect the message (after Wait, which
         * needs the receive when the cancel failed: post it first). */
        int left_cancelled = -1;
        MPI_Request flag_req;
        MPI_OK(MPI_Irecv(&left_cancelled, 1, MPI_INT, c->left, tag + 10, MPI_COMM_WORLD, &flag_req));
        unsigned char* in = (unsigned char*)xmalloc((size_t)size);
        MPI_Request data_req;
        MPI_OK(MPI_Irecv(in, size, MPI_BYTE, c->left, tag, MPI_COMM_WORLD, &data_req));
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        MPI_OK(MPI_Send(&cancelled, 1, MPI_INT, c->right, tag + 10, MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&flag_req, MPI_STATUS_IGNORE));
        if (left_cancelled) {
            int flag = 1;
            MPI_OK(MPI_Cancel(&data_req));
            MPI_OK(MPI_Wait(&data_req, &st));
            MPI_OK(MPI_Test_cancelled(&st, &flag));
            CHECK(flag, "the left neighbour's send was cancelled, yet a message arrived");
        } else {
            MPI_OK(MPI_Wait(&data_req, &st));
            check_status(&st, c->left, tag, size, "send that could not be cancelled");
            CHECK_PATTERN(in, (size_t)size, seed_of(c->left, 600 + s), "send that could not be cancelled");
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        free(in);
        free(out);
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Ctx c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    c.right = (c.rank + 1) % c.nranks;
    c.left = (c.rank - 1 + c.nranks) % c.nranks;

    probe_then_receive(&c);
    matched_probe(&c);
    probe_proc_null();
    cancel_receives(&c);
    cancel_send(&c);

    if (c.rank == 0) printf("p2p_probe: passed on %d ranks\n", c.nranks);
    MPI_Finalize();
    return 0;
}
