/* One-sided communication, the core of MPI 3.1 chapter 11, on windows made by
 * MPI_Win_create (user memory) and by MPI_Win_allocate:
 *
 * - fence epochs: Put and Get to every rank, Accumulate (sum, max, replace),
 *   Get_accumulate and MPI_NO_OP, checked after the closing fence;
 * - passive target, lock_all: Fetch_and_op tickets from one counter (every
 *   old value distinct), a counter advanced by Compare_and_swap retries, the
 *   request forms (Rput, Rget, Raccumulate, Rget_accumulate) with Wait, and
 *   the flushes;
 * - exclusive locks: a read-modify-write with Get and Put under
 *   MPI_Win_lock(EXCLUSIVE) by every rank on one target loses no update;
 * - post-start-complete-wait around a ring;
 * - MPI_PROC_NULL targets do nothing.
 * Values are distinct per rank and slot, so a misplaced byte shows.
 */
#include "common.h"

enum { kSlots = 8 };  /* ints per rank in the window */

/* Window layout (ints): [0, size*kSlots) one block per origin, then
 * counters: sum, max, replace, ticket, cas, rmw, request-based. */
enum { kSum = 0, kMax, kReplace, kTicket, kCas, kRmw, kReq, kCounters };

static int rank, size;

static int* win_mem(int* base) { return base; }
static int slot(int origin, int k) { return origin * kSlots + k; }
static int counter(int c) { return size * kSlots + c; }

static void fence_epoch(MPI_Win win, int* base) {
    int n = size * kSlots + kCounters;
    for (int i = 0; i < n; ++i) base[i] = -1;
    base[counter(kSum)] = 0;
    base[counter(kMax)] = -1;
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    int mine[kSlots];
    for (int k = 0; k < kSlots; ++k) mine[k] = value(rank, k);
    for (int t = 0; t < size; ++t) {
        MPI_OK(MPI_Put(mine, kSlots, MPI_INT, t, slot(rank, 0), kSlots, MPI_INT, win));
        int one = rank + 1;
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, t, counter(kSum), 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(&rank, 1, MPI_INT, t, counter(kMax), 1, MPI_INT, MPI_MAX, win));
        MPI_OK(MPI_Accumulate(&t, 1, MPI_INT, t, counter(kReplace), 1, MPI_INT, MPI_REPLACE,
                              win));
    }
    MPI_OK(MPI_Put(mine, kSlots, MPI_INT, MPI_PROC_NULL, 0, kSlots, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int o = 0; o < size; ++o)
        for (int k = 0; k < kSlots; ++k)
            CHECK(base[slot(o, k)] == value(o, k), "slot %d of origin %d: %d", k, o,
                  base[slot(o, k)]);
    CHECK(base[counter(kSum)] == size * (size + 1) / 2, "sum %d", base[counter(kSum)]);
    CHECK(base[counter(kMax)] == size - 1, "max %d", base[counter(kMax)]);
    CHECK(base[counter(kReplace)] == rank, "replace %d", base[counter(kReplace)]);
    /* The next epoch may change this memory: everyone checks first. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Gets of what every rank holds, and the fetching forms. */
    int* got = ints((size_t)size * kSlots, -7);
    int old[3] = {-9, -9, -9};
    const int right = (rank + 1) % size;
    for (int t = 0; t < size; ++t)
        MPI_OK(MPI_Get(got + t * kSlots, kSlots, MPI_INT, t, slot(t, 0), kSlots, MPI_INT, win));
    int two = 2;
    MPI_OK(MPI_Get_accumulate(&two, 1, MPI_INT, &old[0], 1, MPI_INT, right, counter(kSum), 1,
                              MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, &old[1], 1, MPI_INT, right, counter(kMax), 1,
                              MPI_INT, MPI_NO_OP, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int t = 0; t < size; ++t)
        for (int k = 0; k < kSlots; ++k)
            CHECK(got[t * kSlots + k] == value(t, k), "got slot %d of %d: %d", k, t,
                  got[t * kSlots + k]);
    /* Each rank's sum counter got +2 once, from its left neighbour. */
    CHECK(old[0] == size * (size + 1) / 2, "fetched sum %d", old[0]);
    CHECK(old[1] == size - 1, "fetched max (no-op) %d", old[1]);
    CHECK(base[counter(kSum)] == size * (size + 1) / 2 + 2, "sum after +2: %d",
          base[counter(kSum)]);
    free(got);
}

static void passive_epoch(MPI_Win win, int* base) {
    base[counter(kTicket)] = 0;
    base[counter(kCas)] = 0;
    base[counter(kRmw)] = 0;
    base[counter(kReq)] = 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    const int root = size - 1;

    /* Tickets: every old value distinct. */
    MPI_OK(MPI_Win_lock_all(0, win));
    int one = 1, ticket = -1;
    MPI_OK(MPI_Fetch_and_op(&one, &ticket, MPI_INT, root, counter(kTicket), MPI_SUM, win));
    MPI_OK(MPI_Win_flush(root, win));
    /* A counter advanced by compare-and-swap until this rank's swap wins. */
    int seen = -1, tries = 0;
    MPI_OK(MPI_Fetch_and_op(NULL, &seen, MPI_INT, root, counter(kCas), MPI_NO_OP, win));
    MPI_OK(MPI_Win_flush(root, win));
    for (;;) {
        int next = seen + 1, result = -1;
        MPI_OK(MPI_Compare_and_swap(&next, &seen, &result, MPI_INT, root, counter(kCas), win));
        MPI_OK(MPI_Win_flush(root, win));
        if (result == seen) break;
        seen = result;
        CHECK(++tries < 100000, "compare-and-swap never wins");
    }
    /* The request forms. */
    MPI_Request reqs[4];
    int put_back = value(rank, 99), rget = -1, racc_old = -1;
    MPI_OK(MPI_Rput(&put_back, 1, MPI_INT, root, slot(rank, 0), 1, MPI_INT, win, &reqs[0]));
    MPI_OK(MPI_Raccumulate(&one, 1, MPI_INT, root, counter(kReq), 1, MPI_INT, MPI_SUM, win,
                           &reqs[1]));
    MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Rget(&rget, 1, MPI_INT, root, slot(rank, 0), 1, MPI_INT, win, &reqs[2]));
    MPI_OK(MPI_Rget_accumulate(&one, 1, MPI_INT, &racc_old, 1, MPI_INT, root, counter(kReq), 1,
                               MPI_INT, MPI_SUM, win, &reqs[3]));
    MPI_OK(MPI_Wait(&reqs[2], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&reqs[3], MPI_STATUS_IGNORE));
    CHECK(reqs[2] == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
    MPI_OK(MPI_Win_flush_local(root, win));
    MPI_OK(MPI_Win_flush_local_all(win));
    MPI_OK(MPI_Win_unlock_all(win));
    CHECK(rget == value(rank, 99), "Rget read %d", rget);
    CHECK(racc_old >= 1 && racc_old <= 2 * size - 1, "Rget_accumulate read %d", racc_old);

    /* Exclusive read-modify-write: no update lost. */
    for (int round = 0; round < 3; ++round) {
        int v = -1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, root, 0, win));
        MPI_OK(MPI_Get(&v, 1, MPI_INT, root, counter(kRmw), 1, MPI_INT, win));
        MPI_OK(MPI_Win_flush(root, win));
        ++v;
        MPI_OK(MPI_Put(&v, 1, MPI_INT, root, counter(kRmw), 1, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(root, win));
    }
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, MPI_PROC_NULL, 0, win));
    MPI_OK(MPI_Win_unlock(MPI_PROC_NULL, win));

    int* tickets = rank == 0 ? ints((size_t)size, -1) : NULL;
    MPI_OK(MPI_Gather(&ticket, 1, MPI_INT, tickets, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        char* seen_ticket = calloc((size_t)size, 1);
        for (int r = 0; r < size; ++r) {
            CHECK(tickets[r] >= 0 && tickets[r] < size, "ticket %d", tickets[r]);
            CHECK(!seen_ticket[tickets[r]], "ticket %d given twice", tickets[r]);
            seen_ticket[tickets[r]] = 1;
        }
        free(seen_ticket);
        free(tickets);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == root) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, root, 0, win));
        CHECK(base[counter(kTicket)] == size, "ticket counter %d", base[counter(kTicket)]);
        CHECK(base[counter(kCas)] == size, "cas counter %d", base[counter(kCas)]);
        CHECK(base[counter(kRmw)] == 3 * size, "exclusive counter %d (updates lost)",
              base[counter(kRmw)]);
        CHECK(base[counter(kReq)] == 2 * size, "request counter %d", base[counter(kReq)]);
        for (int o = 0; o < size; ++o)
            CHECK(base[slot(o, 0)] == value(o, 99), "Rput of %d: %d", o, base[slot(o, 0)]);
        MPI_OK(MPI_Win_unlock(root, win));
    }
}

/* Post-start-complete-wait: every rank exposes to its left neighbour and
 * writes to its right one. */
static void pscw_epoch(MPI_Win win, int* base) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    base[slot(left, 1)] = -1;
    MPI_Group world, lg, rg;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &left, &lg));
    MPI_OK(MPI_Group_incl(world, 1, &right, &rg));
    for (int round = 0; round < 3; ++round) {
        MPI_OK(MPI_Win_post(lg, 0, win));
        MPI_OK(MPI_Win_start(rg, 0, win));
        int v = value(rank, round);
        MPI_OK(MPI_Put(&v, 1, MPI_INT, right, slot(rank, 1), 1, MPI_INT, win));
        MPI_OK(MPI_Win_complete(win));
        MPI_OK(MPI_Win_wait(win));
        CHECK(base[slot(left, 1)] == value(left, round), "PSCW round %d: %d", round,
              base[slot(left, 1)]);
    }
    /* Win_test until the epoch ends. */
    MPI_OK(MPI_Win_post(lg, 0, win));
    MPI_OK(MPI_Win_start(rg, 0, win));
    int v = value(rank, 7);
    MPI_OK(MPI_Put(&v, 1, MPI_INT, right, slot(rank, 1), 1, MPI_INT, win));
    MPI_OK(MPI_Win_complete(win));
    int flag = 0;
    while (!flag) MPI_OK(MPI_Win_test(win, &flag));
    CHECK(base[slot(left, 1)] == value(left, 7), "PSCW with Win_test: %d", base[slot(left, 1)]);
    /* MPI_MODE_NOCHECK on both sides: the barrier orders post before start. */
    MPI_OK(MPI_Win_post(lg, MPI_MODE_NOCHECK, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_start(rg, MPI_MODE_NOCHECK, win));
    v = value(rank, 8);
    MPI_OK(MPI_Put(&v, 1, MPI_INT, right, slot(rank, 1), 1, MPI_INT, win));
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
    CHECK(base[slot(left, 1)] == value(left, 8), "PSCW with NOCHECK: %d", base[slot(left, 1)]);
    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&world));
}

static void run(MPI_Win win, int* base) {
    fence_epoch(win, base);
    passive_epoch(win, base);
    pscw_epoch(win, base);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const MPI_Aint bytes = (MPI_Aint)(size * kSlots + kCounters) * (MPI_Aint)sizeof(int);

    /* MPI_Win_create on memory from MPI_Alloc_mem. */
    int* mem;
    MPI_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem));
    MPI_Win win;
    MPI_OK(MPI_Win_create(win_mem(mem), bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    run(win, mem);
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    MPI_OK(MPI_Free_mem(mem));

    /* MPI_Win_allocate. */
    int* base = NULL;
    MPI_OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK(base != NULL, "MPI_Win_allocate gave no memory");
    run(win, base);
    MPI_OK(MPI_Win_free(&win));

    MPI_Finalize();
    if (rank == 0) printf("rma_core: %d ranks ok\n", size);
    return 0;
}
