/* Bad input to one-sided calls gets the standard's error class through the
 * window's error handler (MPI_ERRORS_RETURN here), or MPI_COMM_WORLD's when
 * the window handle itself is bad; nothing is written and nothing hangs:
 * invalid windows, ranks, displacements, counts, datatypes and operations;
 * calls in the wrong epoch (an operation outside any, MPI_Win_lock inside a
 * fence epoch, unlock without lock, request-based operations outside passive
 * target, completing epochs never started, MPI_Win_free with one open); bad
 * lock types and assertions; creation arguments; the wrong flavor for shared
 * queries and attachments. The window's memory is checked untouched at the
 * end, on every rank.
 */
#include "common.h"

enum { kWords = 16, kGuard = 0x5a5a };

static int rank, size;

#define EXPECT(cls, call)                                                                 \
    do {                                                                                  \
        int expect_rc_ = (call);                                                          \
        CHECK(error_class(expect_rc_) == (cls), "%s returned class %d, expected %s (%d)", \
              #call, error_class(expect_rc_), #cls, (cls));                               \
    } while (0)

static void user_op(void* in, void* inout, int* len, MPI_Datatype* t) {
    (void)in;
    (void)inout;
    (void)len;
    (void)t;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int* mem = ints(kWords, kGuard);
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, kWords * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                          &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    const int right = (rank + 1) % size;
    int x[kWords * 2], r[2];
    double d = 1.0;
    for (int i = 0; i < kWords * 2; ++i) x[i] = -1;

    /* Bad window handles. */
    EXPECT(MPI_ERR_WIN, MPI_Put(x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL));
    EXPECT(MPI_ERR_WIN, MPI_Win_fence(0, (MPI_Win)0x12345));
    EXPECT(MPI_ERR_WIN, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, MPI_WIN_NULL));

    /* No epoch. */
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Put(x, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Get(x, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Fetch_and_op(x, r, MPI_INT, right, 0, MPI_SUM, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_test(win, r));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_flush(right, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(win));

    /* Arguments, inside a fence epoch. */
    MPI_OK(MPI_Win_fence(0, win));
    EXPECT(MPI_ERR_RANK, MPI_Put(x, 1, MPI_INT, size, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_RANK, MPI_Get(x, 1, MPI_INT, -5, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(x, 1, MPI_INT, right, kWords, 1, MPI_INT, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Put(x, 2, MPI_INT, right, kWords - 1, 2, MPI_INT, win));
    EXPECT(MPI_ERR_RMA_RANGE, MPI_Get(x, kWords + 1, MPI_INT, right, 0, kWords + 1, MPI_INT, win));
    EXPECT(MPI_ERR_RMA_RANGE,
           MPI_Accumulate(x, 1, MPI_INT, right, 1000000, 1, MPI_INT, MPI_SUM, win));
    EXPECT(MPI_ERR_DISP, MPI_Put(x, 1, MPI_INT, right, -1, 1, MPI_INT, win));
    EXPECT(MPI_ERR_COUNT, MPI_Put(x, -1, MPI_INT, right, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_COUNT, MPI_Get(x, 1, MPI_INT, right, 0, -2, MPI_INT, win));
    EXPECT(MPI_ERR_TYPE, MPI_Put(x, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_TYPE, MPI_Put(x, 2, MPI_INT, right, 0, 1, MPI_INT, win));
    MPI_Datatype uncommitted;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    EXPECT(MPI_ERR_TYPE, MPI_Put(x, 1, uncommitted, right, 0, 1, uncommitted, win));
    MPI_Type_free(&uncommitted);
    MPI_Op mine;
    MPI_OK(MPI_Op_create(user_op, 1, &mine));
    EXPECT(MPI_ERR_OP, MPI_Accumulate(x, 1, MPI_INT, right, 0, 1, MPI_INT, mine, win));
    EXPECT(MPI_ERR_OP, MPI_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, win));
    EXPECT(MPI_ERR_OP, MPI_Accumulate(x, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win));
    EXPECT(MPI_ERR_OP, MPI_Fetch_and_op(x, r, MPI_INT, right, 0, MPI_MINLOC, win));
    EXPECT(MPI_ERR_OP, MPI_Accumulate(x, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win));
    MPI_Op_free(&mine);
    EXPECT(MPI_ERR_TYPE, MPI_Compare_and_swap(&d, &d, r, MPI_DOUBLE, right, 0, win));
    EXPECT(MPI_ERR_TYPE, MPI_Accumulate(x, 1, MPI_INT, right, 0, 1, MPI_FLOAT, MPI_SUM, win));
    MPI_Request req;
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Rput(x, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Rget(x, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req));
    EXPECT(MPI_ERR_ASSERT, MPI_Win_fence(MPI_MODE_NOCHECK, win));
    /* An operation opens the fence epoch: locks and frees are wrong now. */
    MPI_OK(MPI_Get(x, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_free(&win));
    CHECK(win != MPI_WIN_NULL, "a failed MPI_Win_free reset the handle");
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(x[0] == kGuard, "the one good Get read %d", x[0]);

    /* Locks. */
    EXPECT(MPI_ERR_LOCKTYPE, MPI_Win_lock(12345, right, 0, win));
    EXPECT(MPI_ERR_ASSERT, MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOPUT, win));
    EXPECT(MPI_ERR_RANK, MPI_Win_lock(MPI_LOCK_SHARED, size + 3, 0, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
    if (size > 1) EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock((right + 1) % size, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Win_lock_all(0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT(MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, win));
    MPI_OK(MPI_Win_unlock_all(win));

    /* PSCW, groups that are not in the window. */
    MPI_Group world, none;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int rr[1] = {right};
    MPI_OK(MPI_Group_incl(world, 1, rr, &none));
    EXPECT(MPI_ERR_GROUP, MPI_Win_start(MPI_GROUP_NULL, 0, win));
    EXPECT(MPI_ERR_ASSERT, MPI_Win_post(none, MPI_MODE_NOSUCCEED, win));
    MPI_Group_free(&none);
    MPI_Group_free(&world);

    /* Flavors and creation. */
    MPI_Aint sz;
    int du;
    void* p;
    EXPECT(MPI_ERR_RMA_FLAVOR, MPI_Win_shared_query(win, 0, &sz, &du, &p));
    EXPECT(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(win, x, sizeof x));
    MPI_Win bad = MPI_WIN_NULL;
    EXPECT(MPI_ERR_SIZE, MPI_Win_create(x, -8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bad));
    EXPECT(MPI_ERR_DISP, MPI_Win_create(x, 8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bad));
    EXPECT(MPI_ERR_COMM, MPI_Win_create(x, 8, 1, MPI_INFO_NULL, MPI_COMM_NULL, &bad));
    CHECK(bad == MPI_WIN_NULL, "a window came back from a failed creation");
    MPI_Win dyn;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    MPI_OK(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
    EXPECT(MPI_ERR_RMA_ATTACH, MPI_Win_detach(dyn, x));
    MPI_OK(MPI_Win_attach(dyn, x, 4 * sizeof(int)));
    EXPECT(MPI_ERR_RMA_ATTACH, MPI_Win_attach(dyn, x + 2, 4 * sizeof(int)));
    MPI_OK(MPI_Win_detach(dyn, x));
    MPI_OK(MPI_Win_free(&dyn));

    /* Nothing reached the window memory. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < kWords; ++i) CHECK(mem[i] == kGuard, "window word %d is %d", i, mem[i]);
    MPI_OK(MPI_Win_free(&win));
    free(mem);
    MPI_Finalize();
    if (rank == 0) printf("rma_errors: %d ranks ok\n", size);
    return 0;
}
