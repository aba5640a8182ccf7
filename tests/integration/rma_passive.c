/* Passive target synchronisation (MPI 3.1 section 11.5.3):
 *
 * - progress without the target: the last rank computes for half a second
 *   without any MPI call while rank 0 locks its window, puts, accumulates,
 *   gets, fetches-and-adds and unlocks. The epoch must complete and carry the
 *   right values; with the argument "strict", rank 0 must also be done before
 *   the target stops computing (valid where another thread serves the
 *   target's node process: another rank of it on another VP, an idle VP, the
 *   progress thread; the test registrations choose such layouts);
 * - exclusion: writers (MPI_LOCK_EXCLUSIVE) store one value into two slots,
 *   readers (MPI_LOCK_SHARED) load both: never a pair from two writers;
 * - MPI_MODE_NOCHECK locks, lock and unlock of several targets at once, and
 *   MPI_Win_lock_all with MPI_Win_sync around a flag in the window.
 */
#include <time.h>

#include "common.h"

static int rank, size;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Busy for `seconds` with no MPI call at all. */
static double compute(double seconds) {
    volatile double x = 1.0;
    double start = now();
    while (now() - start < seconds)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    return x;
}

enum { kPut = 0, kAcc = 1, kFop = 2, kPair = 4, kFlag = 6, kWords = 8 };

static void progress_without_target(MPI_Win win, long* base, int strict) {
    const int target = size - 1;
    for (int i = 0; i < kWords; ++i) base[i] = 0;
    base[kAcc] = 1000;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double times[2] = {0, 0}; /* target: end of computing; rank 0: end of its epoch */
    if (rank == target) {
        compute(0.5);
        times[0] = now();
    }
    if (rank == 0) {
        compute(0.05); /* the target is computing by now */
        long v = 42, add = 5, old = -1, got = -1, one = 1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        MPI_OK(MPI_Put(&v, 1, MPI_LONG, target, kPut, 1, MPI_LONG, win));
        MPI_OK(MPI_Accumulate(&add, 1, MPI_LONG, target, kAcc, 1, MPI_LONG, MPI_SUM, win));
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, target, kFop, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(target, win));
        MPI_OK(MPI_Get(&got, 1, MPI_LONG, target, kAcc, 1, MPI_LONG, win));
        MPI_OK(MPI_Win_unlock(target, win));
        times[1] = now();
        CHECK(old == 0, "fetch-and-op read %ld", old);
        CHECK(got == (target == 0 ? 1005 : 1005), "get after accumulate read %ld", got);
    }
    double all[2];
    MPI_OK(MPI_Allreduce(times, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (rank == target) {
        CHECK(base[kPut] == 42, "put: %ld", base[kPut]);
        CHECK(base[kAcc] == 1005, "accumulate: %ld", base[kAcc]);
        CHECK(base[kFop] == 1, "fetch-and-op: %ld", base[kFop]);
    }
    if (rank == 0 && strict && target != 0)
        CHECK(all[1] < all[0],
              "the epoch ended %.3f s after the target stopped computing: nobody progressed "
              "it meanwhile",
              all[1] - all[0]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void exclusion(MPI_Win win, long* base) {
    const int target = 0;
    if (rank == target) base[kPair] = base[kPair + 1] = -1;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 0; round < 20; ++round) {
        if ((rank + round) % 2 == 0) {
            long pair[2] = {rank * 1000 + round, rank * 1000 + round};
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            MPI_OK(MPI_Put(&pair[0], 1, MPI_LONG, target, kPair, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_flush(target, win));
            MPI_OK(MPI_Put(&pair[1], 1, MPI_LONG, target, kPair + 1, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_unlock(target, win));
        } else {
            long pair[2] = {-2, -3};
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
            MPI_OK(MPI_Get(&pair[0], 1, MPI_LONG, target, kPair, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_flush(target, win));
            MPI_OK(MPI_Get(&pair[1], 1, MPI_LONG, target, kPair + 1, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_unlock(target, win));
            CHECK(pair[0] == pair[1], "a shared lock saw a write in progress: %ld / %ld",
                  pair[0], pair[1]);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Several targets locked at once, MPI_MODE_NOCHECK, and lock_all with
 * MPI_Win_sync: rank 0 sets a flag in every window; each rank polls its own
 * window with MPI_Win_sync until it sees it. */
static void many_targets(MPI_Win win, long* base) {
    base[kFlag] = 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        long one = 1;
        for (int t = 0; t < size; ++t) MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        for (int t = 0; t < size; ++t)
            MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, t, kFlag, 1, MPI_LONG, MPI_REPLACE, win));
        for (int t = size - 1; t >= 0; --t) MPI_OK(MPI_Win_unlock(t, win));
    }
    MPI_OK(MPI_Win_lock_all(0, win));
    long seen = 0;
    for (long spins = 0; !seen; ++spins) {
        MPI_OK(MPI_Win_sync(win));
        MPI_OK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG, rank, kFlag, MPI_NO_OP, win));
        MPI_OK(MPI_Win_flush(rank, win));
        CHECK(spins < 100000000, "the flag never arrived");
        if (!seen) MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &(int){0},
                                     MPI_STATUS_IGNORE)); /* let MPI progress */
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* NOCHECK: the program guarantees no conflicting lock. */
    if (rank == 0) {
        long v = 77;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size - 1, MPI_MODE_NOCHECK, win));
        MPI_OK(MPI_Put(&v, 1, MPI_LONG, size - 1, kPut, 1, MPI_LONG, win));
        MPI_OK(MPI_Win_unlock(size - 1, win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) CHECK(base[kPut] == 77, "NOCHECK put: %ld", base[kPut]);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int strict = argc > 1 && strcmp(argv[1], "strict") == 0;
    long* base;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(kWords * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &base, &win));
    progress_without_target(win, base, strict);
    exclusion(win, base);
    many_targets(win, base);
    MPI_OK(MPI_Win_free(&win));
    MPI_Finalize();
    if (rank == 0) printf("rma_passive: %d ranks ok\n", size);
    return 0;
}
