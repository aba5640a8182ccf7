/* Shared-memory windows (MPI 3.1 section 11.2.3) and dynamic windows
 * (section 11.2.4):
 *
 * - MPI_Win_allocate_shared over the ranks of one node process (the
 *   communicator from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)): segments
 *   contiguous and in rank order by default, MPI_Win_shared_query for every
 *   rank and MPI_PROC_NULL, loads and stores straight into a neighbour's
 *   segment ordered by MPI_Win_sync and a barrier, Put and Accumulate through
 *   the window too; alloc_shared_noncontig gives every segment its own
 *   aligned start; over MPI_COMM_WORLD spanning several node processes the
 *   call fails with MPI_ERR_RMA_SHARED on every rank (no rank hangs);
 * - MPI_Win_create_dynamic: every rank attaches two buffers, publishes their
 *   addresses, and its neighbour puts, gets and accumulates at them; after
 *   MPI_Win_detach the memory is no longer reachable.
 */
#include "common.h"

static int rank, size;

static void shared(MPI_Comm node, int noncontig) {
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    /* Rank r has 10 + r ints (rank 1 none, to test an empty segment). */
    const int n = nrank == 1 ? 0 : 10 + nrank;
    int* mine = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_shared((MPI_Aint)n * (MPI_Aint)sizeof(int), sizeof(int), info, node,
                                   &mine, &win));
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    char* expected_next = NULL;
    for (int r = 0; r < nsize; ++r) {
        MPI_Aint sz;
        int du;
        int* p;
        MPI_OK(MPI_Win_shared_query(win, r, &sz, &du, &p));
        const int want = r == 1 ? 0 : 10 + r;
        CHECK(sz == (MPI_Aint)want * (MPI_Aint)sizeof(int) && du == sizeof(int),
              "segment %d: %ld bytes, unit %d", r, (long)sz, du);
        if (r == nrank) CHECK(p == mine || n == 0, "my segment is not where I was told");
        if (noncontig)
            CHECK(((uintptr_t)p & 63) == 0, "noncontig segment %d at %p is not aligned", r,
                  (void*)p);
        else if (expected_next)
            CHECK((char*)p == expected_next, "segment %d is not contiguous with the previous",
                  r);
        expected_next = (char*)p + sz;
    }
    MPI_Aint sz;
    int du;
    int* first;
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &first));
    int* seg0;
    MPI_OK(MPI_Win_shared_query(win, 0, &sz, &du, &seg0));
    CHECK(first == seg0, "MPI_PROC_NULL does not give the first non-empty segment");

    /* Stores straight into the right neighbour's segment. */
    const int right = (nrank + 1) % nsize;
    MPI_Aint rsz;
    int* rseg;
    MPI_OK(MPI_Win_shared_query(win, right, &rsz, &du, &rseg));
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int i = 0; i < (int)(rsz / (MPI_Aint)sizeof(int)); ++i) rseg[i] = value(nrank, i);
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    const int left = (nrank + nsize - 1) % nsize;
    for (int i = 0; i < n; ++i)
        CHECK(mine[i] == value(left, i), "store from %d, element %d: %d", left, i, mine[i]);
    MPI_OK(MPI_Barrier(node));
    /* And through the window: everyone adds 1 to element 0 of rank 0. */
    int one = 1;
    MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_flush(0, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(node));
    if (nrank == 0) CHECK(mine[0] == value(nsize - 1, 0) + nsize, "sum %d", mine[0]);
    int flavor_ok = 0;
    int* flavor;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flavor_ok));
    CHECK(flavor_ok && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor");
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_free(&win));
}

static void spanning(void) {
    /* Over ranks of several node processes: refused everywhere, at once. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int* p;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win);
    CHECK(error_class(rc) == MPI_ERR_RMA_SHARED, "shared window over node processes: %d", rc);
    CHECK(win == MPI_WIN_NULL, "a window came back from a failed creation");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void dynamic(void) {
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    long* a = (long*)xmalloc(16 * sizeof(long));
    long* b = (long*)xmalloc(4 * sizeof(long));
    for (int i = 0; i < 16; ++i) a[i] = -1;
    for (int i = 0; i < 4; ++i) b[i] = 100;
    MPI_OK(MPI_Win_attach(win, a, 16 * sizeof(long)));
    MPI_OK(MPI_Win_attach(win, b, 4 * sizeof(long)));
    MPI_Aint mine[2], all[2 * 64];
    MPI_OK(MPI_Get_address(a, &mine[0]));
    MPI_OK(MPI_Get_address(b, &mine[1]));
    MPI_OK(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long v[16], got[4], one = 1;
    for (int i = 0; i < 16; ++i) v[i] = value(rank, i);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Put(v, 16, MPI_LONG, right, all[2 * right], 16, MPI_LONG, win));
    MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, right, all[2 * right + 1] + 8, 1, MPI_LONG, MPI_SUM,
                          win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Get(got, 4, MPI_LONG, right, all[2 * right + 1], 4, MPI_LONG, win));
    MPI_OK(MPI_Win_unlock(right, win));
    CHECK(got[0] == 100 && got[1] == 101 && got[2] == 100, "dynamic get: %ld %ld %ld", got[0],
          got[1], got[2]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 16; ++i) CHECK(a[i] == value(left, i), "dynamic put %d: %ld", i, a[i]);
    CHECK(b[1] == 101, "dynamic accumulate: %ld", b[1]);
    MPI_OK(MPI_Win_detach(win, b));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* b is detached: a Put there is refused (MPI_ERR_RMA_RANGE), a is not. */
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    int rc = MPI_Put(v, 1, MPI_LONG, right, all[2 * right + 1], 1, MPI_LONG, win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(right, win);
    CHECK(error_class(rc) == MPI_ERR_RMA_RANGE, "put to detached memory: %d", rc);
    MPI_OK(MPI_Put(v, 1, MPI_LONG, right, all[2 * right], 1, MPI_LONG, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(b[0] == 100, "detached memory changed: %ld", b[0]);
    MPI_OK(MPI_Win_detach(win, a));
    MPI_OK(MPI_Win_free(&win));
    free(a);
    free(b);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    int nsize;
    MPI_Comm_size(node, &nsize);
    shared(node, 0);
    shared(node, 1);
    if (nsize < size) spanning();
    dynamic();
    MPI_Comm_free(&node);
    MPI_Finalize();
    if (rank == 0) printf("rma_shared: %d ranks ok\n", size);
    return 0;
}
