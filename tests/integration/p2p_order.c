/* MPI's non-overtaking rule: two messages from one sender that a receive could
 * both match are received in the order they were sent, whatever their sizes
 * (small ones travel in cells, large ones by rendezvous: sizes here straddle the
 * intra-node eager limit, 16 KiB by default) and whether the receives were
 * posted before or after the messages arrived.
 *
 * Part 1, in a ring: each rank sends a train of messages of mixed sizes with
 * one tag to its right neighbour, which receives them (a) all late, (b) all
 * pre-posted, (c) half pre-posted and half late, (d) with ANY_SOURCE/ANY_TAG
 * receives. Part 2, fan-in: every rank sends a train to rank 0 with varying
 * tags at the same time; rank 0 receives everything with ANY_SOURCE and
 * ANY_TAG (some receives posted before, the rest late) and checks that each
 * sender's messages arrive in order and that tag, size and data match.
 * The message number is in the data pattern and in the size.
 */
#include "common.h"

#define TRAIN 40

typedef struct {
    int rank, nranks, left, right;
} Ctx;

/* Size of message i of a train: a fixed but irregular mix around the threshold. */
static size_t train_size(int i) {
    static const size_t sizes[] = {16385, 8, 0, 100000, 16384, 1, 70000, 4096, 16383, 200};
    return sizes[(i * 7 + i / 10) % 10] + (size_t)(i % 3);
}
#define TRAIN_MAX (100000 + 2)

static uint32_t seed_of(int sender, int round, int i) {
    return (uint32_t)(sender * 65537 + round * 4099 + i);
}

static void check_message(const unsigned char* buf, const MPI_Status* st, int sender, int round,
                          int i, int tag, const char* how) {
    char what[128];
    snprintf(what, sizeof(what), "%s: message %d of the train from rank %d", how, i, sender);
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(st->MPI_SOURCE == sender, "%s: source %d", what, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == tag, "%s: tag %d, expected %d", what, st->MPI_TAG, tag);
    CHECK(count == (int)train_size(i),
          "%s: %d bytes, expected %zu (overtaken by another message of the train?)", what, count,
          train_size(i));
    CHECK_PATTERN(buf, (size_t)count, seed_of(sender, round, i), what);
}

/* Sends train `round` to c->right with nonblocking sends. */
static void send_train(const Ctx* c, int round, int tag, unsigned char** out, MPI_Request* reqs) {
    for (int i = 0; i < TRAIN; ++i) {
        fill_pattern(out[i], train_size(i), seed_of(c->rank, round, i));
        MPI_OK(MPI_Isend(out[i], (int)train_size(i), MPI_BYTE, c->right, tag, MPI_COMM_WORLD,
                         &reqs[i]));
    }
}

static void ring_trains(const Ctx* c) {
    unsigned char* out[TRAIN];
    unsigned char* in[TRAIN];
    MPI_Request sreq[TRAIN], rreq[TRAIN];
    MPI_Status st[TRAIN];
    for (int i = 0; i < TRAIN; ++i) {
        out[i] = (unsigned char*)xmalloc(TRAIN_MAX);
        in[i] = (unsigned char*)xmalloc(TRAIN_MAX);
    }
    const char* names[] = {"all late", "all pre-posted", "half pre-posted", "wildcards"};
    for (int round = 0; round < 4; ++round) {
        const int tag = 10 + round;
        const int preposted = round == 1 ? TRAIN : round == 2 ? TRAIN / 2 : 0;
        const int src = round == 3 ? MPI_ANY_SOURCE : c->left;
        const int rtag = round == 3 ? MPI_ANY_TAG : tag;
        for (int i = 0; i < preposted; ++i)
            MPI_OK(MPI_Irecv(in[i], TRAIN_MAX, MPI_BYTE, src, rtag, MPI_COMM_WORLD, &rreq[i]));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        send_train(c, round, tag, out, sreq);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the rest of the train is unexpected */
        for (int i = preposted; i < TRAIN; ++i) {
            if (i % 2 == 0)
                MPI_OK(MPI_Recv(in[i], TRAIN_MAX, MPI_BYTE, src, rtag, MPI_COMM_WORLD, &st[i]));
            else
                MPI_OK(MPI_Irecv(in[i], TRAIN_MAX, MPI_BYTE, src, rtag, MPI_COMM_WORLD, &rreq[i]));
        }
        for (int i = 0; i < TRAIN; ++i)
            if (i < preposted || i % 2 == 1) MPI_OK(MPI_Wait(&rreq[i], &st[i]));
        for (int i = 0; i < TRAIN; ++i) check_message(in[i], &st[i], c->left, round, i, tag, names[round]);
        MPI_OK(MPI_Waitall(TRAIN, sreq, MPI_STATUSES_IGNORE));
    }
    for (int i = 0; i < TRAIN; ++i) {
        free(out[i]);
        free(in[i]);
    }
}

/* Every rank sends a train to rank 0 (tag = 1000 + i % 5, so ANY_TAG
 * matters), rank 0 to itself too, all at the same time. Rank 0 has posted some
 * ANY_SOURCE/ANY_TAG receives before (senders on other cores race for them)
 * and receives the rest late; handling the receives in posting order, each
 * sender's messages must come in order. */
static void fan_in(const Ctx* c) {
    enum { ROUND = 9, PREPOSTED = 48 };
    const size_t small_max = 20000; /* keep rank 0's unexpected queue small */
    unsigned char* in[PREPOSTED];
    MPI_Request rreq[PREPOSTED];
    const int total = TRAIN * c->nranks;
    const int preposted = total < PREPOSTED ? total : PREPOSTED;
    if (c->rank == 0)
        for (int k = 0; k < preposted; ++k) {
            in[k] = (unsigned char*)xmalloc(small_max);
            MPI_OK(MPI_Irecv(in[k], (int)small_max, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                             MPI_COMM_WORLD, &rreq[k]));
        }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    unsigned char* out[TRAIN];
    MPI_Request sreq[TRAIN];
    for (int i = 0; i < TRAIN; ++i) {
        const size_t size = train_size(i) > small_max ? small_max : train_size(i);
        out[i] = (unsigned char*)xmalloc(size);
        fill_pattern(out[i], size, seed_of(c->rank, ROUND, i));
        MPI_OK(MPI_Isend(out[i], (int)size, MPI_BYTE, 0, 1000 + i % 5, MPI_COMM_WORLD, &sreq[i]));
    }
    if (c->rank == 0) {
        int* next = (int*)xmalloc(sizeof(int) * (size_t)c->nranks);
        memset(next, 0, sizeof(int) * (size_t)c->nranks);
        unsigned char* late = (unsigned char*)xmalloc(small_max);
        for (int k = 0; k < total; ++k) {
            MPI_Status st;
            unsigned char* buf = k < preposted ? in[k] : late;
            if (k < preposted)
                MPI_OK(MPI_Wait(&rreq[k], &st));
            else
                MPI_OK(MPI_Recv(buf, (int)small_max, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                MPI_COMM_WORLD, &st));
            const int src = st.MPI_SOURCE;
            CHECK(src >= 0 && src < c->nranks, "ANY_SOURCE receive gave source %d", src);
            const int i = next[src]++;
            CHECK(i < TRAIN, "more than %d messages from rank %d", TRAIN, src);
            const size_t size = train_size(i) > small_max ? small_max : train_size(i);
            char what[96];
            snprintf(what, sizeof(what), "fan-in: message %d from rank %d (receive %d)", i, src, k);
            CHECK(st.MPI_TAG == 1000 + i % 5, "%s: tag %d, expected %d (out of order?)", what,
                  st.MPI_TAG, 1000 + i % 5);
            int count = -1;
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK(count == (int)size, "%s: %d bytes, expected %zu (out of order?)", what, count, size);
            CHECK_PATTERN(buf, size, seed_of(src, ROUND, i), what);
        }
        for (int r = 0; r < c->nranks; ++r)
            CHECK(next[r] == TRAIN, "received %d messages from rank %d, expected %d", next[r], r,
                  TRAIN);
        for (int k = 0; k < preposted; ++k) free(in[k]);
        free(next);
        free(late);
    }
    MPI_OK(MPI_Waitall(TRAIN, sreq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < TRAIN; ++i) free(out[i]);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Ctx c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    c.right = (c.rank + 1) % c.nranks;
    c.left = (c.rank - 1 + c.nranks) % c.nranks;

    ring_trains(&c);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    fan_in(&c);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (c.rank == 0) printf("p2p_order: passed on %d ranks\n", c.nranks);
    MPI_Finalize();
    return 0;
}
