/* MPI_IN_PLACE in every collective that allows it, with its exact semantics,
 * at sizes across the algorithm thresholds (collectives/tuning.hpp):
 *   Gather(v)/Scatter(v): at the root only (the root's block stays where it is);
 *   Allgather(v): each rank's block is already in place in recvbuf;
 *   Alltoall(v,w): the data is taken from recvbuf and replaced;
 *   Reduce (root), Allreduce, Scan, Exscan: input from recvbuf;
 *   Reduce_scatter(_block): the whole input in recvbuf, result at its start.
 * Sum of long longs: exact. Elements outside what a call may write keep a
 * sentinel.
 */
#include "common.h"

#define SENTINEL (-5555555)

#define EXPECT_BLOCK(buf, from, count, what)                                                    \
    do {                                                                                        \
        for (long i_ = 0; i_ < (long)(count); ++i_)                                             \
            if ((buf)[i_] != value((from), i_))                                                 \
                test_fail(__FILE__, __LINE__, "%s: element %ld from rank %d is %d", (what), i_, \
                          (int)(from), (buf)[i_]);                                              \
    } while (0)

static void data_movement(int me, int n, long count) {
    const int root = (int)(count % n);
    /* Gather: the root's own block is already in place. */
    int* all = ints((size_t)(count * n), SENTINEL);
    int* mine = ints((size_t)count, 0);
    for (long i = 0; i < count; ++i) mine[i] = value(me, i);
    if (me == root) memcpy(all + root * count, mine, sizeof(int) * (size_t)count);
    MPI_OK(MPI_Gather(me == root ? MPI_IN_PLACE : mine, (int)count, MPI_INT, all, (int)count,
                      MPI_INT, root, MPI_COMM_WORLD));
    if (me == root)
        for (int r = 0; r < n; ++r) EXPECT_BLOCK(all + r * count, r, count, "Gather in place");
    /* Scatter: the root keeps its block in sendbuf, recvbuf MPI_IN_PLACE. */
    int* back = ints((size_t)count, SENTINEL);
    MPI_OK(MPI_Scatter(all, (int)count, MPI_INT, me == root ? MPI_IN_PLACE : back, (int)count,
                       MPI_INT, root, MPI_COMM_WORLD));
    if (me != root)
        EXPECT_BLOCK(back, me, count, "Scatter in place");
    else
        for (long i = 0; i < count; ++i) CHECK(back[i] == SENTINEL, "Scatter wrote the root's");
    free(back);
    /* Gatherv / Scatterv in place at the root, blocks of count + r. */
    int *counts = ints((size_t)n, 0), *displs = ints((size_t)n, 0);
    long total = 0;
    for (int r = 0; r < n; ++r)
        counts[r] = (int)count + r, displs[r] = (int)total, total += counts[r] + 1;
    int* vall = ints((size_t)total, SENTINEL);
    int* vmine = ints((size_t)(count + me), 0);
    for (long i = 0; i < count + me; ++i) vmine[i] = value(me, i);
    if (me == root) memcpy(vall + displs[root], vmine, sizeof(int) * (size_t)(count + me));
    MPI_OK(MPI_Gatherv(me == root ? MPI_IN_PLACE : vmine, (int)count + me, MPI_INT, vall, counts,
                       displs, MPI_INT, root, MPI_COMM_WORLD));
    if (me == root)
        for (int r = 0; r < n; ++r) {
            EXPECT_BLOCK(vall + displs[r], r, counts[r], "Gatherv in place");
            CHECK(vall[displs[r] + counts[r]] == SENTINEL, "Gatherv wrote a gap");
        }
    int* vback = ints((size_t)(count + me), SENTINEL);
    MPI_OK(MPI_Scatterv(vall, counts, displs, MPI_INT, me == root ? MPI_IN_PLACE : vback,
                        (int)count + me, MPI_INT, root, MPI_COMM_WORLD));
    if (me != root) EXPECT_BLOCK(vback, me, count + me, "Scatterv in place");
    free(vback), free(vall), free(vmine);

    /* Allgather / Allgatherv in place. */
    for (long i = 0; i < count * n; ++i) all[i] = SENTINEL;
    memcpy(all + me * count, mine, sizeof(int) * (size_t)count);
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, (int)count, MPI_INT,
                         MPI_COMM_WORLD));
    for (int r = 0; r < n; ++r) EXPECT_BLOCK(all + r * count, r, count, "Allgather in place");
    vall = ints((size_t)total, SENTINEL);
    for (long i = 0; i < counts[me]; ++i) vall[displs[me] + i] = value(me, i);
    MPI_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, vall, counts, displs, MPI_INT,
                          MPI_COMM_WORLD));
    for (int r = 0; r < n; ++r) {
        EXPECT_BLOCK(vall + displs[r], r, counts[r], "Allgatherv in place");
        CHECK(vall[displs[r] + counts[r]] == SENTINEL, "Allgatherv wrote a gap");
    }
    free(vall);

    /* Alltoall in place: block j of rank r holds value(r * n + j). */
    for (int j = 0; j < n; ++j)
        for (long i = 0; i < count; ++i) all[j * count + i] = value(me * n + j, i);
    MPI_OK(
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, (int)count, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; ++r)
        EXPECT_BLOCK(all + r * count, r * n + me, count, "Alltoall in place");
    /* Alltoallv in place: (r + j) % 3 * count elements between r and j
     * (symmetric, as in-place requires), blocks in reverse order. */
    long vt = 0;
    for (int j = n - 1; j >= 0; --j)
        counts[j] = (int)(((me + j) % 3) * count), displs[j] = (int)vt, vt += counts[j] + 1;
    vall = ints((size_t)vt, SENTINEL);
    for (int j = 0; j < n; ++j)
        for (long i = 0; i < counts[j]; ++i) vall[displs[j] + i] = value(me * n + j, i);
    MPI_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, vall, counts, displs, MPI_INT,
                         MPI_COMM_WORLD));
    for (int j = 0; j < n; ++j) {
        EXPECT_BLOCK(vall + displs[j], j * n + me, counts[j], "Alltoallv in place");
        CHECK(vall[displs[j] + counts[j]] == SENTINEL, "Alltoallv wrote a gap");
    }
    /* Alltoallw in place: same blocks, byte displacements. */
    MPI_Datatype* types = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
    int* bdispls = ints((size_t)n, 0);
    for (int j = 0; j < n; ++j) types[j] = MPI_INT, bdispls[j] = displs[j] * (int)sizeof(int);
    for (int j = 0; j < n; ++j)
        for (long i = 0; i < counts[j]; ++i) vall[displs[j] + i] = value(me * n + j, i);
    MPI_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, vall, counts, bdispls, types,
                         MPI_COMM_WORLD));
    for (int j = 0; j < n; ++j)
        EXPECT_BLOCK(vall + displs[j], j * n + me, counts[j], "Alltoallw in place");
    free(types), free(bdispls), free(vall), free(counts), free(displs), free(all), free(mine);
}

static long long contrib(int r, long i) {
    return (long long)(r + 1) * (i % 977 + 1);
}
static long long range_sum(int lo, int hi, long i) {
    long long s = 0;
    for (int r = lo; r < hi; ++r) s += contrib(r, i);
    return s;
}

static void reductions(int me, int n, long count) {
    long long* buf = (long long*)xmalloc(sizeof(long long) * (size_t)(count + 1));
#define FILL() \
    for (long i = 0; i < count; ++i) buf[i] = contrib(me, i)
    const int roots[] = {0, n / 2, n - 1};
    for (int k = 0; k < 3; ++k) {
        FILL();
        MPI_OK(MPI_Reduce(me == roots[k] ? MPI_IN_PLACE : buf, buf, (int)count, MPI_LONG_LONG,
                          MPI_SUM, roots[k], MPI_COMM_WORLD));
        if (me == roots[k])
            for (long i = 0; i < count; ++i)
                CHECK(buf[i] == range_sum(0, n, i), "Reduce in place, element %ld", i);
    }
    FILL();
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (long i = 0; i < count; ++i)
        CHECK(buf[i] == range_sum(0, n, i), "Allreduce in place, count %ld element %ld", count, i);
    FILL();
    MPI_OK(MPI_Scan(MPI_IN_PLACE, buf, (int)count, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (long i = 0; i < count; ++i)
        CHECK(buf[i] == range_sum(0, me + 1, i), "Scan in place, element %ld", i);
    FILL();
    MPI_OK(MPI_Exscan(MPI_IN_PLACE, buf, (int)count, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (me > 0)
        for (long i = 0; i < count; ++i)
            CHECK(buf[i] == range_sum(0, me, i), "Exscan in place, element %ld", i);
    const long block = count / n;
    FILL();
    MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, (int)block, MPI_LONG_LONG, MPI_SUM,
                                    MPI_COMM_WORLD));
    for (long i = 0; i < block; ++i)
        CHECK(buf[i] == range_sum(0, n, block * me + i), "Reduce_scatter_block in place, %ld", i);
    int* counts = ints((size_t)n, 0);
    long before = 0, total = 0;
    for (int r = 0; r < n; ++r) {
        counts[r] = (int)(r == n - 1 ? count - total : (count / n) * (r % 3) / 2);
        if (r < me) before += counts[r];
        total += counts[r];
    }
    FILL();
    MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, buf, counts, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (long i = 0; i < counts[me]; ++i)
        CHECK(buf[i] == range_sum(0, n, before + i), "Reduce_scatter in place, element %ld", i);
    free(counts), free(buf);
#undef FILL
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const long moves[] = {0, 1, 7, 1500, 12000, 70000};
    for (size_t k = 0; k < sizeof(moves) / sizeof(moves[0]); ++k)
        if (moves[k] * n <= (1L << 20)) data_movement(me, n, moves[k]);
    const long reds[] = {0, 1, 6, 2000, 40000, 100000};
    for (size_t k = 0; k < sizeof(reds) / sizeof(reds[0]); ++k) reductions(me, n, reds[k]);
    if (me == 0) printf("coll_inplace: %d ranks OK\n", n);
    MPI_Finalize();
    return 0;
}
