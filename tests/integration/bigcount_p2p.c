/* The large-count (_c) point-to-point, status, datatype and pack functions of
 * MPI 4.0 with small counts: each must do what its int form does (MPI 4.0
 * section 2.5.8: same semantics, MPI_Count arguments). Messages go around a
 * ring (any rank count, a rank talking to itself on 1). Also: negative counts
 * are MPI_ERR_COUNT, and the envelope/contents of a type made by a _c
 * constructor hold large counts (MPI 4.0 section 5.1.13).
 */
#include <limits.h>

#include "common.h"

#define N 37

static int rank, size, next, prev;

static void fill(int* v, int n, int seed) {
    for (int i = 0; i < n; ++i) v[i] = seed * 1000 + i;
}
static void expect(const int* v, int n, int seed, const char* what) {
    for (int i = 0; i < n; ++i)
        CHECK(v[i] == seed * 1000 + i, "%s: element %d is %d, expected %d", what, i, v[i],
              seed * 1000 + i);
}

/* The counts of a received status, large and int forms, agree. */
static void check_status(MPI_Status* st, MPI_Datatype t, MPI_Count want, const char* what) {
    MPI_Count c = -1, e = -1;
    int ic = -1, ie = -1;
    MPI_OK(MPI_Get_count_c(st, t, &c));
    MPI_OK(MPI_Get_count(st, t, &ic));
    MPI_OK(MPI_Get_elements_c(st, t, &e));
    MPI_OK(MPI_Get_elements(st, t, &ie));
    CHECK(c == want && ic == want && e == want && ie == want,
          "%s: Get_count_c %lld, Get_count %d, Get_elements_c %lld, Get_elements %d; want %lld",
          what, (long long)c, ic, (long long)e, ie, (long long)want);
    CHECK(st->MPI_SOURCE == prev, "%s: source %d, expected %d", what, st->MPI_SOURCE, prev);
}

static void blocking(void) {
    int s[N], r[N];
    MPI_Status st;
    MPI_Request req;
    fill(s, N, rank);
    /* Send_c / Recv_c, Ssend_c, Bsend_c: a ring, receives posted first. */
    for (int mode = 0; mode < 4; ++mode) {
        memset(r, 0, sizeof r);
        MPI_OK(MPI_Irecv_c(r, N, MPI_INT, prev, mode, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every receive is posted: Rsend is valid */
        switch (mode) {
            case 0: MPI_OK(MPI_Send_c(s, N, MPI_INT, next, mode, MPI_COMM_WORLD)); break;
            case 1: MPI_OK(MPI_Ssend_c(s, N, MPI_INT, next, mode, MPI_COMM_WORLD)); break;
            case 2: MPI_OK(MPI_Rsend_c(s, N, MPI_INT, next, mode, MPI_COMM_WORLD)); break;
            default: {
                MPI_Count bsize = N * sizeof(int) + MPI_BSEND_OVERHEAD, got = 0;
                void* bbuf = xmalloc((size_t)bsize);
                void* back = NULL;
                MPI_OK(MPI_Buffer_attach_c(bbuf, bsize));
                MPI_OK(MPI_Bsend_c(s, N, MPI_INT, next, mode, MPI_COMM_WORLD));
                MPI_OK(MPI_Buffer_detach_c(&back, &got));
                CHECK(back == bbuf && got == bsize, "MPI_Buffer_detach_c gave %p, %lld", back,
                      (long long)got);
                free(bbuf);
            }
        }
        MPI_OK(MPI_Wait(&req, &st));
        expect(r, N, prev, "Irecv_c");
        check_status(&st, MPI_INT, N, "Irecv_c");
    }
    /* Recv_c (blocking) against a plain MPI_Send: the same message either way. */
    memset(r, 0, sizeof r);
    MPI_OK(MPI_Isend(s, N, MPI_INT, next, 9, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Recv_c(r, N, MPI_INT, prev, 9, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    expect(r, N, prev, "Recv_c");
    check_status(&st, MPI_INT, N, "Recv_c");
    /* Sendrecv_c and Sendrecv_replace_c. */
    memset(r, 0, sizeof r);
    MPI_OK(MPI_Sendrecv_c(s, N, MPI_INT, next, 10, r, N, MPI_INT, prev, 10, MPI_COMM_WORLD, &st));
    expect(r, N, prev, "Sendrecv_c");
    check_status(&st, MPI_INT, N, "Sendrecv_c");
    memcpy(r, s, sizeof r);
    MPI_OK(MPI_Sendrecv_replace_c(r, N, MPI_INT, next, 11, prev, 11, MPI_COMM_WORLD, &st));
    expect(r, N, prev, "Sendrecv_replace_c");
    check_status(&st, MPI_INT, N, "Sendrecv_replace_c");
    /* Isendrecv_c and Isendrecv_replace_c: one request for the pair. */
    memset(r, 0, sizeof r);
    MPI_OK(MPI_Isendrecv_c(s, N, MPI_INT, next, 12, r, N, MPI_INT, prev, 12, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, &st));
    expect(r, N, prev, "Isendrecv_c");
    check_status(&st, MPI_INT, N, "Isendrecv_c");
    memcpy(r, s, sizeof r);
    MPI_OK(MPI_Isendrecv_replace_c(r, N, MPI_INT, next, 13, prev, 13, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, &st));
    expect(r, N, prev, "Isendrecv_replace_c");
    check_status(&st, MPI_INT, N, "Isendrecv_replace_c");
}

static void nonblocking(void) {
    int s[4][N], r[4][N];
    MPI_Request req[8];
    MPI_Status st[8];
    for (int k = 0; k < 4; ++k) {
        fill(s[k], N, rank + 10 * k);
        memset(r[k], 0, sizeof r[k]);
        MPI_OK(MPI_Irecv_c(r[k], N, MPI_INT, prev, 20 + k, MPI_COMM_WORLD, &req[k]));
    }
    MPI_Count bsize = N * sizeof(int) + MPI_BSEND_OVERHEAD, got;
    void* bbuf = xmalloc((size_t)bsize);
    void* back;
    MPI_OK(MPI_Buffer_attach_c(bbuf, bsize));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend_c(s[0], N, MPI_INT, next, 20, MPI_COMM_WORLD, &req[4]));
    MPI_OK(MPI_Issend_c(s[1], N, MPI_INT, next, 21, MPI_COMM_WORLD, &req[5]));
    MPI_OK(MPI_Irsend_c(s[2], N, MPI_INT, next, 22, MPI_COMM_WORLD, &req[6]));
    MPI_OK(MPI_Ibsend_c(s[3], N, MPI_INT, next, 23, MPI_COMM_WORLD, &req[7]));
    MPI_OK(MPI_Waitall(8, req, st));
    MPI_OK(MPI_Buffer_detach_c(&back, &got));
    free(bbuf);
    for (int k = 0; k < 4; ++k) {
        expect(r[k], N, prev + 10 * k, "I*send_c");
        check_status(&st[k], MPI_INT, N, "I*send_c");
    }
    /* Persistent: each *_init_c started twice. */
    for (int round = 0; round < 2; ++round) {
        for (int k = 0; k < 4; ++k) {
            fill(s[k], N, rank + 10 * k + round);
            memset(r[k], 0, sizeof r[k]);
            MPI_OK(MPI_Recv_init_c(r[k], N, MPI_INT, prev, 30 + k, MPI_COMM_WORLD, &req[k]));
        }
        MPI_OK(MPI_Startall(4, req));
        bbuf = xmalloc((size_t)bsize);
        MPI_OK(MPI_Buffer_attach_c(bbuf, bsize));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Send_init_c(s[0], N, MPI_INT, next, 30, MPI_COMM_WORLD, &req[4]));
        MPI_OK(MPI_Ssend_init_c(s[1], N, MPI_INT, next, 31, MPI_COMM_WORLD, &req[5]));
        MPI_OK(MPI_Rsend_init_c(s[2], N, MPI_INT, next, 32, MPI_COMM_WORLD, &req[6]));
        MPI_OK(MPI_Bsend_init_c(s[3], N, MPI_INT, next, 33, MPI_COMM_WORLD, &req[7]));
        MPI_OK(MPI_Startall(4, req + 4));
        MPI_OK(MPI_Waitall(8, req, st));
        MPI_OK(MPI_Buffer_detach_c(&back, &got));
        free(bbuf);
        for (int k = 0; k < 8; ++k) MPI_OK(MPI_Request_free(&req[k]));
        for (int k = 0; k < 4; ++k) {
            expect(r[k], N, prev + 10 * k + round, "*send_init_c");
            check_status(&st[k], MPI_INT, N, "Recv_init_c");
        }
    }
}

static void matched(void) {
    int s[N], r[N];
    MPI_Message msg;
    MPI_Status st;
    MPI_Request req, sreq;
    fill(s, N, rank + 50);
    MPI_OK(MPI_Isend(s, N, MPI_INT, next, 40, MPI_COMM_WORLD, &sreq));
    MPI_OK(MPI_Mprobe(prev, 40, MPI_COMM_WORLD, &msg, &st));
    memset(r, 0, sizeof r);
    MPI_OK(MPI_Mrecv_c(r, N, MPI_INT, &msg, &st));
    expect(r, N, prev + 50, "Mrecv_c");
    check_status(&st, MPI_INT, N, "Mrecv_c");
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Isend(s, N, MPI_INT, next, 41, MPI_COMM_WORLD, &sreq));
    MPI_OK(MPI_Mprobe(prev, 41, MPI_COMM_WORLD, &msg, &st));
    memset(r, 0, sizeof r);
    MPI_OK(MPI_Imrecv_c(r, N, MPI_INT, &msg, &req));
    MPI_OK(MPI_Wait(&req, &st));
    expect(r, N, prev + 50, "Imrecv_c");
    check_status(&st, MPI_INT, N, "Imrecv_c");
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* Status_set_elements_c, read back by both forms. */
    MPI_Status made;
    MPI_Count c = 0;
    int ic = 0;
    MPI_OK(MPI_Status_set_elements_c(&made, MPI_DOUBLE, 5));
    MPI_OK(MPI_Get_elements_c(&made, MPI_DOUBLE, &c));
    MPI_OK(MPI_Get_count(&made, MPI_DOUBLE, &ic));
    CHECK(c == 5 && ic == 5, "Status_set_elements_c(5): %lld, %d", (long long)c, ic);
    /* More than an int: the int forms say MPI_UNDEFINED. */
    MPI_OK(MPI_Status_set_elements_c(&made, MPI_BYTE, (MPI_Count)INT_MAX + 2));
    MPI_OK(MPI_Get_count_c(&made, MPI_BYTE, &c));
    MPI_OK(MPI_Get_count(&made, MPI_BYTE, &ic));
    CHECK(c == (MPI_Count)INT_MAX + 2 && ic == MPI_UNDEFINED, "INT_MAX+2 elements: %lld, %d",
          (long long)c, ic);
}

/* MPI 4.1's buffers of a communicator and of a session, _c forms: a Bsend_c
 * on a duplicate of the world goes through the communicator's buffer, and
 * detach gives back the address and MPI_Count size attached. */
static void comm_and_session_buffers(void) {
    int s[N], r[N];
    MPI_Comm dup;
    MPI_Request req;
    MPI_Status st;
    fill(s, N, rank + 50);
    memset(r, 0, sizeof r);
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Count bsize = N * sizeof(int) + MPI_BSEND_OVERHEAD, got = 0;
    void* bbuf = xmalloc((size_t)bsize);
    void* back = NULL;
    MPI_OK(MPI_Comm_attach_buffer_c(dup, bbuf, bsize));
    MPI_OK(MPI_Irecv_c(r, N, MPI_INT, prev, 60, dup, &req));
    MPI_OK(MPI_Bsend_c(s, N, MPI_INT, next, 60, dup));
    MPI_OK(MPI_Wait(&req, &st));
    expect(r, N, prev + 50, "Bsend_c through MPI_Comm_attach_buffer_c");
    MPI_OK(MPI_Comm_detach_buffer_c(dup, &back, &got));
    CHECK(back == bbuf && got == bsize, "MPI_Comm_detach_buffer_c gave %p, %lld", back,
          (long long)got);
    MPI_OK(MPI_Comm_free(&dup));
    MPI_Session session;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
    MPI_OK(MPI_Session_attach_buffer_c(session, bbuf, bsize));
    back = NULL;
    got = 0;
    MPI_OK(MPI_Session_detach_buffer_c(session, &back, &got));
    CHECK(back == bbuf && got == bsize, "MPI_Session_detach_buffer_c gave %p, %lld", back,
          (long long)got);
    MPI_OK(MPI_Session_finalize(&session));
    free(bbuf);
}

static void errors(void) {
    int x = 0;
    MPI_Datatype t;
    MPI_Status st;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(error_class(MPI_Send_c(&x, -1, MPI_INT, next, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT,
          "MPI_Send_c with count -1 is not MPI_ERR_COUNT");
    CHECK(error_class(MPI_Recv_c(&x, -5, MPI_INT, prev, 0, MPI_COMM_WORLD, &st)) == MPI_ERR_COUNT,
          "MPI_Recv_c with count -5 is not MPI_ERR_COUNT");
    MPI_Request req;
    CHECK(error_class(MPI_Isendrecv_c(&x, 1, MPI_INT, next, 0, &x, -2, MPI_INT, prev, 0,
                                      MPI_COMM_WORLD, &req)) == MPI_ERR_COUNT,
          "MPI_Isendrecv_c with recvcount -2 is not MPI_ERR_COUNT");
    CHECK(error_class(MPI_Type_contiguous_c(-3, MPI_INT, &t)) == MPI_ERR_COUNT,
          "MPI_Type_contiguous_c with count -3 is not MPI_ERR_COUNT");
    /* A count that an int would read as positive (2^32 + 1) is not truncated:
     * it is far more than the buffer here, but the check is on the datatype. */
    MPI_Count huge = ((MPI_Count)1 << 32) + 1, size = 0;
    MPI_OK(MPI_Type_contiguous_c(huge, MPI_INT, &t));
    MPI_OK(MPI_Type_size_c(t, &size));
    CHECK(size == huge * 4, "contiguous_c(2^32+1 ints) has size %lld", (long long)size);
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    blocking();
    nonblocking();
    matched();
    comm_and_session_buffers();
    errors();
    MPI_Finalize();
    return 0;
}
