/* MPI 4.0's nonblocking send-receive (section 3.10.1) and
 * MPI_Comm_idup_with_info (section 7.4.2), from the standard's text:
 * - MPI_Isendrecv is one request for a send and a receive: ring exchanges of
 *   small and 1 MiB messages, its status (source, tag, count) from the
 *   receive, completed by Wait, Test, Waitall, Waitany, Waitsome, Testall;
 * - MPI_Isendrecv_replace with a strided type: the data comes back into the
 *   same buffer, the holes untouched, the outgoing data staged by MPI;
 * - messages keep their order: an Isendrecv's send is matched before a later
 *   Isend with the same tag;
 * - MPI_PROC_NULL partners, MPI_Request_free of a pending request, MPI_Cancel
 *   (which fails: the exchange completes, not cancelled);
 * - errors through MPI_ERRORS_RETURN: bad rank, tag, count, NULL request;
 * - MPI_Comm_idup_with_info: the new communicator's hints are the info's,
 *   not the old one's; MPI_INFO_NULL gives none; a bad info is MPI_ERR_INFO.
 */
#include "common.h"

enum { kSmall = 64, kLarge = 1 << 20, kOutstanding = 8 };

static int rank, size, left, right;

static void ring_small_and_large(void) {
    for (int big = 0; big < 2; ++big) {
        const int n = big ? kLarge : kSmall;
        unsigned char* out = xmalloc((size_t)n);
        unsigned char* in = xmalloc((size_t)n);
        fill_pattern(out, (size_t)n, (uint32_t)(rank * 10 + big));
        memset(in, 0, (size_t)n);
        MPI_Request req;
        MPI_Status st;
        MPI_OK(MPI_Isendrecv(out, n, MPI_BYTE, right, 5 + big, in, n, MPI_BYTE, left, 5 + big,
                             MPI_COMM_WORLD, &req));
        CHECK(req != MPI_REQUEST_NULL, "Isendrecv gave MPI_REQUEST_NULL");
        if (big) {
            int flag = 0;
            while (!flag) MPI_OK(MPI_Test(&req, &flag, &st));
        } else {
            /* A cancel may fail (MPI 3.1 section 3.8.4): this one does, as
             * the send is under way; the exchange completes as usual. */
            MPI_OK(MPI_Cancel(&req));
            MPI_OK(MPI_Wait(&req, &st));
            int cancelled = 1;
            MPI_OK(MPI_Test_cancelled(&st, &cancelled));
            CHECK(!cancelled, "a cancelled Isendrecv reports itself cancelled");
        }
        CHECK(req == MPI_REQUEST_NULL, "the request was not freed at completion");
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 5 + big, "status source %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
        int count = -1;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECK(count == n, "count %d, expected %d", count, n);
        CHECK_PATTERN(in, (size_t)n, (uint32_t)(left * 10 + big), "Isendrecv data");
        free(out);
        free(in);
    }
}

/* Every element i of a strided buffer of ints: value(r, i) at the even
 * slots, the odd slots (holes of the vector type) marked -1. */
static void replace_strided(void) {
    enum { kCount = 1000 };
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(kCount, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    int* buf = xmalloc(sizeof(int) * 2 * kCount);
    for (int i = 0; i < kCount; ++i) {
        buf[2 * i] = value(rank, i);
        buf[2 * i + 1] = -1;
    }
    MPI_Request req;
    MPI_Status st;
    MPI_OK(MPI_Isendrecv_replace(buf, 1, vec, right, 9, left, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
    /* MPI_Type_free while the operation runs is harmless (MPI 3.1 4.1.9). */
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 9, "replace status source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    int count = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == kCount, "replace count %d", count);
    for (int i = 0; i < kCount; ++i) {
        CHECK(buf[2 * i] == value(left, i), "replace element %d: %d, expected %d", i, buf[2 * i],
              value(left, i));
        CHECK(buf[2 * i + 1] == -1, "replace hole %d overwritten: %d", i, buf[2 * i + 1]);
    }
    free(buf);
}

/* kOutstanding exchanges at once, each round completed another way. */
static void many_outstanding(void) {
    int out[kOutstanding], in[kOutstanding], rep[kOutstanding];
    MPI_Request req[2 * kOutstanding];
    for (int way = 0; way < 4; ++way) {
        for (int k = 0; k < kOutstanding; ++k) {
            out[k] = value(rank, way * 100 + k);
            in[k] = -1;
            rep[k] = value(rank, way * 100 + k + 50);
            MPI_OK(MPI_Isendrecv(&out[k], 1, MPI_INT, right, k, &in[k], 1, MPI_INT, left, k,
                                 MPI_COMM_WORLD, &req[k]));
            MPI_OK(MPI_Isendrecv_replace(&rep[k], 1, MPI_INT, left, 100 + k, right, 100 + k,
                                         MPI_COMM_WORLD, &req[kOutstanding + k]));
        }
        MPI_Status st[2 * kOutstanding];
        const int n = 2 * kOutstanding;
        if (way == 0) {
            MPI_OK(MPI_Waitall(n, req, st));
            for (int k = 0; k < kOutstanding; ++k)
                CHECK(st[k].MPI_SOURCE == left && st[k].MPI_TAG == k &&
                          st[kOutstanding + k].MPI_SOURCE == right &&
                          st[kOutstanding + k].MPI_TAG == 100 + k,
                      "Waitall status %d", k);
        } else if (way == 1) {
            for (int done = 0; done < n; ++done) {
                int idx = -1;
                MPI_OK(MPI_Waitany(n, req, &idx, &st[0]));
                CHECK(idx >= 0 && idx < n && req[idx] == MPI_REQUEST_NULL, "Waitany index %d", idx);
                const int tag = idx < kOutstanding ? idx : 100 + idx - kOutstanding;
                CHECK(st[0].MPI_TAG == tag, "Waitany status tag %d, expected %d", st[0].MPI_TAG,
                      tag);
            }
        } else if (way == 2) {
            int done = 0;
            while (done < n) {
                int outcount = 0, idx[2 * kOutstanding];
                MPI_OK(MPI_Waitsome(n, req, &outcount, idx, st));
                CHECK(outcount > 0 && outcount != MPI_UNDEFINED, "Waitsome outcount %d", outcount);
                done += outcount;
            }
        } else {
            int flag = 0;
            while (!flag) MPI_OK(MPI_Testall(n, req, &flag, st));
        }
        for (int k = 0; k < n; ++k) CHECK(req[k] == MPI_REQUEST_NULL, "request %d left", k);
        for (int k = 0; k < kOutstanding; ++k) {
            CHECK(in[k] == value(left, way * 100 + k), "way %d exchange %d: %d", way, k, in[k]);
            CHECK(rep[k] == value(right, way * 100 + k + 50), "way %d replace %d: %d", way, k,
                  rep[k]);
        }
    }
}

/* The send half of an Isendrecv is matched before a later Isend of the
 * same rank with the same tag (non-overtaking, MPI 3.1 section 3.5). */
static void order_kept(void) {
    int first = value(rank, 1), second = value(rank, 2), got[2] = {-1, -1}, dummy = 0;
    MPI_Request req[2];
    MPI_OK(MPI_Isendrecv(&first, 1, MPI_INT, right, 33, &dummy, 0, MPI_INT, MPI_PROC_NULL, 0,
                         MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Isend(&second, 1, MPI_INT, right, 33, MPI_COMM_WORLD, &req[1]));
    MPI_OK(MPI_Recv(&got[0], 1, MPI_INT, left, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Recv(&got[1], 1, MPI_INT, left, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    CHECK(got[0] == value(left, 1) && got[1] == value(left, 2), "order: got %d then %d", got[0],
          got[1]);
}

static void proc_null_and_free(void) {
    int x = 7, y = -1;
    MPI_Request req;
    MPI_Status st;
    MPI_OK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &y, 1, MPI_INT, MPI_PROC_NULL, 0,
                         MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, &st));
    int count = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && y == -1,
          "PROC_NULL status source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    MPI_OK(MPI_Isendrecv_replace(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                                 &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(x == 7, "PROC_NULL replace changed the buffer: %d", x);

    /* Freed while pending: the operation still happens. A later exchange
     * with the same partners and tag is matched after it, so once that one
     * is done the freed one has delivered its (eager-sized) data too. */
    int a = value(rank, 77), b = -1, c = value(rank, 78), d = -1;
    MPI_OK(
        MPI_Isendrecv(&a, 1, MPI_INT, right, 44, &b, 1, MPI_INT, left, 44, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "Request_free left the handle");
    MPI_OK(MPI_Sendrecv(&c, 1, MPI_INT, right, 44, &d, 1, MPI_INT, left, 44, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(b == value(left, 77) && d == value(left, 78), "freed request: b %d d %d", b, d);
}

static void errors(void) {
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int x = 0, y = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    int e = MPI_Isendrecv(&x, 1, MPI_INT, size, 0, &y, 1, MPI_INT, left, 0, comm, &req);
    CHECK(error_class(e) == MPI_ERR_RANK, "dest out of range: class %d", error_class(e));
    e = MPI_Isendrecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, &y, 1, MPI_INT, left, 0, comm, &req);
    CHECK(error_class(e) == MPI_ERR_RANK, "dest MPI_ANY_SOURCE: class %d", error_class(e));
    e = MPI_Isendrecv(&x, 1, MPI_INT, right, -4, &y, 1, MPI_INT, left, 0, comm, &req);
    CHECK(error_class(e) == MPI_ERR_TAG, "negative send tag: class %d", error_class(e));
    e = MPI_Isendrecv(&x, 1, MPI_INT, right, 0, &y, -1, MPI_INT, left, 0, comm, &req);
    CHECK(error_class(e) == MPI_ERR_COUNT, "negative count: class %d", error_class(e));
    e = MPI_Isendrecv(&x, 1, MPI_INT, right, 0, &y, 1, MPI_INT, left, 0, comm, NULL);
    CHECK(error_class(e) == MPI_ERR_ARG, "NULL request: class %d", error_class(e));
    e = MPI_Isendrecv_replace(&x, 1, MPI_DATATYPE_NULL, right, 0, left, 0, comm, &req);
    CHECK(error_class(e) == MPI_ERR_TYPE, "replace, null type: class %d", error_class(e));
    e = MPI_Isendrecv_replace(&x, 1, MPI_INT, right, MPI_ANY_TAG, left, 0, comm, &req);
    CHECK(error_class(e) == MPI_ERR_TAG, "replace, send tag MPI_ANY_TAG: class %d", error_class(e));
    CHECK(req == MPI_REQUEST_NULL, "a failed call set the request");
    e = MPI_Isendrecv(&x, 1, MPI_INT, right, 0, &y, 1, MPI_INT, left, 0, MPI_COMM_NULL, &req);
    CHECK(e != MPI_SUCCESS, "MPI_COMM_NULL accepted"); /* raised on WORLD: returns */
    MPI_OK(MPI_Comm_free(&comm));
}

static int has_key(MPI_Comm comm, const char* key, const char* expect) {
    MPI_Info info;
    MPI_OK(MPI_Comm_get_info(comm, &info));
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
    MPI_OK(MPI_Info_free(&info));
    if (flag && expect)
        CHECK(strcmp(value, expect) == 0, "%s = %s, expected %s", key, value, expect);
    return flag;
}

static void idup_with_info(void) {
    MPI_Comm base, hinted, plain;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    MPI_OK(MPI_Comm_set_info(base, info));
    MPI_OK(MPI_Info_free(&info));
    CHECK(has_key(base, "mpi_assert_no_any_source", "true"), "set_info hint missing");

    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Info_set(info, "fibermpi_not_a_hint", "x"));
    MPI_Request req[2];
    MPI_OK(MPI_Comm_idup_with_info(base, info, &hinted, &req[0]));
    MPI_OK(MPI_Info_free(&info)); /* freed before the duplication completes */
    MPI_OK(MPI_Comm_idup_with_info(base, MPI_INFO_NULL, &plain, &req[1]));
    MPI_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    CHECK(hinted != MPI_COMM_NULL && plain != MPI_COMM_NULL, "idup_with_info gave COMM_NULL");
    int result;
    MPI_OK(MPI_Comm_compare(base, hinted, &result));
    CHECK(result == MPI_CONGRUENT, "compare: %d, expected MPI_CONGRUENT", result);
    CHECK(has_key(hinted, "mpi_assert_no_any_tag", "true"), "the info's hint is missing");
    CHECK(!has_key(hinted, "mpi_assert_no_any_source", NULL), "the old hint was kept");
    CHECK(!has_key(hinted, "fibermpi_not_a_hint", NULL), "an unknown key was kept");
    CHECK(!has_key(plain, "mpi_assert_no_any_source", NULL), "INFO_NULL kept the old hint");
    /* Both work, and are separate communication spaces. */
    int a = value(rank, 5), b = -1, c = value(rank, 6), d = -1;
    MPI_Request r[2];
    MPI_OK(MPI_Isendrecv(&a, 1, MPI_INT, right, 1, &b, 1, MPI_INT, left, 1, hinted, &r[0]));
    MPI_OK(MPI_Isendrecv(&c, 1, MPI_INT, right, 1, &d, 1, MPI_INT, left, 1, plain, &r[1]));
    MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(b == value(left, 5) && d == value(left, 6), "over the new communicators: %d %d", b, d);

    MPI_OK(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
    MPI_Comm bad = MPI_COMM_NULL;
    MPI_Request breq = MPI_REQUEST_NULL;
    int e = MPI_Comm_idup_with_info(base, (MPI_Info)0x12345, &bad, &breq);
    CHECK(error_class(e) == MPI_ERR_INFO, "bad info: class %d", error_class(e));
    e = MPI_Comm_idup_with_info(base, MPI_INFO_NULL, &bad, NULL);
    CHECK(error_class(e) == MPI_ERR_ARG, "NULL request: class %d", error_class(e));
    MPI_OK(MPI_Comm_free(&hinted));
    MPI_OK(MPI_Comm_free(&plain));
    MPI_OK(MPI_Comm_free(&base));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ring_small_and_large();
    replace_strided();
    many_outstanding();
    order_kept();
    proc_null_and_free();
    errors();
    idup_with_info();
    MPI_Finalize();
    return 0;
}
