/* Non-contiguous derived datatypes in every collective.
 *
 * "vec3" is MPI_Type_vector(3, 1, 2, MPI_INT): three ints with a hole after
 * each of the first two (element extent 20 bytes, 12 bytes of data). Data
 * movement sends and receives it, also against plain MPI_INT of the same
 * signature on the other side, so both packing and unpacking are exercised;
 * the holes of every receive buffer must keep their sentinel. Reductions use
 * vec3 with MPI_SUM (packed then combined by the predefined kernel) and
 * "dd": two doubles with an 8-byte hole between them, with MPI_MAX. Counts
 * cross the algorithm thresholds of collectives/tuning.hpp.
 */
#include "common.h"

#define SENTINEL (-3333333)
#define STRIDE 5 /* ints per vec3 element in memory */

/* count vec3 elements of rank r's data: data int t of element k is value(r, first+3k+t). */
static int* vec3_buf(long count, int r, long first) {
    int* p = (int*)xmalloc(sizeof(int) * (size_t)(count * STRIDE + 1));
    for (long i = 0; i < count * STRIDE + 1; ++i) p[i] = SENTINEL;
    if (r >= 0)
        for (long k = 0; k < count; ++k)
            for (int t = 0; t < 3; ++t) p[k * STRIDE + 2 * t] = value(r, first + 3 * k + t);
    return p;
}

static void check_vec3(const int* p, long count, int r, long first, const char* what) {
    for (long k = 0; k < count; ++k) {
        for (int t = 0; t < 3; ++t)
            if (p[k * STRIDE + 2 * t] != value(r, first + 3 * k + t))
                test_fail(__FILE__, __LINE__, "%s: element %ld.%d is %d, expected %d (rank %d)",
                          what, k, t, p[k * STRIDE + 2 * t], value(r, first + 3 * k + t), r);
        if (p[k * STRIDE + 1] != SENTINEL || p[k * STRIDE + 3] != SENTINEL)
            test_fail(__FILE__, __LINE__, "%s: a hole of element %ld was written", what, k);
    }
}

static int* int_buf(long n, int r, long first) {
    int* p = (int*)xmalloc(sizeof(int) * (size_t)(n + 1));
    for (long i = 0; i <= n; ++i) p[i] = r >= 0 && i < n ? value(r, first + i) : SENTINEL;
    return p;
}

static void check_ints(const int* p, long n, int r, long first, const char* what) {
    for (long i = 0; i < n; ++i)
        if (p[i] != value(r, first + i))
            test_fail(__FILE__, __LINE__, "%s: int %ld is %d, expected %d", what, i, p[i],
                      value(r, first + i));
}

static void data_movement(MPI_Datatype vec3, int me, int n, long c) {
    const int root = (int)((c + 1) % n);
    const size_t ext = STRIDE; /* ints per element */
    /* Bcast of vec3. */
    int* b = vec3_buf(c, me == root ? root : -1, 0);
    MPI_OK(MPI_Bcast(b, (int)c, vec3, root, MPI_COMM_WORLD));
    check_vec3(b, c, root, 0, "Bcast vec3");
    free(b);

    /* Gather: vec3 sent, MPI_INT received at the root; then vec3 received. */
    int* mine = vec3_buf(c, me, 0);
    int* all = int_buf(3 * c * n, -1, 0);
    MPI_OK(MPI_Gather(mine, (int)c, vec3, all, (int)(3 * c), MPI_INT, root, MPI_COMM_WORLD));
    if (me == root)
        for (int r = 0; r < n; ++r) check_ints(all + 3 * c * r, 3 * c, r, 0, "Gather to ints");
    int* allv = vec3_buf(c * n, -1, 0);
    MPI_OK(MPI_Gather(mine, (int)c, vec3, allv, (int)c, vec3, root, MPI_COMM_WORLD));
    if (me == root)
        for (int r = 0; r < n; ++r) check_vec3(allv + ext * c * r, c, r, 0, "Gather to vec3");

    /* Scatter ints from the root into vec3. */
    int* got = vec3_buf(c, -1, 0);
    MPI_OK(MPI_Scatter(all, (int)(3 * c), MPI_INT, got, (int)c, vec3, root, MPI_COMM_WORLD));
    check_vec3(got, c, me, 0, "Scatter into vec3");
    free(got);

    /* Gatherv / Scatterv with vec3 on both sides, rank r: c + r elements. */
    int *counts = (int*)xmalloc(sizeof(int) * (size_t)n),
        *displs = (int*)xmalloc(sizeof(int) * (size_t)n);
    long total = 0;
    for (int r = n - 1; r >= 0; --r)
        counts[r] = (int)c + r, displs[r] = (int)total, total += c + r + 1;
    int* vm = vec3_buf(c + me, me, 0);
    int* va = vec3_buf(total, -1, 0);
    MPI_OK(MPI_Gatherv(vm, (int)c + me, vec3, va, counts, displs, vec3, root, MPI_COMM_WORLD));
    if (me == root)
        for (int r = 0; r < n; ++r)
            check_vec3(va + ext * displs[r], counts[r], r, 0, "Gatherv vec3");
    int* vb = vec3_buf(c + me, -1, 0);
    MPI_OK(MPI_Scatterv(va, counts, displs, vec3, vb, (int)c + me, vec3, root, MPI_COMM_WORLD));
    check_vec3(vb, c + me, me, 0, "Scatterv vec3");
    free(vm), free(va), free(vb);

    /* Allgather: ints sent, vec3 received; Allgatherv vec3 both sides. */
    int* mi = int_buf(3 * c, me, 0);
    int* ag = vec3_buf(c * n, -1, 0);
    MPI_OK(MPI_Allgather(mi, (int)(3 * c), MPI_INT, ag, (int)c, vec3, MPI_COMM_WORLD));
    for (int r = 0; r < n; ++r) check_vec3(ag + ext * c * r, c, r, 0, "Allgather into vec3");
    vm = vec3_buf(c + me, me, 0);
    va = vec3_buf(total, -1, 0);
    MPI_OK(MPI_Allgatherv(vm, (int)c + me, vec3, va, counts, displs, vec3, MPI_COMM_WORLD));
    for (int r = 0; r < n; ++r)
        check_vec3(va + ext * displs[r], counts[r], r, 0, "Allgatherv vec3");
    free(vm), free(va), free(mi), free(ag);

    /* Alltoall vec3 -> vec3: block j of rank r carries value(r*n+j). */
    int* out = vec3_buf(c * n, -1, 0);
    for (int j = 0; j < n; ++j) {
        int* blk = vec3_buf(c, me * n + j, 0);
        memcpy(out + ext * c * j, blk, sizeof(int) * ext * (size_t)c);
        free(blk);
    }
    int* in = vec3_buf(c * n, -1, 0);
    MPI_OK(MPI_Alltoall(out, (int)c, vec3, in, (int)c, vec3, MPI_COMM_WORLD));
    for (int r = 0; r < n; ++r) check_vec3(in + ext * c * r, c, r * n + me, 0, "Alltoall vec3");
    /* Alltoallv: same blocks, received in reverse order. */
    int *sc = (int*)xmalloc(sizeof(int) * (size_t)n), *sd = (int*)xmalloc(sizeof(int) * (size_t)n);
    int* rd = (int*)xmalloc(sizeof(int) * (size_t)n);
    for (int j = 0; j < n; ++j)
        sc[j] = (int)c, sd[j] = (int)(j * c), rd[j] = (int)((n - 1 - j) * c);
    free(in);
    in = vec3_buf(c * n, -1, 0);
    MPI_OK(MPI_Alltoallv(out, sc, sd, vec3, in, sc, rd, vec3, MPI_COMM_WORLD));
    for (int r = 0; r < n; ++r)
        check_vec3(in + ext * c * (n - 1 - r), c, r * n + me, 0, "Alltoallv vec3");
    /* Alltoallw: vec3 out, plain ints in (byte displacements). */
    MPI_Datatype* st = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype* rt = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
    int *wsd = (int*)xmalloc(sizeof(int) * (size_t)n),
        *wrc = (int*)xmalloc(sizeof(int) * (size_t)n);
    int* wrd = (int*)xmalloc(sizeof(int) * (size_t)n);
    for (int j = 0; j < n; ++j) {
        st[j] = vec3, rt[j] = MPI_INT;
        wsd[j] = (int)(j * c * ext * sizeof(int));
        wrc[j] = (int)(3 * c);
        wrd[j] = (int)(j * 3 * c * sizeof(int));
    }
    int* win = int_buf(3 * c * n, -1, 0);
    MPI_OK(MPI_Alltoallw(out, sc, wsd, st, win, wrc, wrd, rt, MPI_COMM_WORLD));
    for (int r = 0; r < n; ++r) check_ints(win + 3 * c * r, 3 * c, r * n + me, 0, "Alltoallw");
    free(st), free(rt), free(wsd), free(wrc), free(wrd), free(win);
    free(sc), free(sd), free(rd), free(out), free(in);
    free(counts), free(displs), free(mine), free(all), free(allv);
}

static long long contrib(int r, long i) {
    return (long long)((r + 1) * (i % 89 + 1) % 1000);
}

static void reductions(MPI_Datatype vec3, MPI_Datatype dd, int me, int n, long c) {
    /* vec3 of ints, MPI_SUM: int t of element k is contrib(r, 3k+t). */
    int* in = vec3_buf(c, -1, 0);
    for (long k = 0; k < c; ++k)
        for (int t = 0; t < 3; ++t) in[k * STRIDE + 2 * t] = (int)contrib(me, 3 * k + t);
    int* out = vec3_buf(c, -1, 0);
#define EXPECT_SUM(buf, k0, lo, hi, what)                                                      \
    for (long k = 0; k < (long)(buf##_count); ++k)                                             \
        for (int t = 0; t < 3; ++t) {                                                          \
            long long s = 0;                                                                   \
            for (int r = (lo); r < (hi); ++r) s += contrib(r, 3 * ((k0) + k) + t);             \
            if ((buf)[k * STRIDE + 2 * t] != s || (buf)[k * STRIDE + 1] != SENTINEL)           \
                test_fail(__FILE__, __LINE__, "%s: element %ld.%d is %d, expected %lld", what, \
                          (k0) + k, t, (buf)[k * STRIDE + 2 * t], s);                          \
        }
    long out_count = c;
    const int roots[] = {0, n - 1};
    for (int i = 0; i < 2; ++i) {
        MPI_OK(MPI_Reduce(in, out, (int)c, vec3, MPI_SUM, roots[i], MPI_COMM_WORLD));
        if (me == roots[i]) {
            EXPECT_SUM(out, 0, 0, n, "Reduce vec3")
        }
    }
    free(out);
    out = vec3_buf(c, -1, 0);
    MPI_OK(MPI_Allreduce(in, out, (int)c, vec3, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_SUM(out, 0, 0, n, "Allreduce vec3")
    MPI_OK(MPI_Scan(in, out, (int)c, vec3, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_SUM(out, 0, 0, me + 1, "Scan vec3")
    MPI_OK(MPI_Exscan(in, out, (int)c, vec3, MPI_SUM, MPI_COMM_WORLD));
    if (me > 0) {
        EXPECT_SUM(out, 0, 0, me, "Exscan vec3")
    }
    free(out);
    out = vec3_buf(c, -1, 0);
    out_count = c / n;
    MPI_OK(MPI_Reduce_scatter_block(in, out, (int)(c / n), vec3, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_SUM(out, (c / n) * me, 0, n, "Reduce_scatter_block vec3")
    int* counts = (int*)xmalloc(sizeof(int) * (size_t)n);
    long before = 0;
    for (int r = 0; r < n; ++r) {
        counts[r] = (int)(c / n + (r < c % n ? 1 : 0));
        if (r < me) before += counts[r];
    }
    out_count = counts[me];
    MPI_OK(MPI_Reduce_scatter(in, out, counts, vec3, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_SUM(out, before, 0, n, "Reduce_scatter vec3")
    free(counts), free(in), free(out);
#undef EXPECT_SUM

    /* dd: {double a; 8-byte hole; double b}, MPI_MAX. */
    double* din = (double*)xmalloc(sizeof(double) * (size_t)(3 * c + 1));
    double* dout = (double*)xmalloc(sizeof(double) * (size_t)(3 * c + 1));
    for (long k = 0; k < c; ++k) {
        din[3 * k] = (double)((me * 7 + k) % 13), din[3 * k + 2] = -(double)((me * 5 + k) % 11);
        din[3 * k + 1] = -1.0;
        dout[3 * k] = dout[3 * k + 1] = dout[3 * k + 2] = -1.0;
    }
    MPI_OK(MPI_Allreduce(din, dout, (int)c, dd, MPI_MAX, MPI_COMM_WORLD));
    for (long k = 0; k < c; ++k) {
        double ma = -1e300, mb = -1e300;
        for (int r = 0; r < n; ++r) {
            double a = (double)((r * 7 + k) % 13), bb = -(double)((r * 5 + k) % 11);
            if (a > ma) ma = a;
            if (bb > mb) mb = bb;
        }
        CHECK(dout[3 * k] == ma && dout[3 * k + 2] == mb, "Allreduce dd MAX, element %ld", k);
        CHECK(dout[3 * k + 1] == -1.0, "Allreduce dd wrote the hole of element %ld", k);
    }
    free(din), free(dout);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Datatype vec3, dd;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec3));
    MPI_OK(MPI_Type_commit(&vec3));
    MPI_Aint extent, lb;
    MPI_OK(MPI_Type_get_extent(vec3, &lb, &extent));
    CHECK(extent == STRIDE * (MPI_Aint)sizeof(int), "vec3 extent %ld", (long)extent);
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 2 * sizeof(double)};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_DOUBLE};
    MPI_OK(MPI_Type_create_struct(2, bl, disp, types, &dd));
    MPI_OK(MPI_Type_commit(&dd));

    const long moves[] = {0, 1, 5, 400, 6000, 30000};
    for (size_t k = 0; k < sizeof(moves) / sizeof(moves[0]); ++k)
        if (moves[k] * n <= 100000) data_movement(vec3, me, n, moves[k]);
    const long reds[] = {0, 1, 7, 500, 23000, 46000};
    for (size_t k = 0; k < sizeof(reds) / sizeof(reds[0]); ++k)
        reductions(vec3, dd, me, n, reds[k]);
    MPI_OK(MPI_Type_free(&vec3));
    MPI_OK(MPI_Type_free(&dd));
    if (me == 0) printf("coll_noncontig: %d ranks OK\n", n);
    MPI_Finalize();
    return 0;
}
