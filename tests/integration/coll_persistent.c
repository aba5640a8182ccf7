/* Persistent collectives (MPI 4.0 section 6.13): every blocking collective's
 * _init form, initialized once and started several times with MPI_Start and
 * MPI_Startall, the buffers refilled between starts (the data of each run
 * must come out, not the first run's); small and large reductions (the
 * shared-memory paths and the schedules), derived datatypes (small and
 * large) and a user operation freed after the initialization, neighborhood collectives on a
 * periodic ring, an intercommunicator; the life cycle of a persistent request
 * (inactive: Wait and Test return at once with an empty status; Start on an
 * active request, MPI_Request_free and MPI_Cancel of an active one are
 * errors); completion by Wait, Waitall, Test loops and Waitany.
 */
#include "common.h"

#define RUNS 4

static int me, n;

static long long expect_sum(int run, long i) { /* sum over ranks r of (r + 1) * (i + run) */
    return (long long)n * (n + 1) / 2 * (i + run);
}

static void fill_ll(long long* v, long c, int run) {
    for (long i = 0; i < c; ++i) v[i] = (long long)(me + 1) * (i + run);
}

/* Allreduce, Reduce, Scan, Exscan, Reduce_scatter(_block) of c long longs. */
static void reductions(MPI_Comm comm, long c) {
    long long* in = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1) * (size_t)n);
    long long* ar = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* ip = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* rd = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* sc = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* ex = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* rsb = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    long long* rs = (long long*)xmalloc(sizeof(long long) * (size_t)(c + 1));
    int* rcounts = ints((size_t)n, (int)c);
    const int root = n / 2;
    MPI_Request req[7];
    MPI_OK(
        MPI_Allreduce_init(in, ar, (int)c, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &req[0]));
    MPI_OK(MPI_Allreduce_init(MPI_IN_PLACE, ip, (int)c, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL,
                              &req[1]));
    MPI_OK(MPI_Reduce_init(in, rd, (int)c, MPI_LONG_LONG, MPI_SUM, root, comm, MPI_INFO_NULL,
                           &req[2]));
    MPI_OK(MPI_Scan_init(in, sc, (int)c, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &req[3]));
    MPI_OK(MPI_Exscan_init(in, ex, (int)c, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &req[4]));
    MPI_OK(MPI_Reduce_scatter_block_init(in, rsb, (int)c, MPI_LONG_LONG, MPI_SUM, comm,
                                         MPI_INFO_NULL, &req[5]));
    MPI_OK(MPI_Reduce_scatter_init(in, rs, rcounts, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL,
                                   &req[6]));
    for (int run = 1; run <= RUNS; ++run) {
        /* in holds n blocks of c for the reduce-scatters; the first block for the others. */
        for (int b = 0; b < n; ++b) fill_ll(in + (size_t)b * (size_t)c, c, run + b);
        fill_ll(ip, c, run);
        for (long i = 0; i < c; ++i) ar[i] = rd[i] = sc[i] = ex[i] = rsb[i] = rs[i] = -1;
        if (run % 2) {
            MPI_OK(MPI_Startall(7, req));
            MPI_OK(MPI_Waitall(7, req, MPI_STATUSES_IGNORE));
        } else {
            for (int k = 6; k >= 0; --k) MPI_OK(MPI_Start(&req[k]));
            int done = 0;
            while (!done) MPI_OK(MPI_Testall(7, req, &done, MPI_STATUSES_IGNORE));
        }
        for (long i = 0; i < c; ++i) {
            CHECK(ar[i] == expect_sum(run, i), "run %d allreduce[%ld] %lld", run, i, ar[i]);
            CHECK(ip[i] == expect_sum(run, i), "run %d in-place allreduce[%ld] %lld", run, i,
                  ip[i]);
            if (me == root)
                CHECK(rd[i] == expect_sum(run, i), "run %d reduce[%ld] %lld", run, i, rd[i]);
            const long long scan = (long long)(me + 1) * (me + 2) / 2 * (i + run);
            CHECK(sc[i] == scan, "run %d scan[%ld] %lld", run, i, sc[i]);
            if (me > 0)
                CHECK(ex[i] == (long long)me * (me + 1) / 2 * (i + run), "run %d exscan[%ld] %lld",
                      run, i, ex[i]);
            /* Block me of every rank's input: (r + 1) * (i + run + me). */
            const long long block = (long long)n * (n + 1) / 2 * (i + run + me);
            CHECK(rsb[i] == block, "run %d reduce_scatter_block[%ld] %lld", run, i, rsb[i]);
            CHECK(rs[i] == block, "run %d reduce_scatter[%ld] %lld", run, i, rs[i]);
        }
    }
    for (int k = 0; k < 7; ++k) {
        MPI_OK(MPI_Request_free(&req[k]));
        CHECK(req[k] == MPI_REQUEST_NULL, "freed request %d not null", k);
    }
    free(in), free(ar), free(ip), free(rd), free(sc), free(ex), free(rsb), free(rs), free(rcounts);
}

/* Barrier, Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v,w) of c ints. */
static void movement(MPI_Comm comm, long c) {
    const int root = n - 1;
    int* mine = ints((size_t)c, 0);
    int* bc = ints((size_t)c, 0);
    int* ga = ints((size_t)(c * n), 0);
    int* gv = ints((size_t)(c * n), 0);
    int* ag = ints((size_t)(c * n), 0);
    int* agv = ints((size_t)(c * n), 0);
    int* src = ints((size_t)(c * n), 0);
    int* sc = ints((size_t)c, 0);
    int* scv = ints((size_t)c, 0);
    int* a2a = ints((size_t)(c * n), 0);
    int* a2av = ints((size_t)(c * n), 0);
    int* a2aw = ints((size_t)(c * n), 0);
    int* counts = ints((size_t)n, (int)c);
    int* displs = ints((size_t)n, 0);
    int* bdispls = ints((size_t)n, 0);
    MPI_Datatype* types = (MPI_Datatype*)xmalloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int j = 0; j < n; ++j) {
        displs[j] = (int)(j * c);
        bdispls[j] = (int)(j * c * (long)sizeof(int));
        types[j] = MPI_INT;
    }
    MPI_Request req[12];
    int k = 0;
    MPI_OK(MPI_Barrier_init(comm, MPI_INFO_NULL, &req[k++]));
    MPI_OK(MPI_Bcast_init(bc, (int)c, MPI_INT, root, comm, MPI_INFO_NULL, &req[k++]));
    MPI_OK(MPI_Gather_init(mine, (int)c, MPI_INT, ga, (int)c, MPI_INT, root, comm, MPI_INFO_NULL,
                           &req[k++]));
    MPI_OK(MPI_Gatherv_init(mine, (int)c, MPI_INT, gv, counts, displs, MPI_INT, 0, comm,
                            MPI_INFO_NULL, &req[k++]));
    MPI_OK(MPI_Allgather_init(mine, (int)c, MPI_INT, ag, (int)c, MPI_INT, comm, MPI_INFO_NULL,
                              &req[k++]));
    MPI_OK(MPI_Allgatherv_init(mine, (int)c, MPI_INT, agv, counts, displs, MPI_INT, comm,
                               MPI_INFO_NULL, &req[k++]));
    MPI_OK(MPI_Scatter_init(src, (int)c, MPI_INT, sc, (int)c, MPI_INT, root, comm, MPI_INFO_NULL,
                            &req[k++]));
    MPI_OK(MPI_Scatterv_init(src, counts, displs, MPI_INT, scv, (int)c, MPI_INT, 0, comm,
                             MPI_INFO_NULL, &req[k++]));
    MPI_OK(MPI_Alltoall_init(src, (int)c, MPI_INT, a2a, (int)c, MPI_INT, comm, MPI_INFO_NULL,
                             &req[k++]));
    MPI_OK(MPI_Alltoallv_init(src, counts, displs, MPI_INT, a2av, counts, displs, MPI_INT, comm,
                              MPI_INFO_NULL, &req[k++]));
    MPI_OK(MPI_Alltoallw_init(src, counts, bdispls, types, a2aw, counts, bdispls, types, comm,
                              MPI_INFO_NULL, &req[k++]));
    for (int run = 1; run <= RUNS; ++run) {
        for (long i = 0; i < c; ++i) {
            mine[i] = value(me + run, i);
            bc[i] = me == root ? value(run, i) : -1;
        }
        /* Block j of src goes to rank j: value(me * n + j + run, i). */
        for (int j = 0; j < n; ++j)
            for (long i = 0; i < c; ++i) src[j * c + i] = value(me * n + j + run, i);
        for (long i = 0; i < c * n; ++i)
            ga[i] = gv[i] = ag[i] = agv[i] = a2a[i] = a2av[i] = a2aw[i] = -1;
        /* Started one by one, completed in an order that changes with the run. */
        for (int q = 0; q < k; ++q) MPI_OK(MPI_Start(&req[q]));
        for (int left = k; left > 0; --left) {
            int idx;
            MPI_Status st;
            MPI_OK(MPI_Waitany(k, req, &idx, &st));
            CHECK(idx != MPI_UNDEFINED, "Waitany found no active request with %d left", left);
            CHECK(req[idx] != MPI_REQUEST_NULL, "a persistent request was freed by Waitany");
        }
        int idx;
        MPI_OK(MPI_Waitany(k, req, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == MPI_UNDEFINED, "Waitany on inactive requests gave index %d", idx);
        for (long i = 0; i < c; ++i) {
            CHECK(bc[i] == value(run, i), "run %d bcast[%ld] = %d", run, i, bc[i]);
            CHECK(sc[i] == value(root * n + me + run, i), "run %d scatter[%ld] = %d", run, i,
                  sc[i]);
            CHECK(scv[i] == value(0 * n + me + run, i), "run %d scatterv[%ld] = %d", run, i,
                  scv[i]);
            for (int j = 0; j < n; ++j) {
                const long at = j * c + i;
                if (me == root)
                    CHECK(ga[at] == value(j + run, i), "run %d gather[%ld] = %d", run, at, ga[at]);
                if (me == 0)
                    CHECK(gv[at] == value(j + run, i), "run %d gatherv[%ld] = %d", run, at, gv[at]);
                CHECK(ag[at] == value(j + run, i), "run %d allgather[%ld] = %d", run, at, ag[at]);
                CHECK(agv[at] == value(j + run, i), "run %d allgatherv[%ld]", run, at);
                const int a = value(j * n + me + run, i);
                CHECK(a2a[at] == a, "run %d alltoall[%ld] = %d, expected %d", run, at, a2a[at], a);
                CHECK(a2av[at] == a, "run %d alltoallv[%ld]", run, at);
                CHECK(a2aw[at] == a, "run %d alltoallw[%ld]", run, at);
            }
        }
    }
    for (int q = 0; q < k; ++q) MPI_OK(MPI_Request_free(&req[q]));
    free(mine), free(bc), free(ga), free(gv), free(ag), free(agv), free(src), free(sc), free(scv);
    free(a2a), free(a2av), free(a2aw), free(counts), free(displs), free(bdispls), free(types);
}

static void max_abs(void* in, void* inout, int* len, MPI_Datatype* type) {
    (void)type;
    double* a = (double*)in;
    double* b = (double*)inout;
    for (int i = 0; i < *len; ++i) {
        double x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
        b[i] = x > y ? a[i] : b[i];
    }
}

/* A user operation and a vector type, freed once the requests exist. */
static void freed_objects(MPI_Comm comm) {
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(8, 1, 2, MPI_DOUBLE, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    MPI_Op op;
    MPI_OK(MPI_Op_create(max_abs, 1, &op));
    double in[16], out[16], bc[16];
    MPI_Request req[2];
    MPI_OK(MPI_Allreduce_init(in, out, 16, MPI_DOUBLE, op, comm, MPI_INFO_NULL, &req[0]));
    MPI_OK(MPI_Bcast_init(bc, 1, every_other, 0, comm, MPI_INFO_NULL, &req[1]));
    MPI_OK(MPI_Type_free(&every_other));
    MPI_OK(MPI_Op_free(&op));
    for (int run = 1; run <= RUNS; ++run) {
        for (int i = 0; i < 16; ++i) {
            in[i] = (me % 2 ? -1.0 : 1.0) * (me + 1) * (i + run);
            out[i] = 12345.0;
            bc[i] = me == 0 ? 100.0 * run + i : -1.0;
        }
        MPI_OK(MPI_Startall(2, req));
        MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 16; ++i) {
            const double want = ((n - 1) % 2 ? -1.0 : 1.0) * n * (i + run);
            CHECK(out[i] == want, "run %d max_abs[%d] = %g, expected %g", run, i, out[i], want);
            const double b = i % 2 && me != 0 ? -1.0 : 100.0 * run + i;
            CHECK(bc[i] == b, "run %d bcast of a vector [%d] = %g, expected %g", run, i, bc[i], b);
        }
    }
    MPI_OK(MPI_Request_free(&req[0]));
    MPI_OK(MPI_Request_free(&req[1]));
}

/* Bcast and Reduce of a vector type too large to combine (32 KiB of data in
 * a 64 KiB span), the type freed once the requests exist; the Reduce's root
 * reduces in place. The gaps between the vector's elements must stay as
 * they were. */
static void large_vectors(MPI_Comm comm) {
    enum { E = 4096 };
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(E, 1, 2, MPI_DOUBLE, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    double* bc = (double*)xmalloc(sizeof(double) * 2 * E);
    double* in = (double*)xmalloc(sizeof(double) * 2 * E);
    double* rd = (double*)xmalloc(sizeof(double) * 2 * E);
    const int root = n - 1;
    MPI_Request req[2];
    MPI_OK(MPI_Bcast_init(bc, 1, every_other, root, comm, MPI_INFO_NULL, &req[0]));
    MPI_OK(MPI_Reduce_init(me == root ? MPI_IN_PLACE : in, rd, 1, every_other, MPI_SUM, root, comm,
                           MPI_INFO_NULL, &req[1]));
    MPI_OK(MPI_Type_free(&every_other));
    for (int run = 1; run <= RUNS; ++run) {
        for (int i = 0; i < 2 * E; ++i) {
            bc[i] = me == root && i % 2 == 0 ? 10.0 * run + i : -1.0;
            in[i] = i % 2 ? -2.0 : (double)(me + 1) * (i + run);
            rd[i] = me == root ? in[i] : -3.0;
        }
        MPI_OK(MPI_Startall(2, req));
        MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 2 * E; ++i) {
            const double b = i % 2 ? -1.0 : 10.0 * run + i;
            CHECK(bc[i] == b, "run %d bcast of a large vector [%d] = %g, expected %g", run, i,
                  bc[i], b);
            if (me != root) continue;
            const double r = i % 2 ? -2.0 : (double)expect_sum(run, i);
            CHECK(rd[i] == r, "run %d reduce of a large vector [%d] = %g, expected %g", run, i,
                  rd[i], r);
        }
    }
    MPI_OK(MPI_Request_free(&req[0]));
    MPI_OK(MPI_Request_free(&req[1]));
    free(bc), free(in), free(rd);
}

/* The life cycle of a persistent collective request. */
static void life_cycle(MPI_Comm comm) {
    MPI_Request req;
    long long x = me, y = -1;
    MPI_OK(MPI_Allreduce_init(&x, &y, 1, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &req));
    /* Inactive: Wait and Test return at once with an empty status. */
    MPI_Status st;
    st.MPI_SOURCE = 77;
    st.MPI_TAG = 77;
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(req != MPI_REQUEST_NULL, "Wait freed an inactive persistent request");
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "empty status expected: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    int flag = 0;
    MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "Test of an inactive request: flag false");
    MPI_OK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "Request_get_status of an inactive request: flag false");
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Start(&req));
    /* Errors on an active request (the operation goes on). */
    CHECK(error_class(MPI_Start(&req)) == MPI_ERR_REQUEST, "Start of an active request");
    MPI_Request copy = req;
    CHECK(error_class(MPI_Request_free(&copy)) == MPI_ERR_REQUEST,
          "Request_free of an active persistent collective request");
    copy = req;
    CHECK(error_class(MPI_Cancel(&copy)) == MPI_ERR_REQUEST,
          "Cancel of an active persistent collective request");
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(y == (long long)n * (n - 1) / 2, "allreduce %lld", y);
    CHECK(st.MPI_ERROR == MPI_SUCCESS, "status error %d", st.MPI_ERROR);
    /* Started again after every other member's operation: still the same request. */
    x = 2 * me;
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Start(&req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(y == (long long)n * (n - 1), "second allreduce %lld", y);
    CHECK(error_class(MPI_Allreduce_init(&x, &y, 1, MPI_LONG_LONG, MPI_SUM, comm, (MPI_Info)12345,
                                         &copy)) == MPI_ERR_INFO,
          "an invalid info object");
    MPI_OK(MPI_Request_free(&req));
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
}

/* Two persistent requests started in opposite orders on odd and even ranks,
 * interleaved with blocking and nonblocking collectives: each run is its
 * request's own (a property of this implementation: the standard asks for
 * the same order everywhere). */
static void interleaved(MPI_Comm comm) {
    long long a = 0, b = 0, ra = -1, rb = -1;
    MPI_Request pr[2];
    MPI_OK(MPI_Allreduce_init(&a, &ra, 1, MPI_LONG_LONG, MPI_SUM, comm, MPI_INFO_NULL, &pr[0]));
    MPI_OK(MPI_Allreduce_init(&b, &rb, 1, MPI_LONG_LONG, MPI_MAX, comm, MPI_INFO_NULL, &pr[1]));
    for (int run = 1; run <= 50; ++run) {
        a = me + run;
        b = me * run;
        if (me % 2) {
            MPI_OK(MPI_Start(&pr[1]));
            MPI_OK(MPI_Start(&pr[0]));
        } else {
            MPI_OK(MPI_Start(&pr[0]));
            MPI_OK(MPI_Start(&pr[1]));
        }
        long long s = 1, t = 0;
        MPI_Request nb;
        MPI_OK(MPI_Iallreduce(&s, &t, 1, MPI_LONG_LONG, MPI_SUM, comm, &nb));
        MPI_OK(MPI_Wait(&pr[run % 2], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&nb, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&pr[1 - run % 2], MPI_STATUS_IGNORE));
        CHECK(t == n, "iallreduce %lld", t);
        CHECK(ra == (long long)n * (n - 1) / 2 + (long long)n * run, "run %d sum %lld", run, ra);
        CHECK(rb == (long long)(n - 1) * run, "run %d max %lld", run, rb);
    }
    MPI_OK(MPI_Request_free(&pr[0]));
    MPI_OK(MPI_Request_free(&pr[1]));
}

/* Neighborhood collectives on a periodic ring. */
static void neighbors(MPI_Comm world) {
    int dims[1] = {n}, periods[1] = {1};
    MPI_Comm ring;
    MPI_OK(MPI_Cart_create(world, 1, dims, periods, 0, &ring));
    int left, right;
    MPI_OK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    int send[2], ag[2], a2a[2], a2av[2], a2aw[2], agv[2];
    int counts[2] = {1, 1}, displs[2] = {0, 1};
    MPI_Aint bdispls[2] = {0, sizeof(int)};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Request req[5];
    MPI_OK(MPI_Neighbor_allgather_init(send, 1, MPI_INT, ag, 1, MPI_INT, ring, MPI_INFO_NULL,
                                       &req[0]));
    MPI_OK(MPI_Neighbor_allgatherv_init(send, 1, MPI_INT, agv, counts, displs, MPI_INT, ring,
                                        MPI_INFO_NULL, &req[1]));
    MPI_OK(MPI_Neighbor_alltoall_init(send, 1, MPI_INT, a2a, 1, MPI_INT, ring, MPI_INFO_NULL,
                                      &req[2]));
    MPI_OK(MPI_Neighbor_alltoallv_init(send, counts, displs, MPI_INT, a2av, counts, displs, MPI_INT,
                                       ring, MPI_INFO_NULL, &req[3]));
    MPI_OK(MPI_Neighbor_alltoallw_init(send, counts, bdispls, types, a2aw, counts, bdispls, types,
                                       ring, MPI_INFO_NULL, &req[4]));
    for (int run = 1; run <= RUNS; ++run) {
        /* send[0] goes left, send[1] right (alltoall); allgather sends send[0]. */
        send[0] = 1000 * run + me;
        send[1] = -(1000 * run + me);
        MPI_OK(MPI_Startall(5, req));
        MPI_OK(MPI_Waitall(5, req, MPI_STATUSES_IGNORE));
        CHECK(ag[0] == 1000 * run + left && ag[1] == 1000 * run + right,
              "run %d neighbor allgather %d %d", run, ag[0], ag[1]);
        CHECK(agv[0] == ag[0] && agv[1] == ag[1], "run %d neighbor allgatherv", run);
        /* From the left neighbor its right-going block, from the right its left-going one. */
        CHECK(a2a[0] == -(1000 * run + left) && a2a[1] == 1000 * run + right,
              "run %d neighbor alltoall %d %d", run, a2a[0], a2a[1]);
        CHECK(a2av[0] == a2a[0] && a2av[1] == a2a[1], "run %d neighbor alltoallv", run);
        CHECK(a2aw[0] == a2a[0] && a2aw[1] == a2a[1], "run %d neighbor alltoallw", run);
    }
    for (int k = 0; k < 5; ++k) MPI_OK(MPI_Request_free(&req[k]));
    MPI_OK(MPI_Comm_free(&ring));
}

/* An intercommunicator: even ranks against odd ones. */
static void inter(MPI_Comm world) {
    if (n < 2) return;
    MPI_Comm half, ic;
    MPI_OK(MPI_Comm_split(world, me % 2, me, &half));
    MPI_OK(MPI_Intercomm_create(half, 0, world, me % 2 ? 0 : 1, 7, &ic));
    int remote;
    MPI_OK(MPI_Comm_remote_size(ic, &remote));
    long long x, sum = -1;
    int b = -1;
    MPI_Request req[2];
    MPI_OK(MPI_Allreduce_init(&x, &sum, 1, MPI_LONG_LONG, MPI_SUM, ic, MPI_INFO_NULL, &req[0]));
    /* Rank 0 of the even group broadcasts to the odd group. */
    int hrank;
    MPI_Comm_rank(half, &hrank);
    const int root = me % 2 ? 0 : (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_OK(MPI_Bcast_init(&b, 1, MPI_INT, root, ic, MPI_INFO_NULL, &req[1]));
    for (int run = 1; run <= RUNS; ++run) {
        x = (long long)(me + 1) * run;
        if (root == MPI_ROOT) b = 77 * run;
        MPI_OK(MPI_Startall(2, req));
        MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        long long want = 0;
        for (int r = me % 2 ? 0 : 1; r < n; r += 2) want += (long long)(r + 1) * run;
        CHECK(sum == want, "run %d intercomm allreduce %lld, expected %lld", run, sum, want);
        if (me % 2) CHECK(b == 77 * run, "run %d intercomm bcast %d", run, b);
    }
    MPI_OK(MPI_Request_free(&req[0]));
    MPI_OK(MPI_Request_free(&req[1]));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&half));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    life_cycle(MPI_COMM_WORLD);
    const long sizes[] = {1, 3, 300, 20000}; /* 8 B to 160 KB per block */
    for (int s = 0; s < 4; ++s) {
        reductions(s % 2 ? dup : MPI_COMM_WORLD, sizes[s]);
        if (sizes[s] * n <= 100000) movement(s % 2 ? MPI_COMM_WORLD : dup, sizes[s]);
    }
    freed_objects(MPI_COMM_WORLD);
    large_vectors(dup);
    interleaved(dup);
    neighbors(MPI_COMM_WORLD);
    inter(MPI_COMM_WORLD);
    MPI_OK(MPI_Comm_free(&dup));
    MPI_Finalize();
    if (me == 0) printf("coll_persistent: %d ranks OK\n", n);
    return 0;
}
