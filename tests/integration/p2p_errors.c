/* Error classes of bad arguments to the point-to-point API, with
 * MPI_ERRORS_RETURN on MPI_COMM_WORLD: every call returns the documented class
 * (codes may carry details: MPI_Error_class extracts the class), has an error
 * string, and leaves the library usable (a normal exchange follows).
 */
#include "common.h"

typedef struct {
    int rank, nranks, left, right;
    int checks;
} Ctx;

#define EXPECT(c, call, cls)                                                                   \
    do {                                                                                       \
        int ex_rc_ = (call);                                                                   \
        int ex_cls_ = error_class(ex_rc_);                                                     \
        if (ex_cls_ != (cls))                                                                  \
            test_fail(__FILE__, __LINE__, "%s returned %d (class %d), expected class %s (%d)", \
                      #call, ex_rc_, ex_cls_, #cls, (cls));                                    \
        char ex_text_[MPI_MAX_ERROR_STRING] = "";                                              \
        int ex_len_ = 0;                                                                       \
        MPI_OK(MPI_Error_string(ex_rc_, ex_text_, &ex_len_));                                  \
        CHECK(ex_len_ > 0 && (int)strlen(ex_text_) == ex_len_, "%s: no error string", #call);  \
        (c)->checks++;                                                                         \
    } while (0)

/* Two acceptable classes (where the standard leaves the choice open). */
#define EXPECT2(c, call, cls1, cls2)                                                            \
    do {                                                                                        \
        int ex_rc_ = (call);                                                                    \
        int ex_cls_ = error_class(ex_rc_);                                                      \
        if (ex_cls_ != (cls1) && ex_cls_ != (cls2))                                             \
            test_fail(__FILE__, __LINE__, "%s returned %d (class %d), expected %s or %s", #call, \
                      ex_rc_, ex_cls_, #cls1, #cls2);                                           \
        (c)->checks++;                                                                          \
    } while (0)

static void bad_sends(Ctx* c) {
    int buf[4] = {0, 1, 2, 3};
    const MPI_Comm W = MPI_COMM_WORLD;
    MPI_Request r = MPI_REQUEST_NULL;
    /* Ranks. */
    EXPECT(c, MPI_Send(buf, 1, MPI_INT, c->nranks, 0, W), MPI_ERR_RANK);
    EXPECT(c, MPI_Send(buf, 1, MPI_INT, -5, 0, W), MPI_ERR_RANK);
    EXPECT(c, MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, W), MPI_ERR_RANK);
    EXPECT(c, MPI_Ssend(buf, 1, MPI_INT, c->nranks + 3, 0, W), MPI_ERR_RANK);
    EXPECT(c, MPI_Rsend(buf, 1, MPI_INT, -3, 0, W), MPI_ERR_RANK);
    EXPECT(c, MPI_Isend(buf, 1, MPI_INT, c->nranks, 0, W, &r), MPI_ERR_RANK);
    EXPECT(c, MPI_Send_init(buf, 1, MPI_INT, c->nranks, 0, W, &r), MPI_ERR_RANK);
    /* Tags. */
    EXPECT(c, MPI_Send(buf, 1, MPI_INT, c->right, -1, W), MPI_ERR_TAG);
    EXPECT(c, MPI_Send(buf, 1, MPI_INT, c->right, MPI_ANY_TAG, W), MPI_ERR_TAG);
    EXPECT(c, MPI_Issend(buf, 1, MPI_INT, c->right, -7, W, &r), MPI_ERR_TAG);
    EXPECT(c, MPI_Bsend_init(buf, 1, MPI_INT, c->right, -2, W, &r), MPI_ERR_TAG);
    /* Counts. */
    EXPECT(c, MPI_Send(buf, -1, MPI_INT, c->right, 0, W), MPI_ERR_COUNT);
    EXPECT(c, MPI_Irsend(buf, -4, MPI_INT, c->right, 0, W, &r), MPI_ERR_COUNT);
    /* Datatypes. */
    EXPECT(c, MPI_Send(buf, 1, MPI_DATATYPE_NULL, c->right, 0, W), MPI_ERR_TYPE);
    EXPECT(c, MPI_Isend(buf, 1, MPI_DATATYPE_NULL, c->right, 0, W, &r), MPI_ERR_TYPE);
    /* Communicators. */
    EXPECT(c, MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(c, MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    EXPECT(c, MPI_Ssend_init(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    /* Buffers. */
    EXPECT(c, MPI_Send(NULL, 4, MPI_INT, c->right, 0, W), MPI_ERR_BUFFER);
    EXPECT(c, MPI_Isend(NULL, 1, MPI_INT, c->right, 0, W, &r), MPI_ERR_BUFFER);
    /* No buffer attached for a buffered send. */
    EXPECT(c, MPI_Bsend(buf, 4, MPI_INT, c->right, 0, W), MPI_ERR_BUFFER);
    /* Request argument missing. */
    EXPECT2(c, MPI_Isend(buf, 1, MPI_INT, c->right, 0, W, NULL), MPI_ERR_ARG, MPI_ERR_REQUEST);
    CHECK(r == MPI_REQUEST_NULL, "a failed call returned a request");
}

/* Types that look usable but are not, sent to a real peer on the node (the
 * path that sends small messages without a request must see them too). */
static void bad_types_to_a_peer(Ctx* c) {
    int buf[4] = {0, 1, 2, 3};
    const MPI_Comm W = MPI_COMM_WORLD;
    MPI_Status st;
    MPI_Datatype pair, stale;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair)); /* contiguous, not committed */
    EXPECT(c, MPI_Send(buf, 1, pair, c->right, 0, W), MPI_ERR_TYPE);
    EXPECT(c, MPI_Rsend(buf, 1, pair, c->right, 0, W), MPI_ERR_TYPE);
    EXPECT(c, MPI_Recv(buf, 1, pair, c->left, 0, W, &st), MPI_ERR_TYPE);
    EXPECT(c, MPI_Send(buf, 1, pair, 0, 0, MPI_COMM_SELF), MPI_ERR_TYPE);
    MPI_OK(MPI_Type_commit(&pair));
    stale = pair;
    MPI_OK(MPI_Type_free(&pair));
    EXPECT(c, MPI_Send(buf, 1, stale, c->right, 0, W), MPI_ERR_TYPE);
    EXPECT(c, MPI_Recv(buf, 1, stale, c->left, 0, W, &st), MPI_ERR_TYPE);
    /* Not a datatype handle at all. */
    EXPECT(c, MPI_Send(buf, 1, (MPI_Datatype)MPI_COMM_WORLD, c->right, 0, W), MPI_ERR_TYPE);
    /* Peers of MPI_COMM_SELF: only rank 0. */
    EXPECT(c, MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

static void bad_receives(Ctx* c) {
    int buf[4];
    const MPI_Comm W = MPI_COMM_WORLD;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    int flag;
    EXPECT(c, MPI_Recv(buf, 1, MPI_INT, c->nranks, 0, W, &st), MPI_ERR_RANK);
    EXPECT(c, MPI_Recv(buf, 1, MPI_INT, -7, 0, W, &st), MPI_ERR_RANK);
    EXPECT(c, MPI_Irecv(buf, 1, MPI_INT, c->nranks + 1, 0, W, &r), MPI_ERR_RANK);
    EXPECT(c, MPI_Recv(buf, 1, MPI_INT, c->left, -3, W, &st), MPI_ERR_TAG);
    EXPECT(c, MPI_Recv_init(buf, 1, MPI_INT, c->left, -3, W, &r), MPI_ERR_TAG);
    EXPECT(c, MPI_Recv(buf, -1, MPI_INT, c->left, 0, W, &st), MPI_ERR_COUNT);
    EXPECT(c, MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, c->left, 0, W, &r), MPI_ERR_TYPE);
    EXPECT(c, MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    EXPECT(c, MPI_Recv(NULL, 2, MPI_INT, c->left, 0, W, &st), MPI_ERR_BUFFER);
    EXPECT(c, MPI_Sendrecv(buf, 1, MPI_INT, c->nranks, 0, buf, 1, MPI_INT, c->left, 0, W, &st),
           MPI_ERR_RANK);
    EXPECT(c, MPI_Sendrecv(buf, 1, MPI_INT, c->right, 0, buf, 1, MPI_INT, -9, 0, W, &st),
           MPI_ERR_RANK);
    EXPECT(c, MPI_Sendrecv_replace(buf, 1, MPI_INT, c->right, -1, c->left, 0, W, &st), MPI_ERR_TAG);
    /* Probes. */
    EXPECT(c, MPI_Probe(c->nranks, 0, W, &st), MPI_ERR_RANK);
    EXPECT(c, MPI_Iprobe(c->left, -5, W, &flag, &st), MPI_ERR_TAG);
    EXPECT(c, MPI_Iprobe(c->left, 0, MPI_COMM_NULL, &flag, &st), MPI_ERR_COMM);
    EXPECT(c, MPI_Iprobe(c->left, 0, W, NULL, &st), MPI_ERR_ARG);
    MPI_Message m = MPI_MESSAGE_NULL;
    EXPECT(c, MPI_Mprobe(-4, 0, W, &m, &st), MPI_ERR_RANK);
    EXPECT(c, MPI_Improbe(c->left, -2, W, &flag, &m, &st), MPI_ERR_TAG);
    m = MPI_MESSAGE_NULL;
    EXPECT2(c, MPI_Mrecv(buf, 1, MPI_INT, &m, &st), MPI_ERR_REQUEST, MPI_ERR_ARG);
    CHECK(r == MPI_REQUEST_NULL, "a failed call returned a request");
}

static void bad_requests(Ctx* c) {
    int buf[4] = {1, 2, 3, 4};
    MPI_Status st;
    int flag, idx, out, indices[2];
    /* Not a request (a freed request's handle could be reused at once by another
     * rank of the process, so it would not stay invalid). */
    MPI_Request bogus = (MPI_Request)MPI_COMM_WORLD;
    MPI_Request r;
    EXPECT(c, MPI_Wait(&bogus, &st), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Test(&bogus, &flag, &st), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Request_free(&bogus), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Cancel(&bogus), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Start(&bogus), MPI_ERR_REQUEST);
    MPI_Request arr[2] = {MPI_REQUEST_NULL, bogus};
    EXPECT(c, MPI_Waitall(2, arr, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Testall(2, arr, &flag, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Waitany(2, arr, &idx, &st), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Testany(2, arr, &idx, &flag, &st), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Waitsome(2, arr, &out, indices, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Testsome(2, arr, &out, indices, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Startall(2, arr), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Waitall(-1, arr, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
    /* MPI_REQUEST_NULL where a request is required. */
    MPI_Request null = MPI_REQUEST_NULL;
    EXPECT(c, MPI_Request_free(&null), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Cancel(&null), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Start(&null), MPI_ERR_REQUEST);
    EXPECT(c, MPI_Wait(NULL, &st), MPI_ERR_REQUEST);
    /* Start of a request that is not persistent. */
    char in = 0, one = 1;
    MPI_OK(MPI_Irecv(&in, 1, MPI_CHAR, c->rank, 55, MPI_COMM_WORLD, &r));
    EXPECT(c, MPI_Start(&r), MPI_ERR_REQUEST);
    MPI_OK(MPI_Send(&one, 1, MPI_CHAR, c->rank, 55, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(in == 1, "self message after errors: got %d", in);
    /* Start of an active persistent request. */
    MPI_OK(MPI_Recv_init(&in, 1, MPI_CHAR, c->rank, 56, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Start(&r));
    EXPECT(c, MPI_Start(&r), MPI_ERR_REQUEST);
    MPI_OK(MPI_Send(&one, 1, MPI_CHAR, c->rank, 56, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Request_free(&r));
    /* Status and buffer queries. */
    EXPECT(c, MPI_Get_count(&st, MPI_DATATYPE_NULL, &idx), MPI_ERR_TYPE);
    EXPECT(c, MPI_Test_cancelled(NULL, &flag), MPI_ERR_ARG);
    EXPECT(c, MPI_Buffer_attach(buf, -1), MPI_ERR_ARG);
    char* attached = (char*)xmalloc(1000);
    MPI_OK(MPI_Buffer_attach(attached, 1000));
    EXPECT(c, MPI_Buffer_attach(attached, 1000), MPI_ERR_BUFFER);
    /* A buffered send too large for the attached buffer. */
    char* big = (char*)xmalloc(5000);
    memset(big, 1, 5000);
    EXPECT(c, MPI_Bsend(big, 5000, MPI_BYTE, c->right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    void* detached;
    int size;
    MPI_OK(MPI_Buffer_detach(&detached, &size));
    CHECK(detached == attached && size == 1000, "Buffer_detach");
    free(big);
    free(attached);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Ctx c;
    memset(&c, 0, sizeof(c));
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    c.right = (c.rank + 1) % c.nranks;
    c.left = (c.rank - 1 + c.nranks) % c.nranks;

    /* Classes are their own codes. */
    int cls = -1;
    MPI_OK(MPI_Error_class(MPI_ERR_RANK, &cls));
    CHECK(cls == MPI_ERR_RANK, "class of MPI_ERR_RANK is %d", cls);

    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "the default error handler is not MPI_ERRORS_ARE_FATAL");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    bad_sends(&c);
    bad_types_to_a_peer(&c);
    bad_receives(&c);
    bad_requests(&c);

    /* No stray message was sent by any failed call: a wildcard receive gets
     * exactly the message of this exchange. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int v = 1000 + c.rank, got = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, c.right, 9, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        MPI_COMM_WORLD, &st));
    CHECK(got == 1000 + c.left && st.MPI_TAG == 9, "after the errors: got %d (tag %d)", got,
          st.MPI_TAG);
    int flag = 1;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message is left over after the failed calls");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (c.rank == 0) printf("p2p_errors: %d error checks passed on %d ranks\n", c.checks, c.nranks);
    MPI_Finalize();
    return 0;
}
