/* Collective results on every predefined type an operation is defined on.
 *
 * For each type and operation: Allreduce, Allreduce with MPI_IN_PLACE, Reduce
 * to a root that moves with the operation (recvbuf NULL elsewhere), Reduce in
 * place at the root, and a Bcast of the result from another root. Each rank
 * contributes values computed from (rank, element), small enough that every
 * result is exact (no overflow, exact in floating point), and the expected
 * result is computed locally over all ranks.
 *   integers (C, fixed-size, multi-language, Fortran): SUM MAX MIN PROD, BAND BOR BXOR
 *   C_BOOL / LOGICAL: LAND LOR LXOR          floating point: SUM MAX MIN PROD
 *   complex: SUM PROD                         MPI_BYTE: BAND BOR BXOR
 *   pair types: MINLOC MAXLOC (ties resolved to the lowest index)
 * Then a larger Allreduce (rendezvous-sized messages), count 0, and Barrier:
 * no rank leaves before the last one (delayed on purpose) has entered.
 */
#include <complex.h>

#include "common.h"

#define COUNT 5

typedef struct {
    int rank, nranks;
    int checks;
} Ctx;

enum { OP_SUM, OP_MAX, OP_MIN, OP_PROD, OP_BAND, OP_BOR, OP_BXOR, OP_LAND, OP_LOR, OP_LXOR, NOPS };
static const char* const op_names[] = {"SUM", "MAX", "MIN", "PROD", "BAND",
                                       "BOR", "BXOR", "LAND", "LOR", "LXOR"};

static MPI_Op mpi_op(int op) {
    static const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_BAND,
                                 MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR};
    return ops[op];
}

#define ARITH_OPS ((1 << OP_SUM) | (1 << OP_MAX) | (1 << OP_MIN) | (1 << OP_PROD))
#define BIT_OPS ((1 << OP_BAND) | (1 << OP_BOR) | (1 << OP_BXOR))
#define LOGIC_OPS ((1 << OP_LAND) | (1 << OP_LOR) | (1 << OP_LXOR))
#define CPLX_OPS ((1 << OP_SUM) | (1 << OP_PROD))

/* Contribution of rank r to element i for op. */
static long long value_for(int op, int r, int i, int is_signed) {
    switch (op) {
        case OP_SUM: return (r + i) % 7 - (is_signed ? 3 : 0);
        case OP_MAX:
        case OP_MIN: return (r * 5 + i * 3) % 11 - (is_signed ? 5 : 0);
        case OP_PROD:
            if ((r + i) % 4 == 0) return 2; /* at most 4 factors of 2 with 16 ranks */
            return is_signed && (r + i) % 5 == 1 ? -1 : 1;
        case OP_LAND: return (r + i) % (COUNT + 1) != 0;
        case OP_LOR: return (r + i) % 3 == 0;
        case OP_LXOR: return (r * 3 + i) % 4 == 0;
        default: return ((r * 37 + i * 11) & 0x3f) | (1 << (r % 6)); /* bitwise: 7 bits */
    }
}

#define COMBINE_INT(op, a, b)                                                               \
    ((op) == OP_SUM    ? (a) + (b)                                                          \
     : (op) == OP_PROD ? (a) * (b)                                                          \
     : (op) == OP_MAX  ? ((a) > (b) ? (a) : (b))                                            \
     : (op) == OP_MIN  ? ((a) < (b) ? (a) : (b))                                            \
     : (op) == OP_BAND ? (a) & (b)                                                          \
     : (op) == OP_BOR  ? (a) | (b)                                                          \
     : (op) == OP_BXOR ? (a) ^ (b)                                                          \
     : (op) == OP_LAND ? ((a) && (b))                                                       \
     : (op) == OP_LOR  ? ((a) || (b))                                                       \
                       : (!(a) != !(b)))
#define COMBINE_FLOAT(op, a, b)                                                             \
    ((op) == OP_SUM    ? (a) + (b)                                                          \
     : (op) == OP_PROD ? (a) * (b)                                                          \
     : (op) == OP_MAX  ? ((a) > (b) ? (a) : (b))                                            \
                       : ((a) < (b) ? (a) : (b)))
#define COMBINE_CPLX(op, a, b) ((op) == OP_SUM ? (a) + (b) : (a) * (b))

#define MAKE_REAL(T, op, r, i, s) ((T)value_for((op), (r), (i), (s)))
#define MAKE_CPLX(T, op, r, i, s)                                                              \
    ((void)(s), (op) == OP_PROD ? (((r) + (i)) % 4 == 0 ? (T)I : (T)1)                        \
                     : (T)value_for(OP_SUM, (r), (i), 1) + (T)value_for(OP_SUM, (r), (i) + 2, 1) * (T)I)

#define CHECK_ARRAY(got, want, what)                                                           \
    for (int k_ = 0; k_ < COUNT; ++k_)                                                         \
        CHECK((got)[k_] == (want)[k_], "%s %s %s: element %d differs", tname, op_names[op],   \
              (what), k_)

/* One runner per C type: every collective for the operations in `ops`. */
#define DEFINE_RUNNER(NAME, T, COMBINE, MAKE)                                                  \
    static void run_##NAME(Ctx* c, MPI_Datatype dt, const char* tname, int ops, int is_signed) { \
        for (int op = 0; op < NOPS; ++op) {                                                    \
            if (!(ops & (1 << op))) continue;                                                  \
            T in[COUNT], out[COUNT], expect[COUNT], tmp[COUNT];                               \
            for (int i = 0; i < COUNT; ++i) {                                                  \
                in[i] = MAKE(T, op, c->rank, i, is_signed);                                    \
                T e = MAKE(T, op, 0, i, is_signed);                                            \
                for (int r = 1; r < c->nranks; ++r) {                                          \
                    T v = MAKE(T, op, r, i, is_signed);                                        \
                    e = (T)COMBINE(op, e, v);                                                  \
                }                                                                              \
                expect[i] = e;                                                                 \
            }                                                                                  \
            MPI_OK(MPI_Allreduce(in, out, COUNT, dt, mpi_op(op), MPI_COMM_WORLD));             \
            CHECK_ARRAY(out, expect, "Allreduce");                                             \
            memcpy(tmp, in, sizeof(in));                                                       \
            MPI_OK(MPI_Allreduce(MPI_IN_PLACE, tmp, COUNT, dt, mpi_op(op), MPI_COMM_WORLD));   \
            CHECK_ARRAY(tmp, expect, "Allreduce(MPI_IN_PLACE)");                               \
            const int root = op % c->nranks;                                                   \
            MPI_OK(MPI_Reduce(in, c->rank == root ? out : NULL, COUNT, dt, mpi_op(op), root,   \
                              MPI_COMM_WORLD));                                                \
            if (c->rank == root) CHECK_ARRAY(out, expect, "Reduce");                           \
            memcpy(tmp, in, sizeof(in));                                                       \
            MPI_OK(MPI_Reduce(c->rank == root ? MPI_IN_PLACE : tmp, c->rank == root ? tmp : NULL, \
                              COUNT, dt, mpi_op(op), root, MPI_COMM_WORLD));                   \
            if (c->rank == root) CHECK_ARRAY(tmp, expect, "Reduce(MPI_IN_PLACE)");             \
            const int broot = (op + 1) % c->nranks;                                            \
            if (c->rank == broot) memcpy(tmp, expect, sizeof(tmp));                            \
            else memcpy(tmp, in, sizeof(tmp));                                                 \
            MPI_OK(MPI_Bcast(tmp, COUNT, dt, broot, MPI_COMM_WORLD));                          \
            CHECK_ARRAY(tmp, expect, "Bcast");                                                 \
            c->checks += 5;                                                                    \
        }                                                                                      \
    }

DEFINE_RUNNER(schar, signed char, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(uchar, unsigned char, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(short, short, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(ushort, unsigned short, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(int, int, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(uint, unsigned, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(long, long, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(ulong, unsigned long, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(llong, long long, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(ullong, unsigned long long, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(bool, _Bool, COMBINE_INT, MAKE_REAL)
DEFINE_RUNNER(float, float, COMBINE_FLOAT, MAKE_REAL)
DEFINE_RUNNER(double, double, COMBINE_FLOAT, MAKE_REAL)
DEFINE_RUNNER(ldouble, long double, COMBINE_FLOAT, MAKE_REAL)
DEFINE_RUNNER(fcplx, float _Complex, COMBINE_CPLX, MAKE_CPLX)
DEFINE_RUNNER(dcplx, double _Complex, COMBINE_CPLX, MAKE_CPLX)
DEFINE_RUNNER(ldcplx, long double _Complex, COMBINE_CPLX, MAKE_CPLX)

#define INT_OPS (ARITH_OPS | BIT_OPS)

static void all_types(Ctx* c) {
    run_schar(c, MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", INT_OPS, 1);
    run_uchar(c, MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", INT_OPS, 0);
    run_short(c, MPI_SHORT, "MPI_SHORT", INT_OPS, 1);
    run_ushort(c, MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", INT_OPS, 0);
    run_int(c, MPI_INT, "MPI_INT", INT_OPS | LOGIC_OPS, 1);
    run_uint(c, MPI_UNSIGNED, "MPI_UNSIGNED", INT_OPS, 0);
    run_long(c, MPI_LONG, "MPI_LONG", INT_OPS | LOGIC_OPS, 1);
    run_ulong(c, MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", INT_OPS, 0);
    run_llong(c, MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", INT_OPS, 1);
    run_llong(c, MPI_LONG_LONG, "MPI_LONG_LONG", INT_OPS, 1);
    run_ullong(c, MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", INT_OPS, 0);
    run_schar(c, MPI_INT8_T, "MPI_INT8_T", INT_OPS, 1);
    run_short(c, MPI_INT16_T, "MPI_INT16_T", INT_OPS, 1);
    run_int(c, MPI_INT32_T, "MPI_INT32_T", INT_OPS, 1);
    run_llong(c, MPI_INT64_T, "MPI_INT64_T", INT_OPS, 1); /* int64_t may be long: same size */
    run_uchar(c, MPI_UINT8_T, "MPI_UINT8_T", INT_OPS, 0);
    run_ushort(c, MPI_UINT16_T, "MPI_UINT16_T", INT_OPS, 0);
    run_uint(c, MPI_UINT32_T, "MPI_UINT32_T", INT_OPS, 0);
    run_ullong(c, MPI_UINT64_T, "MPI_UINT64_T", INT_OPS, 0);
    run_long(c, MPI_AINT, "MPI_AINT", ARITH_OPS, 1);
    run_llong(c, MPI_OFFSET, "MPI_OFFSET", ARITH_OPS, 1);
    run_llong(c, MPI_COUNT, "MPI_COUNT", ARITH_OPS, 1);
    run_float(c, MPI_FLOAT, "MPI_FLOAT", ARITH_OPS, 1);
    run_double(c, MPI_DOUBLE, "MPI_DOUBLE", ARITH_OPS, 1);
    run_ldouble(c, MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", ARITH_OPS, 1);
    run_bool(c, MPI_C_BOOL, "MPI_C_BOOL", LOGIC_OPS, 0);
    run_fcplx(c, MPI_C_COMPLEX, "MPI_C_COMPLEX", CPLX_OPS, 1);
    run_fcplx(c, MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", CPLX_OPS, 1);
    run_dcplx(c, MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", CPLX_OPS, 1);
    run_ldcplx(c, MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", CPLX_OPS, 1);
    run_uchar(c, MPI_BYTE, "MPI_BYTE", BIT_OPS, 0);
    /* Fortran types (gfortran's default sizes). */
    run_int(c, MPI_INTEGER, "MPI_INTEGER", INT_OPS, 1);
    run_float(c, MPI_REAL, "MPI_REAL", ARITH_OPS, 1);
    run_double(c, MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", ARITH_OPS, 1);
    run_schar(c, MPI_INTEGER1, "MPI_INTEGER1", ARITH_OPS, 1);
    run_short(c, MPI_INTEGER2, "MPI_INTEGER2", ARITH_OPS, 1);
    run_int(c, MPI_INTEGER4, "MPI_INTEGER4", ARITH_OPS, 1);
    run_llong(c, MPI_INTEGER8, "MPI_INTEGER8", ARITH_OPS, 1);
    run_float(c, MPI_REAL4, "MPI_REAL4", ARITH_OPS, 1);
    run_double(c, MPI_REAL8, "MPI_REAL8", ARITH_OPS, 1);
    run_fcplx(c, MPI_COMPLEX, "MPI_COMPLEX", CPLX_OPS, 1);
    run_dcplx(c, MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", CPLX_OPS, 1);
    run_int(c, MPI_LOGICAL, "MPI_LOGICAL", LOGIC_OPS, 0);
}

/* MINLOC / MAXLOC on the pair types. */
#define DEFINE_PAIR(NAME, VT, IT)                                                              \
    typedef struct {                                                                           \
        VT v;                                                                                  \
        IT i;                                                                                  \
    } NAME##_pair;                                                                             \
    static void pair_##NAME(Ctx* c, MPI_Datatype dt, const char* tname) {                      \
        for (int is_max = 0; is_max < 2; ++is_max) {                                           \
            NAME##_pair in[COUNT], out[COUNT], expect[COUNT], tmp[COUNT];                      \
            memset(in, 0, sizeof(in));                                                         \
            memset(expect, 0, sizeof(expect));                                                 \
            for (int k = 0; k < COUNT; ++k) {                                                  \
                in[k].v = (VT)((c->rank * 7 + k * 3) % 5);                                     \
                in[k].i = (IT)c->rank;                                                         \
                for (int r = 0; r < c->nranks; ++r) {                                          \
                    VT v = (VT)((r * 7 + k * 3) % 5);                                          \
                    int better = r == 0 || (is_max ? v > expect[k].v : v < expect[k].v);       \
                    if (better) {                                                              \
                        expect[k].v = v;                                                       \
                        expect[k].i = (IT)r;                                                   \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
            const char* opn = is_max ? "MAXLOC" : "MINLOC";                                    \
            MPI_Op op = is_max ? MPI_MAXLOC : MPI_MINLOC;                                      \
            MPI_OK(MPI_Allreduce(in, out, COUNT, dt, op, MPI_COMM_WORLD));                     \
            for (int k = 0; k < COUNT; ++k)                                                    \
                CHECK(out[k].v == expect[k].v && out[k].i == expect[k].i,                      \
                      "%s %s Allreduce: element %d is (%g, %g), expected (%g, %g)", tname, opn, k, \
                      (double)out[k].v, (double)out[k].i, (double)expect[k].v,                 \
                      (double)expect[k].i);                                                    \
            memcpy(tmp, in, sizeof(in));                                                       \
            MPI_OK(MPI_Allreduce(MPI_IN_PLACE, tmp, COUNT, dt, op, MPI_COMM_WORLD));           \
            for (int k = 0; k < COUNT; ++k)                                                    \
                CHECK(tmp[k].v == expect[k].v && tmp[k].i == expect[k].i,                     \
                      "%s %s Allreduce(MPI_IN_PLACE): element %d", tname, opn, k);             \
            const int root = c->nranks - 1;                                                    \
            MPI_OK(MPI_Reduce(in, c->rank == root ? out : NULL, COUNT, dt, op, root,           \
                              MPI_COMM_WORLD));                                                \
            if (c->rank == root)                                                               \
                for (int k = 0; k < COUNT; ++k)                                                \
                    CHECK(out[k].v == expect[k].v && out[k].i == expect[k].i,                  \
                          "%s %s Reduce: element %d", tname, opn, k);                          \
            c->checks += 3;                                                                    \
        }                                                                                      \
    }

DEFINE_PAIR(float_int, float, int)
DEFINE_PAIR(double_int, double, int)
DEFINE_PAIR(long_int, long, int)
DEFINE_PAIR(int_int, int, int)
DEFINE_PAIR(short_int, short, int)
DEFINE_PAIR(ldouble_int, long double, int)
DEFINE_PAIR(float_float, float, float)
DEFINE_PAIR(double_double, double, double)

static void all_pairs(Ctx* c) {
    pair_float_int(c, MPI_FLOAT_INT, "MPI_FLOAT_INT");
    pair_double_int(c, MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    pair_long_int(c, MPI_LONG_INT, "MPI_LONG_INT");
    pair_int_int(c, MPI_2INT, "MPI_2INT");
    pair_short_int(c, MPI_SHORT_INT, "MPI_SHORT_INT");
    pair_ldouble_int(c, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
    pair_float_float(c, MPI_2REAL, "MPI_2REAL");
    pair_double_double(c, MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION");
    pair_int_int(c, MPI_2INTEGER, "MPI_2INTEGER");
}

/* Allreduce of a vector too large for the eager path, and of nothing. */
static void large_and_empty(Ctx* c) {
    const int n = 100000;
    double* in = (double*)xmalloc(sizeof(double) * (size_t)n);
    double* out = (double*)xmalloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; ++i) in[i] = (double)((c->rank + i) % 13);
    MPI_OK(MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < n; ++i) {
        double e = 0;
        for (int r = 0; r < c->nranks; ++r) e += (double)((r + i) % 13);
        CHECK(out[i] == e, "large Allreduce: element %d is %g, expected %g", i, out[i], e);
    }
    MPI_OK(MPI_Bcast(out, n, MPI_DOUBLE, c->nranks / 2, MPI_COMM_WORLD));
    free(in);
    free(out);
    int dummy = 5;
    MPI_OK(MPI_Allreduce(&dummy, &dummy, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_OK(MPI_Bcast(&dummy, 0, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(dummy == 5, "a collective of count 0 changed the buffer");
    c->checks += 3;
}

/* No rank leaves a barrier before every rank has entered it. One rank (a
 * different one each time) spends a few milliseconds before entering. */
static void barrier_holds(Ctx* c) {
    for (int round = 0; round < 3; ++round) {
        if (c->rank == round % c->nranks) {
            double until = MPI_Wtime() + 0.003;
            while (MPI_Wtime() < until) {
            }
        }
        double enter = MPI_Wtime();
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        double leave = MPI_Wtime();
        double last_enter = 0, first_leave = 0;
        MPI_OK(MPI_Allreduce(&enter, &last_enter, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        MPI_OK(MPI_Allreduce(&leave, &first_leave, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
        CHECK(first_leave >= last_enter,
              "a rank left the barrier %.6f s before the last one entered", last_enter - first_leave);
        c->checks++;
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    Ctx c;
    memset(&c, 0, sizeof(c));
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);

    all_types(&c);
    all_pairs(&c);
    large_and_empty(&c);
    barrier_holds(&c);

    if (c.rank == 0) printf("coll_types: %d checks passed on %d ranks\n", c.checks, c.nranks);
    MPI_Finalize();
    return 0;
}
