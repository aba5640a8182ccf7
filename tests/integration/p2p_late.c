/* Late receives: the unexpected-message path. Every rank sends to its right
 * neighbour first; the receives are posted only after a barrier, so every
 * message waits in the receiver's unexpected queue (small ones copied aside,
 * large ones left in the sender's buffer).
 *
 * Checks: data and status for small and large messages received by Recv,
 * Irecv and with wildcards; a small standard send completes before its receive
 * exists; a synchronous send (Issend) does not complete before its receive is
 * posted (Test and Request_get_status say so); unexpected messages are picked
 * by tag, not by arrival, when the receiver asks for tags in another order; a
 * send whose request was freed at once is still delivered.
 */
#include "common.h"

typedef struct {
    int rank, nranks, left, right;
} Ctx;

static uint32_t seed_of(int sender, int id) { return (uint32_t)(sender * 1000003 + id * 7); }

/* Sizes around the intra-node eager limit (16 KiB by default) and well above. */
static const size_t kSizes[] = {0, 1, 100, 16384, 16385, 100000, 4 << 20};
#define NSIZES ((int)(sizeof(kSizes) / sizeof(kSizes[0])))

/* Receive of message `id` from c->left by the method `how`, then the checks. */
static void late_receive(const Ctx* c, int id, size_t size, int tag, int how) {
    unsigned char* buf = (unsigned char*)xmalloc(size + 64);
    memset(buf, 0xEE, size + 64);
    MPI_Status st;
    MPI_Request req;
    const char* name = "";
    switch (how) {
        case 0:
            name = "Recv";
            MPI_OK(MPI_Recv(buf, (int)size, MPI_BYTE, c->left, tag, MPI_COMM_WORLD, &st));
            break;
        case 1:
            name = "Irecv+Wait";
            MPI_OK(MPI_Irecv(buf, (int)size + 64, MPI_BYTE, c->left, tag, MPI_COMM_WORLD, &req));
            MPI_OK(MPI_Wait(&req, &st));
            break;
        case 2:
            name = "Recv(ANY_SOURCE)";
            MPI_OK(MPI_Recv(buf, (int)size, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
            break;
        default:
            name = "Irecv(ANY_TAG)";
            MPI_OK(MPI_Irecv(buf, (int)size, MPI_BYTE, c->left, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
            MPI_OK(MPI_Wait(&req, &st));
            break;
    }
    char what[96];
    snprintf(what, sizeof(what), "late %s of %zu bytes (message %d)", name, size, id);
    CHECK_PATTERN(buf, size, seed_of(c->left, id), what);
    CHECK_GUARD(buf + size, 64, 0xEE, what);
    CHECK(st.MPI_SOURCE == c->left, "%s: source %d, expected %d", what, st.MPI_SOURCE, c->left);
    CHECK(st.MPI_TAG == tag, "%s: tag %d, expected %d", what, st.MPI_TAG, tag);
    int count = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == (int)size, "%s: count %d", what, count);
    free(buf);
}

/* Every size, every receive method: Isend first, barrier, then the receive. */
static void late_messages(const Ctx* c) {
    for (int how = 0; how < 4; ++how) {
        for (int s = 0; s < NSIZES; ++s) {
            const int id = how * NSIZES + s;
            const size_t size = kSizes[s];
            unsigned char* out = (unsigned char*)xmalloc(size);
            fill_pattern(out, size, seed_of(c->rank, id));
            MPI_Request req;
            MPI_OK(MPI_Isend(out, (int)size, MPI_BYTE, c->right, 7, MPI_COMM_WORLD, &req));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            late_receive(c, id, size, 7, how);
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            free(out);
        }
    }
}

/* A small standard-mode send is buffered: MPI_Send returns with no receive
 * posted (the receive comes after the barrier). */
static void eager_send_completes(const Ctx* c) {
    const int id = 100;
    char out[256];
    fill_pattern(out, sizeof(out), seed_of(c->rank, id));
    MPI_OK(MPI_Send(out, (int)sizeof(out), MPI_BYTE, c->right, 8, MPI_COMM_WORLD));
    memset(out, 0, sizeof(out)); /* the message must not depend on the buffer any more */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    late_receive(c, id, sizeof(out), 8, 0);
}

/* Issend must not complete before the matching receive is posted. */
static void synchronous_waits_for_receive(const Ctx* c) {
    for (int s = 0; s < 2; ++s) {
        const int id = 200 + s;
        const size_t size = s == 0 ? 8 : 100000;
        unsigned char* out = (unsigned char*)xmalloc(size);
        fill_pattern(out, size, seed_of(c->rank, id));
        MPI_Request req;
        MPI_OK(MPI_Issend(out, (int)size, MPI_BYTE, c->right, 9, MPI_COMM_WORLD, &req));
        int flag = 1;
        for (int i = 0; i < 50; ++i) {
            if (i % 2)
                MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            else
                MPI_OK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "Issend of %zu bytes completed before its receive was posted", size);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        late_receive(c, id, size, 9, 1);
        /* Request_get_status reports completion without freeing the request. */
        while (!flag) MPI_OK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
        CHECK(req != MPI_REQUEST_NULL, "Request_get_status freed the request");
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        free(out);
    }
}

/* Ten unexpected messages with tags 0..9 (mixed sizes); the receiver asks for
 * them by tag in reverse order and must get the matching one each time. */
static void pick_by_tag(const Ctx* c) {
    enum { N = 10 };
    MPI_Request reqs[N];
    unsigned char* out[N];
    for (int t = 0; t < N; ++t) {
        const size_t size = kSizes[t % NSIZES] > 100000 ? 20000 : kSizes[t % NSIZES];
        out[t] = (unsigned char*)xmalloc(size);
        fill_pattern(out[t], size, seed_of(c->rank, 300 + t));
        MPI_OK(MPI_Isend(out[t], (int)size, MPI_BYTE, c->right, 100 + t, MPI_COMM_WORLD, &reqs[t]));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = N - 1; t >= 0; --t) {
        const size_t size = kSizes[t % NSIZES] > 100000 ? 20000 : kSizes[t % NSIZES];
        late_receive(c, 300 + t, size, 100 + t, t % 2 == 0 ? 0 : 2);
    }
    MPI_OK(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE));
    for (int t = 0; t < N; ++t) free(out[t]);
}

/* A send whose request is freed while the message is still unexpected (large:
 * left in the sender's buffer) is still delivered; the buffer stays valid. */
static void freed_send_delivers(const Ctx* c) {
    for (int s = 0; s < 2; ++s) {
        const int id = 400 + s;
        const size_t size = s == 0 ? 64 : 200000;
        unsigned char* out = (unsigned char*)xmalloc(size);
        fill_pattern(out, size, seed_of(c->rank, id));
        MPI_Request req;
        MPI_OK(MPI_Isend(out, (int)size, MPI_BYTE, c->right, 11, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Request_free(&req));
        CHECK(req == MPI_REQUEST_NULL, "Request_free did not reset the handle");
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        late_receive(c, id, size, 11, 0);
        /* Our receive came after every send was started; a second barrier makes
         * sure every large message has been copied before buffers are freed. */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
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

    late_messages(&c);
    eager_send_completes(&c);
    synchronous_waits_for_receive(&c);
    pick_by_tag(&c);
    freed_send_delivers(&c);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (c.rank == 0) printf("p2p_late: passed on %d ranks\n", c.nranks);
    MPI_Finalize();
    return 0;
}
