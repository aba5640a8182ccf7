/* Persistent collectives (MPI 4.0 section 6.13) many at a time: Barrier,
 * Bcast, Reduce, Allreduce, Allgather and Alltoall of small data (one int per
 * block, the sizes of a time step's residual), several requests of each on
 * the same communicator, all active together, started with MPI_Startall or
 * one by one in the same order everywhere, with blocking and nonblocking
 * collectives of the same communicator run between the starts and the waits,
 * completed by Waitall, Waitsome or Test loops; new data at every run. Also:
 * members describing the same data with different datatypes (a vector of
 * ints against contiguous ints), in-place Allgather and Reduce at the root,
 * requests of split communicators and of MPI_COMM_SELF, and a run in which
 * one member starts late while the others wait.
 */
#include <unistd.h>

#include "common.h"

#define KINDS 6
#define EACH 3 /* requests of each kind */
#define RUNS 30

static int me, n;

/* The run's value of rank r's element i. */
static int val(int run, int r, int i) {
    return 1000 * run + 10 * r + i;
}

struct Bufs {
    int bc, rd, ar_in, ar, ag[64], a2a_in[64], a2a[64];
};

static void init_all(MPI_Comm comm, struct Bufs* b, MPI_Request* req) {
    const MPI_Info info = MPI_INFO_NULL;
    for (int k = 0; k < EACH; ++k) {
        MPI_Request* r = req + k * KINDS;
        const int root = (k + 1) % n;
        MPI_OK(MPI_Barrier_init(comm, info, &r[0]));
        MPI_OK(MPI_Bcast_init(&b[k].bc, 1, MPI_INT, root, comm, info, &r[1]));
        MPI_OK(
            MPI_Reduce_init(&b[k].ar_in, &b[k].rd, 1, MPI_INT, MPI_MAX, root, comm, info, &r[2]));
        MPI_OK(MPI_Allreduce_init(&b[k].ar_in, &b[k].ar, 1, MPI_INT, MPI_SUM, comm, info, &r[3]));
        MPI_OK(MPI_Allgather_init(&b[k].ar_in, 1, MPI_INT, b[k].ag, 1, MPI_INT, comm, info, &r[4]));
        MPI_OK(MPI_Alltoall_init(b[k].a2a_in, 1, MPI_INT, b[k].a2a, 1, MPI_INT, comm, info, &r[5]));
    }
}

static void fill(struct Bufs* b, int run, int k) {
    const int root = (k + 1) % n;
    b->bc = me == root ? val(run, root, k) : -1;
    b->ar_in = val(run, me, k);
    b->ar = b->rd = -1;
    for (int j = 0; j < n; ++j) {
        b->a2a_in[j] = val(run, me, j) + k;
        b->a2a[j] = b->ag[j] = -1;
    }
}

static void verify(const struct Bufs* b, int run, int k, const char* how) {
    const int root = (k + 1) % n;
    int sum = 0;
    for (int r = 0; r < n; ++r) sum += val(run, r, k);
    CHECK(b->bc == val(run, root, k), "%s run %d req %d bcast %d", how, run, k, b->bc);
    if (me == root)
        CHECK(b->rd == val(run, n - 1, k), "%s run %d req %d reduce %d", how, run, k, b->rd);
    CHECK(b->ar == sum, "%s run %d req %d allreduce %d, expected %d", how, run, k, b->ar, sum);
    for (int j = 0; j < n; ++j) {
        CHECK(b->ag[j] == val(run, j, k), "%s run %d req %d allgather[%d] %d", how, run, k, j,
              b->ag[j]);
        CHECK(b->a2a[j] == val(run, j, me) + k, "%s run %d req %d alltoall[%d] %d", how, run, k, j,
              b->a2a[j]);
    }
}

/* Every request active at once, with the communicator's other collectives in
 * between. */
static void many(MPI_Comm comm, const char* how) {
    struct Bufs b[EACH];
    MPI_Request req[EACH * KINDS];
    init_all(comm, b, req);
    for (int run = 1; run <= RUNS; ++run) {
        for (int k = 0; k < EACH; ++k) fill(&b[k], run, k);
        if (run % 3 == 0) {
            MPI_OK(MPI_Startall(EACH * KINDS, req));
        } else {
            for (int i = 0; i < EACH * KINDS; ++i) MPI_OK(MPI_Start(&req[i]));
        }
        /* Blocking and nonblocking collectives of the same communicator while
         * the persistent ones are active. */
        int x = me, sum = -1, bc = me == 0 ? run : -1;
        MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm));
        CHECK(sum == n * (n - 1) / 2, "%s run %d blocking allreduce %d", how, run, sum);
        MPI_Request ib;
        MPI_OK(MPI_Ibcast(&bc, 1, MPI_INT, 0, comm, &ib));
        MPI_OK(MPI_Barrier(comm));
        if (run % 3 == 1) {
            MPI_OK(MPI_Waitall(EACH * KINDS, req, MPI_STATUSES_IGNORE));
        } else if (run % 3 == 2) {
            int left = EACH * KINDS;
            while (left > 0) {
                int outcount, idx[EACH * KINDS];
                MPI_OK(MPI_Waitsome(EACH * KINDS, req, &outcount, idx, MPI_STATUSES_IGNORE));
                CHECK(outcount != MPI_UNDEFINED, "%s run %d: Waitsome found none active", how, run);
                left -= outcount;
            }
        } else {
            int done = 0;
            while (!done) MPI_OK(MPI_Testall(EACH * KINDS, req, &done, MPI_STATUSES_IGNORE));
        }
        MPI_OK(MPI_Wait(&ib, MPI_STATUS_IGNORE));
        CHECK(bc == run, "%s run %d ibcast %d", how, run, bc);
        for (int k = 0; k < EACH; ++k) verify(&b[k], run, k, how);
    }
    for (int i = 0; i < EACH * KINDS; ++i) {
        MPI_OK(MPI_Request_free(&req[i]));
        CHECK(req[i] == MPI_REQUEST_NULL, "%s: freed request %d not null", how, i);
    }
}

/* The same data as different datatypes: odd ranks see pairs of ints as a
 * vector (every other int of a strided buffer), even ones as two contiguous
 * ints; in-place Allgather and Reduce. */
static void typed(MPI_Comm comm) {
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    const int odd = me % 2;
    /* An element: two ints, strided by 2 on odd ranks. */
    int bc[4], ag[4 * 64], send[4], ipag[2 * 64], rd[2], rsend[2], a2a_in[4 * 64], a2a[4 * 64];
    MPI_Datatype t = odd ? vec : MPI_INT;
    const int cnt = odd ? 1 : 2, stride = odd ? 2 : 1;
    MPI_Request req[5];
    const MPI_Info info = MPI_INFO_NULL;
    MPI_OK(MPI_Bcast_init(bc, cnt, t, 0, comm, info, &req[0]));
    /* Allgather: even ranks receive vectors' worth as contiguous ints. */
    MPI_OK(MPI_Allgather_init(send, cnt, t, ag, 2, MPI_INT, comm, info, &req[1]));
    MPI_OK(MPI_Allgather_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ipag, 2, MPI_INT, comm, info,
                              &req[2]));
    MPI_OK(MPI_Reduce_init(me == 0 ? MPI_IN_PLACE : (void*)rsend, rd, 2, MPI_INT, MPI_SUM, 0, comm,
                           info, &req[3]));
    /* Alltoall: a block of two ints, sent as a vector from odd ranks. */
    MPI_Datatype rvec;
    MPI_OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)(4 * sizeof(int)), &rvec));
    MPI_OK(MPI_Type_commit(&rvec));
    MPI_OK(MPI_Alltoall_init(a2a_in, odd ? 1 : 2, odd ? rvec : MPI_INT, a2a, 2, MPI_INT, comm, info,
                             &req[4]));
    MPI_OK(MPI_Type_free(&vec)); /* the requests keep what they need */
    MPI_OK(MPI_Type_free(&rvec));
    for (int run = 1; run <= 5; ++run) {
        for (int i = 0; i < 4; ++i) bc[i] = send[i] = -1;
        for (int e = 0; e < 2; ++e) {
            if (me == 0) bc[e * stride] = val(run, 0, e);
            send[e * stride] = val(run, me, e);
            rsend[e] = val(run, me, e);
        }
        for (int j = 0; j < 2 * n; ++j) ag[j] = ipag[j] = -1;
        ipag[2 * me] = val(run, me, 0);
        ipag[2 * me + 1] = val(run, me, 1);
        if (me == 0) rd[0] = val(run, 0, 0), rd[1] = val(run, 0, 1);
        for (int j = 0; j < 4 * n; ++j) a2a_in[j] = a2a[j] = -1;
        for (int j = 0; j < n; ++j)
            for (int e = 0; e < 2; ++e)
                a2a_in[(odd ? 4 : 2) * j + e * stride] = val(run, me, 2 * j + e);
        MPI_OK(MPI_Startall(5, req));
        MPI_OK(MPI_Waitall(5, req, MPI_STATUSES_IGNORE));
        for (int e = 0; e < 2; ++e) {
            CHECK(bc[e * stride] == val(run, 0, e), "run %d typed bcast[%d] %d", run, e,
                  bc[e * stride]);
            int sum = 0;
            for (int r = 0; r < n; ++r) {
                sum += val(run, r, e);
                CHECK(ag[2 * r + e] == val(run, r, e), "run %d typed allgather[%d] %d", run,
                      2 * r + e, ag[2 * r + e]);
                CHECK(ipag[2 * r + e] == val(run, r, e), "run %d in-place allgather[%d] %d", run,
                      2 * r + e, ipag[2 * r + e]);
                CHECK(a2a[2 * r + e] == val(run, r, 2 * me + e), "run %d typed alltoall[%d] %d",
                      run, 2 * r + e, a2a[2 * r + e]);
            }
            if (me == 0) CHECK(rd[e] == sum, "run %d in-place reduce[%d] %d", run, e, rd[e]);
        }
        if (odd) CHECK(bc[1] == -1 && send[1] == -1, "run %d: a vector's gap was written", run);
    }
    for (int k = 0; k < 5; ++k) MPI_OK(MPI_Request_free(&req[k]));
}

/* One member starts late (after computing); the others' starts return at once
 * and their Test loops see the run complete only after it started. */
static void late(MPI_Comm comm) {
    int x = me + 1, sum = -1;
    MPI_Request req;
    MPI_OK(MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req));
    for (int run = 1; run <= 3; ++run) {
        x = run * (me + 1);
        sum = -1;
        if (me == n - 1) usleep(20000);
        MPI_OK(MPI_Start(&req));
        int flag = 0;
        while (!flag) MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        CHECK(sum == run * n * (n + 1) / 2, "late run %d allreduce %d", run, sum);
    }
    MPI_OK(MPI_Request_free(&req));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    CHECK(n <= 64, "at most 64 ranks");
    many(MPI_COMM_WORLD, "world");
    typed(MPI_COMM_WORLD);
    late(MPI_COMM_WORLD);
    /* Halves (the same context on both), and MPI_COMM_SELF. */
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    const int wme = me, wn = n;
    MPI_Comm_rank(half, &me);
    MPI_Comm_size(half, &n);
    many(half, "half");
    me = 0, n = 1;
    many(MPI_COMM_SELF, "self");
    me = wme, n = wn;
    MPI_OK(MPI_Comm_free(&half));
    MPI_Finalize();
    if (me == 0) printf("coll_persistent_many: %d ranks OK\n", n);
    return 0;
}
