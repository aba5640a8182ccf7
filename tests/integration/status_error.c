/* The MPI_ERROR field of a status (MPI 3.1 section 3.2.5): a call that
 * completes one request returns its error code and leaves the field alone;
 * only the calls that complete arrays of requests write it, and only when
 * they return MPI_ERR_IN_STATUS (then in every status they return). Every
 * call that takes a status is checked with a sentinel in the field: Recv,
 * Sendrecv(_replace), Probe, Iprobe, Mprobe, Improbe, Mrecv, Wait, Test,
 * Waitany, Testany, Request_get_status, and the array forms on success; then
 * a truncated receive in Waitall and Waitsome. Messages go around a ring.
 */
#include "common.h"

#define SENTINEL (-77)

static void expect_kept(const MPI_Status* s, const char* call) {
    CHECK(s->MPI_ERROR == SENTINEL, "%s wrote MPI_ERROR (%d)", call, s->MPI_ERROR);
}

static void fresh(MPI_Status* s, int n) {
    for (int i = 0; i < n; ++i) s[i].MPI_ERROR = SENTINEL;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v = rank, w = -1, flag = 0, idx, count, indices[2];
    MPI_Status s[2];
    MPI_Message msg;
    MPI_Request r[2];

    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 1, MPI_COMM_WORLD));
    fresh(s, 1);
    MPI_OK(MPI_Probe(left, 1, MPI_COMM_WORLD, s));
    expect_kept(s, "MPI_Probe");
    fresh(s, 1);
    MPI_OK(MPI_Iprobe(left, 1, MPI_COMM_WORLD, &flag, s));
    CHECK(flag, "Iprobe after Probe found nothing");
    expect_kept(s, "MPI_Iprobe");
    fresh(s, 1);
    MPI_OK(MPI_Recv(&w, 1, MPI_INT, left, 1, MPI_COMM_WORLD, s));
    expect_kept(s, "MPI_Recv");
    CHECK(w == left && s->MPI_SOURCE == left && s->MPI_TAG == 1, "Recv: %d from %d tag %d", w,
          s->MPI_SOURCE, s->MPI_TAG);

    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 2, MPI_COMM_WORLD));
    fresh(s, 1);
    MPI_OK(MPI_Mprobe(left, 2, MPI_COMM_WORLD, &msg, s));
    expect_kept(s, "MPI_Mprobe");
    fresh(s, 1);
    MPI_OK(MPI_Mrecv(&w, 1, MPI_INT, &msg, s));
    expect_kept(s, "MPI_Mrecv");
    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 3, MPI_COMM_WORLD));
    for (flag = 0; !flag;) {
        fresh(s, 1);
        MPI_OK(MPI_Improbe(left, 3, MPI_COMM_WORLD, &flag, &msg, s));
        expect_kept(s, "MPI_Improbe");
    }
    MPI_OK(MPI_Imrecv(&w, 1, MPI_INT, &msg, &r[0]));
    fresh(s, 1);
    MPI_OK(MPI_Wait(&r[0], s));
    expect_kept(s, "MPI_Wait (Imrecv)");

    fresh(s, 1);
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, right, 4, &w, 1, MPI_INT, left, 4, MPI_COMM_WORLD, s));
    expect_kept(s, "MPI_Sendrecv");
    fresh(s, 1);
    MPI_OK(MPI_Sendrecv_replace(&w, 1, MPI_INT, right, 5, left, 5, MPI_COMM_WORLD, s));
    expect_kept(s, "MPI_Sendrecv_replace");
    /* From MPI_PROC_NULL too. */
    fresh(s, 1);
    MPI_OK(MPI_Recv(&w, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, s));
    expect_kept(s, "MPI_Recv(MPI_PROC_NULL)");
    fresh(s, 1);
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, s));
    expect_kept(s, "MPI_Mprobe(MPI_PROC_NULL)");
    MPI_OK(MPI_Mrecv(&w, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));

    /* Test, Request_get_status, Testany, Waitany on one completing request. */
    MPI_OK(MPI_Irecv(&w, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 6, MPI_COMM_WORLD));
    for (flag = 0; !flag;) {
        fresh(s, 1);
        MPI_OK(MPI_Request_get_status(r[0], &flag, s));
    }
    expect_kept(s, "MPI_Request_get_status");
    fresh(s, 1);
    MPI_OK(MPI_Test(&r[0], &flag, s));
    CHECK(flag, "Test after Request_get_status said complete");
    expect_kept(s, "MPI_Test");
    MPI_OK(MPI_Irecv(&w, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 7, MPI_COMM_WORLD));
    for (flag = 0; !flag;) {
        fresh(s, 1);
        MPI_OK(MPI_Testany(1, r, &idx, &flag, s));
    }
    expect_kept(s, "MPI_Testany");
    MPI_OK(MPI_Irecv(&w, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 8, MPI_COMM_WORLD));
    fresh(s, 1);
    MPI_OK(MPI_Waitany(1, r, &idx, s));
    expect_kept(s, "MPI_Waitany");

    /* The array forms, all requests succeeding. */
    MPI_OK(MPI_Irecv(&w, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Isend(&v, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &r[1]));
    fresh(s, 2);
    MPI_OK(MPI_Waitall(2, r, s));
    expect_kept(&s[0], "MPI_Waitall (success)");
    expect_kept(&s[1], "MPI_Waitall (success)");

    /* A truncated receive: MPI_ERR_IN_STATUS, and every returned status's
     * MPI_ERROR set (MPI_SUCCESS for the send). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int two[2] = {v, v}, one = -1;
    MPI_OK(MPI_Irecv(&one, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Isend(two, 2, MPI_INT, right, 10, MPI_COMM_WORLD, &r[1]));
    fresh(s, 2);
    int rc = MPI_Waitall(2, r, s);
    CHECK(error_class(rc) == MPI_ERR_IN_STATUS, "Waitall with a truncation returned %d", rc);
    CHECK(error_class(s[0].MPI_ERROR) == MPI_ERR_TRUNCATE && s[1].MPI_ERROR == MPI_SUCCESS,
          "Waitall statuses: MPI_ERROR %d and %d", s[0].MPI_ERROR, s[1].MPI_ERROR);
    MPI_OK(MPI_Irecv(&one, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Send(two, 2, MPI_INT, right, 11, MPI_COMM_WORLD));
    fresh(s, 2);
    rc = MPI_Waitsome(1, r, &count, indices, s);
    CHECK(error_class(rc) == MPI_ERR_IN_STATUS && count == 1, "Waitsome returned %d (%d done)",
          rc, count);
    CHECK(error_class(s[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "Waitsome status: MPI_ERROR %d",
          s[0].MPI_ERROR);
    /* A single-request call returns the error and still leaves the field. */
    MPI_OK(MPI_Send(two, 2, MPI_INT, right, 12, MPI_COMM_WORLD));
    fresh(s, 1);
    rc = MPI_Recv(&one, 1, MPI_INT, left, 12, MPI_COMM_WORLD, s);
    CHECK(error_class(rc) == MPI_ERR_TRUNCATE, "truncated Recv returned %d", rc);
    expect_kept(s, "MPI_Recv (truncated)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
