/* Point-to-point in every send mode and with every way of completing a receive,
 * for sizes from 0 B to 16 MiB, in a ring (rank r sends to r+1 and receives
 * from r-1; with one rank, to itself).
 *
 * Send modes: Send, Ssend, Rsend, Bsend, Isend, Issend, Irsend, Ibsend and the
 * persistent Send_init, Ssend_init, Rsend_init, Bsend_init. Ready sends always
 * find their receive posted (a barrier separates posting and sending).
 * Receive kinds: Recv, Irecv completed by Wait, a Test loop, Waitany, Waitsome,
 * Waitall, Testall, Testany, Testsome, and persistent Recv_init started with
 * Start or Startall. Persistent requests run two rounds (restarted).
 *
 * Every exchange checks the data (a pattern unique to sender and exchange),
 * that nothing was written past the message, and the status (source, tag,
 * count). Sizes straddle the intra-node eager limit (16 KiB by default).
 */
#include "common.h"

enum SendMode {
    SEND, SSEND, RSEND, BSEND, ISEND, ISSEND, IRSEND, IBSEND,
    SEND_INIT, SSEND_INIT, RSEND_INIT, BSEND_INIT, NUM_SEND_MODES
};
static const char* const send_names[] = {
    "Send", "Ssend", "Rsend", "Bsend", "Isend", "Issend", "Irsend", "Ibsend",
    "Send_init", "Ssend_init", "Rsend_init", "Bsend_init"};

enum RecvKind {
    RECV, IRECV_WAIT, IRECV_TEST, IRECV_WAITANY, IRECV_WAITSOME, IRECV_WAITALL,
    IRECV_TESTALL, IRECV_TESTANY, IRECV_TESTSOME, RECV_INIT, RECV_INIT_STARTALL, NUM_RECV_KINDS
};
static const char* const recv_names[] = {
    "Recv", "Irecv+Wait", "Irecv+Test", "Irecv+Waitany", "Irecv+Waitsome", "Irecv+Waitall",
    "Irecv+Testall", "Irecv+Testany", "Irecv+Testsome", "Recv_init+Start",
    "Recv_init+Startall"};

#define GUARD 64
#define BSEND_MAX (16 << 20) /* largest buffered send */
#define SUBSET_ABOVE (1 << 20) /* above this size, a subset of the combinations */

/* Everything a rank knows. Ranks of a node share the program's globals (until
 * rank images exist), so per-rank state lives on the rank's own stack. */
typedef struct {
    int rank, nranks, left, right;
    unsigned char* sendbuf;
    unsigned char* recvbuf;
    unsigned exchange_id;
    int verbose; /* P2P_VERBOSE=1: print each exchange */
} Ctx;

static int blocking(int m) { return m <= BSEND; }
static int persistent_send(int m) { return m >= SEND_INIT; }
static int ready(int m) { return m == RSEND || m == IRSEND || m == RSEND_INIT; }
static int buffered(int m) { return m == BSEND || m == IBSEND || m == BSEND_INIT; }
static int persistent_recv(int k) { return k == RECV_INIT || k == RECV_INIT_STARTALL; }

static void blocking_send(const Ctx* c, int m, const void* buf, int count, MPI_Datatype t, int tag) {
    switch (m) {
        case SEND: MPI_OK(MPI_Send(buf, count, t, c->right, tag, MPI_COMM_WORLD)); break;
        case SSEND: MPI_OK(MPI_Ssend(buf, count, t, c->right, tag, MPI_COMM_WORLD)); break;
        case RSEND: MPI_OK(MPI_Rsend(buf, count, t, c->right, tag, MPI_COMM_WORLD)); break;
        case BSEND: MPI_OK(MPI_Bsend(buf, count, t, c->right, tag, MPI_COMM_WORLD)); break;
        default: CHECK(0, "not a blocking mode %d", m);
    }
}

static void start_send(const Ctx* c, int m, const void* buf, int count, MPI_Datatype t, int tag,
                       MPI_Request* req) {
    switch (m) {
        case ISEND: MPI_OK(MPI_Isend(buf, count, t, c->right, tag, MPI_COMM_WORLD, req)); break;
        case ISSEND: MPI_OK(MPI_Issend(buf, count, t, c->right, tag, MPI_COMM_WORLD, req)); break;
        case IRSEND: MPI_OK(MPI_Irsend(buf, count, t, c->right, tag, MPI_COMM_WORLD, req)); break;
        case IBSEND: MPI_OK(MPI_Ibsend(buf, count, t, c->right, tag, MPI_COMM_WORLD, req)); break;
        case SEND_INIT: MPI_OK(MPI_Send_init(buf, count, t, c->right, tag, MPI_COMM_WORLD, req)); break;
        case SSEND_INIT: MPI_OK(MPI_Ssend_init(buf, count, t, c->right, tag, MPI_COMM_WORLD, req)); break;
        case RSEND_INIT: MPI_OK(MPI_Rsend_init(buf, count, t, c->right, tag, MPI_COMM_WORLD, req)); break;
        case BSEND_INIT: MPI_OK(MPI_Bsend_init(buf, count, t, c->right, tag, MPI_COMM_WORLD, req)); break;
        default: CHECK(0, "not a nonblocking mode %d", m);
    }
}

/* Completes reqs[0] (the receive, or null) and reqs[1] (the send, or null) the
 * way `kind` says; the receive's status goes to *rstatus. */
static void complete(int kind, int send_persistent, MPI_Request reqs[2], MPI_Status* rstatus) {
    int expected = (reqs[0] != MPI_REQUEST_NULL) + (reqs[1] != MPI_REQUEST_NULL);
    int persistent[2] = {persistent_recv(kind), send_persistent};
    int done = 0, flag = 0, idx = 0, out = 0, indices[2];
    MPI_Status st[2];
    switch (kind) {
        case RECV:
        case IRECV_WAIT:
        case RECV_INIT:
            MPI_OK(MPI_Wait(&reqs[0], rstatus));
            MPI_OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
            return;
        case IRECV_TEST:
            for (int i = 0; i < 2; ++i) {
                flag = 0;
                while (!flag) MPI_OK(MPI_Test(&reqs[i], &flag, i == 0 ? rstatus : MPI_STATUS_IGNORE));
            }
            return;
        case IRECV_WAITALL:
        case RECV_INIT_STARTALL:
            MPI_OK(MPI_Waitall(2, reqs, st));
            *rstatus = st[0];
            return;
        case IRECV_TESTALL:
            while (!flag) MPI_OK(MPI_Testall(2, reqs, &flag, st));
            *rstatus = st[0];
            return;
        case IRECV_WAITANY:
        case IRECV_TESTANY:
            for (;;) {
                if (kind == IRECV_WAITANY) {
                    MPI_OK(MPI_Waitany(2, reqs, &idx, &st[0]));
                } else {
                    MPI_OK(MPI_Testany(2, reqs, &idx, &flag, &st[0]));
                    if (!flag) {
                        CHECK(idx == MPI_UNDEFINED, "Testany without completion gave index %d", idx);
                        continue;
                    }
                }
                if (idx == MPI_UNDEFINED) break;
                CHECK(idx == 0 || idx == 1, "index %d", idx);
                if (idx == 0) *rstatus = st[0];
                if (!persistent[idx]) CHECK(reqs[idx] == MPI_REQUEST_NULL, "request not freed");
                ++done;
            }
            CHECK(done == expected, "%s completed %d requests, expected %d", recv_names[kind], done,
                  expected);
            return;
        case IRECV_WAITSOME:
        case IRECV_TESTSOME:
            for (;;) {
                if (kind == IRECV_WAITSOME)
                    MPI_OK(MPI_Waitsome(2, reqs, &out, indices, st));
                else
                    MPI_OK(MPI_Testsome(2, reqs, &out, indices, st));
                if (out == MPI_UNDEFINED) break;
                CHECK(out >= 0 && out <= 2, "outcount %d", out);
                CHECK(kind == IRECV_TESTSOME || out > 0, "Waitsome returned no request");
                for (int i = 0; i < out; ++i) {
                    if (indices[i] == 0) *rstatus = st[i];
                    ++done;
                }
            }
            CHECK(done == expected, "%s completed %d requests, expected %d", recv_names[kind], done,
                  expected);
            return;
        default: CHECK(0, "bad kind %d", kind);
    }
}

/* One exchange around the ring: `rounds` rounds on the same persistent requests. */
static void exchange(Ctx* c, size_t size, int mode, int kind) {
    const int use_int = size % 4 == 0 && c->exchange_id % 2 == 1;
    const MPI_Datatype type = use_int ? MPI_INT : MPI_BYTE;
    const int elem = use_int ? 4 : 1;
    const int count = (int)(size / (size_t)elem);
    const int spare = c->exchange_id % 3 == 0 ? 3 : 0;  /* receive capacity beyond the message */
    const int tag = (int)(c->exchange_id % 32000);
    const int rounds = persistent_send(mode) || persistent_recv(kind) ? 2 : 1;
    if (kind == RECV && (ready(mode) || (blocking(mode) && c->nranks == 1))) kind = IRECV_WAIT;
    char what[160];
    snprintf(what, sizeof(what), "%zu bytes %s -> %s (exchange %u)", size, send_names[mode],
             recv_names[kind], c->exchange_id);
    if (c->verbose) fprintf(stderr, "rank %d: %s\n", c->rank, what);

    MPI_Request rreq = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;
    for (int round = 0; round < rounds; ++round) {
        const uint32_t send_seed = (uint32_t)(c->rank * 7919 + (int)c->exchange_id * 31 + round);
        const uint32_t recv_seed = (uint32_t)(c->left * 7919 + (int)c->exchange_id * 31 + round);
        fill_pattern(c->sendbuf, size, send_seed);
        memset(c->recvbuf, 0xEE, size + (size_t)spare * (size_t)elem + GUARD);
        MPI_Status status;
        memset(&status, 0, sizeof(status));

        /* Post the receive. */
        int send_started = 0;
        if (persistent_recv(kind)) {
            if (round == 0)
                MPI_OK(MPI_Recv_init(c->recvbuf, count + spare, type, c->left, tag, MPI_COMM_WORLD, &rreq));
            if (persistent_send(mode) && round == 0)
                start_send(c, mode, c->sendbuf, count, type, tag, &sreq);
            if (kind == RECV_INIT_STARTALL && persistent_send(mode) && !ready(mode)) {
                MPI_Request both[2] = {rreq, sreq};
                MPI_OK(MPI_Startall(2, both));
                send_started = 1;
            } else if (kind == RECV_INIT_STARTALL) {
                MPI_OK(MPI_Startall(1, &rreq));
            } else {
                MPI_OK(MPI_Start(&rreq));
            }
        } else if (kind != RECV) {
            MPI_OK(MPI_Irecv(c->recvbuf, count + spare, type, c->left, tag, MPI_COMM_WORLD, &rreq));
        }
        if (ready(mode)) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

        /* Send. */
        if (blocking(mode)) {
            if (kind == RECV) {
                /* Even ranks send first, odd ones receive first: no cycle of blocked sends. */
                if (c->rank % 2 == 0) blocking_send(c, mode, c->sendbuf, count, type, tag);
                MPI_OK(MPI_Recv(c->recvbuf, count + spare, type, c->left, tag, MPI_COMM_WORLD, &status));
                if (c->rank % 2 == 1) blocking_send(c, mode, c->sendbuf, count, type, tag);
            } else {
                blocking_send(c, mode, c->sendbuf, count, type, tag);
            }
        } else if (persistent_send(mode)) {
            if (round == 0 && !persistent_recv(kind))
                start_send(c, mode, c->sendbuf, count, type, tag, &sreq);
            if (!send_started) MPI_OK(MPI_Start(&sreq));
        } else {
            start_send(c, mode, c->sendbuf, count, type, tag, &sreq);
        }
        if (kind == RECV && !blocking(mode))
            MPI_OK(MPI_Recv(c->recvbuf, count + spare, type, c->left, tag, MPI_COMM_WORLD, &status));

        /* Complete. */
        if (kind != RECV || sreq != MPI_REQUEST_NULL) {
            MPI_Request reqs[2] = {rreq, sreq};
            MPI_Status rstatus;
            complete(kind == RECV ? IRECV_WAIT : kind, persistent_send(mode), reqs, &rstatus);
            if (kind != RECV) status = rstatus;
            if (!persistent_recv(kind))
                CHECK(reqs[0] == MPI_REQUEST_NULL, "%s: receive request not freed", what);
            if (!persistent_send(mode))
                CHECK(reqs[1] == MPI_REQUEST_NULL, "%s: send request not freed", what);
            rreq = reqs[0];
            sreq = reqs[1];
        }

        /* Check. */
        CHECK_PATTERN(c->recvbuf, size, recv_seed, what);
        CHECK_GUARD(c->recvbuf + size, (size_t)spare * (size_t)elem + GUARD, 0xEE, what);
        CHECK(status.MPI_SOURCE == c->left, "%s: status source %d, expected %d", what,
              status.MPI_SOURCE, c->left);
        CHECK(status.MPI_TAG == tag, "%s: status tag %d, expected %d", what, status.MPI_TAG, tag);
        int got = -1;
        MPI_OK(MPI_Get_count(&status, type, &got));
        CHECK(got == count, "%s: Get_count %d, expected %d", what, got, count);
        /* A rank may run ahead of its right neighbour; with buffered sends that
         * would need room for several messages in the attached buffer. */
        if (buffered(mode)) MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rreq != MPI_REQUEST_NULL) MPI_OK(MPI_Request_free(&rreq));
    if (sreq != MPI_REQUEST_NULL) MPI_OK(MPI_Request_free(&sreq));
    ++c->exchange_id;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Ctx ctx;
    memset(&ctx, 0, sizeof(ctx));
    Ctx* c = &ctx;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->nranks);
    c->right = (c->rank + 1) % c->nranks;
    c->left = (c->rank - 1 + c->nranks) % c->nranks;
    c->verbose = getenv("P2P_VERBOSE") != NULL;

    static const size_t sizes[] = {0, 1, 7, 64, 1000, 4096, 16383, 16384, 16385, 65536,
                                   262144, 300007, 1 << 20, 4 << 20, 16 << 20};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    const size_t max = sizes[nsizes - 1];
    c->sendbuf = (unsigned char*)xmalloc(max + GUARD);
    c->recvbuf = (unsigned char*)xmalloc(max + 16 + GUARD);
    /* One buffered message at a time is in flight (see exchange). */
    const int bsize = BSEND_MAX + MPI_BSEND_OVERHEAD + 64;
    void* bbuf = xmalloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));

    int exchanges = 0;
    for (int s = 0; s < nsizes; ++s) {
        const size_t size = sizes[s];
        for (int m = 0; m < NUM_SEND_MODES; ++m) {
            if (buffered(m) && size > BSEND_MAX) continue;
            for (int k = 0; k < NUM_RECV_KINDS; ++k) {
                /* Every combination up to 64 KiB; up to 1 MiB two receive kinds per
                 * mode; above, one (rotating), and with more than 4 ranks (which
                 * share the 2 cores) every third mode only, to stay fast. */
                if (size > 65536 && size <= SUBSET_ABOVE && k != (m + s) % NUM_RECV_KINDS &&
                    k != (m + s + 5) % NUM_RECV_KINDS)
                    continue;
                if (size > SUBSET_ABOVE &&
                    (k != (m * 3 + s) % NUM_RECV_KINDS || (c->nranks > 4 && (m + s) % 3 != 0)))
                    continue;
                exchange(c, size, m, k);
                ++exchanges;
            }
        }
    }

    void* detached = NULL;
    int dsize = 0;
    MPI_OK(MPI_Buffer_detach(&detached, &dsize));
    CHECK(detached == bbuf && dsize == bsize, "Buffer_detach gave %p/%d, expected %p/%d", detached,
          dsize, bbuf, bsize);
    free(bbuf);
    free(c->sendbuf);
    free(c->recvbuf);
    if (c->rank == 0) printf("p2p_modes: %d exchanges on %d ranks passed\n", exchanges, c->nranks);
    MPI_Finalize();
    return 0;
}
