/* The Fortran datatypes MPI 3.1 adds where the compiler has the type, used
 * from C: MPI_REAL16 (IEEE binary128, GCC's __float128), MPI_COMPLEX32 and
 * MPI_INTEGER16 (__int128) in point-to-point and every reduction defined on
 * them, MPI_Type_match_size for them; and the parameterized types of
 * MPI_Type_create_f90_real / _complex / _integer (section 17.1.9): the type of
 * gfortran's SELECTED_REAL_KIND / SELECTED_INT_KIND, predefined (never freed,
 * the same handle for the same arguments), with the F90 combiners and (p, r)
 * as contents.
 */
#include "common.h"

typedef _Complex float __attribute__((mode(TC))) complex128;

static void quad_reductions(int rank, int size) {
    /* Unaligned buffers on purpose: 16-byte types in 8-byte aligned memory. */
    char raw[3 * 16 + 8] __attribute__((aligned(16)));
    char out[3 * 16 + 8] __attribute__((aligned(16)));
    __float128 x[3] = {(__float128)1 / 3 + rank, -(__float128)rank, (__float128)rank * rank};
    memcpy(raw + 8, x, sizeof(x));
    MPI_OK(MPI_Allreduce(raw + 8, out + 8, 3, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
    __float128 s[3];
    memcpy(s, out + 8, sizeof(s));
    const __float128 want = (__float128)size / 3 + size * (size - 1) / 2;
    CHECK(s[0] - want < 1e-30Q && want - s[0] < 1e-30Q, "MPI_REAL16 sum off by %g",
          (double)(s[0] - want));
    __float128 m;
    MPI_OK(MPI_Allreduce(&x[1], &m, 1, MPI_REAL16, MPI_MIN, MPI_COMM_WORLD));
    CHECK(m == -(__float128)(size - 1), "MPI_REAL16 min %g", (double)m);
    MPI_OK(MPI_Allreduce(&x[2], &m, 1, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD));
    CHECK(m == (__float128)(size - 1) * (size - 1), "MPI_REAL16 max %g", (double)m);

    /* Beyond 64 bits: 2^70 + rank. */
    __int128 big = ((__int128)1 << 70) + rank, r;
    MPI_OK(MPI_Allreduce(&big, &r, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD));
    CHECK(r == size * ((__int128)1 << 70) + size * (size - 1) / 2, "MPI_INTEGER16 sum");
    MPI_OK(MPI_Allreduce(&big, &r, 1, MPI_INTEGER16, MPI_BOR, MPI_COMM_WORLD));
    __int128 bor = 0;
    for (int k = 0; k < size; ++k) bor |= ((__int128)1 << 70) + k;
    CHECK(r == bor, "MPI_INTEGER16 bor");
    /* 2^70 from rank 0, 3 from ranks 1 and 2: a product past 64 bits. */
    const __int128 factor = rank == 0 ? (__int128)1 << 70 : rank < 3 ? 3 : 1;
    MPI_OK(MPI_Allreduce(&factor, &r, 1, MPI_INTEGER16, MPI_PROD, MPI_COMM_WORLD));
    const __int128 prod = ((__int128)1 << 70) * (size > 2 ? 9 : size > 1 ? 3 : 1);
    CHECK(r == prod, "MPI_INTEGER16 product");

    /* The product of i over the ranks is i^size. */
    complex128 z = 0, p;
    __imag__ z = 1;
    MPI_OK(MPI_Allreduce(&z, &p, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD));
    const int re[4] = {1, 0, -1, 0}, im[4] = {0, 1, 0, -1};
    CHECK(__real__ p == re[size % 4] && __imag__ p == im[size % 4], "MPI_COMPLEX32 product");

    /* A reduction they have no kernel for is an MPI_ERR_OP. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Allreduce(&x[0], &m, 1, MPI_REAL16, MPI_BAND, MPI_COMM_WORLD);
    CHECK(error_class(rc) == MPI_ERR_OP, "MPI_BAND on MPI_REAL16 returned %d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Point to point around the ring. */
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    __float128 in = 0;
    MPI_OK(MPI_Sendrecv(&x[0], 1, MPI_REAL16, right, 0, &in, 1, MPI_REAL16, left, 0,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in == (__float128)1 / 3 + left, "MPI_REAL16 received from the left");

    MPI_Datatype t;
    int bytes;
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 16, &t));
    CHECK(t == MPI_REAL16, "match_size(REAL, 16)");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 32, &t));
    CHECK(t == MPI_COMPLEX32, "match_size(COMPLEX, 32)");
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &t));
    CHECK(t == MPI_INTEGER16, "match_size(INTEGER, 16)");
    MPI_OK(MPI_Type_size(MPI_COMPLEX32, &bytes));
    CHECK(bytes == 32, "MPI_COMPLEX32 is %d bytes", bytes);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Type_get_name(MPI_INTEGER16, name, &len));
    CHECK(strcmp(name, "MPI_INTEGER16") == 0, "name %s", name);
}

static void check_f90(MPI_Datatype t, int combiner, int ni, int p, int r, int size,
                      const char* what) {
    int n_int, n_addr, n_type, comb, bytes, ints[2] = {-9, -9};
    MPI_OK(MPI_Type_get_envelope(t, &n_int, &n_addr, &n_type, &comb));
    CHECK(comb == combiner && n_int == ni && n_addr == 0 && n_type == 0,
          "%s: envelope %d %d %d combiner %d", what, n_int, n_addr, n_type, comb);
    MPI_OK(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
    CHECK(ni == 1 ? ints[0] == r : ints[0] == p && ints[1] == r, "%s: contents %d %d", what,
          ints[0], ints[1]);
    MPI_OK(MPI_Type_size(t, &bytes));
    CHECK(bytes == size, "%s: %d bytes, expected %d", what, bytes, size);
}

static void f90_types(int rank, int size) {
    MPI_Datatype a, b, c;
    /* SELECTED_REAL_KIND: the smallest REAL kind with that precision and range. */
    MPI_OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &a));
    check_f90(a, MPI_COMBINER_F90_REAL, 2, 6, MPI_UNDEFINED, 4, "f90_real(6, -)");
    MPI_OK(MPI_Type_create_f90_real(7, 30, &b));
    check_f90(b, MPI_COMBINER_F90_REAL, 2, 7, 30, 8, "f90_real(7, 30)");
    MPI_OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 400, &c));
    check_f90(c, MPI_COMBINER_F90_REAL, 2, MPI_UNDEFINED, 400, 16, "f90_real(-, 400)");
    MPI_OK(MPI_Type_create_f90_real(30, MPI_UNDEFINED, &c));
    check_f90(c, MPI_COMBINER_F90_REAL, 2, 30, MPI_UNDEFINED, 16, "f90_real(30, -)");
    MPI_Datatype again;
    MPI_OK(MPI_Type_create_f90_real(7, 30, &again));
    CHECK(again == b, "the same (p, r) gave another handle");
    MPI_OK(MPI_Type_create_f90_complex(15, 300, &a));
    check_f90(a, MPI_COMBINER_F90_COMPLEX, 2, 15, 300, 16, "f90_complex(15, 300)");
    MPI_OK(MPI_Type_create_f90_integer(9, &a));
    check_f90(a, MPI_COMBINER_F90_INTEGER, 1, 0, 9, 4, "f90_integer(9)");
    MPI_OK(MPI_Type_create_f90_integer(19, &c));
    check_f90(c, MPI_COMBINER_F90_INTEGER, 1, 0, 19, 16, "f90_integer(19)");

    /* They reduce as their Fortran type does. */
    double d[2] = {rank + 0.5, -1.0}, sum[2];
    MPI_OK(MPI_Allreduce(d, sum, 2, b, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum[0] == size * (size - 1) / 2.0 + 0.5 * size && sum[1] == -size,
          "sum over f90_real(7, 30): %g %g", sum[0], sum[1]);
    int v = rank, vmax;
    MPI_OK(MPI_Allreduce(&v, &vmax, 1, a, MPI_MAX, MPI_COMM_WORLD));
    CHECK(vmax == size - 1, "max over f90_integer(9): %d", vmax);
    /* Usable in derived types. */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_contiguous(2, b, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    double got[2] = {0, 0};
    MPI_OK(MPI_Sendrecv(d, 1, vec, rank, 3, got, 1, vec, rank, 3, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    CHECK(got[0] == d[0] && got[1] == d[1], "contiguous of an f90 type");
    MPI_OK(MPI_Type_free(&vec));

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Type_free(&b);
    CHECK(error_class(rc) == MPI_ERR_TYPE, "freeing an f90 type returned %d", rc);
    rc = MPI_Type_create_f90_real(34, MPI_UNDEFINED, &a);
    CHECK(error_class(rc) == MPI_ERR_ARG, "f90_real(34, -) returned %d", rc);
    rc = MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &a);
    CHECK(error_class(rc) == MPI_ERR_ARG, "f90_real(-, -) returned %d", rc);
    rc = MPI_Type_create_f90_integer(39, &a);
    CHECK(error_class(rc) == MPI_ERR_ARG, "f90_integer(39) returned %d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    quad_reductions(rank, size);
    f90_types(rank, size);
    MPI_Finalize();
    return 0;
}
