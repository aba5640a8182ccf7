/* Every blocking collective, checked exactly, at sizes that cross every
 * algorithm threshold of collectives/tuning.hpp (0, 1, small, medium, MiB),
 * with roots 0, middle and last, on MPI_COMM_WORLD and on a communicator
 * whose ranks run in reverse order.
 *
 * Data movement uses ints whose value names (sender, element), so a block that
 * lands in the wrong place or comes from the wrong rank is caught, and
 * receive-buffer regions that must stay untouched hold a sentinel. Reductions
 * run every predefined operation family on a representative type, including
 * the non-contiguous pair type MPI_DOUBLE_INT (MAXLOC / MINLOC), with values
 * chosen so that every result is exact; the expected result is computed
 * locally over all ranks.
 */
#include "common.h"

#define SENTINEL (-7777777)

typedef struct {
    MPI_Comm comm;
    int rank, size;
    const char* name;
} Env;

static void check_block(const Env* e, const int* got, int from, long count, const char* what) {
    for (long i = 0; i < count; ++i)
        if (got[i] != value(from, i))
            test_fail(__FILE__, __LINE__, "%s on %s: element %ld from rank %d is %d, expected %d",
                      what, e->name, i, from, got[i], value(from, i));
}

static void check_sentinel(const Env* e, const int* got, long count, const char* what) {
    for (long i = 0; i < count; ++i)
        if (got[i] != SENTINEL)
            test_fail(__FILE__, __LINE__, "%s on %s: element %ld was overwritten", what, e->name,
                      i);
}

static const long kCounts[] = {0, 1, 5, 900, 1100, 5000, 20000, 70000, 300000};
#define NCOUNTS (sizeof(kCounts) / sizeof(kCounts[0]))

/* Per-rank blocks are smaller for the all-to-all families (n blocks each). */
static int block_fits(const Env* e, long count) {
    return count * e->size <= (1L << 20);
}

static void test_bcast(const Env* e) {
    for (size_t k = 0; k < NCOUNTS; ++k) {
        const long count = kCounts[k] * 3;
        const int roots[] = {0, e->size / 2, e->size - 1};
        for (int ri = 0; ri < 3; ++ri) {
            int root = roots[ri];
            int* buf = ints((size_t)count + 1, SENTINEL);
            if (e->rank == root)
                for (long i = 0; i < count; ++i) buf[i] = value(root, i);
            MPI_OK(MPI_Bcast(buf, (int)count, MPI_INT, root, e->comm));
            check_block(e, buf, root, count, "Bcast");
            check_sentinel(e, buf + count, 1, "Bcast guard");
            free(buf);
        }
    }
}

static void test_gather_scatter(const Env* e) {
    const int n = e->size, me = e->rank;
    for (size_t k = 0; k < NCOUNTS; ++k) {
        const long count = kCounts[k];
        if (!block_fits(e, count)) continue;
        const int roots[] = {0, n / 2, n - 1};
        for (int ri = 0; ri < 3; ++ri) {
            const int root = roots[ri];
            int* mine = ints((size_t)count, 0);
            for (long i = 0; i < count; ++i) mine[i] = value(me, i);
            int* all = ints((size_t)(count * n) + 1, SENTINEL);
            MPI_OK(MPI_Gather(mine, (int)count, MPI_INT, me == root ? all : NULL, (int)count,
                              MPI_INT, root, e->comm));
            if (me == root) {
                for (int r = 0; r < n; ++r) check_block(e, all + r * count, r, count, "Gather");
                check_sentinel(e, all + count * n, 1, "Gather guard");
            }
            /* Scatter the gathered blocks back. */
            int* back = ints((size_t)count + 1, SENTINEL);
            MPI_OK(MPI_Scatter(all, (int)count, MPI_INT, back, (int)count, MPI_INT, root, e->comm));
            if (me != root) check_sentinel(e, all, count * n + 1, "Scatter: non-root send buffer");
            check_block(e, back, me, count, "Scatter");
            check_sentinel(e, back + count, 1, "Scatter guard");

            /* Gatherv / Scatterv: rank r has count + r elements, placed in
             * reverse rank order with a gap of 2 between blocks. */
            int* counts = ints((size_t)n, 0);
            int* displs = ints((size_t)n, 0);
            long total = 0;
            for (int r = n - 1; r >= 0; --r) {
                counts[r] = (int)count + r;
                displs[r] = (int)total;
                total += counts[r] + 2;
            }
            int* vmine = ints((size_t)count + me, 0);
            for (long i = 0; i < count + me; ++i) vmine[i] = value(me, i);
            int* vall = ints((size_t)total, SENTINEL);
            MPI_OK(MPI_Gatherv(vmine, (int)count + me, MPI_INT, vall, counts, displs, MPI_INT, root,
                               e->comm));
            if (me == root)
                for (int r = 0; r < n; ++r) {
                    check_block(e, vall + displs[r], r, counts[r], "Gatherv");
                    check_sentinel(e, vall + displs[r] + counts[r], 2, "Gatherv gap");
                }
            int* vback = ints((size_t)count + me + 1, SENTINEL);
            MPI_OK(MPI_Scatterv(vall, counts, displs, MPI_INT, vback, (int)count + me, MPI_INT,
                                root, e->comm));
            check_block(e, vback, me, count + me, "Scatterv");
            check_sentinel(e, vback + count + me, 1, "Scatterv guard");
            free(vmine), free(vall), free(vback), free(counts), free(displs);
            free(mine), free(all), free(back);
        }
    }
}

static void test_allgather_alltoall(const Env* e) {
    const int n = e->size, me = e->rank;
    for (size_t k = 0; k < NCOUNTS; ++k) {
        const long count = kCounts[k];
        if (!block_fits(e, count)) continue;
        int* mine = ints((size_t)count, 0);
        for (long i = 0; i < count; ++i) mine[i] = value(me, i);
        int* all = ints((size_t)(count * n) + 1, SENTINEL);
        MPI_OK(MPI_Allgather(mine, (int)count, MPI_INT, all, (int)count, MPI_INT, e->comm));
        for (int r = 0; r < n; ++r) check_block(e, all + r * count, r, count, "Allgather");
        check_sentinel(e, all + count * n, 1, "Allgather guard");

        /* Allgatherv: rank r has (r % 3) * count elements (some ranks none),
         * blocks in reverse order with gaps of 1. */
        int* counts = ints((size_t)n, 0);
        int* displs = ints((size_t)n, 0);
        long total = 0;
        for (int r = n - 1; r >= 0; --r) {
            counts[r] = (int)((r % 3) * count);
            displs[r] = (int)total;
            total += counts[r] + 1;
        }
        int* vmine = ints((size_t)counts[me] + 1, 0);
        for (long i = 0; i < counts[me]; ++i) vmine[i] = value(me, i);
        int* vall = ints((size_t)total, SENTINEL);
        MPI_OK(MPI_Allgatherv(vmine, counts[me], MPI_INT, vall, counts, displs, MPI_INT, e->comm));
        for (int r = 0; r < n; ++r) {
            check_block(e, vall + displs[r], r, counts[r], "Allgatherv");
            check_sentinel(e, vall + displs[r] + counts[r], 1, "Allgatherv gap");
        }

        /* Alltoall: block j of rank r is value(r * n + j, i). */
        int* out = ints((size_t)(count * n), 0);
        for (int j = 0; j < n; ++j)
            for (long i = 0; i < count; ++i) out[j * count + i] = value(me * n + j, i);
        int* in = ints((size_t)(count * n) + 1, SENTINEL);
        MPI_OK(MPI_Alltoall(out, (int)count, MPI_INT, in, (int)count, MPI_INT, e->comm));
        for (int r = 0; r < n; ++r) check_block(e, in + r * count, r * n + me, count, "Alltoall");
        check_sentinel(e, in + count * n, 1, "Alltoall guard");

        /* Alltoallv: rank r sends (r + j) % 3 * count elements to j. */
        int *sc = ints((size_t)n, 0), *sd = ints((size_t)n, 0);
        int *rc = ints((size_t)n, 0), *rd = ints((size_t)n, 0);
        long stot = 0, rtot = 0;
        for (int j = 0; j < n; ++j) {
            sc[j] = (int)(((me + j) % 3) * count);
            sd[j] = (int)stot;
            stot += sc[j];
        }
        for (int j = n - 1; j >= 0; --j) {
            rc[j] = (int)(((j + me) % 3) * count);
            rd[j] = (int)rtot;
            rtot += rc[j] + 1;
        }
        int* vout = ints((size_t)stot + 1, 0);
        for (int j = 0; j < n; ++j)
            for (long i = 0; i < sc[j]; ++i) vout[sd[j] + i] = value(me * n + j, i);
        int* vin = ints((size_t)rtot + 1, SENTINEL);
        MPI_OK(MPI_Alltoallv(vout, sc, sd, MPI_INT, vin, rc, rd, MPI_INT, e->comm));
        for (int j = 0; j < n; ++j) {
            check_block(e, vin + rd[j], j * n + me, rc[j], "Alltoallv");
            check_sentinel(e, vin + rd[j] + rc[j], 1, "Alltoallv gap");
        }

        /* Alltoallw with byte displacements and a different type per peer
         * (int for even peers, a contiguous pair of ints for odd ones). */
        MPI_Datatype pair;
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
        MPI_OK(MPI_Type_commit(&pair));
        int *wsc = ints((size_t)n, 0), *wrc = ints((size_t)n, 0);
        int *wsd = ints((size_t)n, 0), *wrd = ints((size_t)n, 0);
        MPI_Datatype* st = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
        MPI_Datatype* rt = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
        for (int j = 0; j < n; ++j) {
            /* 2*count ints each way; the receiver of an odd sender uses pairs. */
            st[j] = j % 2 ? pair : MPI_INT;
            wsc[j] = j % 2 ? (int)count : (int)(2 * count);
            wsd[j] = (int)(j * 2 * count * (long)sizeof(int));
            rt[j] = MPI_INT;
            wrc[j] = (int)(2 * count);
            wrd[j] = (int)((n - 1 - j) * 2 * count * (long)sizeof(int));
        }
        int* wout = ints((size_t)(2 * count * n), 0);
        for (int j = 0; j < n; ++j)
            for (long i = 0; i < 2 * count; ++i) wout[j * 2 * count + i] = value(me * n + j, i);
        int* win = ints((size_t)(2 * count * n) + 1, SENTINEL);
        MPI_OK(MPI_Alltoallw(wout, wsc, wsd, st, win, wrc, wrd, rt, e->comm));
        for (int j = 0; j < n; ++j)
            check_block(e, win + (n - 1 - j) * 2 * count, j * n + me, 2 * count, "Alltoallw");
        check_sentinel(e, win + 2 * count * n, 1, "Alltoallw guard");
        MPI_OK(MPI_Type_free(&pair));
        free(wsc), free(wrc), free(wsd), free(wrd), free(st), free(rt), free(wout), free(win);
        free(sc), free(sd), free(rc), free(rd), free(vout), free(vin);
        free(mine), free(all), free(counts), free(displs), free(vmine), free(vall), free(out),
            free(in);
    }
}

/* ---- Reductions ---------------------------------------------------------- */

typedef struct {
    double v;
    int i;
} DoubleInt;

typedef struct {
    const char* name;
    MPI_Datatype type;
    MPI_Op op;
    size_t size;                                /* bytes of one element in memory */
    void (*fill)(void* buf, int r, long count); /* rank r's contribution */
    void (*combine)(const void* in, void* inout, long count);
    int (*same)(const void* a, const void* b, long i);
} Case;

static void fill_ll(void* b, int r, long n) {
    for (long i = 0; i < n; ++i) ((long long*)b)[i] = (long long)(r + 1) * (i % 1000 + 1) - 500;
}
static void sum_ll(const void* a, void* b, long n) {
    for (long i = 0; i < n; ++i) ((long long*)b)[i] += ((const long long*)a)[i];
}
static int same_ll(const void* a, const void* b, long i) {
    return ((const long long*)a)[i] == ((const long long*)b)[i];
}
static void fill_dmax(void* b, int r, long n) {
    for (long i = 0; i < n; ++i) ((double*)b)[i] = (double)((r * 7 + i * 13) % 101) - 50.5;
}
static void max_d(const void* a, void* b, long n) {
    for (long i = 0; i < n; ++i)
        if (((const double*)a)[i] > ((double*)b)[i]) ((double*)b)[i] = ((const double*)a)[i];
}
static void min_d(const void* a, void* b, long n) {
    for (long i = 0; i < n; ++i)
        if (((const double*)a)[i] < ((double*)b)[i]) ((double*)b)[i] = ((const double*)a)[i];
}
static int same_d(const void* a, const void* b, long i) {
    return ((const double*)a)[i] == ((const double*)b)[i];
}
static void fill_dprod(void* b, int r, long n) {
    for (long i = 0; i < n; ++i)
        ((double*)b)[i] = (r + i) % 5 == 0 ? 2.0 : (r + i) % 5 == 1 ? 0.5 : 1.0;
}
static void prod_d(const void* a, void* b, long n) {
    for (long i = 0; i < n; ++i) ((double*)b)[i] *= ((const double*)a)[i];
}
static void fill_u(void* b, int r, long n) {
    for (long i = 0; i < n; ++i)
        ((unsigned*)b)[i] = (unsigned)(r * 2654435761u) ^ (unsigned)i * 40503u;
}
static void bxor_u(const void* a, void* b, long n) {
    for (long i = 0; i < n; ++i) ((unsigned*)b)[i] ^= ((const unsigned*)a)[i];
}
static int same_u(const void* a, const void* b, long i) {
    return ((const unsigned*)a)[i] == ((const unsigned*)b)[i];
}
static void fill_land(void* b, int r, long n) {
    for (long i = 0; i < n; ++i) ((int*)b)[i] = (r + i) % 17 != 0;
}
static void land_i(const void* a, void* b, long n) {
    for (long i = 0; i < n; ++i) ((int*)b)[i] = ((const int*)a)[i] && ((int*)b)[i];
}
static int same_i(const void* a, const void* b, long i) {
    return ((const int*)a)[i] == ((const int*)b)[i];
}
static void fill_loc(void* b, int r, long n) {
    for (long i = 0; i < n; ++i) {
        ((DoubleInt*)b)[i].v = (double)((r * 5 + i * 3) % 7);
        ((DoubleInt*)b)[i].i = r;
    }
}
static void maxloc(const void* a, void* b, long n) {
    for (long i = 0; i < n; ++i) {
        const DoubleInt* x = (const DoubleInt*)a + i;
        DoubleInt* y = (DoubleInt*)b + i;
        if (x->v > y->v || (x->v == y->v && x->i < y->i)) *y = *x;
    }
}
static void minloc(const void* a, void* b, long n) {
    for (long i = 0; i < n; ++i) {
        const DoubleInt* x = (const DoubleInt*)a + i;
        DoubleInt* y = (DoubleInt*)b + i;
        if (x->v < y->v || (x->v == y->v && x->i < y->i)) *y = *x;
    }
}
static int same_loc(const void* a, const void* b, long i) {
    return ((const DoubleInt*)a)[i].v == ((const DoubleInt*)b)[i].v &&
           ((const DoubleInt*)a)[i].i == ((const DoubleInt*)b)[i].i;
}

static Case cases(int k) {
    switch (k) {
        case 0:
            return (Case){"SUM long long", MPI_LONG_LONG, MPI_SUM, 8, fill_ll, sum_ll, same_ll};
        case 1:
            return (Case){"MAX double", MPI_DOUBLE, MPI_MAX, 8, fill_dmax, max_d, same_d};
        case 2:
            return (Case){"MIN double", MPI_DOUBLE, MPI_MIN, 8, fill_dmax, min_d, same_d};
        case 3:
            return (Case){"PROD double", MPI_DOUBLE, MPI_PROD, 8, fill_dprod, prod_d, same_d};
        case 4:
            return (Case){"BXOR unsigned", MPI_UNSIGNED, MPI_BXOR, 4, fill_u, bxor_u, same_u};
        case 5:
            return (Case){"LAND int", MPI_INT, MPI_LAND, 4, fill_land, land_i, same_i};
        case 6:
            return (Case){"MAXLOC double_int",
                          MPI_DOUBLE_INT,
                          MPI_MAXLOC,
                          sizeof(DoubleInt),
                          fill_loc,
                          maxloc,
                          same_loc};
        default:
            return (Case){"MINLOC double_int",
                          MPI_DOUBLE_INT,
                          MPI_MINLOC,
                          sizeof(DoubleInt),
                          fill_loc,
                          minloc,
                          same_loc};
    }
}
#define NCASES 8

/* Reduction of ranks [lo, hi) in rank order into out (hi > lo). */
static void expected(const Case* c, int lo, int hi, long count, void* out) {
    void* tmp = xmalloc(c->size * (size_t)count);
    c->fill(out, hi - 1, count);
    for (int r = hi - 2; r >= lo; --r) {
        c->fill(tmp, r, count);
        c->combine(tmp, out, count); /* out = r op out */
    }
    free(tmp);
}

static void check_same(const Env* e, const Case* c, const void* got, const void* want, long count,
                       const char* what) {
    for (long i = 0; i < count; ++i)
        if (!c->same(got, want, i))
            test_fail(__FILE__, __LINE__, "%s %s on %s, count %ld: element %ld differs", what,
                      c->name, e->name, count, i);
}

static const long kRedCounts[] = {0, 1, 3, 1000, 40000, 90000};
#define NREDCOUNTS (sizeof(kRedCounts) / sizeof(kRedCounts[0]))

static void test_reductions(const Env* e) {
    const int n = e->size, me = e->rank;
    for (int k = 0; k < NCASES; ++k) {
        const Case c = cases(k);
        for (size_t ci = 0; ci < NREDCOUNTS; ++ci) {
            const long count = kRedCounts[ci] * (k == 0 ? 2 : 1);
            const size_t bytes = c.size * (size_t)count;
            char* in = (char*)xmalloc(bytes + c.size);
            char* out = (char*)xmalloc(bytes + c.size);
            char* want = (char*)xmalloc(bytes + c.size);
            c.fill(in, me, count);
            expected(&c, 0, n, count, want);
            const int roots[] = {0, n / 2, n - 1};
            for (int ri = 0; ri < 3; ++ri) {
                memset(out, 0x5a, bytes);
                MPI_OK(MPI_Reduce(in, out, (int)count, c.type, c.op, roots[ri], e->comm));
                if (me == roots[ri]) check_same(e, &c, out, want, count, "Reduce");
            }
            memset(out, 0x5a, bytes);
            MPI_OK(MPI_Allreduce(in, out, (int)count, c.type, c.op, e->comm));
            check_same(e, &c, out, want, count, "Allreduce");

            /* Scan and Exscan. */
            expected(&c, 0, me + 1, count, want);
            MPI_OK(MPI_Scan(in, out, (int)count, c.type, c.op, e->comm));
            check_same(e, &c, out, want, count, "Scan");
            if (me > 0) expected(&c, 0, me, count, want);
            memset(out, 0x5a, bytes);
            MPI_OK(MPI_Exscan(in, out, (int)count, c.type, c.op, e->comm));
            if (me > 0) check_same(e, &c, out, want, count, "Exscan");

            /* Reduce_scatter_block: count / n each (the rest is not reduced). */
            const long block = count / n;
            expected(&c, 0, n, count, want);
            memset(out, 0x5a, bytes);
            MPI_OK(MPI_Reduce_scatter_block(in, out, (int)block, c.type, c.op, e->comm));
            check_same(e, &c, out, want + c.size * (size_t)(block * me), block,
                       "Reduce_scatter_block");
            /* Reduce_scatter with uneven blocks (rank r gets r-proportional). */
            int* counts = ints((size_t)n, 0);
            long total = 0, before = 0;
            for (int r = 0; r < n; ++r) {
                counts[r] = (int)(count * (r % 4) / 6);
                if (total + counts[r] > count) counts[r] = (int)(count - total);
                if (r < me) before += counts[r];
                total += counts[r];
            }
            MPI_OK(MPI_Reduce_scatter(in, out, counts, c.type, c.op, e->comm));
            check_same(e, &c, out, want + c.size * (size_t)before, counts[me], "Reduce_scatter");
            free(counts), free(in), free(out), free(want);
        }
    }
}

static void test_barrier(const Env* e) {
    /* The last rank enters late; nobody may leave before it entered. */
    for (int round = 0; round < 3; ++round) {
        double entered = 0, left;
        if (e->rank == e->size - 1) {
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.002) {
            }
        }
        entered = MPI_Wtime();
        MPI_OK(MPI_Barrier(e->comm));
        left = MPI_Wtime();
        double last_enter, first_leave;
        MPI_OK(MPI_Allreduce(&entered, &last_enter, 1, MPI_DOUBLE, MPI_MAX, e->comm));
        MPI_OK(MPI_Allreduce(&left, &first_leave, 1, MPI_DOUBLE, MPI_MIN, e->comm));
        CHECK(first_leave >= last_enter, "a rank left the barrier before the last one entered");
    }
}

static void run_all(const Env* e) {
    test_barrier(e);
    test_bcast(e);
    test_gather_scatter(e);
    test_allgather_alltoall(e);
    test_reductions(e);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Env world = {MPI_COMM_WORLD, 0, 0, "MPI_COMM_WORLD"};
    MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world.size);
    run_all(&world);
    Env rev = {MPI_COMM_NULL, 0, 0, "reversed communicator"};
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, world.size - world.rank, &rev.comm));
    MPI_Comm_rank(rev.comm, &rev.rank);
    MPI_Comm_size(rev.comm, &rev.size);
    CHECK(rev.rank == world.size - 1 - world.rank, "split did not reverse the ranks");
    run_all(&rev);
    MPI_OK(MPI_Comm_free(&rev.comm));
    if (world.rank == 0) printf("coll_blocking: %d ranks OK\n", world.size);
    MPI_Finalize();
    return 0;
}
