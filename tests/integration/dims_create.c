/* MPI_Dims_create (MPI 3.1 section 7.5.2): the dimensions multiply to nnodes,
 * come in non-increasing order, fixed entries are kept, and they are "as
 * close to each other as possible": no factorization has a smaller spread
 * between its largest and smallest dimension (checked by enumerating them
 * all for every nnodes up to 1000 in 2 to 4 dimensions). Where several are
 * as close, the choice is the one Open MPI and MPICH make (360 in 3-D is
 * 10x6x6), and large node counts factor exactly (10^9 in 3-D is 1000^3).
 */
#include "common.h"

/* Enumerates factorizations f1 >= f2 >= ... >= fk of n; the least spread. */
static int least_spread(int n, int k, int first, int maxf, int depth) {
    if (k == 1) {
        if (n > maxf) return -1;
        const int hi = depth == 0 ? n : first;
        return hi - n;
    }
    int best = -1;
    for (int f = maxf < n ? maxf : n; f >= 1; --f) {
        if (n % f) continue;
        long p = 1;
        for (int i = 0; i < k; ++i) p *= f;
        if (p < n) break; /* k factors of at most f cannot make n */
        const int s = least_spread(n / f, k - 1, depth == 0 ? f : first, f, depth + 1);
        if (s >= 0 && (best < 0 || s < best)) best = s;
    }
    return best;
}

static void check_dims(int n, int k, const int* fixed) {
    int d[4];
    long product = 1;
    for (int i = 0; i < k; ++i) d[i] = fixed ? fixed[i] : 0;
    MPI_OK(MPI_Dims_create(n, k, d));
    int free_min = 1 << 30, free_max = 0, prev = 1 << 30;
    for (int i = 0; i < k; ++i) {
        product *= d[i];
        if (fixed && fixed[i]) {
            CHECK(d[i] == fixed[i], "n=%d: fixed dims[%d] changed to %d", n, i, d[i]);
            continue;
        }
        CHECK(d[i] >= 1 && d[i] <= prev, "n=%d k=%d: dims[%d]=%d not non-increasing", n, k, i,
              d[i]);
        prev = d[i];
        if (d[i] < free_min) free_min = d[i];
        if (d[i] > free_max) free_max = d[i];
    }
    CHECK(product == n, "n=%d k=%d: the product is %ld", n, k, product);
    if (!fixed) {
        const int best = least_spread(n, k, 0, n, 0);
        CHECK(free_max - free_min == best, "n=%d k=%d: spread %d, the least is %d", n, k,
              free_max - free_min, best);
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    for (int k = 2; k <= 4; ++k)
        for (int n = 1; n <= 1000; ++n) check_dims(n, k, NULL);
    const int fixed[4] = {0, 3, 0, 0};
    for (int n = 3; n <= 600; n += 3) check_dims(n, 4, fixed);
    int d[3] = {0, 0, 0};
    MPI_OK(MPI_Dims_create(1000000000, 3, d));
    CHECK(d[0] == 1000 && d[1] == 1000 && d[2] == 1000, "10^9 in 3-D: %d x %d x %d", d[0], d[1],
          d[2]);
    d[0] = d[1] = d[2] = 0;
    MPI_OK(MPI_Dims_create(360, 3, d));
    CHECK(d[0] == 10 && d[1] == 6 && d[2] == 6, "360 in 3-D: %d x %d x %d", d[0], d[1], d[2]);
    d[0] = d[1] = 0;
    MPI_OK(MPI_Dims_create(72, 2, d));
    CHECK(d[0] == 9 && d[1] == 8, "72 in 2-D: %d x %d", d[0], d[1]);
    d[0] = d[1] = d[2] = 0;
    MPI_OK(MPI_Dims_create(2147483647, 3, d));
    CHECK(d[0] == 2147483647 && d[1] == 1 && d[2] == 1, "a large prime: %d x %d x %d", d[0],
          d[1], d[2]);
    MPI_Finalize();
    return 0;
}
