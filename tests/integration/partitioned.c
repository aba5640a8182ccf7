/* Partitioned communication (MPI 4.0 chapter 4): ranks in pairs (i sends to
 * i + n/2; an odd last rank sends to itself), sender and receiver partitioning
 * the same data differently; several starts of the same requests with new
 * data each time; partitions marked ready one by one in a scrambled order,
 * by range and by list; the receiver checking each partition as soon as
 * MPI_Parrived says it is there; a vector datatype on one side; the receive
 * started before the send exists; MPI_PROC_NULL; and the errors the standard
 * names (a partition marked twice, out of range, an inactive request, the
 * wrong side, wildcards).
 */
#include "common.h"

#define RUNS 5

static int me, n;

/* Element k of run `run` of the transfer from rank `from`. */
static int elem(int from, int run, long k) {
    return value(from * 7 + run, k);
}

/* A scrambled order of 0..parts-1 for this run. */
static void order(int* perm, int parts, int run) {
    for (int i = 0; i < parts; ++i) perm[i] = i;
    for (int i = parts - 1; i > 0; --i) {
        int j = (int)((unsigned)(i * 7919 + run * 104729) % (unsigned)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* One transfer from `from` to `to` (either may be me, or both): sender
 * partitions sparts x scount ints, receiver rparts x rcount ints. */
static void transfer(MPI_Comm comm, int from, int to, int sparts, int rparts, long total,
                     int early_recv) {
    const long scount = total / sparts, rcount = total / rparts;
    int* sbuf = ints((size_t)total, 0);
    int* rbuf = ints((size_t)total, -1);
    MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
    const int tag = 40 + sparts;
    if (me == to && early_recv) {
        MPI_OK(
            MPI_Precv_init(rbuf, rparts, rcount, MPI_INT, from, tag, comm, MPI_INFO_NULL, &rreq));
        MPI_OK(MPI_Start(&rreq));
    }
    if (early_recv) MPI_OK(MPI_Barrier(comm)); /* the receive exists before the send */
    if (me == from)
        MPI_OK(MPI_Psend_init(sbuf, sparts, scount, MPI_INT, to, tag, comm, MPI_INFO_NULL, &sreq));
    if (me == to && !early_recv)
        MPI_OK(
            MPI_Precv_init(rbuf, rparts, rcount, MPI_INT, from, tag, comm, MPI_INFO_NULL, &rreq));
    int* perm = ints((size_t)sparts, 0);
    char* seen = (char*)xmalloc((size_t)rparts);
    for (int run = 1; run <= RUNS; ++run) {
        if (me == from) {
            for (long k = 0; k < total; ++k) sbuf[k] = elem(from, run, k);
            MPI_OK(MPI_Start(&sreq));
            order(perm, sparts, run);
            if (run % 3 == 0) {
                MPI_OK(MPI_Pready_list(sparts, perm, sreq));
            } else if (run % 3 == 1) {
                for (int i = 0; i < sparts; ++i) MPI_OK(MPI_Pready(perm[i], sreq));
            } else if (sparts == 1) {
                MPI_OK(MPI_Pready_range(0, 0, sreq));
            } else {
                MPI_OK(MPI_Pready_range(sparts / 2, sparts - 1, sreq));
                MPI_OK(MPI_Pready_range(0, sparts / 2 - 1, sreq));
            }
        }
        if (me == to) {
            if (!(early_recv && run == 1)) { /* (started before the send existed) */
                for (long k = 0; k < total; ++k) rbuf[k] = -1;
                MPI_OK(MPI_Start(&rreq));
            }
            memset(seen, 0, (size_t)rparts);
            /* Take the partitions as they come. */
            for (int got = 0; got < rparts;) {
                for (int j = 0; j < rparts; ++j) {
                    if (seen[j]) continue;
                    int flag = 0;
                    MPI_OK(MPI_Parrived(rreq, j, &flag));
                    if (!flag) continue;
                    seen[j] = 1;
                    ++got;
                    for (long k = j * rcount; k < (j + 1) * rcount; ++k)
                        CHECK(rbuf[k] == elem(from, run, k),
                              "run %d partition %d arrived but element %ld is %d, expected %d", run,
                              j, k, rbuf[k], elem(from, run, k));
                }
            }
            MPI_Status st;
            MPI_OK(MPI_Wait(&rreq, &st));
            CHECK(st.MPI_SOURCE == from && st.MPI_TAG == tag, "status source %d tag %d",
                  st.MPI_SOURCE, st.MPI_TAG);
            int count = -1;
            MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
            CHECK(count == total, "received count %d, expected %ld", count, total);
            int flag = 0;
            MPI_OK(MPI_Parrived(rreq, 0, &flag)); /* inactive: every partition is there */
            CHECK(flag, "Parrived on the completed request is false");
        }
        if (me == from) MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    if (me == from) MPI_OK(MPI_Request_free(&sreq));
    if (me == to) MPI_OK(MPI_Request_free(&rreq));
    free(sbuf), free(rbuf), free(perm), free(seen);
}

/* Vector datatypes: the sender's data every other int, the receiver's dense. */
static void strided(MPI_Comm comm, int from, int to) {
    enum { PARTS = 4, PER = 100 };
    MPI_Datatype pairs; /* 2 ints of data, extent 4 ints */
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &pairs));
    MPI_Datatype stride;
    MPI_OK(MPI_Type_create_resized(pairs, 0, 4 * sizeof(int), &stride));
    MPI_OK(MPI_Type_commit(&stride));
    MPI_OK(MPI_Type_free(&pairs));
    /* PARTS partitions of PER/2 strided elements = PER ints of data each. */
    int* sbuf = ints(PARTS * PER * 2, -7);
    int* rbuf = ints(PARTS * PER, -1);
    MPI_Request req = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
    if (me == from)
        MPI_OK(MPI_Psend_init(sbuf, PARTS, PER / 2, stride, to, 5, comm, MPI_INFO_NULL, &req));
    if (me == to)
        MPI_OK(MPI_Precv_init(rbuf, 2, PARTS * PER / 2, MPI_INT, from, 5, comm, MPI_INFO_NULL,
                              me == from ? &rreq : &req));
    MPI_OK(MPI_Type_free(&stride));
    for (int run = 1; run <= 3; ++run) {
        if (me == from) {
            for (long k = 0; k < PARTS * PER; ++k) sbuf[2 * k] = elem(from, run, k);
            MPI_OK(MPI_Start(&req));
            for (int i = PARTS - 1; i >= 0; --i) MPI_OK(MPI_Pready(i, req));
        }
        if (me == to) {
            MPI_Request* r = me == from ? &rreq : &req;
            MPI_OK(MPI_Start(r));
            MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
            for (long k = 0; k < PARTS * PER; ++k)
                CHECK(rbuf[k] == elem(from, run, k), "strided run %d element %ld is %d", run, k,
                      rbuf[k]);
        }
        if (me == from) MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    if (req != MPI_REQUEST_NULL) MPI_OK(MPI_Request_free(&req));
    if (rreq != MPI_REQUEST_NULL) MPI_OK(MPI_Request_free(&rreq));
    free(sbuf), free(rbuf);
}

static void errors(MPI_Comm comm, int from, int to) {
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int buf[8] = {0};
    MPI_Request req, bad;
    CHECK(error_class(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 1, comm, MPI_INFO_NULL,
                                     &bad)) == MPI_ERR_RANK,
          "MPI_ANY_SOURCE accepted");
    CHECK(error_class(MPI_Precv_init(buf, 2, 4, MPI_INT, from, MPI_ANY_TAG, comm, MPI_INFO_NULL,
                                     &bad)) == MPI_ERR_TAG,
          "MPI_ANY_TAG accepted");
    CHECK(error_class(MPI_Psend_init(buf, -1, 4, MPI_INT, to, 1, comm, MPI_INFO_NULL, &bad)) ==
              MPI_ERR_ARG,
          "negative partitions accepted");
    CHECK(error_class(MPI_Psend_init(buf, 2, -4, MPI_INT, to, 1, comm, MPI_INFO_NULL, &bad)) ==
              MPI_ERR_COUNT,
          "negative count accepted");
    if (me == from) {
        MPI_OK(MPI_Psend_init(buf, 2, 4, MPI_INT, to, 9, comm, MPI_INFO_NULL, &req));
        CHECK(error_class(MPI_Pready(0, req)) == MPI_ERR_REQUEST, "Pready before Start");
        MPI_OK(MPI_Start(&req));
        CHECK(error_class(MPI_Pready(2, req)) == MPI_ERR_ARG, "partition 2 of 2 accepted");
        CHECK(error_class(MPI_Pready_range(1, 0, req)) == MPI_ERR_ARG, "range 1..0 accepted");
        int flag;
        CHECK(error_class(MPI_Parrived(req, 0, &flag)) == MPI_ERR_REQUEST,
              "Parrived on a send request");
        MPI_OK(MPI_Pready(1, req));
        CHECK(error_class(MPI_Pready(1, req)) == MPI_ERR_ARG, "partition 1 marked twice");
        MPI_Request copy = req;
        CHECK(error_class(MPI_Request_free(&copy)) == MPI_ERR_REQUEST, "active request freed");
        MPI_OK(MPI_Pready(0, req));
    }
    if (me == to) {
        int got[8] = {0};
        MPI_Request rreq;
        MPI_OK(MPI_Precv_init(got, 1, 8, MPI_INT, from, 9, comm, MPI_INFO_NULL, &rreq));
        int flag;
        CHECK(error_class(MPI_Pready(0, rreq)) == MPI_ERR_REQUEST, "Pready on a receive request");
        MPI_OK(MPI_Start(&rreq));
        CHECK(error_class(MPI_Parrived(rreq, 1, &flag)) == MPI_ERR_ARG, "partition 1 of 1");
        MPI_OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Request_free(&rreq));
    }
    if (me == from) {
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Request_free(&req));
    }
    /* MPI_PROC_NULL: every start completes at once. */
    MPI_OK(MPI_Psend_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 1, comm, MPI_INFO_NULL, &req));
    MPI_OK(MPI_Start(&req));
    MPI_OK(MPI_Pready_range(0, 1, req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Request_free(&req));
    MPI_OK(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 1, comm, MPI_INFO_NULL, &req));
    MPI_OK(MPI_Start(&req));
    MPI_Status st;
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL receive: source %d", st.MPI_SOURCE);
    MPI_OK(MPI_Request_free(&req));
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    /* Rank i sends to i + half (ranks far apart: in different node processes
     * when there are several); an odd last rank talks to itself. */
    const int half = n / 2;
    int from = me < half ? me : me - half, to = me < half ? me + half : me;
    if (me == 2 * half) from = to = me;
    const int shapes[][2] = {{8, 8}, {8, 2}, {4, 16}, {1, 1}, {16, 1}};
    for (int s = 0; s < 5; ++s)
        transfer(MPI_COMM_WORLD, from, to, shapes[s][0], shapes[s][1], 4096, s == 1);
    transfer(MPI_COMM_WORLD, from, to, 16, 4, 1 << 18, 0); /* 1 MiB in 64 KiB parts */
    strided(MPI_COMM_WORLD, from, to);
    errors(MPI_COMM_WORLD, from, to);
    MPI_Finalize();
    if (me == 0) printf("partitioned: %d ranks OK\n", n);
    return 0;
}
