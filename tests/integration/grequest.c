/* Generalized requests (MPI 3.1 section 12.2): started with MPI_Grequest_start,
 * completed by MPI_Grequest_complete from another thread, and waited for,
 * tested, cancelled and freed like any request, alone and in arrays mixed with
 * point-to-point requests. query_fn makes the status each time a completed
 * request is waited for or asked about, free_fn runs exactly once when the
 * request goes, cancel_fn is told whether the request completed; their error
 * codes come back from the call that ran them.
 */
#include <pthread.h>
#include <time.h>

#include "common.h"

typedef struct {
    int queries, frees, cancels, last_complete;
    int query_error, free_error;
    int tag;            /* what query_fn reports */
    int cancel_status;  /* query_fn marks the status cancelled */
} Op;

static int query_fn(void* extra, MPI_Status* status) {
    Op* op = (Op*)extra;
    __atomic_add_fetch(&op->queries, 1, __ATOMIC_SEQ_CST);
    CHECK(status != MPI_STATUS_IGNORE && status != NULL, "query_fn without a status");
    status->MPI_SOURCE = 7;
    status->MPI_TAG = op->tag;
    MPI_OK(MPI_Status_set_elements(status, MPI_INT, 3));
    MPI_OK(MPI_Status_set_cancelled(status, op->cancel_status));
    return op->query_error;
}

static int free_fn(void* extra) {
    Op* op = (Op*)extra;
    __atomic_add_fetch(&op->frees, 1, __ATOMIC_SEQ_CST);
    return op->free_error;
}

static int cancel_fn(void* extra, int complete) {
    Op* op = (Op*)extra;
    __atomic_add_fetch(&op->cancels, 1, __ATOMIC_SEQ_CST);
    op->last_complete = complete;
    if (!complete) op->cancel_status = 1;
    return MPI_SUCCESS;
}

static void start(Op* op, int tag, MPI_Request* r) {
    memset(op, 0, sizeof(*op));
    op->tag = tag;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, op, r));
    CHECK(*r != MPI_REQUEST_NULL, "Grequest_start gave MPI_REQUEST_NULL");
}

/* Completes a request from another thread after a short while. */
typedef struct {
    MPI_Request request;
    long delay_us;
} Later;

static void* complete_later(void* p) {
    Later* l = (Later*)p;
    struct timespec ts = {0, l->delay_us * 1000};
    nanosleep(&ts, NULL);
    MPI_OK(MPI_Grequest_complete(l->request));
    return NULL;
}

static void check_status(const MPI_Status* s, int tag, const char* what) {
    CHECK(s->MPI_SOURCE == 7 && s->MPI_TAG == tag, "%s: status source %d tag %d", what,
          s->MPI_SOURCE, s->MPI_TAG);
    int n = -1;
    MPI_OK(MPI_Get_elements(s, MPI_INT, &n));
    CHECK(n == 3, "%s: %d elements in the status, expected 3", what, n);
    CHECK(s->MPI_ERROR == -5, "%s: single-request call wrote MPI_ERROR (%d)", what, s->MPI_ERROR);
}

static void alone(void) {
    Op op;
    MPI_Request r;
    MPI_Status s;
    int flag = 1;
    start(&op, 11, &r);
    /* Not complete: Test says so without asking query_fn. */
    MPI_OK(MPI_Test(&r, &flag, &s));
    CHECK(!flag && op.queries == 0, "Test of a pending request: flag %d, %d queries", flag,
          op.queries);
    MPI_OK(MPI_Request_get_status(r, &flag, &s));
    CHECK(!flag, "Request_get_status of a pending request says complete");
    /* Completed by another thread while this one waits. */
    Later l = {r, 20000};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, complete_later, &l) == 0, "pthread_create");
    s.MPI_ERROR = -5;
    MPI_OK(MPI_Wait(&r, &s));
    pthread_join(t, NULL);
    CHECK(r == MPI_REQUEST_NULL, "Wait left the request");
    check_status(&s, 11, "Wait");
    CHECK(op.queries == 1 && op.frees == 1, "Wait: %d queries, %d frees", op.queries, op.frees);
    int cancelled = 1;
    MPI_OK(MPI_Test_cancelled(&s, &cancelled));
    CHECK(!cancelled, "an uncancelled request reads cancelled");

    /* Request_get_status asks query_fn and leaves the request; Test ends it. */
    start(&op, 12, &r);
    MPI_OK(MPI_Grequest_complete(r));
    s.MPI_ERROR = -5;
    MPI_OK(MPI_Request_get_status(r, &flag, &s));
    CHECK(flag && op.queries == 1 && op.frees == 0, "get_status: flag %d, %d queries, %d frees",
          flag, op.queries, op.frees);
    check_status(&s, 12, "Request_get_status");
    s.MPI_ERROR = -5;
    MPI_OK(MPI_Test(&r, &flag, &s));
    CHECK(flag && r == MPI_REQUEST_NULL, "Test of a completed request: flag %d", flag);
    check_status(&s, 12, "Test");
    CHECK(op.queries == 2 && op.frees == 1, "Test: %d queries, %d frees", op.queries, op.frees);

    /* MPI_STATUS_IGNORE: query_fn still gets a status to fill. */
    start(&op, 13, &r);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(op.queries == 1 && op.frees == 1, "Wait(IGNORE): %d queries, %d frees", op.queries,
          op.frees);
}

static void freed_early(void) {
    Op op;
    MPI_Request r;
    /* Freed before it completes: free_fn runs at Grequest_complete. */
    start(&op, 1, &r);
    MPI_Request keep = r;
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && op.frees == 0, "Request_free of a pending request: %d frees",
          op.frees);
    MPI_OK(MPI_Grequest_complete(keep));
    CHECK(op.frees == 1 && op.queries == 0, "completed after Request_free: %d frees, %d queries",
          op.frees, op.queries);
    /* Freed after it completed: at once, without query_fn. */
    start(&op, 1, &r);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Request_free(&r));
    CHECK(op.frees == 1 && op.queries == 0, "Request_free of a completed one: %d frees",
          op.frees);
}

static void cancels(void) {
    Op op;
    MPI_Request r;
    MPI_Status s;
    int cancelled = 0;
    start(&op, 3, &r);
    MPI_OK(MPI_Cancel(&r));
    CHECK(op.cancels == 1 && op.last_complete == 0, "Cancel of a pending request: %d calls, "
          "complete=%d", op.cancels, op.last_complete);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Wait(&r, &s));
    MPI_OK(MPI_Test_cancelled(&s, &cancelled));
    CHECK(cancelled, "query_fn marked it cancelled; Test_cancelled says no");
    start(&op, 3, &r);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(op.last_complete == 1, "Cancel after completion: complete=%d", op.last_complete);
    MPI_OK(MPI_Wait(&r, &s));
    MPI_OK(MPI_Test_cancelled(&s, &cancelled));
    CHECK(!cancelled, "cancelled too late, yet the status says cancelled");
}

static void errors(void) {
    Op op;
    MPI_Request r[2];
    MPI_Status s[2];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* query_fn's error is Wait's; free_fn still runs once. */
    start(&op, 4, &r[0]);
    op.query_error = MPI_ERR_OTHER;
    MPI_OK(MPI_Grequest_complete(r[0]));
    int rc = MPI_Wait(&r[0], &s[0]);
    CHECK(error_class(rc) == MPI_ERR_OTHER, "Wait returned %d, not query_fn's error", rc);
    CHECK(op.frees == 1 && r[0] == MPI_REQUEST_NULL, "after a failed query: %d frees", op.frees);
    /* In an array: MPI_ERR_IN_STATUS, every status's MPI_ERROR set. */
    Op ok;
    start(&op, 5, &r[0]);
    op.free_error = MPI_ERR_ARG;
    start(&ok, 6, &r[1]);
    MPI_OK(MPI_Grequest_complete(r[1]));
    MPI_OK(MPI_Grequest_complete(r[0]));
    s[0].MPI_ERROR = s[1].MPI_ERROR = -1;
    rc = MPI_Waitall(2, r, s);
    CHECK(error_class(rc) == MPI_ERR_IN_STATUS, "Waitall returned %d", rc);
    CHECK(error_class(s[0].MPI_ERROR) == MPI_ERR_ARG && s[1].MPI_ERROR == MPI_SUCCESS,
          "Waitall statuses: MPI_ERROR %d and %d", s[0].MPI_ERROR, s[1].MPI_ERROR);
    CHECK(op.frees == 1 && ok.frees == 1, "Waitall: frees %d and %d", op.frees, ok.frees);
    /* Not a generalized request, or one completed twice. */
    start(&op, 7, &r[0]);
    MPI_OK(MPI_Grequest_complete(r[0]));
    rc = MPI_Grequest_complete(r[0]);
    CHECK(error_class(rc) == MPI_ERR_REQUEST, "second Grequest_complete returned %d", rc);
    MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    rc = MPI_Grequest_complete(MPI_REQUEST_NULL);
    CHECK(error_class(rc) == MPI_ERR_REQUEST, "Grequest_complete(NULL) returned %d", rc);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Arrays mixing generalized requests with a ring exchange's receive and send. */
static void mixed(int rank, int size) {
    enum { N = 4 };
    Op ops[2];
    MPI_Request r[N];
    MPI_Status s[N];
    int in = -1, out = rank, idx, count, indices[N];
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 5; ++round) {
        start(&ops[0], 20, &r[0]);
        MPI_OK(MPI_Irecv(&in, 1, MPI_INT, left, round, MPI_COMM_WORLD, &r[1]));
        start(&ops[1], 21, &r[2]);
        MPI_OK(MPI_Isend(&out, 1, MPI_INT, right, round, MPI_COMM_WORLD, &r[3]));
        Later l = {r[2], 5000};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, complete_later, &l) == 0, "pthread_create");
        int flag = 1;
        if (round == 0) {
            /* Testall: nothing ends until all are complete. */
            MPI_OK(MPI_Testall(N, r, &flag, s));
            if (!flag) CHECK(ops[0].queries == 0, "Testall asked a pending request");
        }
        MPI_OK(MPI_Grequest_complete(r[0]));
        switch (round) {
            case 0:
                MPI_OK(MPI_Waitall(N, r, s));
                break;
            case 1:
                for (int done = 0; done < N; ++done) {
                    MPI_OK(MPI_Waitany(N, r, &idx, &s[0]));
                    CHECK(idx >= 0 && idx < N && r[idx] == MPI_REQUEST_NULL, "Waitany index %d",
                          idx);
                }
                MPI_OK(MPI_Waitany(N, r, &idx, &s[0]));
                CHECK(idx == MPI_UNDEFINED, "Waitany over no active request gave %d", idx);
                break;
            case 2:
                for (int done = 0; done < N;) {
                    MPI_OK(MPI_Waitsome(N, r, &count, indices, s));
                    CHECK(count >= 1, "Waitsome completed %d", count);
                    done += count;
                }
                break;
            case 3:
                for (int done = 0; done < N;) {
                    MPI_OK(MPI_Testany(N, r, &idx, &flag, &s[0]));
                    if (flag && idx != MPI_UNDEFINED) ++done;
                }
                break;
            default:
                for (int done = 0; done < N;) {
                    MPI_OK(MPI_Testsome(N, r, &count, indices, s));
                    if (count != MPI_UNDEFINED) done += count;
                }
                for (int i = 0; i < N; ++i)
                    CHECK(r[i] == MPI_REQUEST_NULL, "Testsome left request %d", i);
                break;
        }
        pthread_join(t, NULL);
        CHECK(in == left, "round %d: received %d, expected %d", round, in, left);
        for (int i = 0; i < 2; ++i)
            CHECK(ops[i].queries == 1 && ops[i].frees == 1,
                  "round %d: generalized request %d had %d queries, %d frees", round, i,
                  ops[i].queries, ops[i].frees);
        if (round == 0) {
            int n = -1;
            MPI_OK(MPI_Get_elements(&s[0], MPI_INT, &n));
            CHECK(s[0].MPI_SOURCE == 7 && s[0].MPI_TAG == 20 && n == 3 && s[1].MPI_SOURCE == left,
                  "Waitall statuses: source %d tag %d elements %d; receive's source %d",
                  s[0].MPI_SOURCE, s[0].MPI_TAG, n, s[1].MPI_SOURCE);
        }
    }
}

int main(int argc, char** argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    alone();
    freed_early();
    cancels();
    errors();
    mixed(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
