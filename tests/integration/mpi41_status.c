/* MPI 4.1's MPI_Request_get_status_any/_all/_some and MPI_Type_get_value_index,
 * from the standard's text (sections 3.7.6 and 6.9.4):
 * - the get_status calls report completion like Testany/Testall/Testsome but
 *   never free or deactivate a request: the handles stay as they were and a
 *   later call, or MPI_Wait, sees the same completion;
 * - null handles and inactive persistent requests: _any gives flag true and
 *   index MPI_UNDEFINED with an empty status, _some outcount MPI_UNDEFINED,
 *   _all empty statuses for them; MPI_STATUSES_IGNORE is accepted;
 * - _all says false while any active request is pending, and writes nothing;
 * - MPI_Type_get_value_index gives the predefined MINLOC/MAXLOC pair type
 *   (one that then works in a reduction), MPI_DATATYPE_NULL for any other pair;
 * - bad input (invalid request, negative count, NULL flag, MPI_DATATYPE_NULL)
 *   raises the right error class through the error handler.
 */
#include "common.h"

static int last_class = MPI_SUCCESS, handler_calls = 0;

static void record(MPI_Comm* comm, int* code, ...) {
    (void)comm;
    MPI_Error_class(*code, &last_class);
    handler_calls++;
}

#define EXPECT_CLASS(call, cls)                                                          \
    do {                                                                                 \
        int before_ = handler_calls;                                                     \
        int rc_ = (call);                                                                \
        CHECK(rc_ != MPI_SUCCESS && handler_calls == before_ + 1 && last_class == (cls), \
              "%s: rc %d, handler calls %d, class %d, expected %s", #call, rc_,          \
              handler_calls - before_, last_class, #cls);                                \
    } while (0)

static void check_empty(const MPI_Status* s, const char* what) {
    int count = -1;
    MPI_OK(MPI_Get_count(s, MPI_INT, &count));
    CHECK(s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: not an empty status (source %d tag %d count %d)", what, s->MPI_SOURCE, s->MPI_TAG,
          count);
}

static void check_msg(const MPI_Status* s, int source, int tag, const char* what) {
    int count = -1;
    MPI_OK(MPI_Get_count(s, MPI_INT, &count));
    CHECK(s->MPI_SOURCE == source && s->MPI_TAG == tag && count == 2,
          "%s: source %d tag %d count %d, expected %d %d 2", what, s->MPI_SOURCE, s->MPI_TAG,
          count, source, tag);
}

static void request_status(int rank, int size) {
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int in7[2] = {-1, -1}, in8[2] = {-1, -1}, out7[2] = {rank, 7}, out8[2] = {rank, 8};
    int pbuf[2];
    MPI_Request reqs[4], sends[2], kept[4];
    MPI_Status st, sts[4];
    int flag, index, outcount, indices[4];

    reqs[0] = MPI_REQUEST_NULL;
    MPI_OK(MPI_Recv_init(pbuf, 2, MPI_INT, left, 9, MPI_COMM_WORLD, &reqs[1]));

    /* Nothing active: the calls say so without blocking. */
    flag = 0;
    index = 5;
    MPI_OK(MPI_Request_get_status_any(2, reqs, &index, &flag, &st));
    CHECK(flag && index == MPI_UNDEFINED, "any of null+inactive: flag %d index %d", flag, index);
    check_empty(&st, "any of null+inactive");
    MPI_OK(MPI_Request_get_status_any(0, NULL, &index, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && index == MPI_UNDEFINED, "any of none: flag %d index %d", flag, index);
    outcount = 5;
    MPI_OK(MPI_Request_get_status_some(2, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "some of null+inactive: outcount %d", outcount);
    flag = 0;
    MPI_OK(MPI_Request_get_status_all(2, reqs, &flag, sts));
    CHECK(flag, "all of null+inactive: flag false");
    check_empty(&sts[0], "all: null handle");
    check_empty(&sts[1], "all: inactive persistent request");

    MPI_OK(MPI_Irecv(in7, 2, MPI_INT, left, 7, MPI_COMM_WORLD, &reqs[2]));
    MPI_OK(MPI_Irecv(in8, 2, MPI_INT, left, 8, MPI_COMM_WORLD, &reqs[3]));
    memcpy(kept, reqs, sizeof reqs);
    MPI_OK(MPI_Isend(out7, 2, MPI_INT, right, 7, MPI_COMM_WORLD, &sends[0]));

    /* The tag 7 message arrives; tag 8 is sent only after the barrier. */
    flag = 0;
    for (int spins = 0; !flag; ++spins) {
        MPI_OK(MPI_Request_get_status_any(4, reqs, &index, &flag, &st));
        CHECK(flag || index == MPI_UNDEFINED, "any, not done: index %d", index);
        CHECK(spins < 10000000, "the tag 7 message never arrived");
    }
    CHECK(index == 2, "any: index %d, expected 2", index);
    check_msg(&st, left, 7, "any");
    CHECK(memcmp(reqs, kept, sizeof reqs) == 0, "get_status_any changed a handle");
    CHECK(in7[0] == left && in7[1] == 7, "received %d %d", in7[0], in7[1]);
    /* Again: the request was not freed, the same completion is reported. */
    MPI_OK(MPI_Request_get_status_any(4, reqs, &index, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && index == 2, "any again: flag %d index %d", flag, index);

    for (int i = 0; i < 4; ++i) sts[i].MPI_TAG = -77;
    MPI_OK(MPI_Request_get_status_all(4, reqs, &flag, sts));
    CHECK(!flag, "all: true while the tag 8 receive is pending");
    for (int i = 0; i < 4; ++i) CHECK(sts[i].MPI_TAG == -77, "all, false: status %d written", i);
    MPI_OK(MPI_Request_get_status_all(4, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "all (statuses ignored): true while the tag 8 receive is pending");

    MPI_OK(MPI_Request_get_status_some(4, reqs, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 2, "some: outcount %d index %d", outcount, indices[0]);
    check_msg(&sts[0], left, 7, "some");
    MPI_OK(MPI_Request_get_status_some(4, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == 1 && indices[0] == 2, "some (ignored): outcount %d", outcount);
    CHECK(memcmp(reqs, kept, sizeof reqs) == 0, "get_status_some changed a handle");

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend(out8, 2, MPI_INT, right, 8, MPI_COMM_WORLD, &sends[1]));
    flag = 0;
    for (int spins = 0; !flag; ++spins) {
        MPI_OK(MPI_Request_get_status_all(4, reqs, &flag, sts));
        CHECK(spins < 10000000, "the tag 8 message never arrived");
    }
    check_empty(&sts[0], "all, done: null handle");
    check_empty(&sts[1], "all, done: inactive request");
    check_msg(&sts[2], left, 7, "all, done");
    check_msg(&sts[3], left, 8, "all, done");
    MPI_OK(MPI_Request_get_status_all(4, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "all (ignored), done: flag false");
    MPI_OK(MPI_Request_get_status_some(4, reqs, &outcount, indices, sts));
    CHECK(outcount == 2 && indices[0] == 2 && indices[1] == 3, "some, done: outcount %d",
          outcount);
    check_msg(&sts[1], left, 8, "some, done");
    CHECK(memcmp(reqs, kept, sizeof reqs) == 0, "get_status_all changed a handle");

    /* The requests are still there to be completed the usual way. */
    MPI_OK(MPI_Wait(&reqs[3], &st));
    check_msg(&st, left, 8, "Wait after get_status");
    CHECK(reqs[3] == MPI_REQUEST_NULL && in8[0] == left && in8[1] == 8, "Wait: tag 8");
    MPI_OK(MPI_Waitall(4, reqs, sts));
    check_msg(&sts[2], left, 7, "Waitall after get_status");
    MPI_OK(MPI_Waitall(2, sends, MPI_STATUSES_IGNORE));
    CHECK(reqs[1] != MPI_REQUEST_NULL, "a persistent request was freed");
    MPI_OK(MPI_Request_free(&reqs[1]));
}

static void request_errors(void) {
    MPI_Request bogus[2] = {MPI_REQUEST_NULL, (MPI_Request)MPI_COMM_WORLD};
    MPI_Status sts[2];
    int flag, index, outcount, indices[2];
    EXPECT_CLASS(MPI_Request_get_status_any(2, bogus, &index, &flag, sts), MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Request_get_status_all(2, bogus, &flag, sts), MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Request_get_status_some(2, bogus, &outcount, indices, sts),
                 MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Request_get_status_any(-1, bogus, &index, &flag, sts), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Request_get_status_all(-1, bogus, &flag, sts), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Request_get_status_some(-1, bogus, &outcount, indices, sts),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Request_get_status_any(1, bogus, &index, NULL, sts), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Request_get_status_all(1, bogus, NULL, sts), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Request_get_status_some(1, bogus, NULL, indices, sts), MPI_ERR_ARG);
}

static void value_index(int rank, int size) {
    const struct {
        MPI_Datatype value, index, pair;
        const char* name;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT, "MPI_FLOAT_INT"},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT, "MPI_DOUBLE_INT"},
        {MPI_LONG, MPI_INT, MPI_LONG_INT, "MPI_LONG_INT"},
        {MPI_INT, MPI_INT, MPI_2INT, "MPI_2INT"},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT, "MPI_SHORT_INT"},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"},
        {MPI_REAL, MPI_REAL, MPI_2REAL, "MPI_2REAL"},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION,
         "MPI_2DOUBLE_PRECISION"},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER, "MPI_2INTEGER"},
    };
    MPI_Datatype t;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i) {
        t = MPI_DATATYPE_NULL;
        MPI_OK(MPI_Type_get_value_index(pairs[i].value, pairs[i].index, &t));
        CHECK(t == pairs[i].pair, "value-index pair %s not found", pairs[i].name);
    }
    /* No predefined pair: MPI_DATATYPE_NULL, not an error. */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    const MPI_Datatype none[][2] = {{MPI_FLOAT, MPI_FLOAT}, {MPI_INT, MPI_LONG},
                                    {MPI_CHAR, MPI_INT},   {MPI_REAL, MPI_INT},
                                    {vec, MPI_INT},        {MPI_INT, vec}};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; ++i) {
        t = MPI_INT;
        MPI_OK(MPI_Type_get_value_index(none[i][0], none[i][1], &t));
        CHECK(t == MPI_DATATYPE_NULL, "pair %zu: a type where there is none", i);
    }
    MPI_OK(MPI_Type_free(&vec));
    EXPECT_CLASS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_get_value_index(MPI_DOUBLE, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);

    /* The type returned is the one MINLOC takes. */
    struct {
        double v;
        int i;
    } in = {(double)((rank * 5) % size) + 0.5, rank}, out;
    MPI_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
    MPI_OK(MPI_Allreduce(&in, &out, 1, t, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(out.v == 0.5 && out.i == 0, "MINLOC with the pair type: %g at %d", out.v, out.i);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(record, &eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    request_status(rank, size);
    request_errors();
    value_index(rank, size);
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("mpi41_status: OK on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
