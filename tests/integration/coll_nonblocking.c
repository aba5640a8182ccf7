/* Nonblocking collectives: many in flight at once, on one communicator and
 * on several duplicates, completed in any order by Wait, Waitall and Test
 * loops; mixed with point-to-point traffic; with a datatype freed while the
 * operation is pending (small and large data); MPI_Request_free on an
 * in-flight MPI_Ibarrier; and the nonblocking neighbor collectives on a
 * periodic Cartesian grid (where a dimension of size 1 or 2 makes both
 * neighbors the same rank). Every result is checked exactly.
 */
#include "common.h"

#define NREQ 20

/* Every kind of collective started on comm before any is waited for. */
static void all_in_flight(MPI_Comm comm, long c, int use_test) {
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    const int root = n - 1;
    MPI_Request req[NREQ];
    int k = 0;
    int* bc = ints((size_t)c, -1);
    if (me == root)
        for (long i = 0; i < c; ++i) bc[i] = value(root, i);
    MPI_OK(MPI_Ibcast(bc, (int)c, MPI_INT, root, comm, &req[k++]));
    long long* ar_in = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* ar_out = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* sc_out = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* ex_out = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* rd_out = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    for (long i = 0; i < c; ++i) ar_in[i] = (long long)(me + 1) * (i + 1);
    MPI_OK(MPI_Iallreduce(ar_in, ar_out, (int)c, MPI_LONG_LONG, MPI_SUM, comm, &req[k++]));
    MPI_OK(MPI_Ibarrier(comm, &req[k++]));
    MPI_OK(MPI_Iscan(ar_in, sc_out, (int)c, MPI_LONG_LONG, MPI_SUM, comm, &req[k++]));
    MPI_OK(MPI_Iexscan(ar_in, ex_out, (int)c, MPI_LONG_LONG, MPI_SUM, comm, &req[k++]));
    MPI_OK(MPI_Ireduce(ar_in, rd_out, (int)c, MPI_LONG_LONG, MPI_SUM, 0, comm, &req[k++]));
    int* mine = ints((size_t)c, 0);
    for (long i = 0; i < c; ++i) mine[i] = value(me, i);
    int* ga = ints((size_t)(c * n), -1);
    int* ag = ints((size_t)(c * n), -1);
    MPI_OK(MPI_Igather(mine, (int)c, MPI_INT, ga, (int)c, MPI_INT, 0, comm, &req[k++]));
    MPI_OK(MPI_Iallgather(mine, (int)c, MPI_INT, ag, (int)c, MPI_INT, comm, &req[k++]));
    int* a2a_out = ints((size_t)(c * n), 0);
    int* a2a_in = ints((size_t)(c * n), -1);
    for (int j = 0; j < n; ++j)
        for (long i = 0; i < c; ++i) a2a_out[j * c + i] = value(me * n + j, i);
    MPI_OK(MPI_Ialltoall(a2a_out, (int)c, MPI_INT, a2a_in, (int)c, MPI_INT, comm, &req[k++]));
    int* scat_src = ints((size_t)(c * n), 0);
    for (int j = 0; j < n; ++j)
        for (long i = 0; i < c; ++i) scat_src[j * c + i] = value(j + 100, i);
    int* scat = ints((size_t)c, -1);
    MPI_OK(MPI_Iscatter(scat_src, (int)c, MPI_INT, scat, (int)c, MPI_INT, root, comm, &req[k++]));
    int* counts = ints((size_t)n, (int)c);
    int* displs = ints((size_t)n, 0);
    for (int j = 0; j < n; ++j) displs[j] = (int)(j * c);
    int* agv = ints((size_t)(c * n), -1);
    MPI_OK(MPI_Iallgatherv(mine, (int)c, MPI_INT, agv, counts, displs, MPI_INT, comm, &req[k++]));
    int* a2av = ints((size_t)(c * n), -1);
    MPI_OK(MPI_Ialltoallv(a2a_out, counts, displs, MPI_INT, a2av, counts, displs, MPI_INT, comm,
                          &req[k++]));
    long long* rsb = (long long*)xmalloc(sizeof(long long) * (size_t)(c / n + 1));
    MPI_OK(MPI_Ireduce_scatter_block(ar_in, rsb, (int)(c / n), MPI_LONG_LONG, MPI_SUM, comm,
                                     &req[k++]));
    /* A derived type freed right after the start. */
    MPI_Datatype pair;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MPI_OK(MPI_Type_commit(&pair));
    int* gv = ints((size_t)(c * n), -1);
    int* pcounts = ints((size_t)n, (int)(c / 2));
    int* pdispls = ints((size_t)n, 0);
    for (int j = 0; j < n; ++j) pdispls[j] = (int)(j * (c / 2));
    MPI_OK(MPI_Igatherv(mine, (int)(c / 2), pair, gv, pcounts, pdispls, pair, 0, comm, &req[k++]));
    MPI_OK(MPI_Type_free(&pair));

    if (use_test) {
        int done = 0;
        while (!done) MPI_OK(MPI_Testall(k, req, &done, MPI_STATUSES_IGNORE));
    } else {
        /* Complete them in reverse order, one by one. */
        for (int i = k - 1; i >= 0; --i) {
            MPI_OK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
            CHECK(req[i] == MPI_REQUEST_NULL, "MPI_Wait left the request non-null");
        }
    }

    for (long i = 0; i < c; ++i) CHECK(bc[i] == value(root, i), "Ibcast element %ld", i);
    for (long i = 0; i < c; ++i) {
        long long w = (long long)n * (n + 1) / 2 * (i + 1);
        CHECK(ar_out[i] == w, "Iallreduce element %ld: %lld, expected %lld", i, ar_out[i], w);
        CHECK(sc_out[i] == (long long)(me + 1) * (me + 2) / 2 * (i + 1), "Iscan element %ld", i);
        if (me > 0) CHECK(ex_out[i] == (long long)me * (me + 1) / 2 * (i + 1), "Iexscan %ld", i);
        if (me == 0) CHECK(rd_out[i] == w, "Ireduce element %ld", i);
        CHECK(scat[i] == value(me + 100, i), "Iscatter element %ld", i);
    }
    for (int r = 0; r < n; ++r)
        for (long i = 0; i < c; ++i) {
            if (me == 0) CHECK(ga[r * c + i] == value(r, i), "Igather block %d element %ld", r, i);
            CHECK(ag[r * c + i] == value(r, i), "Iallgather block %d element %ld", r, i);
            CHECK(agv[r * c + i] == value(r, i), "Iallgatherv block %d element %ld", r, i);
            CHECK(a2a_in[r * c + i] == value(r * n + me, i), "Ialltoall block %d", r);
            CHECK(a2av[r * c + i] == value(r * n + me, i), "Ialltoallv block %d", r);
            if (me == 0 && i < 2 * (c / 2))
                CHECK(gv[r * 2 * (c / 2) + i] == value(r, i), "Igatherv (pair type) block %d", r);
        }
    for (long i = 0; i < c / n; ++i) {
        long idx = (c / n) * me + i;
        CHECK(rsb[i] == (long long)n * (n + 1) / 2 * (idx + 1), "Ireduce_scatter_block %ld", i);
    }
    free(bc), free(ar_in), free(ar_out), free(sc_out), free(ex_out), free(rd_out), free(mine);
    free(ga), free(ag), free(a2a_out), free(a2a_in), free(scat_src), free(scat), free(counts);
    free(displs), free(agv), free(a2av), free(rsb), free(gv), free(pcounts), free(pdispls);
}

/* Several communicators, each with collectives in flight, plus a ring of
 * point-to-point messages on MPI_COMM_WORLD, all completed by one Waitall. */
static void several_comms(int me, int n) {
    enum { NC = 3, C = 1000 };
    MPI_Comm comms[NC];
    for (int i = 0; i < NC; ++i) MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
    MPI_Request req[3 * NC + 2];
    int k = 0;
    long long in[NC][C], out[NC][C];
    int bc[NC][C];
    for (int i = 0; i < NC; ++i) {
        for (int j = 0; j < C; ++j) in[i][j] = (long long)(me + i) * (j + 1);
        for (int j = 0; j < C; ++j) bc[i][j] = me == i % n ? value(i, j) : -1;
        /* Started in a different order on each communicator. */
        if (i % 2) {
            MPI_OK(MPI_Ibcast(bc[i], C, MPI_INT, i % n, comms[i], &req[k++]));
            MPI_OK(MPI_Iallreduce(in[i], out[i], C, MPI_LONG_LONG, MPI_SUM, comms[i], &req[k++]));
        } else {
            MPI_OK(MPI_Iallreduce(in[i], out[i], C, MPI_LONG_LONG, MPI_SUM, comms[i], &req[k++]));
            MPI_OK(MPI_Ibcast(bc[i], C, MPI_INT, i % n, comms[i], &req[k++]));
        }
        MPI_OK(MPI_Ibarrier(comms[i], &req[k++]));
    }
    int sendv = value(me, 7), recvv = -1;
    MPI_OK(MPI_Irecv(&recvv, 1, MPI_INT, (me - 1 + n) % n, 5, MPI_COMM_WORLD, &req[k++]));
    MPI_OK(MPI_Isend(&sendv, 1, MPI_INT, (me + 1) % n, 5, MPI_COMM_WORLD, &req[k++]));
    MPI_OK(MPI_Waitall(k, req, MPI_STATUSES_IGNORE));
    CHECK(recvv == value((me - 1 + n) % n, 7), "ring message");
    for (int i = 0; i < NC; ++i)
        for (int j = 0; j < C; ++j) {
            long long w = 0;
            for (int r = 0; r < n; ++r) w += (long long)(r + i) * (j + 1);
            CHECK(out[i][j] == w, "Iallreduce on duplicate %d element %d", i, j);
            CHECK(bc[i][j] == value(i, j), "Ibcast on duplicate %d element %d", i, j);
        }
    for (int i = 0; i < NC; ++i) MPI_OK(MPI_Comm_free(&comms[i]));
}

/* MPI_Request_free on an in-flight Ibarrier: the barrier still completes
 * (the next collectives on the communicator work and match), and a late rank
 * does not make anyone hang. */
static void free_ibarrier(int me, int n) {
    for (int round = 0; round < 5; ++round) {
        MPI_Request r;
        if (me == n - 1) {
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.001) {
            }
        }
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "Request_free did not null the handle");
        int x = me, sum = 0;
        MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == n * (n - 1) / 2, "Allreduce after a freed Ibarrier: %d", sum);
    }
}

/* Ineighbor_* on a periodic 1-D ring (n = 1 or 2: both neighbors are the
 * same rank, told apart by the direction). */
static void neighbors(int me, int n) {
    MPI_Comm ring;
    int dims[1] = {n}, periods[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int left, right;
    MPI_OK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    enum { C = 300 };
    int* mine = ints(C, 0);
    for (int i = 0; i < C; ++i) mine[i] = value(me, i);
    int* ag = ints(2 * C, -1);
    MPI_Request req[3];
    MPI_OK(MPI_Ineighbor_allgather(mine, C, MPI_INT, ag, C, MPI_INT, ring, &req[0]));
    int* out = ints(2 * C, 0);
    for (int i = 0; i < C; ++i) out[i] = value(1000 + me, i), out[C + i] = value(2000 + me, i);
    int* a2a = ints(2 * C, -1);
    MPI_OK(MPI_Ineighbor_alltoall(out, C, MPI_INT, a2a, C, MPI_INT, ring, &req[1]));
    int counts[2] = {C, C}, displs[2] = {C, 0};
    int* a2av = ints(2 * C, -1);
    MPI_OK(MPI_Ineighbor_alltoallv(out, counts, displs, MPI_INT, a2av, counts, displs, MPI_INT,
                                   ring, &req[2]));
    MPI_OK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < C; ++i) {
        CHECK(ag[i] == value(left, i) && ag[C + i] == value(right, i), "Ineighbor_allgather %d", i);
        /* Block 0 goes to the left (arrives there as "from the right") and
         * block 1 to the right. */
        CHECK(a2a[i] == value(2000 + left, i), "Ineighbor_alltoall from the left, %d", i);
        CHECK(a2a[C + i] == value(1000 + right, i), "Ineighbor_alltoall from the right, %d", i);
        CHECK(a2av[C + i] == value(1000 + left, i) && a2av[i] == value(2000 + right, i),
              "Ineighbor_alltoallv element %d", i);
    }
    free(mine), free(ag), free(out), free(a2a), free(a2av);
    MPI_OK(MPI_Comm_free(&ring));
}

/* Ibcast and Ireduce of a vector type (32 KiB of data in a 64 KiB span),
 * freed right after the starts; the Ireduce's root reduces in place. The
 * gaps between the vector's elements must stay as they were. */
static void large_vectors(MPI_Comm comm, int me, int n) {
    enum { E = 4096 };
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(E, 1, 2, MPI_DOUBLE, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    double* bc = (double*)xmalloc(sizeof(double) * 2 * E);
    double* in = (double*)xmalloc(sizeof(double) * 2 * E);
    double* rd = (double*)xmalloc(sizeof(double) * 2 * E);
    const int root = n / 2;
    for (int i = 0; i < 2 * E; ++i) {
        bc[i] = me == root && i % 2 == 0 ? 3.0 * i : -1.0;
        in[i] = i % 2 ? -2.0 : (double)(me + 1) * (i + 1);
        rd[i] = me == root ? in[i] : -3.0;
    }
    MPI_Request req[2];
    MPI_OK(MPI_Ibcast(bc, 1, every_other, root, comm, &req[0]));
    MPI_OK(MPI_Ireduce(me == root ? MPI_IN_PLACE : in, rd, 1, every_other, MPI_SUM, root, comm,
                       &req[1]));
    MPI_OK(MPI_Type_free(&every_other));
    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 2 * E; ++i) {
        const double b = i % 2 ? -1.0 : 3.0 * i;
        CHECK(bc[i] == b, "Ibcast of a vector [%d] = %g, expected %g", i, bc[i], b);
        if (me != root) continue;
        const double r = i % 2 ? -2.0 : (double)n * (n + 1) / 2 * (i + 1);
        CHECK(rd[i] == r, "Ireduce of a vector [%d] = %g, expected %g", i, rd[i], r);
    }
    free(bc), free(in), free(rd);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const long sizes[] = {0, 1, 40, 3000, 70000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i)
        if (sizes[i] * n <= (1L << 20)) {
            all_in_flight(MPI_COMM_WORLD, sizes[i], 0);
            all_in_flight(MPI_COMM_WORLD, sizes[i], 1);
        }
    several_comms(me, n);
    large_vectors(MPI_COMM_WORLD, me, n);
    free_ibarrier(me, n);
    neighbors(me, n);
    if (me == 0) printf("coll_nonblocking: %d ranks OK\n", n);
    MPI_Finalize();
    return 0;
}
