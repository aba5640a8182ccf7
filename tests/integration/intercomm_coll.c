/* Collectives on an intercommunicator (MPI 3.1 section 5.2.2): the world is
 * split into two groups of unequal sizes (A: world ranks 0, 3, 6, ...; B: the
 * others, ranked in decreasing world rank order), joined by
 * MPI_Intercomm_create. Every collective defined there is checked, blocking
 * and nonblocking, against values computed locally: rooted ones with each
 * group holding the root in turn (its first and last rank), reductions with a
 * non-commutative user operation (composition of affine maps, so that the
 * remote group's rank order shows) and MPI_SUM. Then: several nonblocking
 * collectives in flight at once, on the intercommunicator and a duplicate; a
 * pending wildcard receive that no collective message may match; argument
 * errors (MPI_IN_PLACE, bad roots) and Scan / Exscan / neighborhood
 * collectives refused with MPI_ERR_COMM. Needs 2 ranks; with 1 it does
 * nothing.
 */
#include <unistd.h>

#include "common.h"

static int me, wsize;
static int color; /* 0: group A, 1: group B */
static int lrank, lsize, rsize;
static int* members[2]; /* world ranks of each group, by rank in the group */
static int gsize[2];
static MPI_Comm inter;

static int remote_world(int j) {
    return members[1 - color][j];
}

/* Runs the blocking call, or the nonblocking one (using rq_) and waits. */
#define RUN(nb, blocking, nonblocking)                 \
    do {                                               \
        if (nb) {                                      \
            MPI_Request rq_;                           \
            MPI_OK(nonblocking);                       \
            MPI_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE)); \
        } else {                                       \
            MPI_OK(blocking);                          \
        }                                              \
    } while (0)

/* The root argument of this rank when rank rl of group g is the root. */
static int root_arg(int g, int rl) {
    if (color == g) return lrank == rl ? MPI_ROOT : MPI_PROC_NULL;
    return rl;
}

/* Block sizes that differ from rank to rank (r: rank in its group). */
static int cnt(int r) {
    return r % 3 + 1;
}

/* Displacements of n blocks of counts[j] elements, laid out in reverse order
 * with a one-element gap after each; returns the total extent. */
static int reverse_displs(int n, const int* counts, int* displs) {
    int pos = 0;
    for (int j = n - 1; j >= 0; --j) {
        displs[j] = pos;
        pos += counts[j] + 1;
    }
    return pos;
}

/* ---- Affine maps x -> a*x + b (mod 2^32), composed: non-commutative ---- */

typedef struct {
    unsigned a, b;
} Aff;
static MPI_Datatype aff_type;
static MPI_Op aff_op;

static Aff compose(Aff x, Aff y) { /* x after y */
    Aff r = {x.a * y.a, x.a * y.b + x.b};
    return r;
}

static void aff_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
    (void)dt;
    const Aff* x = (const Aff*)in;
    Aff* y = (Aff*)inout;
    for (int i = 0; i < *len; ++i) y[i] = compose(x[i], y[i]);
}

static Aff aff_val(int w, int i) {
    Aff v = {2u * (unsigned)(w * 31 + i) + 1u, (unsigned)(w * 7 + i * 13 + 1)};
    return v;
}

/* b0 op (b1 op (... op b(m-1))) over the remote group, element i. */
static Aff aff_expect(int i) {
    Aff acc = aff_val(remote_world(rsize - 1), i);
    for (int j = rsize - 2; j >= 0; --j) acc = compose(aff_val(remote_world(j), i), acc);
    return acc;
}

static long sum_expect(int i) {
    long s = 0;
    for (int j = 0; j < rsize; ++j) s += value(remote_world(j), i);
    return s;
}

/* ---- Rooted data movement ---- */

static void test_bcast(int nb, int g, int rl, int count) {
    const int root = root_arg(g, rl), rw = members[g][rl];
    int* buf = ints((size_t)count, -7);
    if (root == MPI_ROOT)
        for (int i = 0; i < count; ++i) buf[i] = value(rw, i);
    RUN(nb, MPI_Bcast(buf, count, MPI_INT, root, inter),
        MPI_Ibcast(buf, count, MPI_INT, root, inter, &rq_));
    for (int i = 0; i < count; ++i) {
        const int expect = root == MPI_PROC_NULL ? -7 : value(rw, i);
        CHECK(buf[i] == expect, "bcast nb=%d root %d/%d: element %d is %d, expected %d", nb, g, rl,
              i, buf[i], expect);
    }
    free(buf);
}

static void test_gather(int nb, int g, int rl) {
    const int root = root_arg(g, rl), k = 3;
    int* send = ints(k, 0);
    for (int i = 0; i < k; ++i) send[i] = value(me, i);
    int* recv = ints((size_t)(rsize * k), -7);
    RUN(nb, MPI_Gather(send, k, MPI_INT, recv, k, MPI_INT, root, inter),
        MPI_Igather(send, k, MPI_INT, recv, k, MPI_INT, root, inter, &rq_));
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i < k; ++i) {
            const int expect = root == MPI_ROOT ? value(remote_world(j), i) : -7;
            CHECK(recv[j * k + i] == expect, "gather nb=%d: block %d element %d is %d, expected %d",
                  nb, j, i, recv[j * k + i], expect);
        }
    free(send);
    free(recv);
}

static void test_gatherv(int nb, int g, int rl) {
    const int root = root_arg(g, rl);
    const int k = cnt(lrank);
    int* send = ints((size_t)k, 0);
    for (int i = 0; i < k; ++i) send[i] = value(me, i);
    int* counts = ints((size_t)rsize, 0);
    int* displs = ints((size_t)rsize, 0);
    for (int j = 0; j < rsize; ++j) counts[j] = cnt(j);
    const int total = reverse_displs(rsize, counts, displs);
    int* recv = ints((size_t)total, -7);
    RUN(nb, MPI_Gatherv(send, k, MPI_INT, recv, counts, displs, MPI_INT, root, inter),
        MPI_Igatherv(send, k, MPI_INT, recv, counts, displs, MPI_INT, root, inter, &rq_));
    int* expect = ints((size_t)total, -7);
    if (root == MPI_ROOT)
        for (int j = 0; j < rsize; ++j)
            for (int i = 0; i < counts[j]; ++i) expect[displs[j] + i] = value(remote_world(j), i);
    for (int p = 0; p < total; ++p)
        CHECK(recv[p] == expect[p], "gatherv nb=%d: element %d is %d, expected %d", nb, p, recv[p],
              expect[p]);
    free(send);
    free(counts);
    free(displs);
    free(recv);
    free(expect);
}

static void test_scatter(int nb, int g, int rl) {
    const int root = root_arg(g, rl), rw = members[g][rl], k = 4;
    int* send = ints((size_t)(rsize * k), 0);
    for (int p = 0; p < rsize * k; ++p) send[p] = value(me, p);
    int* recv = ints(k, -7);
    RUN(nb, MPI_Scatter(send, k, MPI_INT, recv, k, MPI_INT, root, inter),
        MPI_Iscatter(send, k, MPI_INT, recv, k, MPI_INT, root, inter, &rq_));
    for (int i = 0; i < k; ++i) {
        const int expect = root >= 0 ? value(rw, lrank * k + i) : -7;
        CHECK(recv[i] == expect, "scatter nb=%d: element %d is %d, expected %d", nb, i, recv[i],
              expect);
    }
    free(send);
    free(recv);
}

static void test_scatterv(int nb, int g, int rl) {
    const int root = root_arg(g, rl), rw = members[g][rl];
    int* counts = ints((size_t)rsize, 0);
    int* displs = ints((size_t)rsize, 0);
    for (int j = 0; j < rsize; ++j) counts[j] = cnt(j);
    const int total = reverse_displs(rsize, counts, displs);
    int* send = ints((size_t)total, -1);
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i < counts[j]; ++i) send[displs[j] + i] = value(me, 100 * j + i);
    const int k = cnt(lrank);
    int* recv = ints((size_t)k + 1, -7);
    RUN(nb, MPI_Scatterv(send, counts, displs, MPI_INT, recv, k, MPI_INT, root, inter),
        MPI_Iscatterv(send, counts, displs, MPI_INT, recv, k, MPI_INT, root, inter, &rq_));
    for (int i = 0; i <= k; ++i) {
        const int expect = root >= 0 && i < k ? value(rw, 100 * lrank + i) : -7;
        CHECK(recv[i] == expect, "scatterv nb=%d: element %d is %d, expected %d", nb, i, recv[i],
              expect);
    }
    free(counts);
    free(displs);
    free(send);
    free(recv);
}

/* ---- All-to-all data movement ---- */

static void test_allgather(int nb) {
    const int k = 2;
    int send[2] = {value(me, 0), value(me, 1)};
    int* recv = ints((size_t)(rsize * k), -7);
    RUN(nb, MPI_Allgather(send, k, MPI_INT, recv, k, MPI_INT, inter),
        MPI_Iallgather(send, k, MPI_INT, recv, k, MPI_INT, inter, &rq_));
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i < k; ++i)
            CHECK(recv[j * k + i] == value(remote_world(j), i),
                  "allgather nb=%d: block %d element %d is %d", nb, j, i, recv[j * k + i]);
    free(recv);
}

static void test_allgatherv(int nb) {
    const int k = cnt(lrank);
    int send[3];
    for (int i = 0; i < k; ++i) send[i] = value(me, i);
    int* counts = ints((size_t)rsize, 0);
    int* displs = ints((size_t)rsize, 0);
    for (int j = 0; j < rsize; ++j) counts[j] = cnt(j);
    const int total = reverse_displs(rsize, counts, displs);
    int* recv = ints((size_t)total, -7);
    RUN(nb, MPI_Allgatherv(send, k, MPI_INT, recv, counts, displs, MPI_INT, inter),
        MPI_Iallgatherv(send, k, MPI_INT, recv, counts, displs, MPI_INT, inter, &rq_));
    int* expect = ints((size_t)total, -7);
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i < counts[j]; ++i) expect[displs[j] + i] = value(remote_world(j), i);
    for (int p = 0; p < total; ++p)
        CHECK(recv[p] == expect[p], "allgatherv nb=%d: element %d is %d, expected %d", nb, p,
              recv[p], expect[p]);
    free(counts);
    free(displs);
    free(recv);
    free(expect);
}

static void test_alltoall(int nb) {
    const int k = 3;
    int* send = ints((size_t)(rsize * k), 0);
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i < k; ++i) send[j * k + i] = value(me, 1000 * j + i);
    int* recv = ints((size_t)(rsize * k), -7);
    RUN(nb, MPI_Alltoall(send, k, MPI_INT, recv, k, MPI_INT, inter),
        MPI_Ialltoall(send, k, MPI_INT, recv, k, MPI_INT, inter, &rq_));
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i < k; ++i)
            CHECK(recv[j * k + i] == value(remote_world(j), 1000 * lrank + i),
                  "alltoall nb=%d: block %d element %d is %d", nb, j, i, recv[j * k + i]);
    free(send);
    free(recv);
}

/* Elements from rank s of group g to rank d of the other group (0 included). */
static int pair_count(int g, int s, int d) {
    return (s + 2 * d + g) % 4;
}

/* Alltoallv, or with w Alltoallw where some blocks are received as pairs of
 * ints (a derived type) and displacements are in bytes. */
static void test_alltoallv(int nb, int w) {
    int* scounts = ints((size_t)rsize, 0);
    int* rcounts = ints((size_t)rsize, 0);
    int* sdispls = ints((size_t)rsize, 0);
    int* rdispls = ints((size_t)rsize, 0);
    for (int j = 0; j < rsize; ++j) {
        scounts[j] = pair_count(color, lrank, j);
        rcounts[j] = pair_count(1 - color, j, lrank);
    }
    const int stotal = reverse_displs(rsize, scounts, sdispls);
    int rtotal = 0;
    for (int j = 0; j < rsize; ++j) {
        rdispls[j] = rtotal;
        rtotal += rcounts[j] + 1;
    }
    int* send = ints((size_t)stotal, -1);
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i < scounts[j]; ++i) send[sdispls[j] + i] = value(me, 1000 * j + i);
    int* recv = ints((size_t)rtotal, -7);
    if (!w) {
        RUN(nb,
            MPI_Alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT, inter),
            MPI_Ialltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT, inter,
                           &rq_));
    } else {
        MPI_Datatype pair;
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
        MPI_OK(MPI_Type_commit(&pair));
        MPI_Datatype* stypes = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)rsize);
        MPI_Datatype* rtypes = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)rsize);
        int* sc = ints((size_t)rsize, 0);
        int* rc = ints((size_t)rsize, 0);
        int* sd = ints((size_t)rsize, 0);
        int* rd = ints((size_t)rsize, 0);
        for (int j = 0; j < rsize; ++j) {
            stypes[j] = MPI_INT;
            sc[j] = scounts[j];
            sd[j] = sdispls[j] * (int)sizeof(int);
            rd[j] = rdispls[j] * (int)sizeof(int);
            const int as_pairs = rcounts[j] % 2 == 0 && (j + lrank) % 2 == 1;
            rtypes[j] = as_pairs ? pair : MPI_INT;
            rc[j] = as_pairs ? rcounts[j] / 2 : rcounts[j];
        }
        RUN(nb, MPI_Alltoallw(send, sc, sd, stypes, recv, rc, rd, rtypes, inter),
            MPI_Ialltoallw(send, sc, sd, stypes, recv, rc, rd, rtypes, inter, &rq_));
        MPI_OK(MPI_Type_free(&pair));
        free(stypes);
        free(rtypes);
        free(sc);
        free(rc);
        free(sd);
        free(rd);
    }
    for (int j = 0; j < rsize; ++j)
        for (int i = 0; i <= rcounts[j]; ++i) {
            const int expect = i < rcounts[j] ? value(remote_world(j), 1000 * lrank + i) : -7;
            CHECK(recv[rdispls[j] + i] == expect,
                  "alltoall%s nb=%d: from %d element %d is %d, expected %d", w ? "w" : "v", nb, j,
                  i, recv[rdispls[j] + i], expect);
        }
    free(scounts);
    free(rcounts);
    free(sdispls);
    free(rdispls);
    free(send);
    free(recv);
}

/* ---- Reductions ---- */

static void check_aff(const Aff* got, int first, int n, const char* what, int nb) {
    for (int i = 0; i < n; ++i) {
        const Aff e = aff_expect(first + i);
        CHECK(got[i].a == e.a && got[i].b == e.b,
              "%s nb=%d: element %d is (%u, %u), expected (%u, %u)", what, nb, first + i, got[i].a,
              got[i].b, e.a, e.b);
    }
}

static void test_reduce(int nb, int g, int rl) {
    const int root = root_arg(g, rl), k = 5, big = 3000;
    Aff send[5], recv[5];
    for (int i = 0; i < k; ++i) {
        send[i] = aff_val(me, i);
        recv[i].a = recv[i].b = 7;
    }
    RUN(nb, MPI_Reduce(send, recv, k, aff_type, aff_op, root, inter),
        MPI_Ireduce(send, recv, k, aff_type, aff_op, root, inter, &rq_));
    if (root == MPI_ROOT) {
        check_aff(recv, 0, k, "reduce (user op)", nb);
    } else {
        for (int i = 0; i < k; ++i)
            CHECK(recv[i].a == 7 && recv[i].b == 7, "reduce: a non-root's buffer was written");
    }
    int* isend = ints(big, 0);
    int* irecv = ints(big, -7);
    for (int i = 0; i < big; ++i) isend[i] = value(me, i);
    RUN(nb, MPI_Reduce(isend, irecv, big, MPI_INT, MPI_SUM, root, inter),
        MPI_Ireduce(isend, irecv, big, MPI_INT, MPI_SUM, root, inter, &rq_));
    for (int i = 0; i < big; ++i) {
        const long expect = root == MPI_ROOT ? sum_expect(i) : -7;
        CHECK(irecv[i] == expect, "reduce (sum) nb=%d: element %d is %d, expected %ld", nb, i,
              irecv[i], expect);
    }
    free(isend);
    free(irecv);
}

static void test_allreduce(int nb) {
    const int k = 7, big = 5000;
    Aff send[7], recv[7];
    for (int i = 0; i < k; ++i) send[i] = aff_val(me, i);
    RUN(nb, MPI_Allreduce(send, recv, k, aff_type, aff_op, inter),
        MPI_Iallreduce(send, recv, k, aff_type, aff_op, inter, &rq_));
    check_aff(recv, 0, k, "allreduce (user op)", nb);
    RUN(nb, MPI_Allreduce(send, recv, 0, aff_type, aff_op, inter), /* nothing at all */
        MPI_Iallreduce(send, recv, 0, aff_type, aff_op, inter, &rq_));
    check_aff(recv, 0, k, "allreduce (count 0 after it)", nb);
    int* isend = ints(big, 0);
    int* irecv = ints(big, -7);
    for (int i = 0; i < big; ++i) isend[i] = value(me, i);
    RUN(nb, MPI_Allreduce(isend, irecv, big, MPI_INT, MPI_SUM, inter),
        MPI_Iallreduce(isend, irecv, big, MPI_INT, MPI_SUM, inter, &rq_));
    for (int i = 0; i < big; ++i)
        CHECK(irecv[i] == sum_expect(i), "allreduce (sum) nb=%d: element %d is %d, expected %ld",
              nb, i, irecv[i], sum_expect(i));
    free(isend);
    free(irecv);
}

/* The same total in both groups, cut into local-size blocks. */
static void test_reduce_scatter(int nb) {
    const int total = 23;
    int* counts = ints((size_t)lsize, 0);
    int first = 0;
    for (int i = 0; i < lsize; ++i) {
        counts[i] = total / lsize + (i < total % lsize ? 1 : 0);
        if (i < lrank) first += counts[i];
    }
    Aff* send = (Aff*)xmalloc(sizeof(Aff) * total);
    Aff recv[24];
    for (int i = 0; i < total; ++i) send[i] = aff_val(me, i);
    RUN(nb, MPI_Reduce_scatter(send, recv, counts, aff_type, aff_op, inter),
        MPI_Ireduce_scatter(send, recv, counts, aff_type, aff_op, inter, &rq_));
    check_aff(recv, first, counts[lrank], "reduce_scatter", nb);
    free(counts);
    free(send);
}

/* recvcount * local size is the same in both groups: rsize * 2 each. */
static void test_reduce_scatter_block(int nb) {
    const int rc = rsize * 2, total = rc * lsize;
    Aff* send = (Aff*)xmalloc(sizeof(Aff) * (size_t)total);
    Aff* recv = (Aff*)xmalloc(sizeof(Aff) * (size_t)rc);
    for (int i = 0; i < total; ++i) send[i] = aff_val(me, i);
    RUN(nb, MPI_Reduce_scatter_block(send, recv, rc, aff_type, aff_op, inter),
        MPI_Ireduce_scatter_block(send, recv, rc, aff_type, aff_op, inter, &rq_));
    check_aff(recv, rc * lrank, rc, "reduce_scatter_block", nb);
    int* isend = ints((size_t)total, 0);
    int* irecv = ints((size_t)rc, -7);
    for (int i = 0; i < total; ++i) isend[i] = value(me, i);
    RUN(nb, MPI_Reduce_scatter_block(isend, irecv, rc, MPI_INT, MPI_SUM, inter),
        MPI_Ireduce_scatter_block(isend, irecv, rc, MPI_INT, MPI_SUM, inter, &rq_));
    for (int i = 0; i < rc; ++i)
        CHECK(irecv[i] == sum_expect(rc * lrank + i),
              "reduce_scatter_block (sum) nb=%d: element %d is %d", nb, i, irecv[i]);
    free(send);
    free(recv);
    free(isend);
    free(irecv);
}

/* ---- Barrier ---- */

/* No rank leaves before the last one entered: the last (rank 0 of B, after a
 * nap) notes when it entered, everyone when it left. The clocks are compared
 * only when all ranks run on one host (MPI_Wtime is CLOCK_MONOTONIC). */
static void test_barrier(int nb) {
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_OK(MPI_Get_processor_name(host, &len));
    unsigned long h = 5381;
    for (int i = 0; i < len; ++i) h = h * 33 + (unsigned char)host[i];
    unsigned long hmin, hmax;
    MPI_OK(MPI_Allreduce(&h, &hmin, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(&h, &hmax, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD));

    double entered = 0;
    if (color == 1 && lrank == 0) {
        usleep(50000);
        entered = MPI_Wtime();
    }
    RUN(nb, MPI_Barrier(inter), MPI_Ibarrier(inter, &rq_));
    const double left = MPI_Wtime();
    double last_entered, first_left;
    MPI_OK(MPI_Allreduce(&entered, &last_entered, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(&left, &first_left, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    if (hmin == hmax)
        CHECK(first_left >= last_entered,
              "barrier nb=%d: a rank left %.6f s before the last entered", nb,
              last_entered - first_left);
}

/* ---- Several at once, and no cross-talk ---- */

static void test_overlap(void) {
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(inter, &dup));
    /* At both ranks 0, a wildcard receive no collective message may match. */
    int p2p = -1;
    MPI_Request wild = MPI_REQUEST_NULL;
    if (lrank == 0) MPI_OK(MPI_Irecv(&p2p, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &wild));

    const int k = 4;
    int bc[4], ar_in = value(me, 0), ar_out = 0, ag_in = value(me, 1), dup_out = 0;
    int* a2a_in = ints((size_t)(rsize * k), 0);
    int* a2a_out = ints((size_t)(rsize * k), -7);
    int* ag_out = ints((size_t)rsize, -7);
    for (int p = 0; p < rsize * k; ++p) a2a_in[p] = value(me, p);
    const int root = root_arg(1, gsize[1] - 1), rw = members[1][gsize[1] - 1];
    for (int i = 0; i < k; ++i) bc[i] = root == MPI_ROOT ? value(rw, i) : -7;
    MPI_Request reqs[6];
    MPI_OK(MPI_Ibcast(bc, k, MPI_INT, root, inter, &reqs[0]));
    MPI_OK(MPI_Iallreduce(&ar_in, &ar_out, 1, MPI_INT, MPI_SUM, inter, &reqs[1]));
    MPI_OK(MPI_Iallreduce(&ar_in, &dup_out, 1, MPI_INT, MPI_MAX, dup, &reqs[2]));
    MPI_OK(MPI_Ialltoall(a2a_in, k, MPI_INT, a2a_out, k, MPI_INT, inter, &reqs[3]));
    MPI_OK(MPI_Ibarrier(dup, &reqs[4]));
    MPI_OK(MPI_Iallgather(&ag_in, 1, MPI_INT, ag_out, 1, MPI_INT, inter, &reqs[5]));
    MPI_OK(MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE));

    if (lrank == 0) {
        int flag = 1;
        MPI_OK(MPI_Test(&wild, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a collective message matched a point-to-point receive (got %d)", p2p);
    }
    for (int i = 0; i < k; ++i)
        CHECK(bc[i] == (root == MPI_PROC_NULL ? -7 : value(rw, i)), "overlap bcast element %d", i);
    long sum = 0;
    int max = 0;
    for (int j = 0; j < rsize; ++j) {
        sum += value(remote_world(j), 0);
        if (value(remote_world(j), 0) > max) max = value(remote_world(j), 0);
        CHECK(ag_out[j] == value(remote_world(j), 1), "overlap allgather block %d", j);
        for (int i = 0; i < k; ++i)
            CHECK(a2a_out[j * k + i] == value(remote_world(j), lrank * k + i),
                  "overlap alltoall block %d element %d", j, i);
    }
    CHECK(ar_out == sum, "overlap allreduce %d, expected %ld", ar_out, sum);
    CHECK(dup_out == max, "overlap allreduce on the duplicate %d, expected %d", dup_out, max);

    /* Now a real message for it, from the other rank 0 (once both checked). */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (lrank == 0) {
        const int mine = 4242;
        MPI_Request sreq;
        MPI_OK(MPI_Isend(&mine, 1, MPI_INT, 0, 9, inter, &sreq));
        MPI_Status st;
        MPI_OK(MPI_Wait(&wild, &st));
        CHECK(p2p == 4242 && st.MPI_TAG == 9 && st.MPI_SOURCE == 0,
              "wildcard receive got %d tag %d from %d", p2p, st.MPI_TAG, st.MPI_SOURCE);
        MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    MPI_OK(MPI_Comm_free(&dup));
    free(a2a_in);
    free(a2a_out);
    free(ag_out);
}

/* ---- Errors ---- */

#define EXPECT_CLASS(call, cls)                                                            \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        if (error_class(rc_) != (cls))                                                     \
            test_fail(__FILE__, __LINE__, "%s returned class %d, expected %s (%d)", #call, \
                      error_class(rc_), #cls, (cls));                                      \
    } while (0)

static void test_errors(void) {
    int a[64], b[64];
    MPI_Request req;
    for (int i = 0; i < 64; ++i) a[i] = b[i] = i;
    MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    /* MPI_IN_PLACE is never valid on an intercommunicator. */
    EXPECT_CLASS(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Iallreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, inter), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, inter), MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Reduce_scatter_block(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, inter),
                 MPI_ERR_BUFFER);
    /* Roots: a remote rank, MPI_ROOT or MPI_PROC_NULL. */
    EXPECT_CLASS(MPI_Bcast(a, 1, MPI_INT, rsize, inter), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Ibcast(a, 1, MPI_INT, -5, inter, &req), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, rsize + 3, inter), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_ANY_SOURCE, inter), MPI_ERR_ROOT);
    /* Not defined on intercommunicators. */
    EXPECT_CLASS(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Iscan(a, b, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, inter), MPI_ERR_COMM);
    /* The intercommunicator still works. */
    int x = value(me, 0), s = 0;
    MPI_OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, inter));
    CHECK(s == sum_expect(0), "allreduce after the errors: %d", s);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        MPI_OK(MPI_Finalize());
        printf("intercomm_coll: OK (nothing to do with %d rank)\n", wsize);
        return 0;
    }
    /* Groups: A = world ranks 0, 3, 6, ... in order; B = the others, in
     * decreasing order (rank 0 of B is the highest world rank). */
    for (int g = 0; g < 2; ++g) {
        members[g] = ints((size_t)wsize, -1);
        gsize[g] = 0;
    }
    for (int w = 0; w < wsize; ++w)
        if (w % 3 == 0) members[0][gsize[0]++] = w;
    for (int w = wsize - 1; w >= 0; --w)
        if (w % 3 != 0) members[1][gsize[1]++] = w;
    color = me % 3 == 0 ? 0 : 1;
    MPI_Comm local;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, color ? -me : me, &local));
    MPI_OK(MPI_Comm_rank(local, &lrank));
    CHECK(members[color][lrank] == me, "local rank %d", lrank);
    /* Leaders: rank 0 of A, the last rank of B. */
    const int leader = color ? gsize[1] - 1 : 0;
    const int remote_leader = color ? members[0][0] : members[1][gsize[1] - 1];
    MPI_OK(MPI_Intercomm_create(local, leader, MPI_COMM_WORLD, remote_leader, 31, &inter));
    MPI_OK(MPI_Comm_size(inter, &lsize));
    MPI_OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK(lsize == gsize[color] && rsize == gsize[1 - color], "sizes %d %d", lsize, rsize);

    MPI_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &aff_type));
    MPI_OK(MPI_Type_commit(&aff_type));
    MPI_OK(MPI_Op_create(aff_fn, 0, &aff_op));

    for (int nb = 0; nb < 2; ++nb) {
        test_barrier(nb);
        for (int g = 0; g < 2; ++g) {
            const int roots[2] = {0, gsize[g] - 1};
            for (int r = 0; r < (gsize[g] > 1 ? 2 : 1); ++r) {
                test_bcast(nb, g, roots[r], 0);
                test_bcast(nb, g, roots[r], 5);
                test_bcast(nb, g, roots[r], 40000); /* beyond the eager size */
                test_gather(nb, g, roots[r]);
                test_gatherv(nb, g, roots[r]);
                test_scatter(nb, g, roots[r]);
                test_scatterv(nb, g, roots[r]);
                test_reduce(nb, g, roots[r]);
            }
        }
        test_allgather(nb);
        test_allgatherv(nb);
        test_alltoall(nb);
        test_alltoallv(nb, 0);
        test_alltoallv(nb, 1);
        test_allreduce(nb);
        test_reduce_scatter(nb);
        test_reduce_scatter_block(nb);
    }
    test_overlap();
    test_errors();

    MPI_OK(MPI_Op_free(&aff_op));
    MPI_OK(MPI_Type_free(&aff_type));
    MPI_OK(MPI_Comm_free(&inter));
    MPI_OK(MPI_Comm_free(&local));
    free(members[0]);
    free(members[1]);
    MPI_OK(MPI_Finalize());
    if (me == 0)
        printf("intercomm_coll: OK (%d ranks: groups of %d and %d)\n", wsize, gsize[0], gsize[1]);
    return 0;
}
