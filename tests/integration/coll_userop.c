/* User-defined operations in every reduction.
 *
 * The non-commutative operation is the product of 2x2 integer matrices modulo
 * a prime: the result must equal the rank-ordered product M0 * M1 * ... exactly
 * (a reordered or reassociated-but-swapped product differs). Matrices are
 * stored two ways: packed (4 consecutive ints, a contiguous type) and with
 * holes (the 4 ints at every other int of a 32-byte element), where MPI
 * requires the user function to see the datatype's layout: the function reads
 * the holey layout and checks the extent of the datatype it is given, and the
 * holes of every receive buffer must stay untouched. A commutative user
 * operation (element-wise sum modulo the prime) covers the ring algorithms at
 * large counts. Also: MPI_IN_PLACE, Reduce_local, Op_commutative, and
 * MPI_Op_free while a nonblocking reduction using the operation is pending.
 */
#include "common.h"

#define P 1000003LL
#define HOLE (-99)

static long long entry(int r, long i, int k) {
    switch (k) {
        case 0:
            return 1 + (r + i) % 3;
        case 1:
            return (r * 7 + i) % 5;
        case 2:
            return (r * 3 + i * 11) % 4;
        default:
            return 1 + (r * i) % 2;
    }
}

/* c = a * b (2x2, mod P), matrices as 4 long longs. */
static void mat_mul(const long long* a, const long long* b, long long* c) {
    long long t[4] = {(a[0] * b[0] + a[1] * b[2]) % P, (a[0] * b[1] + a[1] * b[3]) % P,
                      (a[2] * b[0] + a[3] * b[2]) % P, (a[2] * b[1] + a[3] * b[3]) % P};
    memcpy(c, t, sizeof(t));
}

/* Layouts: stride between elements and between entries, in ints. */
enum { PACKED_STRIDE = 4, PACKED_STEP = 1, HOLEY_STRIDE = 8, HOLEY_STEP = 2 };

static void load(const int* m, int step, long long* out) {
    for (int k = 0; k < 4; ++k) out[k] = m[k * step];
}
static void save(const long long* v, int step, int* m) {
    for (int k = 0; k < 4; ++k) m[k * step] = (int)v[k];
}

static void check_type(MPI_Datatype* dt, MPI_Aint want_extent) {
    MPI_Aint lb, extent;
    MPI_Type_get_extent(*dt, &lb, &extent);
    if (extent != want_extent) {
        fprintf(stderr, "FAIL: user function got a datatype of extent %ld, expected %ld\n",
                (long)extent, (long)want_extent);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void matmul_fn(void* in, void* inout, int* len, MPI_Datatype* dt, int stride, int step) {
    check_type(dt, stride * (MPI_Aint)sizeof(int));
    for (int i = 0; i < *len; ++i) {
        long long a[4], b[4], c[4];
        load((int*)in + i * stride, step, a);
        load((int*)inout + i * stride, step, b);
        mat_mul(a, b, c); /* inout = in * inout: in holds the lower ranks */
        save(c, step, (int*)inout + i * stride);
    }
}
static void matmul_packed(void* in, void* inout, int* len, MPI_Datatype* dt) {
    matmul_fn(in, inout, len, dt, PACKED_STRIDE, PACKED_STEP);
}
static void matmul_holey(void* in, void* inout, int* len, MPI_Datatype* dt) {
    matmul_fn(in, inout, len, dt, HOLEY_STRIDE, HOLEY_STEP);
}
static void summod_holey(void* in, void* inout, int* len, MPI_Datatype* dt) {
    check_type(dt, HOLEY_STRIDE * (MPI_Aint)sizeof(int));
    for (int i = 0; i < *len; ++i)
        for (int k = 0; k < 4; ++k) {
            int* b = (int*)inout + i * HOLEY_STRIDE + k * HOLEY_STEP;
            *b = (int)((*b + (long long)((int*)in)[i * HOLEY_STRIDE + k * HOLEY_STEP]) % P);
        }
}

typedef struct {
    int rank, size;
    MPI_Datatype type;
    int stride, step;
    int commutative;
    MPI_Op op;
    const char* name;
} Ctx;

/* Rank r's elements, in the context's layout; holes get HOLE. */
static int* contribution(const Ctx* c, int r, long count) {
    int* m = (int*)xmalloc(sizeof(int) * (size_t)(count * c->stride + 1));
    for (long i = 0; i < count * c->stride + 1; ++i) m[i] = HOLE;
    for (long i = 0; i < count; ++i)
        for (int k = 0; k < 4; ++k) m[i * c->stride + k * c->step] = (int)entry(r, i, k);
    return m;
}

/* Element i of the reduction of ranks [lo, hi) in rank order. */
static void expected(const Ctx* c, int lo, int hi, long i, long long* out) {
    for (int k = 0; k < 4; ++k) out[k] = entry(lo, i, k);
    for (int r = lo + 1; r < hi; ++r) {
        long long b[4];
        for (int k = 0; k < 4; ++k) b[k] = entry(r, i, k);
        if (c->commutative)
            for (int k = 0; k < 4; ++k) out[k] = (out[k] + b[k]) % P;
        else
            mat_mul(out, b, out);
    }
}

/* got holds elements [first, first+count) of the reduction of [lo, hi). */
static void check_result(const Ctx* c, const int* got, long first, long count, int lo, int hi,
                         const char* what) {
    for (long i = 0; i < count; ++i) {
        long long want[4];
        expected(c, lo, hi, first + i, want);
        for (int k = 0; k < 4; ++k)
            if (got[i * c->stride + k * c->step] != want[k])
                test_fail(__FILE__, __LINE__, "%s (%s): element %ld entry %d is %d, expected %lld",
                          what, c->name, first + i, k, got[i * c->stride + k * c->step], want[k]);
        if (c->step == HOLEY_STEP)
            for (int k = 0; k < 4; ++k)
                if (got[i * c->stride + k * 2 + 1] != HOLE)
                    test_fail(__FILE__, __LINE__, "%s (%s): a hole of element %ld was written",
                              what, c->name, first + i);
    }
}

static int* blank(const Ctx* c, long count) {
    int* m = (int*)xmalloc(sizeof(int) * (size_t)(count * c->stride + 1));
    for (long i = 0; i < count * c->stride + 1; ++i) m[i] = HOLE;
    return m;
}

static void run(const Ctx* c, long count) {
    const int n = c->size, me = c->rank;
    int* in = contribution(c, me, count);
    int* out = blank(c, count);
    const int roots[] = {0, n / 2, n - 1};
    for (int ri = 0; ri < 3; ++ri) {
        MPI_OK(MPI_Reduce(in, out, (int)count, c->type, c->op, roots[ri], MPI_COMM_WORLD));
        if (me == roots[ri]) check_result(c, out, 0, count, 0, n, "Reduce");
        /* In place at the root. */
        int* io = contribution(c, me, count);
        MPI_OK(MPI_Reduce(me == roots[ri] ? MPI_IN_PLACE : io, io, (int)count, c->type, c->op,
                          roots[ri], MPI_COMM_WORLD));
        if (me == roots[ri]) check_result(c, io, 0, count, 0, n, "Reduce in place");
        free(io);
    }
    free(out);
    out = blank(c, count);
    MPI_OK(MPI_Allreduce(in, out, (int)count, c->type, c->op, MPI_COMM_WORLD));
    check_result(c, out, 0, count, 0, n, "Allreduce");
    int* io = contribution(c, me, count);
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, io, (int)count, c->type, c->op, MPI_COMM_WORLD));
    check_result(c, io, 0, count, 0, n, "Allreduce in place");
    free(io);

    free(out);
    out = blank(c, count);
    MPI_OK(MPI_Scan(in, out, (int)count, c->type, c->op, MPI_COMM_WORLD));
    check_result(c, out, 0, count, 0, me + 1, "Scan");
    io = contribution(c, me, count);
    MPI_OK(MPI_Scan(MPI_IN_PLACE, io, (int)count, c->type, c->op, MPI_COMM_WORLD));
    check_result(c, io, 0, count, 0, me + 1, "Scan in place");
    free(io);
    free(out);
    out = blank(c, count);
    MPI_OK(MPI_Exscan(in, out, (int)count, c->type, c->op, MPI_COMM_WORLD));
    if (me > 0) check_result(c, out, 0, count, 0, me, "Exscan");
    io = contribution(c, me, count);
    MPI_OK(MPI_Exscan(MPI_IN_PLACE, io, (int)count, c->type, c->op, MPI_COMM_WORLD));
    if (me > 0) check_result(c, io, 0, count, 0, me, "Exscan in place");
    free(io);

    /* Reduce_scatter_block and Reduce_scatter over count elements. */
    const long block = count / n;
    free(out);
    out = blank(c, count);
    MPI_OK(MPI_Reduce_scatter_block(in, out, (int)block, c->type, c->op, MPI_COMM_WORLD));
    check_result(c, out, block * me, block, 0, n, "Reduce_scatter_block");
    io = contribution(c, me, count);
    MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, io, (int)block, c->type, c->op, MPI_COMM_WORLD));
    check_result(c, io, block * me, block, 0, n, "Reduce_scatter_block in place");
    free(io);
    int* counts = (int*)xmalloc(sizeof(int) * (size_t)n);
    long before = 0, total = 0;
    for (int r = 0; r < n; ++r) {
        counts[r] = (int)(r % 2 ? 0 : 2 * block);
        if (total + counts[r] > count) counts[r] = 0;
        if (r < me) before += counts[r];
        total += counts[r];
    }
    free(out);
    out = blank(c, count);
    MPI_OK(MPI_Reduce_scatter(in, out, counts, c->type, c->op, MPI_COMM_WORLD));
    check_result(c, out, before, counts[me], 0, n, "Reduce_scatter");
    free(counts);

    /* Reduce_local: out = in op out. */
    int* a = contribution(c, me, count);
    int* b = contribution(c, (me + 1) % n, count);
    MPI_OK(MPI_Reduce_local(a, b, (int)count, c->type, c->op));
    for (long i = 0; i < count; ++i) {
        long long x[4], y[4];
        for (int k = 0; k < 4; ++k) x[k] = entry(me, i, k), y[k] = entry((me + 1) % n, i, k);
        if (c->commutative)
            for (int k = 0; k < 4; ++k) x[k] = (x[k] + y[k]) % P;
        else
            mat_mul(x, y, x);
        for (int k = 0; k < 4; ++k)
            CHECK(b[i * c->stride + k * c->step] == x[k], "Reduce_local (%s) element %ld", c->name,
                  i);
    }
    free(a), free(b), free(in), free(out);
}

/* MPI_Op_free while an Iallreduce with the operation is pending. */
static void op_free_pending(const Ctx* base, long count) {
    Ctx c = *base;
    MPI_OK(MPI_Op_create(matmul_holey, 0, &c.op));
    int* in = contribution(&c, c.rank, count);
    int* out = blank(&c, count);
    MPI_Request req;
    MPI_OK(MPI_Iallreduce(in, out, (int)count, c.type, c.op, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Op_free(&c.op));
    CHECK(c.op == MPI_OP_NULL, "MPI_Op_free did not set the handle to MPI_OP_NULL");
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_result(&c, out, 0, count, 0, c.size, "Iallreduce after Op_free");
    free(in), free(out);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Datatype packed, vec, holey;
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &packed));
    MPI_OK(MPI_Type_commit(&packed));
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_create_resized(vec, 0, HOLEY_STRIDE * sizeof(int), &holey));
    MPI_OK(MPI_Type_commit(&holey));
    MPI_OK(MPI_Type_free(&vec));

    MPI_Op matmul_p, matmul_h, summod_h;
    MPI_OK(MPI_Op_create(matmul_packed, 0, &matmul_p));
    MPI_OK(MPI_Op_create(matmul_holey, 0, &matmul_h));
    MPI_OK(MPI_Op_create(summod_holey, 1, &summod_h));
    int commute = -1;
    MPI_OK(MPI_Op_commutative(matmul_h, &commute));
    CHECK(commute == 0, "Op_commutative of a non-commutative op says %d", commute);
    MPI_OK(MPI_Op_commutative(summod_h, &commute));
    CHECK(commute == 1, "Op_commutative of a commutative op says %d", commute);
    MPI_OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1, "Op_commutative(MPI_SUM) says %d", commute);

    const Ctx ctxs[] = {
        {rank, size, packed, PACKED_STRIDE, PACKED_STEP, 0, matmul_p, "matrix product, packed"},
        {rank, size, holey, HOLEY_STRIDE, HOLEY_STEP, 0, matmul_h, "matrix product, holes"},
        {rank, size, holey, HOLEY_STRIDE, HOLEY_STEP, 1, summod_h, "commutative sum, holes"},
    };
    /* 20000 and 40000 elements of 16 data bytes cross the ring thresholds. */
    const long counts[] = {0, 1, 5, 33, 20000, 40000};
    for (int k = 0; k < 3; ++k)
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); ++i) run(&ctxs[k], counts[i]);
    op_free_pending(&ctxs[1], 7);
    op_free_pending(&ctxs[1], 20000);

    MPI_OK(MPI_Op_free(&matmul_p));
    MPI_OK(MPI_Op_free(&matmul_h));
    MPI_OK(MPI_Op_free(&summod_h));
    MPI_OK(MPI_Type_free(&packed));
    MPI_OK(MPI_Type_free(&holey));
    if (rank == 0) printf("coll_userop: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
