/* Derived datatypes on both sides of one-sided operations (MPI 3.1 section
 * 11.3: the origin and target types may differ, their type signatures must
 * match):
 *
 * - Put and Get with a strided (vector) target and a contiguous origin, an
 *   indexed origin and a vector target, a resized struct of ints on one side;
 * - Accumulate and Get_accumulate (sum) with derived types on the origin,
 *   target and result sides;
 * - a transfer of 20 000 one-int pieces, more than one network message holds
 *   (ranks in other node processes get it in several);
 * - MPI_Rget into a derived origin type under lock_all;
 * - accumulates of many predefined type and operation pairs: the atomic
 *   element kinds and those done under the target's accumulate lock (long
 *   double, complex, MINLOC/MAXLOC pairs).
 * Every rank writes to its right neighbour and checks its own window.
 */
#include <complex.h>
#include <stddef.h>

#include "common.h"

enum { kN = 64, kBig = 20000 };

static int rank, size;

static MPI_Datatype committed(MPI_Datatype t) {
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

static MPI_Datatype strided(int count) {
    MPI_Datatype t;
    MPI_OK(MPI_Type_vector(count, 1, 2, MPI_INT, &t));
    return committed(t);
}

static void run(MPI_Win win, int* base, MPI_Aint words) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (MPI_Aint i = 0; i < words; ++i) base[i] = -1;
    MPI_Datatype every_other = strided(kN), scattered;
    int lens[4] = {3, 1, 5, kN - 9}, displs[4] = {0, 10, 4, 20};
    MPI_OK(MPI_Type_indexed(4, lens, displs, MPI_INT, &scattered));
    scattered = committed(scattered);
    int idx[kN]; /* origin element i of the indexed type is scattered_src[idx[i]] */
    for (int i = 0, k = 0; k < 4; ++k)
        for (int j = 0; j < lens[k]; ++j) idx[i++] = displs[k] + j;
    /* A struct of two ints resized to three: a hole between elements. */
    int blens[2] = {1, 1};
    MPI_Aint bdisp[2] = {0, (MPI_Aint)sizeof(int)};
    MPI_Datatype btypes[2] = {MPI_INT, MPI_INT}, pair, spaced;
    MPI_OK(MPI_Type_create_struct(2, blens, bdisp, btypes, &pair));
    MPI_OK(MPI_Type_create_resized(pair, 0, 3 * sizeof(int), &spaced));
    spaced = committed(spaced);
    MPI_Datatype big = strided(kBig);

    int src[2 * kBig], scattered_src[kN + 16];
    for (int i = 0; i < 2 * kBig; ++i) src[i] = value(rank, i);
    for (int i = 0; i < kN + 16; ++i) scattered_src[i] = value(rank, 5000 + i);

    /* Layout of each window (ints): [0, 2kN) every other from a Put;
     * [2kN, 4kN) from an indexed origin into a vector; [4kN, 4kN+48) the
     * spaced pairs; [5kN, 5kN+kN) accumulate target (strided by 2 over 2kN);
     * [8kN, 8kN + 2kBig) the big one. */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(src, kN, MPI_INT, right, 0, 1, every_other, win));
    MPI_OK(MPI_Put(scattered_src, 1, scattered, right, 2 * kN, 1, every_other, win));
    MPI_OK(MPI_Put(src, 32, MPI_INT, right, 4 * kN, 16, spaced, win));
    MPI_OK(MPI_Put(src, kBig, MPI_INT, right, 8 * kN, 1, big, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < kN; ++i) {
        CHECK(base[2 * i] == value(left, i), "vector target element %d: %d", i, base[2 * i]);
        CHECK(base[2 * i + 1] == -1, "vector target hole %d written", i);
    }
    for (int i = 0; i < kN; ++i)
        CHECK(base[2 * kN + 2 * i] == value(left, 5000 + idx[i]),
              "indexed -> vector element %d: %d", i, base[2 * kN + 2 * i]);
    for (int p = 0; p < 16; ++p) {
        CHECK(base[4 * kN + 3 * p] == value(left, 2 * p) &&
                  base[4 * kN + 3 * p + 1] == value(left, 2 * p + 1),
              "spaced pair %d: %d %d", p, base[4 * kN + 3 * p], base[4 * kN + 3 * p + 1]);
        CHECK(base[4 * kN + 3 * p + 2] == -1, "spaced pair %d: hole written", p);
    }
    for (int i = 0; i < kBig; ++i)
        CHECK(base[8 * kN + 2 * i] == value(left, i) && base[8 * kN + 2 * i + 1] == -1,
              "big vector element %d: %d", i, base[8 * kN + 2 * i]);

    /* Gets back, with derived origin types this time. */
    int got[2 * kN], big_got[kBig];
    for (int i = 0; i < 2 * kN; ++i) got[i] = -5;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Get(got, 1, every_other, right, 0, 1, every_other, win));
    MPI_OK(MPI_Get(big_got, kBig, MPI_INT, right, 8 * kN, 1, big, win));
    /* Accumulate: strided target, spaced origin pairs, then fetch the sums
     * into a derived result type. */
    for (int i = 0; i < kN; ++i) base[5 * kN + i] = 0;
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < kN; ++i) CHECK(got[2 * i] == value(rank, i), "get %d: %d", i, got[2 * i]);
    for (int i = 0; i < 2 * kN; i += 2) CHECK(got[i + 1] == -5, "get wrote hole %d", i + 1);
    for (int i = 0; i < kBig; ++i)
        CHECK(big_got[i] == value(rank, i), "big get %d: %d", i, big_got[i]);
    int ones[3 * 16];
    for (int i = 0; i < 3 * 16; ++i) ones[i] = i % 3 == 2 ? 999 : 1 + rank;
    MPI_Datatype half = strided(32);
    for (int t = 0; t < size; ++t)
        MPI_OK(MPI_Accumulate(ones, 16, spaced, t, 5 * kN, 1, half, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    const int total = size * (size + 1) / 2;
    for (int i = 0; i < kN; ++i)
        CHECK(base[5 * kN + i] == (i % 2 == 0 ? total : 0), "accumulated %d: %d", i,
              base[5 * kN + i]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int fetched[3 * 16];
    for (int i = 0; i < 3 * 16; ++i) fetched[i] = -4;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Get_accumulate(ones, 32, MPI_INT, fetched, 16, spaced, right, 5 * kN, 1, half,
                              MPI_SUM, win));
    MPI_OK(MPI_Win_flush(right, win));
    for (int p = 0; p < 16; ++p) {
        CHECK(fetched[3 * p] >= total && fetched[3 * p + 1] >= total, "fetched pair %d: %d %d",
              p, fetched[3 * p], fetched[3 * p + 1]);
        CHECK(fetched[3 * p + 2] == -4, "fetched into a hole %d", p);
    }
    MPI_Request req;
    for (int i = 0; i < 2 * kN; ++i) got[i] = -6;
    MPI_OK(MPI_Rget(got, 1, every_other, right, 2 * kN, kN, MPI_INT, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Win_unlock_all(win));
    /* The right neighbour's [2kN, 3kN): my indexed data at even offsets. */
    for (int i = 0; i < kN; ++i) {
        const int want = i % 2 == 0 ? value(rank, 5000 + idx[i / 2]) : -1;
        CHECK(got[2 * i] == want, "Rget element %d: %d, expected %d", i, got[2 * i], want);
        CHECK(got[2 * i + 1] == -6, "Rget wrote hole %d", 2 * i + 1);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Type_free(&every_other);
    MPI_Type_free(&scattered);
    MPI_Type_free(&pair);
    MPI_Type_free(&spaced);
    MPI_Type_free(&big);
    MPI_Type_free(&half);
}

/* Every rank accumulates into every window with several predefined types and
 * operations: the atomic kinds (integers, logicals, bytes, float, double)
 * and those done under the accumulate lock (long double, complex, pairs). */
static void op_matrix(void) {
    struct {
        long long ll_sum;
        float f_min;
        unsigned char uc_bxor;
        _Bool b_lor;
        signed char sc_prod;
        long double ld_sum;
        double _Complex z_sum;
        struct { int v, i; } maxloc;
        struct { double v; int i; } minloc;
        long l_band;
    } w, mine;
    memset(&w, 0, sizeof w);
    w.f_min = 1e9f;
    w.sc_prod = 1;
    w.maxloc.v = -1;
    w.minloc.v = 1e9;
    w.l_band = -1L;
    MPI_Win win;
    MPI_OK(MPI_Win_create(&w, sizeof w, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    mine.ll_sum = (long long)rank << 33;
    mine.f_min = (float)(rank * 1.5 - 3);
    mine.uc_bxor = (unsigned char)(1u << (rank % 8));
    mine.b_lor = rank == size - 1;
    mine.sc_prod = rank % 3 == 0 ? -1 : 1;
    mine.ld_sum = (long double)rank / 4;
    mine.z_sum = rank + 2.0 * rank * _Complex_I;
    mine.maxloc.v = rank % 3;
    mine.maxloc.i = rank;
    mine.minloc.v = (double)(rank % 2);
    mine.minloc.i = size - rank;
    mine.l_band = ~(1L << rank);
    MPI_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; ++t) {
#define ACC(field, type, op)                                                                   \
    MPI_OK(MPI_Accumulate(&mine.field, 1, type, t, (MPI_Aint)offsetof(__typeof__(w), field), 1, \
                          type, op, win))
        ACC(ll_sum, MPI_LONG_LONG, MPI_SUM);
        ACC(f_min, MPI_FLOAT, MPI_MIN);
        ACC(uc_bxor, MPI_UNSIGNED_CHAR, MPI_BXOR);
        ACC(b_lor, MPI_C_BOOL, MPI_LOR);
        ACC(sc_prod, MPI_SIGNED_CHAR, MPI_PROD);
        ACC(ld_sum, MPI_LONG_DOUBLE, MPI_SUM);
        ACC(z_sum, MPI_C_DOUBLE_COMPLEX, MPI_SUM);
        ACC(maxloc, MPI_2INT, MPI_MAXLOC);
        ACC(minloc, MPI_DOUBLE_INT, MPI_MINLOC);
        ACC(l_band, MPI_LONG, MPI_BAND);
#undef ACC
    }
    MPI_OK(MPI_Win_fence(0, win));
    long long ll = 0;
    float fmin = 1e9f;
    unsigned char ux = 0;
    int lor = 0, prod = 1, maxv = -1, maxi = -1, mini;
    long double ld = 0;
    double zr = 0, zi = 0;
    long band = -1L;
    for (int r = 0; r < size; ++r) {
        ll += (long long)r << 33;
        if ((float)(r * 1.5 - 3) < fmin) fmin = (float)(r * 1.5 - 3);
        ux ^= (unsigned char)(1u << (r % 8));
        lor |= r == size - 1;
        prod *= r % 3 == 0 ? -1 : 1;
        ld += (long double)r / 4;
        zr += r;
        zi += 2.0 * r;
        if (r % 3 > maxv || (r % 3 == maxv && r < maxi)) maxv = r % 3, maxi = r;
        band &= ~(1L << r);
    }
    /* MINLOC: value 0 (even ranks), smallest index size - r among them. */
    mini = size;
    for (int r = 0; r < size; r += 2)
        if (size - r < mini) mini = size - r;
    CHECK(w.ll_sum == ll, "long long sum %lld, expected %lld", w.ll_sum, ll);
    CHECK(w.f_min == fmin, "float min %g, expected %g", (double)w.f_min, (double)fmin);
    CHECK(w.uc_bxor == ux, "unsigned char bxor %u, expected %u", w.uc_bxor, ux);
    CHECK(w.b_lor == lor, "bool lor %d", (int)w.b_lor);
    CHECK(w.sc_prod == prod, "signed char prod %d, expected %d", w.sc_prod, prod);
    CHECK(w.ld_sum == ld, "long double sum %Lg, expected %Lg", w.ld_sum, ld);
    CHECK(__real__ w.z_sum == zr && __imag__ w.z_sum == zi, "complex sum %g%+gi",
          __real__ w.z_sum, __imag__ w.z_sum);
    CHECK(w.maxloc.v == maxv && w.maxloc.i == maxi, "maxloc (%d, %d), expected (%d, %d)",
          w.maxloc.v, w.maxloc.i, maxv, maxi);
    CHECK(w.minloc.v == 0 && w.minloc.i == mini, "minloc (%g, %d), expected (0, %d)",
          w.minloc.v, w.minloc.i, mini);
    CHECK(w.l_band == band, "long band %lx, expected %lx", (unsigned long)w.l_band,
          (unsigned long)band);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const MPI_Aint words = 8 * kN + 2 * kBig;
    int* base = ints((size_t)words, -1);
    MPI_Win win;
    MPI_OK(MPI_Win_create(base, words * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    run(win, base, words);
    MPI_OK(MPI_Win_free(&win));
    op_matrix();
    free(base);
    MPI_Finalize();
    if (rank == 0) printf("rma_types: %d ranks ok\n", size);
    return 0;
}
