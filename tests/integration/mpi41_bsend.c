/* MPI 4.1's buffered-send buffers of communicators and sessions, their
 * flushes and MPI_BUFFER_AUTOMATIC (section 3.6.1), from the standard's text:
 * - a buffered send uses the communicator's buffer when one is attached, else
 *   the buffer of the session the communicator derives from, else the
 *   process's (MPI_Buffer_attach): seen through a buffer too small for the
 *   message, which makes the send fail with MPI_ERR_BUFFER exactly when it
 *   is the one chosen;
 * - one buffer per communicator, session and process: a second attach fails;
 *   detach returns the address and size attached (MPI_BUFFER_AUTOMATIC and
 *   0 for an automatic one);
 * - MPI_BUFFER_AUTOMATIC takes any number of messages of any size;
 * - the flushes return once the buffered messages have been transmitted and
 *   leave the buffer attached; the nonblocking ones do not wait for the
 *   receiver inside the call (the receive is posted after them);
 * - bad handles and arguments raise MPI_ERR_COMM, MPI_ERR_SESSION, MPI_ERR_ARG
 *   through the error handlers.
 */
#include "common.h"

#define BIG (256 * 1024) /* ints: a message the receiver must match first */

static int last_class = MPI_SUCCESS, handler_calls = 0;

static void record(MPI_Comm* comm, int* code, ...) {
    (void)comm;
    MPI_Error_class(*code, &last_class);
    handler_calls++;
}

static void record_session(MPI_Session* session, int* code, ...) {
    (void)session;
    MPI_Error_class(*code, &last_class);
    handler_calls++;
}

#define EXPECT_CLASS(call, cls)                                                          \
    do {                                                                                 \
        int before_ = handler_calls;                                                     \
        int rc_ = (call);                                                                \
        CHECK(rc_ != MPI_SUCCESS && handler_calls == before_ + 1 && last_class == (cls), \
              "%s: rc %d, handler calls %d, class %d, expected %s", #call, rc_,          \
              handler_calls - before_, last_class, #cls);                                \
    } while (0)

static int rank, size, left, right;

/* A 4-int buffered send to the right and its receive from the left. */
static void exchange(MPI_Comm comm, int tag) {
    int out[4] = {rank, tag, 3, 4}, in[4] = {-1, -1, -1, -1};
    MPI_OK(MPI_Bsend(out, 4, MPI_INT, right, tag, comm));
    MPI_OK(MPI_Recv(in, 4, MPI_INT, left, tag, comm, MPI_STATUS_IGNORE));
    CHECK(in[0] == left && in[1] == tag, "tag %d: received %d %d", tag, in[0], in[1]);
}

/* The buffered send fails for lack of room in the buffer chosen. */
static void too_small(MPI_Comm comm, int tag) {
    int out[4] = {0};
    EXPECT_CLASS(MPI_Bsend(out, 4, MPI_INT, right, tag, comm), MPI_ERR_BUFFER);
}

static int one_message(void) {
    int s;
    MPI_OK(MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &s));
    return s + MPI_BSEND_OVERHEAD;
}

static void communicator_buffers(MPI_Comm c) {
    static char tiny[MPI_BSEND_OVERHEAD], proc[4096], own[4096], other[64];
    void* addr;
    int sz;
    too_small(MPI_COMM_WORLD, 1); /* no buffer at all */
    MPI_OK(MPI_Buffer_attach(proc, (int)sizeof proc));
    exchange(c, 2); /* the process's buffer */
    MPI_OK(MPI_Comm_attach_buffer(c, tiny, (int)sizeof tiny));
    too_small(c, 3);        /* the communicator's, not the process's */
    exchange(MPI_COMM_WORLD, 4); /* other communicators keep the process's */
    EXPECT_CLASS(MPI_Comm_attach_buffer(c, other, (int)sizeof other), MPI_ERR_BUFFER);
    MPI_OK(MPI_Comm_detach_buffer(c, &addr, &sz));
    CHECK(addr == tiny && sz == (int)sizeof tiny, "Comm_detach_buffer: %p %d", addr, sz);
    exchange(c, 5); /* the process's again */
    MPI_OK(MPI_Comm_attach_buffer(c, own, one_message()));
    exchange(c, 6);
    MPI_OK(MPI_Buffer_detach(&addr, &sz));
    CHECK(addr == proc && sz == (int)sizeof proc, "Buffer_detach: %p %d", addr, sz);
    exchange(c, 7); /* the communicator's, with none for the process */
    too_small(MPI_COMM_WORLD, 8);
    MPI_OK(MPI_Comm_detach_buffer(c, &addr, &sz));
    CHECK(addr == own && sz == one_message(), "Comm_detach_buffer: %p %d", addr, sz);
}

/* Many large messages in flight at once: an automatic buffer takes them. */
static void automatic(MPI_Comm c) {
    enum { N = 8 };
    int* out = malloc(sizeof(int) * BIG);
    int* in = malloc(sizeof(int) * BIG);
    void* addr;
    int sz;
    MPI_OK(MPI_Comm_attach_buffer(c, MPI_BUFFER_AUTOMATIC, 0));
    for (int k = 0; k < N; ++k) {
        for (int i = 0; i < BIG; ++i) out[i] = rank * 1000 + k + i;
        MPI_OK(MPI_Bsend(out, BIG, MPI_INT, right, 100 + k, c));
    }
    for (int k = N - 1; k >= 0; --k) {
        MPI_OK(MPI_Recv(in, BIG, MPI_INT, left, 100 + k, c, MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i += 997)
            CHECK(in[i] == left * 1000 + k + i, "automatic: message %d int %d", k, i);
    }
    MPI_OK(MPI_Comm_detach_buffer(c, &addr, &sz));
    CHECK(addr == MPI_BUFFER_AUTOMATIC && sz == 0, "detach of an automatic buffer: %p %d", addr,
          sz);
    /* The process's buffer may be automatic too. */
    MPI_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    exchange(MPI_COMM_WORLD, 9);
    MPI_OK(MPI_Buffer_detach(&addr, &sz));
    CHECK(addr == MPI_BUFFER_AUTOMATIC && sz == 0, "Buffer_detach automatic: %p %d", addr, sz);
    free(out);
    free(in);
}

/* kind: 0 the process's buffer, 1 the communicator's, 2 the session's. */
static void flushes(MPI_Comm c, MPI_Session s, int kind) {
    const size_t bytes = sizeof(int) * BIG + MPI_BSEND_OVERHEAD;
    char* buf = malloc(bytes);
    int* data = malloc(sizeof(int) * BIG);
    int* in = malloc(sizeof(int) * BIG);
    MPI_Request req;
    void* addr;
    int sz;
    if (kind == 0) MPI_OK(MPI_Buffer_attach(buf, (int)bytes));
    if (kind == 1) MPI_OK(MPI_Comm_attach_buffer(c, buf, (int)bytes));
    if (kind == 2) MPI_OK(MPI_Session_attach_buffer(s, buf, (int)bytes));
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < BIG; ++i) data[i] = rank + i + round;
        MPI_OK(MPI_Bsend(data, BIG, MPI_INT, right, 200 + round, c));
        memset(data, 0, sizeof(int) * BIG); /* the buffered copy is sent */
        if (round == 0) {
            /* Nonblocking: the receive is posted after the call. */
            if (kind == 0) MPI_OK(MPI_Buffer_iflush(&req));
            if (kind == 1) MPI_OK(MPI_Comm_iflush_buffer(c, &req));
            if (kind == 2) MPI_OK(MPI_Session_iflush_buffer(s, &req));
            CHECK(req != MPI_REQUEST_NULL, "an iflush gave no request");
        }
        MPI_OK(MPI_Recv(in, BIG, MPI_INT, left, 200 + round, c, MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i += 991)
            CHECK(in[i] == left + i + round, "flush kind %d round %d: int %d", kind, round, i);
        if (round == 0) {
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            if (kind == 0) MPI_OK(MPI_Buffer_flush());
            if (kind == 1) MPI_OK(MPI_Comm_flush_buffer(c));
            if (kind == 2) MPI_OK(MPI_Session_flush_buffer(s));
        }
        /* Flushed: the whole buffer is free again for a message its size. */
    }
    if (kind == 0) MPI_OK(MPI_Buffer_detach(&addr, &sz));
    if (kind == 1) MPI_OK(MPI_Comm_detach_buffer(c, &addr, &sz));
    if (kind == 2) MPI_OK(MPI_Session_detach_buffer(s, &addr, &sz));
    CHECK(addr == buf && sz == (int)bytes, "flush kind %d: detach gave %p %d", kind, addr, sz);
    /* Flushing with no buffer attached has nothing to wait for. */
    MPI_OK(MPI_Buffer_flush());
    MPI_OK(MPI_Comm_iflush_buffer(c, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    free(buf);
    free(data);
    free(in);
}

static void sessions(MPI_Errhandler comm_eh) {
    static char tiny[MPI_BSEND_OVERHEAD], sbuf[4096], proc[4096], extra[64];
    MPI_Errhandler seh;
    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc, d;
    void* addr;
    int sz;
    MPI_OK(MPI_Session_create_errhandler(record_session, &seh));
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, seh, &s));
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_OK(MPI_Comm_create_from_group(g, "fibermpi.test.mpi41_bsend", MPI_INFO_NULL, comm_eh,
                                      &sc));
    MPI_OK(MPI_Group_free(&g));
    too_small(sc, 10); /* nothing attached anywhere */
    MPI_OK(MPI_Buffer_attach(proc, (int)sizeof proc));
    exchange(sc, 11); /* no session buffer: the process's */
    MPI_OK(MPI_Session_attach_buffer(s, tiny, (int)sizeof tiny));
    too_small(sc, 12); /* the session's, before the process's */
    exchange(MPI_COMM_WORLD, 13);
    MPI_OK(MPI_Comm_dup(sc, &d)); /* derived from the session too */
    too_small(d, 14);
    EXPECT_CLASS(MPI_Session_attach_buffer(s, extra, (int)sizeof extra), MPI_ERR_BUFFER);
    MPI_OK(MPI_Session_detach_buffer(s, &addr, &sz));
    CHECK(addr == tiny && sz == (int)sizeof tiny, "Session_detach_buffer: %p %d", addr, sz);
    MPI_OK(MPI_Session_attach_buffer(s, sbuf, (int)sizeof sbuf));
    exchange(d, 15);
    MPI_OK(MPI_Comm_attach_buffer(d, tiny, (int)sizeof tiny));
    too_small(d, 16); /* the communicator's, before the session's */
    exchange(sc, 17);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Buffer_detach(&addr, &sz));
    MPI_OK(MPI_Session_detach_buffer(s, &addr, &sz));
    CHECK(addr == sbuf && sz == (int)sizeof sbuf, "Session_detach_buffer: %p %d", addr, sz);
    flushes(sc, s, 2);
    MPI_OK(MPI_Session_attach_buffer(s, sbuf, (int)sizeof sbuf));
    exchange(sc, 18);
    MPI_OK(MPI_Comm_free(&sc));
    MPI_OK(MPI_Session_finalize(&s)); /* detaches the session's buffer */
    EXPECT_CLASS(MPI_Session_attach_buffer(MPI_SESSION_NULL, sbuf, 8), MPI_ERR_SESSION);
    MPI_OK(MPI_Errhandler_free(&seh));
}

static void errors(MPI_Comm c) {
    static char b[64];
    MPI_Request req;
    void* addr;
    int sz;
    EXPECT_CLASS(MPI_Comm_attach_buffer(MPI_COMM_NULL, b, 64), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_detach_buffer(MPI_COMM_NULL, &addr, &sz), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_flush_buffer(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_iflush_buffer(MPI_COMM_NULL, &req), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_attach_buffer(c, b, -1), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Comm_iflush_buffer(c, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Buffer_iflush(NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Session_flush_buffer(MPI_SESSION_NULL), MPI_ERR_SESSION);
    EXPECT_CLASS(MPI_Session_detach_buffer(MPI_SESSION_NULL, &addr, &sz), MPI_ERR_SESSION);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(record, &eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    communicator_buffers(c);
    automatic(c);
    flushes(c, MPI_SESSION_NULL, 0);
    flushes(c, MPI_SESSION_NULL, 1);
    sessions(eh);
    errors(c);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("mpi41_bsend: OK on %d ranks\n", size);
    /* A buffer left attached to MPI_COMM_WORLD: MPI_Finalize detaches it
     * (ASan's leak check sees its bookkeeping freed). */
    int* big = calloc(BIG, sizeof(int));
    MPI_OK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0));
    MPI_OK(MPI_Bsend(big, BIG, MPI_INT, right, 300, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(big, BIG, MPI_INT, left, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    free(big);
    MPI_Finalize();
    return 0;
}
