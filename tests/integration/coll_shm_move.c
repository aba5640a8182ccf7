/* The shared-address-space paths of the data-movement collectives and of the
 * reductions whose result differs per rank (collectives/src/shm_move.cpp,
 * shm_scan.cpp, shm_hier.cpp), under what their protocol must survive:
 *  - blocks on both sides of the staging limit (16 KiB: staged, or read
 *    straight from the sender's buffer), mixed in one call by the v forms,
 *    zero-size blocks; reduction vectors on both sides of 64 KiB;
 *  - every root; MPI_IN_PLACE; a non-contiguous type (an int and a 4-byte
 *    hole) on either side against plain ints, and a different type per peer
 *    (Alltoallw); holes and the ends of receive buffers keep a sentinel;
 *  - a root running ahead through many Scatters and Gathers in a row (a
 *    staged root leaves at once, its slots are reused two calls later);
 *  - the nonblocking form of every one in flight at once, completed newest
 *    first, with blocking collectives started before the waits;
 *  - sub-communicators of odd sizes, created and freed (contexts reused).
 * Every value names its sender and element (value() in common.h), so a block
 * from the wrong rank or at the wrong place is caught. Runs on one node
 * process (every communicator flat) and on several (the hierarchical
 * composition, and node-local splits through MPI_COMM_TYPE_SHARED).
 */
#include "common.h"

#define SENTINEL (-4444444)

static MPI_Datatype gap; /* one int then a 4-byte hole (extent 8) */

/* A receive or send buffer of count ints, plain (stride 1) or through `gap`
 * (stride 2, holes hold the sentinel), plus one guard element. */
typedef struct {
    int* p;
    long count;
    int stride;
    MPI_Datatype type;
} Buf;

static Buf buf_new(long count, int use_gap) {
    Buf b = {NULL, count, use_gap ? 2 : 1, use_gap ? gap : MPI_INT};
    b.p = ints((size_t)(count * b.stride + 1), SENTINEL);
    return b;
}
static int* at(const Buf* b, long i) {
    return b->p + i * b->stride;
}
/* Elements [first, first+n) hold value(from, base + k). */
static void buf_fill(Buf* b, long first, long n, int from, long base) {
    for (long k = 0; k < n; ++k) *at(b, first + k) = value(from, base + k);
}
static void buf_expect(const Buf* b, long first, long n, int from, long base, const char* what) {
    for (long k = 0; k < n; ++k)
        if (*at(b, first + k) != value(from, base + k))
            test_fail(__FILE__, __LINE__, "%s: element %ld is %d, expected %d (rank %d, %ld)",
                      what, first + k, *at(b, first + k), value(from, base + k), from, base + k);
}
/* Holes, the guard and the elements outside the given ranges keep the sentinel. */
static void buf_expect_untouched(const Buf* b, long first, long n, const char* what) {
    for (long k = first; k < first + n; ++k)
        if (*at(b, k) != SENTINEL) test_fail(__FILE__, __LINE__, "%s: element %ld written", what, k);
}
static void buf_expect_holes(const Buf* b, const char* what) {
    if (b->stride == 2)
        for (long k = 0; k < b->count; ++k)
            if (b->p[2 * k + 1] != SENTINEL)
                test_fail(__FILE__, __LINE__, "%s: hole after element %ld written", what, k);
    if (b->p[b->count * b->stride] != SENTINEL)
        test_fail(__FILE__, __LINE__, "%s: guard written", what);
}

typedef struct {
    MPI_Comm comm;
    int me, n;
} Env;

/* Rank r's block size in the v forms: around the staging limit, some zero. */
static int vcount(int r, long base) {
    switch (r % 4) {
        case 0: return (int)base;
        case 1: return (int)(base / 3 + 1);
        case 2: return r % 8 == 2 ? 0 : (int)(base + 5);
        default: return 4097; /* just above 16 KiB */
    }
}

static void gathers(const Env* e, long count, int root, int variant) {
    const int n = e->n, me = e->me;
    const int gap_recv = variant & 1, gap_send = variant & 2, in_place = me == root && variant & 4;
    /* Gather */
    Buf all = buf_new(count * n, gap_recv), mine = buf_new(count, gap_send);
    buf_fill(&mine, 0, count, me, 0);
    if (in_place) buf_fill(&all, count * me, count, me, 0);
    MPI_OK(MPI_Gather(in_place ? MPI_IN_PLACE : mine.p, (int)count, mine.type, all.p, (int)count,
                      all.type, root, e->comm));
    if (me == root) {
        for (int r = 0; r < n; ++r) buf_expect(&all, count * r, count, r, 0, "Gather");
        buf_expect_holes(&all, "Gather");
    }
    /* Scatter the gathered blocks back out (root's own in place or not). */
    Buf got = buf_new(count, gap_send);
    if (me == root && in_place) buf_fill(&got, 0, count, me, 0);
    MPI_OK(MPI_Scatter(all.p, (int)count, all.type, in_place ? MPI_IN_PLACE : got.p, (int)count,
                       got.type, root, e->comm));
    buf_expect(&got, 0, count, me, 0, "Scatter");
    buf_expect_holes(&got, "Scatter");
    free(all.p), free(mine.p), free(got.p);

    /* Gatherv and Scatterv: blocks of mixed sizes, placed in reverse order with gaps. */
    int* counts = ints((size_t)n, 0);
    int* displs = ints((size_t)n, 0);
    long total = 0;
    for (int r = n - 1; r >= 0; --r) {
        counts[r] = vcount(r, count);
        displs[r] = (int)total;
        total += counts[r] + 3;
    }
    Buf vall = buf_new(total, gap_recv), vmine = buf_new(counts[me], gap_send);
    buf_fill(&vmine, 0, counts[me], me, 7);
    if (in_place) buf_fill(&vall, displs[me], counts[me], me, 7);
    MPI_OK(MPI_Gatherv(in_place ? MPI_IN_PLACE : vmine.p, counts[me], vmine.type, vall.p, counts,
                       displs, vall.type, root, e->comm));
    if (me == root) {
        for (int r = 0; r < n; ++r) {
            buf_expect(&vall, displs[r], counts[r], r, 7, "Gatherv");
            buf_expect_untouched(&vall, displs[r] + counts[r], 3, "Gatherv gap");
        }
        buf_expect_holes(&vall, "Gatherv");
    }
    Buf vgot = buf_new(counts[me], gap_send);
    if (me == root && in_place) buf_fill(&vgot, 0, counts[me], me, 7);
    MPI_OK(MPI_Scatterv(vall.p, counts, displs, vall.type, in_place ? MPI_IN_PLACE : vgot.p,
                        counts[me], vgot.type, root, e->comm));
    buf_expect(&vgot, 0, counts[me], me, 7, "Scatterv");
    buf_expect_holes(&vgot, "Scatterv");
    free(vall.p), free(vmine.p), free(vgot.p), free(counts), free(displs);
}

static void allgathers(const Env* e, long count, int variant) {
    const int n = e->n, me = e->me;
    const int gap_recv = variant & 1, gap_send = variant & 2, in_place = variant & 4;
    Buf all = buf_new(count * n, gap_recv), mine = buf_new(count, gap_send);
    buf_fill(&mine, 0, count, me, 1);
    if (in_place) buf_fill(&all, count * me, count, me, 1);
    MPI_OK(MPI_Allgather(in_place ? MPI_IN_PLACE : mine.p, (int)count, mine.type, all.p,
                         (int)count, all.type, e->comm));
    for (int r = 0; r < n; ++r) buf_expect(&all, count * r, count, r, 1, "Allgather");
    buf_expect_holes(&all, "Allgather");
    free(all.p), free(mine.p);

    int* counts = ints((size_t)n, 0);
    int* displs = ints((size_t)n, 0);
    long total = 0;
    for (int r = 0; r < n; ++r) {
        counts[r] = vcount(r + 1, count);
        displs[r] = (int)total + 1;
        total += counts[r] + 2;
    }
    Buf vall = buf_new(total, gap_recv), vmine = buf_new(counts[me], gap_send);
    buf_fill(&vmine, 0, counts[me], me, 2);
    if (in_place) buf_fill(&vall, displs[me], counts[me], me, 2);
    MPI_OK(MPI_Allgatherv(in_place ? MPI_IN_PLACE : vmine.p, counts[me], vmine.type, vall.p,
                          counts, displs, vall.type, e->comm));
    for (int r = 0; r < n; ++r) {
        buf_expect(&vall, displs[r], counts[r], r, 2, "Allgatherv");
        buf_expect_untouched(&vall, displs[r] - 1, 1, "Allgatherv gap");
    }
    buf_expect_holes(&vall, "Allgatherv");
    free(vall.p), free(vmine.p), free(counts), free(displs);
}

/* Element k of the block rank `from` sends to rank `to`. */
static long a2a_base(int from, int to) {
    return (long)to * 100000 + from;
}

static void alltoalls(const Env* e, long count, int variant) {
    const int n = e->n, me = e->me;
    const int gap_recv = variant & 1, gap_send = variant & 2, in_place = variant & 4;
    Buf out = buf_new(count * n, gap_send), in = buf_new(count * n, gap_recv);
    for (int r = 0; r < n; ++r) buf_fill(in_place ? &in : &out, count * r, count, me, a2a_base(me, r));
    MPI_OK(MPI_Alltoall(in_place ? MPI_IN_PLACE : out.p, (int)count, out.type, in.p, (int)count,
                        in.type, e->comm));
    for (int r = 0; r < n; ++r) buf_expect(&in, count * r, count, r, a2a_base(r, me), "Alltoall");
    buf_expect_holes(&in, "Alltoall");
    free(out.p), free(in.p);

    /* Alltoallv: the block from r to s has vcount(r + s) elements. */
    int *sc = ints((size_t)n, 0), *sd = ints((size_t)n, 0), *rc = ints((size_t)n, 0),
        *rd = ints((size_t)n, 0);
    long stotal = 0, rtotal = 0;
    for (int r = n - 1; r >= 0; --r) {
        sc[r] = vcount(me + r, count);
        sd[r] = (int)stotal;
        stotal += sc[r] + 1;
        rc[r] = vcount(r + me, count);
        rd[r] = (int)rtotal;
        rtotal += rc[r] + 1;
    }
    if (in_place) {
        /* The same layout on both sides (the standard takes the data from recvbuf). */
        memcpy(sc, rc, sizeof(int) * (size_t)n);
        memcpy(sd, rd, sizeof(int) * (size_t)n);
        stotal = rtotal;
    }
    Buf vout = buf_new(stotal, gap_send), vin = buf_new(rtotal, gap_recv);
    for (int r = 0; r < n; ++r)
        buf_fill(in_place ? &vin : &vout, in_place ? rd[r] : sd[r], sc[r], me, a2a_base(me, r));
    MPI_OK(MPI_Alltoallv(in_place ? MPI_IN_PLACE : vout.p, sc, sd, vout.type, vin.p, rc, rd,
                         vin.type, e->comm));
    for (int r = 0; r < n; ++r) {
        buf_expect(&vin, rd[r], rc[r], r, a2a_base(r, me), "Alltoallv");
        buf_expect_untouched(&vin, rd[r] + rc[r], 1, "Alltoallv gap");
    }
    buf_expect_holes(&vin, "Alltoallv");
    free(vout.p), free(vin.p);

    /* Alltoallw: odd peers' blocks through gap, even ones plain, on a byte
     * layout of both (each block in its own region of 2 * count ints). */
    MPI_Datatype* st = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype* rt = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
    const long region = 2 * count + 1;
    int* wout = ints((size_t)(region * n), SENTINEL);
    int* win = ints((size_t)(region * n), SENTINEL);
    for (int r = 0; r < n; ++r) {
        sc[r] = rc[r] = (int)count;
        sd[r] = rd[r] = (int)(sizeof(int) * (size_t)(region * r));
        st[r] = (r + me) % 2 ? gap : MPI_INT;
        rt[r] = r % 2 ? MPI_INT : gap;
        int* block = (in_place ? win : wout) + region * r;
        const int stride = in_place ? (rt[r] == gap ? 2 : 1) : (st[r] == gap ? 2 : 1);
        for (long k = 0; k < count; ++k) block[k * stride] = value(me, a2a_base(me, r) + k);
    }
    MPI_OK(MPI_Alltoallw(in_place ? MPI_IN_PLACE : wout, sc, sd, st, win, rc, rd, rt, e->comm));
    for (int r = 0; r < n; ++r) {
        const int* block = win + region * r;
        const int stride = rt[r] == gap ? 2 : 1;
        for (long k = 0; k < count; ++k)
            CHECK(block[k * stride] == value(r, a2a_base(r, me) + k),
                  "Alltoallw block from %d element %ld is %d", r, k, block[k * stride]);
        if (stride == 2)
            for (long k = 0; k < count; ++k) CHECK(block[2 * k + 1] == SENTINEL, "Alltoallw hole");
        CHECK(block[region - 1] == SENTINEL, "Alltoallw guard of block %d", r);
    }
    free(wout), free(win), free(st), free(rt), free(sc), free(sd), free(rc), free(rd);
}

static long long contrib(int r, long i) {
    return (long long)(r + 1) * 3 + i % 13;
}

/* Reduce_scatter(_block), Scan, Exscan with MPI_SUM on long long (exact),
 * and MPI_MAX on int through gap. */
static void reductions(const Env* e, long count, int in_place) {
    const int n = e->n, me = e->me;
    int* rcounts = ints((size_t)n, 0);
    long total = 0, first = 0;
    for (int r = 0; r < n; ++r) {
        rcounts[r] = vcount(r, count);
        if (r == me) first = total;
        total += rcounts[r];
    }
    long long* in = (long long*)xmalloc(sizeof(long long) * (size_t)(total + count * n + 1));
    long long* out = (long long*)xmalloc(sizeof(long long) * (size_t)(total + count * n + 1));
    /* Reduce_scatter */
    for (long i = 0; i < total; ++i) in[i] = out[i] = contrib(me, i);
    MPI_OK(MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : in, out, rcounts, MPI_LONG_LONG, MPI_SUM,
                              e->comm));
    for (long i = 0; i < rcounts[me]; ++i) {
        long long want = 0;
        for (int r = 0; r < n; ++r) want += contrib(r, first + i);
        CHECK(out[i] == want, "Reduce_scatter element %ld: %lld, want %lld", i, out[i], want);
    }
    /* Reduce_scatter_block */
    for (long i = 0; i < count * n; ++i) in[i] = out[i] = contrib(me, i);
    MPI_OK(MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, out, (int)count, MPI_LONG_LONG,
                                    MPI_SUM, e->comm));
    for (long i = 0; i < count; ++i) {
        long long want = 0;
        for (int r = 0; r < n; ++r) want += contrib(r, count * me + i);
        CHECK(out[i] == want, "Reduce_scatter_block element %ld: %lld, want %lld", i, out[i], want);
    }
    /* Scan and Exscan */
    for (int ex = 0; ex < 2; ++ex) {
        for (long i = 0; i < count; ++i) in[i] = out[i] = contrib(me, i);
        if (ex)
            MPI_OK(MPI_Exscan(in_place ? MPI_IN_PLACE : in, out, (int)count, MPI_LONG_LONG, MPI_SUM,
                              e->comm));
        else
            MPI_OK(MPI_Scan(in_place ? MPI_IN_PLACE : in, out, (int)count, MPI_LONG_LONG, MPI_SUM,
                            e->comm));
        for (long i = 0; i < count && (me > 0 || !ex); ++i) {
            long long want = 0;
            for (int r = 0; r < me + (ex ? 0 : 1); ++r) want += contrib(r, i);
            CHECK(out[i] == want, "%s element %ld: %lld, want %lld", ex ? "Exscan" : "Scan", i,
                  out[i], want);
        }
    }
    /* MAX through a non-contiguous type. */
    Buf gin = buf_new(count, 1), gout = buf_new(count, 1);
    for (long i = 0; i < count; ++i) *at(&gin, i) = *at(&gout, i) = value(me, i) ^ (i & 7);
    MPI_OK(MPI_Scan(in_place ? MPI_IN_PLACE : gin.p, gout.p, (int)count, gap, MPI_MAX, e->comm));
    for (long i = 0; i < count; ++i) {
        int want = value(0, i) ^ (i & 7);
        for (int r = 1; r <= me; ++r)
            if ((value(r, i) ^ (i & 7)) > want) want = value(r, i) ^ (i & 7);
        CHECK(*at(&gout, i) == want, "Scan MAX element %ld: %d, want %d", i, *at(&gout, i), want);
    }
    buf_expect_holes(&gout, "Scan MAX");
    free(gin.p), free(gout.p), free(in), free(out), free(rcounts);
}

/* A root far ahead: staged Scatters and Gathers back to back. */
static void root_ahead(const Env* e) {
    const int n = e->n, me = e->me;
    int* all = ints((size_t)(4 * n), 0);
    for (int k = 0; k < 60; ++k) {
        const int count = k % 3 + 1, root = k % 2 ? 0 : n - 1;
        if (me == root)
            for (int r = 0; r < n; ++r)
                for (int i = 0; i < count; ++i) all[r * count + i] = value(r, k * 10 + i);
        int got[4];
        MPI_OK(MPI_Scatter(all, count, MPI_INT, got, count, MPI_INT, root, e->comm));
        for (int i = 0; i < count; ++i) CHECK(got[i] == value(me, k * 10 + i), "root ahead scatter %d", k);
        got[0] = value(me, k);
        MPI_OK(MPI_Gather(got, 1, MPI_INT, all, 1, MPI_INT, n - 1 - root, e->comm));
        if (me == n - 1 - root)
            for (int r = 0; r < n; ++r) CHECK(all[r] == value(r, k), "root ahead gather %d", k);
    }
    free(all);
}

/* Every nonblocking form in flight at once, waited for newest first. */
static void nonblocking(const Env* e, long count) {
    enum { NREQ = 12 };
    const int n = e->n, me = e->me, root = n / 2;
    MPI_Request req[NREQ];
    int k = 0;
    Buf mine = buf_new(count, 1), g = buf_new(count * n, 0), s = buf_new(count, 0),
        ag = buf_new(count * n, 1), a2a_out = buf_new(count * n, 0), a2a_in = buf_new(count * n, 1);
    buf_fill(&mine, 0, count, me, 3);
    MPI_OK(MPI_Igather(mine.p, (int)count, gap, g.p, (int)count, MPI_INT, root, e->comm, &req[k++]));
    int* sall = ints((size_t)(count * n), 0);
    for (int r = 0; r < n; ++r)
        for (long i = 0; i < count; ++i) sall[r * count + i] = value(r, 5 + i);
    MPI_OK(MPI_Iscatter(sall, (int)count, MPI_INT, s.p, (int)count, MPI_INT, root, e->comm, &req[k++]));
    MPI_OK(MPI_Iallgather(mine.p, (int)count, gap, ag.p, (int)count, gap, e->comm, &req[k++]));
    for (int r = 0; r < n; ++r) buf_fill(&a2a_out, count * r, count, me, a2a_base(me, r));
    MPI_OK(MPI_Ialltoall(a2a_out.p, (int)count, MPI_INT, a2a_in.p, (int)count, gap, e->comm, &req[k++]));
    int* c1 = ints((size_t)n, (int)count);
    int* d1 = ints((size_t)n, 0);
    for (int r = 0; r < n; ++r) d1[r] = (int)count * r;
    Buf v_in = buf_new(count * n, 0);
    MPI_OK(MPI_Ialltoallv(a2a_out.p, c1, d1, MPI_INT, v_in.p, c1, d1, MPI_INT, e->comm, &req[k++]));
    Buf gv = buf_new(count * n, 0);
    MPI_OK(MPI_Igatherv(mine.p, (int)count, gap, gv.p, c1, d1, MPI_INT, root, e->comm, &req[k++]));
    Buf sv = buf_new(count, 0);
    MPI_OK(MPI_Iscatterv(sall, c1, d1, MPI_INT, sv.p, (int)count, MPI_INT, root, e->comm, &req[k++]));
    Buf agv = buf_new(count * n, 0);
    MPI_OK(MPI_Iallgatherv(mine.p, (int)count, gap, agv.p, c1, d1, MPI_INT, e->comm, &req[k++]));
    long long* x = (long long*)xmalloc(sizeof(long long) * (size_t)(count * n));
    long long *rs = (long long*)xmalloc(sizeof(long long) * (size_t)count),
              *sc = (long long*)xmalloc(sizeof(long long) * (size_t)count),
              *ex = (long long*)xmalloc(sizeof(long long) * (size_t)count),
              *rsv = (long long*)xmalloc(sizeof(long long) * (size_t)count);
    for (long i = 0; i < count * n; ++i) x[i] = contrib(me, i);
    MPI_OK(MPI_Ireduce_scatter_block(x, rs, (int)count, MPI_LONG_LONG, MPI_SUM, e->comm, &req[k++]));
    MPI_OK(MPI_Ireduce_scatter(x, rsv, c1, MPI_LONG_LONG, MPI_SUM, e->comm, &req[k++]));
    MPI_OK(MPI_Iscan(x, sc, (int)count, MPI_LONG_LONG, MPI_SUM, e->comm, &req[k++]));
    MPI_OK(MPI_Iexscan(x, ex, (int)count, MPI_LONG_LONG, MPI_SUM, e->comm, &req[k++]));
    /* A blocking collective before the waits. */
    allgathers(e, 3, 0);
    for (int j = k - 1; j >= 0; --j) MPI_OK(MPI_Wait(&req[j], MPI_STATUS_IGNORE));
    if (me == root)
        for (int r = 0; r < n; ++r) {
            buf_expect(&g, count * r, count, r, 3, "Igather");
            buf_expect(&gv, count * r, count, r, 3, "Igatherv");
        }
    buf_expect(&s, 0, count, me, 5, "Iscatter");
    buf_expect(&sv, 0, count, me, 5, "Iscatterv");
    for (int r = 0; r < n; ++r) {
        buf_expect(&ag, count * r, count, r, 3, "Iallgather");
        buf_expect(&agv, count * r, count, r, 3, "Iallgatherv");
        buf_expect(&a2a_in, count * r, count, r, a2a_base(r, me), "Ialltoall");
        buf_expect(&v_in, count * r, count, r, a2a_base(r, me), "Ialltoallv");
    }
    buf_expect_holes(&ag, "Iallgather");
    buf_expect_holes(&a2a_in, "Ialltoall");
    for (long i = 0; i < count; ++i) {
        long long all = 0, below = 0, upto = 0, mine_block = 0;
        for (int r = 0; r < n; ++r) {
            all += contrib(r, count * me + i);
            if (r < me) below += contrib(r, i);
            if (r <= me) upto += contrib(r, i);
            mine_block += contrib(r, count * me + i);
        }
        CHECK(rs[i] == all, "Ireduce_scatter_block %ld", i);
        CHECK(rsv[i] == mine_block, "Ireduce_scatter %ld", i);
        CHECK(sc[i] == upto, "Iscan %ld", i);
        if (me > 0) CHECK(ex[i] == below, "Iexscan %ld", i);
    }
    free(mine.p), free(g.p), free(s.p), free(ag.p), free(a2a_out.p), free(a2a_in.p), free(sall);
    free(c1), free(d1), free(v_in.p), free(gv.p), free(sv.p), free(agv.p);
    free(x), free(rs), free(sc), free(ex), free(rsv);
}

static void exercise(MPI_Comm comm, int big) {
    Env e = {comm, 0, 0};
    MPI_Comm_rank(comm, &e.me);
    MPI_Comm_size(comm, &e.n);
    const long counts[] = {0, 1, 5, 4096, 4097, 9000};
    const int ncounts = big ? 6 : 4;
    for (int c = 0; c < ncounts; ++c) {
        for (int variant = 0; variant < 8; ++variant) {
            if (counts[c] > 5 && variant % 3 != 0) continue; /* large: a few shapes */
            const int root = (c + variant) % e.n;
            gathers(&e, counts[c], root, variant);
            allgathers(&e, counts[c], variant);
            alltoalls(&e, counts[c], variant);
        }
        reductions(&e, counts[c], c % 2);
        reductions(&e, counts[c] * 3 + 1, (c + 1) % 2); /* vectors past 64 KiB */
    }
    root_ahead(&e);
    nonblocking(&e, 1);
    nonblocking(&e, big ? 4500 : 700);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 8, &gap));
    MPI_OK(MPI_Type_commit(&gap));

    exercise(MPI_COMM_WORLD, size <= 4);
    /* Odd sizes, in reverse order, contexts reused. */
    for (int k = 0; k < 3; ++k) {
        MPI_Comm sub;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % (k + 2), size - rank, &sub));
        exercise(sub, 0);
        MPI_OK(MPI_Comm_free(&sub));
    }
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    exercise(node, 0);
    MPI_OK(MPI_Comm_free(&node));

    MPI_OK(MPI_Type_free(&gap));
    MPI_Finalize();
    if (rank == 0) printf("coll_shm_move: ok\n");
    return 0;
}
