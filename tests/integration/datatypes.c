/* Derived datatypes end to end: halo exchanges with vector and subarray types,
 * indexed and struct messages, a darray scatter/gather, MPI_Pack/Unpack round
 * trips, external32 byte order, envelope/contents decoding, Get_elements on
 * partial messages, and error classes for bad arguments. Ranks pair up as
 * rank ^ 1; a rank without a partner (odd sizes) exchanges with itself. */
#include <stddef.h>

#include "common.h"

/* Per-rank context. No globals: the ranks of a node share one process, and
 * (until rank images exist) its global variables. */
struct ctx {
    int rank, size, partner;
};

#define NX 6                             /* interior columns */
#define NY 5                             /* interior rows */
#define IDX(i, j) ((j) * (NX + 2) + (i)) /* column i, row j of the ghosted grid */

static double cell(int r, int i, int j) {
    return r * 1000.0 + j * 10.0 + i;
}

/* Ring halo exchange of the left/right columns with a vector type, sent with
 * Isend after which the type is freed before the wait (refcounting). */
static void test_halo(const struct ctx* c) {
    const int rank = c->rank, size = c->size;
    double g[(NX + 2) * (NY + 2)];
    for (int k = 0; k < (NX + 2) * (NY + 2); ++k) g[k] = -1.0;
    for (int j = 1; j <= NY; ++j)
        for (int i = 1; i <= NX; ++i) g[IDX(i, j)] = cell(rank, i, j);
    MPI_Datatype column;
    MPI_OK(MPI_Type_vector(NY, 1, NX + 2, MPI_DOUBLE, &column));
    MPI_OK(MPI_Type_commit(&column));
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Request req[4];
    MPI_OK(MPI_Irecv(&g[IDX(0, 1)], 1, column, left, 1, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Irecv(&g[IDX(NX + 1, 1)], 1, column, right, 2, MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Isend(&g[IDX(NX, 1)], 1, column, right, 1, MPI_COMM_WORLD, &req[2]));
    MPI_OK(MPI_Isend(&g[IDX(1, 1)], 1, column, left, 2, MPI_COMM_WORLD, &req[3]));
    MPI_OK(MPI_Type_free(&column));
    CHECK(column == MPI_DATATYPE_NULL, "Type_free must reset the handle");
    MPI_Status sts[4];
    MPI_OK(MPI_Waitall(4, req, sts));
    for (int j = 1; j <= NY; ++j) {
        CHECK(g[IDX(0, j)] == cell(left, NX, j), "left ghost row %d: %g", j, g[IDX(0, j)]);
        CHECK(g[IDX(NX + 1, j)] == cell(right, 1, j), "right ghost row %d: %g", j,
              g[IDX(NX + 1, j)]);
    }
    CHECK(g[IDX(0, 0)] == -1.0 && g[IDX(NX + 1, NY + 1)] == -1.0, "corners must stay untouched");
}

/* A 3-D block sent as a subarray and received into another position. */
static void test_subarray(const struct ctx* c) {
    const int rank = c->rank, partner = c->partner;
    enum { A = 4, B = 5, C = 6 };
    int src[A][B][C], dst[A][B][C];
    for (int i = 0; i < A; ++i)
        for (int j = 0; j < B; ++j)
            for (int k = 0; k < C; ++k)
                src[i][j][k] = rank * 10000 + i * 100 + j * 10 + k, dst[i][j][k] = -1;
    const int sizes[3] = {A, B, C}, sub[3] = {2, 3, 2}, s0[3] = {1, 1, 3}, s1[3] = {2, 0, 0};
    MPI_Datatype ts, tr;
    MPI_OK(MPI_Type_create_subarray(3, sizes, sub, s0, MPI_ORDER_C, MPI_INT, &ts));
    MPI_OK(MPI_Type_create_subarray(3, sizes, sub, s1, MPI_ORDER_C, MPI_INT, &tr));
    MPI_OK(MPI_Type_commit(&ts));
    MPI_OK(MPI_Type_commit(&tr));
    MPI_OK(MPI_Sendrecv(src, 1, ts, partner, 3, dst, 1, tr, partner, 3, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    for (int i = 0; i < A; ++i)
        for (int j = 0; j < B; ++j)
            for (int k = 0; k < C; ++k) {
                int in = i >= 2 && i < 4 && j < 3 && k < 2;
                int want = in ? partner * 10000 + (i - 1) * 100 + (j + 1) * 10 + (k + 3) : -1;
                CHECK(dst[i][j][k] == want, "dst[%d][%d][%d] = %d, want %d", i, j, k, dst[i][j][k],
                      want);
            }
    MPI_Aint lb, extent;
    MPI_OK(MPI_Type_get_extent(ts, &lb, &extent));
    CHECK(lb == 0 && extent == (MPI_Aint)sizeof(src), "subarray extent %ld", (long)extent);
    MPI_OK(MPI_Type_free(&ts));
    MPI_OK(MPI_Type_free(&tr));
}

/* Irregular blocks sent with an indexed type, received contiguous. */
static void test_indexed(const struct ctx* c) {
    const int rank = c->rank, partner = c->partner;
    int data[80], got[40];
    for (int k = 0; k < 80; ++k) data[k] = rank * 100 + k;
    const int bl[4] = {3, 1, 4, 2}, disp[4] = {30, 2, 11, 5};
    MPI_Datatype t;
    MPI_OK(MPI_Type_indexed(4, bl, disp, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(data, 2, t, partner, 4, got, 40, MPI_INT, partner, 4, MPI_COMM_WORLD, &st));
    int n;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 20, "received %d ints", n);
    /* The second element starts one extent (lb 2, ub 33: 31 ints) after the first. */
    const int order[10] = {30, 31, 32, 2, 11, 12, 13, 14, 5, 6};
    for (int e = 0; e < 2; ++e)
        for (int k = 0; k < 10; ++k)
            CHECK(got[e * 10 + k] == partner * 100 + order[k] + e * 31, "got[%d] = %d", e * 10 + k,
                  got[e * 10 + k]);
    MPI_OK(MPI_Type_free(&t));
}

struct particle {
    int id;
    double x[3];
    char tag;
};

static MPI_Datatype particle_type(void) {
    const int bl[3] = {1, 3, 1};
    const MPI_Aint d[3] = {offsetof(struct particle, id), offsetof(struct particle, x),
                           offsetof(struct particle, tag)};
    const MPI_Datatype ts[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_struct(3, bl, d, ts, &t));
    return t;
}

/* Struct messages, their extent (epsilon padding), and partial elements. */
static void test_struct(const struct ctx* c) {
    const int rank = c->rank, partner = c->partner;
    MPI_Datatype t = particle_type();
    MPI_OK(MPI_Type_commit(&t));
    MPI_Aint lb, extent, tlb, textent;
    int sz;
    MPI_OK(MPI_Type_get_extent(t, &lb, &extent));
    MPI_OK(MPI_Type_get_true_extent(t, &tlb, &textent));
    MPI_OK(MPI_Type_size(t, &sz));
    CHECK(lb == 0 && extent == (MPI_Aint)sizeof(struct particle), "particle extent %ld",
          (long)extent);
    CHECK(sz == 4 + 24 + 1 && textent == 33, "size %d true extent %ld", sz, (long)textent);
    struct particle p[5], q[5];
    memset(q, 0, sizeof(q));
    for (int k = 0; k < 5; ++k) {
        p[k].id = rank * 10 + k;
        for (int c = 0; c < 3; ++c) p[k].x[c] = rank + k * 0.5 + c;
        p[k].tag = (char)('a' + k);
    }
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(p, 5, t, partner, 5, q, 5, t, partner, 5, MPI_COMM_WORLD, &st));
    for (int k = 0; k < 5; ++k)
        CHECK(q[k].id == partner * 10 + k && q[k].x[2] == partner + k * 0.5 + 2 &&
                  q[k].tag == 'a' + k,
              "particle %d", k);
    /* 2 particles plus an int and 2 doubles: 2 * 5 + 3 basic elements. */
    unsigned char raw[2 * 29 + 20];
    memset(raw, 0, sizeof(raw));
    MPI_OK(MPI_Pack_size(2, t, MPI_COMM_WORLD, &sz));
    CHECK(sz == 58, "pack size %d", sz);
    MPI_OK(MPI_Sendrecv(raw, (int)sizeof(raw), MPI_BYTE, partner, 6, q, 5, t, partner, 6,
                        MPI_COMM_WORLD, &st));
    int count, elements;
    MPI_OK(MPI_Get_count(&st, t, &count));
    MPI_OK(MPI_Get_elements(&st, t, &elements));
    CHECK(count == MPI_UNDEFINED && elements == 13, "count %d elements %d", count, elements);
    MPI_Count ex;
    MPI_OK(MPI_Get_elements_x(&st, t, &ex));
    CHECK(ex == 13, "elements_x %lld", (long long)ex);
    /* Status_set_elements is the inverse. */
    MPI_OK(MPI_Status_set_elements(&st, t, 7));
    MPI_OK(MPI_Get_elements(&st, t, &elements));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(elements == 7 && count == 29 + 4 + 8, "set_elements: %d elements, %d bytes", elements,
          count);
    MPI_OK(MPI_Type_free(&t));
}

/* Each rank owns a darray part of a global array; rank 0 gathers all parts
 * by receiving each into its place with that rank's darray type. */
static void test_darray(const struct ctx* c) {
    const int rank = c->rank, size = c->size;
    enum { G0 = 9, G1 = 7 };
    const int gsizes[2] = {G0, G1}, distribs[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    const int dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG};
    const int psizes[2] = {size % 2 ? size : size / 2, size % 2 ? 1 : 2};
    int global[G0 * G1];
    for (int k = 0; k < G0 * G1; ++k) global[k] = k;
    MPI_Datatype mine;
    MPI_OK(MPI_Type_create_darray(size, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                  MPI_INT, &mine));
    MPI_OK(MPI_Type_commit(&mine));
    int n;
    MPI_OK(MPI_Type_size(mine, &n));
    n /= (int)sizeof(int);
    int local[G0 * G1];
    int pos = 0;
    MPI_OK(MPI_Pack(global, 1, mine, local, (int)sizeof(local), &pos, MPI_COMM_WORLD));
    CHECK(pos == n * (int)sizeof(int), "packed %d bytes", pos);
    MPI_OK(MPI_Send(local, n, MPI_INT, 0, 7, MPI_COMM_WORLD));
    if (rank == 0) {
        int out[G0 * G1], total = 0;
        for (int k = 0; k < G0 * G1; ++k) out[k] = -1;
        for (int r = 0; r < size; ++r) {
            MPI_Datatype theirs;
            MPI_OK(MPI_Type_create_darray(size, r, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                          MPI_INT, &theirs));
            MPI_OK(MPI_Type_commit(&theirs));
            MPI_Status st;
            MPI_OK(MPI_Recv(out, 1, theirs, r, 7, MPI_COMM_WORLD, &st));
            int e;
            MPI_OK(MPI_Get_elements(&st, theirs, &e));
            total += e;
            MPI_OK(MPI_Type_free(&theirs));
        }
        CHECK(total == G0 * G1, "the parts hold %d elements", total);
        for (int k = 0; k < G0 * G1; ++k) CHECK(out[k] == k, "out[%d] = %d", k, out[k]);
    }
    MPI_OK(MPI_Type_free(&mine));
}

/* MPI_Pack of mixed data sent as MPI_PACKED, and external32. */
static void test_pack(const struct ctx* c) {
    const int rank = c->rank, partner = c->partner;
    char buf[256];
    int pos = 0, a = rank + 7;
    double v[10];
    for (int k = 0; k < 10; ++k) v[k] = rank * 100 + k;
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(5, 1, 2, MPI_DOUBLE, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    MPI_OK(MPI_Pack(&a, 1, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD));
    MPI_OK(MPI_Pack(v, 1, every_other, buf, sizeof(buf), &pos, MPI_COMM_WORLD));
    CHECK(pos == 4 + 40, "position %d", pos);
    char in[256];
    MPI_OK(MPI_Sendrecv(buf, pos, MPI_PACKED, partner, 8, in, sizeof(in), MPI_PACKED, partner, 8,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int b = 0, ipos = 0;
    double w[10] = {0};
    MPI_OK(MPI_Unpack(in, sizeof(in), &ipos, &b, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_OK(MPI_Unpack(in, sizeof(in), &ipos, w, 1, every_other, MPI_COMM_WORLD));
    CHECK(b == partner + 7, "unpacked %d", b);
    for (int k = 0; k < 10; ++k)
        CHECK(w[k] == (k % 2 ? 0.0 : partner * 100 + k), "w[%d] = %g", k, w[k]);
    MPI_OK(MPI_Type_free(&every_other));

    unsigned char ext[32];
    MPI_Aint epos = 0, esize;
    int x = 0x01020304;
    long l = -2;
    MPI_OK(MPI_Pack_external("external32", &x, 1, MPI_INT, ext, sizeof(ext), &epos));
    MPI_OK(MPI_Pack_external("external32", &l, 1, MPI_LONG, ext, sizeof(ext), &epos));
    CHECK(epos == 8, "external position %ld", (long)epos);
    CHECK(ext[0] == 1 && ext[3] == 4 && ext[4] == 0xff && ext[7] == 0xfe, "external32 bytes");
    MPI_OK(MPI_Pack_external_size("external32", 3, MPI_LONG, &esize));
    CHECK(esize == 12, "external size %ld", (long)esize);
    int y = 0;
    long m = 0;
    epos = 0;
    MPI_OK(MPI_Unpack_external("external32", ext, 8, &epos, &y, 1, MPI_INT));
    MPI_OK(MPI_Unpack_external("external32", ext, 8, &epos, &m, 1, MPI_LONG));
    CHECK(y == x && m == l, "external32 round trip %x %ld", y, m);
}

/* Decoding a type back from its envelope and contents. */
static void test_contents(void) {
    MPI_Datatype inner, outer, dup;
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &inner));
    const int bl[2] = {1, 2};
    const MPI_Aint d[2] = {0, 64};
    const MPI_Datatype ts[2] = {MPI_INT, inner};
    MPI_OK(MPI_Type_create_struct(2, bl, d, ts, &outer));
    MPI_OK(MPI_Type_dup(outer, &dup));
    int ni, na, nd, comb;
    MPI_OK(MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_DUP && ni == 0 && na == 0 && nd == 1, "dup envelope");
    MPI_OK(MPI_Type_get_envelope(outer, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2, "struct envelope");
    int ints[3];
    MPI_Aint aints[2];
    MPI_Datatype types[2];
    MPI_OK(MPI_Type_get_contents(outer, 3, 2, 2, ints, aints, types));
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && aints[1] == 64, "struct contents");
    CHECK(types[0] == MPI_INT, "predefined components come back as themselves");
    CHECK(types[1] != inner, "derived components come back as new handles");
    MPI_OK(MPI_Type_free(&inner)); /* the copy must not depend on the original */
    MPI_OK(MPI_Type_get_envelope(types[1], &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && nd == 1, "vector envelope");
    MPI_OK(MPI_Type_get_contents(types[1], 3, 0, 1, ints, aints, &types[0]));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_DOUBLE,
          "vector contents");
    MPI_OK(MPI_Type_free(&types[1]));
    MPI_OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED && ni + na + nd == 0, "named envelope");
    int err = MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, aints, types);
    CHECK(error_class(err) == MPI_ERR_TYPE, "contents of a named type: class %d", error_class(err));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Type_set_name(dup, "particles"));
    MPI_OK(MPI_Type_get_name(dup, name, &len));
    CHECK(len == 9 && strcmp(name, "particles") == 0, "name %s", name);
    MPI_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "name %s", name);
    MPI_OK(MPI_Type_free(&dup));
    MPI_OK(MPI_Type_free(&outer));
    MPI_Datatype m;
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    MPI_OK(MPI_Type_size(m, &len));
    CHECK(len == 8, "match_size");
    MPI_Aint a0, a1;
    MPI_OK(MPI_Get_address(&ints[0], &a0));
    MPI_OK(MPI_Get_address(&ints[2], &a1));
    CHECK(MPI_Aint_diff(a1, a0) == 2 * (MPI_Aint)sizeof(int) && MPI_Aint_add(a0, 8) == a1,
          "address arithmetic");
}

/* Every constructor describing the same pattern (doubles 0, 1, 4, 5, 8, 9 of
 * 12) packs the same bytes and has the same size and extent. */
static void test_constructors(void) {
    double v[12];
    for (int k = 0; k < 12; ++k) v[k] = k * 1.5;
    const int bl2[3] = {2, 2, 2}, d[3] = {0, 4, 8};
    const MPI_Aint hd[3] = {0, 32, 64};
    const MPI_Datatype dd[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
    MPI_Datatype pair, t[8];
    MPI_OK(MPI_Type_contiguous(2, MPI_DOUBLE, &pair));
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t[0]));
    MPI_OK(MPI_Type_create_hvector(3, 2, 32, MPI_DOUBLE, &t[1]));
    MPI_OK(MPI_Type_indexed(3, bl2, d, MPI_DOUBLE, &t[2]));
    MPI_OK(MPI_Type_create_hindexed(3, bl2, hd, MPI_DOUBLE, &t[3]));
    MPI_OK(MPI_Type_create_indexed_block(3, 2, d, MPI_DOUBLE, &t[4]));
    MPI_OK(MPI_Type_create_hindexed_block(3, 1, hd, pair, &t[5]));
    MPI_OK(MPI_Type_create_struct(3, bl2, hd, dd, &t[6]));
    MPI_OK(MPI_Type_dup(t[5], &t[7]));
    MPI_OK(MPI_Type_free(&pair));
    for (int k = 0; k < 8; ++k) {
        MPI_OK(MPI_Type_commit(&t[k]));
        double out[6] = {0};
        int pos = 0;
        MPI_OK(MPI_Pack(v, 1, t[k], out, sizeof(out), &pos, MPI_COMM_WORLD));
        CHECK(pos == 48, "constructor %d packs %d bytes", k, pos);
        for (int i = 0; i < 6; ++i)
            CHECK(out[i] == v[(i / 2) * 4 + i % 2], "constructor %d: out[%d] = %g", k, i, out[i]);
        MPI_Count lb, extent, tlb, textent, size;
        MPI_OK(MPI_Type_get_extent_x(t[k], &lb, &extent));
        MPI_OK(MPI_Type_get_true_extent_x(t[k], &tlb, &textent));
        MPI_OK(MPI_Type_size_x(t[k], &size));
        CHECK(lb == 0 && extent == 80 && tlb == 0 && textent == 80 && size == 48,
              "constructor %d: lb %lld extent %lld size %lld", k, lb, extent, size);
        MPI_OK(MPI_Type_free(&t[k]));
    }
}

/* Bad arguments give the standard's error classes (MPI_ERRORS_RETURN). */
static void test_errors(const struct ctx* c) {
    const int partner = c->partner;
    MPI_Datatype t, raw;
    int x[4] = {0};
    CHECK(error_class(MPI_Type_contiguous(-1, MPI_INT, &t)) == MPI_ERR_COUNT, "negative count");
    CHECK(error_class(MPI_Type_vector(2, -1, 1, MPI_INT, &t)) == MPI_ERR_ARG,
          "negative blocklength");
    CHECK(error_class(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t)) == MPI_ERR_TYPE, "null type");
    MPI_Datatype predefined = MPI_INT;
    CHECK(error_class(MPI_Type_free(&predefined)) == MPI_ERR_TYPE, "freeing MPI_INT");
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &raw));
    CHECK(error_class(MPI_Send(x, 1, raw, partner, 9, MPI_COMM_WORLD)) == MPI_ERR_TYPE,
          "uncommitted type in a send");
    CHECK(error_class(MPI_Send(x, -1, MPI_INT, partner, 9, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "negative count in a send");
    int pos = 0;
    char small[4];
    MPI_OK(MPI_Type_commit(&raw));
    CHECK(error_class(MPI_Pack(x, 1, raw, small, 4, &pos, MPI_COMM_WORLD)) == MPI_ERR_TRUNCATE,
          "pack into a small buffer");
    MPI_OK(MPI_Type_free(&raw));
    CHECK(error_class(MPI_Type_commit(&raw)) == MPI_ERR_TYPE, "commit of a freed handle");
    const int sizes[2] = {4, 4}, sub[2] = {2, 5}, starts[2] = {0, 0};
    CHECK(error_class(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t)) ==
              MPI_ERR_ARG,
          "subarray larger than the array");
    MPI_Aint esize;
    CHECK(error_class(MPI_Pack_external_size("native", 1, MPI_INT, &esize)) == MPI_ERR_ARG,
          "unknown data representation");
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    struct ctx c;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    c.partner = (c.rank ^ 1) < c.size ? c.rank ^ 1 : c.rank;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_halo(&c);
    test_subarray(&c);
    test_indexed(&c);
    test_struct(&c);
    test_darray(&c);
    test_pack(&c);
    test_contents();
    test_constructors();
    test_errors(&c);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (c.rank == 0) printf("datatypes: all checks passed on %d ranks\n", c.size);
    MPI_Finalize();
    return 0;
}
