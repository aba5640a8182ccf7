/* A seeded, randomized storm of one-sided operations, every window checked
 * against a model after every epoch.
 *
 * Rounds. Every rank derives the same plan from (seed, round): the epoch
 * kind (fence, lock_all, PSCW among all, or a lock per target, shared or
 * exclusive) and, for each origin, a list of operations: Put, Get,
 * Accumulate (sum), Get_accumulate (sum), Fetch_and_op (+1), with random
 * targets, counts (1 element to 16 KiB, so that operations between node
 * processes take RDMA or several messages) and target types (contiguous, or
 * every other element: many segments).
 *
 * No two operations of a round conflict, so the result is determined: each
 * window is cut into zones that move every round: a stable zone (only read:
 * Gets compare with the model at once), a put zone (each element written by
 * at most one Put), an accumulate zone (sums from anyone; the values fetched
 * by Get_accumulate lie between the zone's start and end values) and tickets
 * (Fetch_and_op +1: the old values of one ticket are distinct, checked by
 * rank 0 from everyone's). Each rank keeps the model of every window, applies
 * the plan to it, and compares its own window after the epoch.
 *
 * usage: rma_storm [--seed N] [--seconds S] [--rounds R]
 */
#include <time.h>

#include "common.h"

enum { kW = 16384, kStable = 4096, kPut = 8192, kAcc = 3840, kTickets = 256, kMaxOps = 24 };
enum { kOpPut, kOpGet, kOpAcc, kOpGetAcc, kOpFop, kOpKinds };
enum { kFence, kLockAll, kPscw, kLockEach, kEpochKinds };

static int rank, size;
static uint64_t rng_state;

static uint64_t next(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int below(int n) { return (int)(next() % (uint64_t)n); }

typedef struct {
    int kind, target, disp, count, strided, value;
    int* buf;    /* origin data or results */
} Op;

static Op plan[64][kMaxOps];
static int nops[64];
static int* model; /* kW ints per rank */

/* The zones of round r: each starts at a rotating offset of the window. */
static int zone(int r, int which) {
    static const int starts[4] = {0, kStable, kStable + kPut, kStable + kPut + kAcc};
    return (starts[which] + r * 1024) % kW;
}
static int at(int base, int i) { return (base + i) % kW; }

static void make_plan(uint64_t seed, int round, int* epoch) {
    rng_state = seed * 0x9E3779B97F4A7C15ull + (uint64_t)round * 0xBF58476D1CE4E5B9ull + 1;
    *epoch = below(kEpochKinds);
    int put_used[64] = {0};
    for (int o = 0; o < size; ++o) {
        nops[o] = 1 + below(kMaxOps);
        for (int k = 0; k < nops[o]; ++k) {
            Op* op = &plan[o][k];
            memset(op, 0, sizeof *op);
            op->kind = below(kOpKinds);
            op->target = below(size);
            op->strided = below(3) == 0;
            int big = below(8) == 0;
            op->count = 1 + (big ? below(4096) : below(64));
            static const int zone_size[kOpKinds] = {kPut, kStable, kAcc, kAcc, kTickets};
            while ((op->strided ? 2 * op->count - 1 : op->count) > zone_size[op->kind])
                op->count /= 2;
            int span = op->strided ? 2 * op->count - 1 : op->count;
            op->value = below(100) + 1;
            switch (op->kind) {
                case kOpPut:
                    if (put_used[op->target] + span > kPut) {
                        op->kind = kOpGet;  /* no room left: read instead */
                        op->count = 1;
                        op->strided = 0;
                        op->disp = below(kStable);
                        break;
                    }
                    op->disp = put_used[op->target];
                    put_used[op->target] += span;
                    op->value = round * 7919 + o * 131 + k;
                    break;
                case kOpGet: op->disp = below(kStable - span + 1); break;
                case kOpAcc:
                case kOpGetAcc:
                    op->disp = below(kAcc - span + 1);
                    break;
                case kOpFop: op->count = 1; op->strided = 0; op->disp = below(kTickets); break;
            }
        }
    }
}

/* Window offset of element i of op (in the target's window) in round r. */
static int target_index(const Op* op, int r, int i) {
    static const int zone_of[kOpKinds] = {1, 0, 2, 2, 3};
    return at(zone(r, zone_of[op->kind]), op->disp + (op->strided ? 2 * i : i));
}

static MPI_Datatype target_type(const Op* op, MPI_Datatype* to_free) {
    *to_free = MPI_DATATYPE_NULL;
    if (!op->strided) return MPI_INT;
    MPI_OK(MPI_Type_vector(op->count, 1, 2, MPI_INT, to_free));
    MPI_OK(MPI_Type_commit(to_free));
    return *to_free;
}

/* Zones wrap around the window end: an op whose span wraps is issued as if
 * contiguous in a rotated window only when it does not wrap; the plan keeps
 * every zone at a multiple of 1024 and spans inside the zone, so the target
 * displacement below is always inside [0, kW). */
static int target_disp(const Op* op, int r) { return target_index(op, r, 0); }

static int wraps(const Op* op, int r) {
    int span = op->strided ? 2 * op->count - 1 : op->count;
    return target_disp(op, r) + span > kW;
}

static void issue(MPI_Win win, int r, Op* op) {
    MPI_Datatype tt_free, tt = target_type(op, &tt_free);
    const int tcount = op->strided ? 1 : op->count, disp = target_disp(op, r);
    op->buf = (int*)xmalloc((size_t)op->count * sizeof(int));
    if (op->kind == kOpPut) {
        for (int i = 0; i < op->count; ++i) op->buf[i] = op->value + i;
        MPI_OK(MPI_Put(op->buf, op->count, MPI_INT, op->target, disp, tcount, tt, win));
    } else if (op->kind == kOpGet) {
        for (int i = 0; i < op->count; ++i) op->buf[i] = -1;
        MPI_OK(MPI_Get(op->buf, op->count, MPI_INT, op->target, disp, tcount, tt, win));
    } else if (op->kind == kOpAcc || op->kind == kOpGetAcc) {
        /* The origin (and result) buffers live until the epoch ends:
         * Get_accumulate's results first, its input after them. */
        free(op->buf);
        op->buf = (int*)xmalloc(2 * (size_t)op->count * sizeof(int));
        int* in = op->buf + (op->kind == kOpGetAcc ? op->count : 0);
        for (int i = 0; i < op->count; ++i) in[i] = op->value;
        if (op->kind == kOpAcc)
            MPI_OK(MPI_Accumulate(in, op->count, MPI_INT, op->target, disp, tcount, tt, MPI_SUM,
                                  win));
        else
            MPI_OK(MPI_Get_accumulate(in, op->count, MPI_INT, op->buf, op->count, MPI_INT,
                                      op->target, disp, tcount, tt, MPI_SUM, win));
    } else {
        int one = 1;
        MPI_OK(MPI_Fetch_and_op(&one, op->buf, MPI_INT, op->target, disp, MPI_SUM, win));
    }
    if (tt_free != MPI_DATATYPE_NULL) MPI_Type_free(&tt_free);
}

static void run_round(MPI_Win win, int* base, uint64_t seed, int r) {
    int epoch;
    make_plan(seed, r, &epoch);
    /* Ops whose span would wrap the window end are dropped (every rank agrees). */
    for (int o = 0; o < size; ++o)
        for (int k = 0; k < nops[o]; ++k)
            if (wraps(&plan[o][k], r)) plan[o][k].kind = -1;
    /* Model before: acc zone start values for the Get_accumulate bounds. */
    int* before = (int*)xmalloc((size_t)size * kW * sizeof(int));
    memcpy(before, model, (size_t)size * kW * sizeof(int));
    MPI_Group world;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    Op* mine = plan[rank];
    if (epoch == kFence) MPI_OK(MPI_Win_fence(0, win));
    if (epoch == kLockAll) MPI_OK(MPI_Win_lock_all(0, win));
    if (epoch == kPscw) {
        MPI_OK(MPI_Win_post(world, 0, win));
        MPI_OK(MPI_Win_start(world, 0, win));
    }
    if (epoch == kLockEach) {
        for (int t = 0; t < size; ++t) {
            int any = 0;
            for (int k = 0; k < nops[rank]; ++k) any |= mine[k].kind >= 0 && mine[k].target == t;
            if (!any) continue;
            /* Exclusive now and then: serializes this origin's ops on t. */
            MPI_OK(MPI_Win_lock(below(4) == 0 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, win));
            for (int k = 0; k < nops[rank]; ++k)
                if (mine[k].kind >= 0 && mine[k].target == t) issue(win, r, &mine[k]);
            MPI_OK(MPI_Win_unlock(t, win));
        }
    } else {
        for (int k = 0; k < nops[rank]; ++k)
            if (mine[k].kind >= 0) issue(win, r, &mine[k]);
    }
    if (epoch == kFence) MPI_OK(MPI_Win_fence(0, win));
    if (epoch == kLockAll) {
        if (below(2)) MPI_OK(MPI_Win_flush_all(win));
        MPI_OK(MPI_Win_unlock_all(win));
    }
    if (epoch == kPscw) {
        MPI_OK(MPI_Win_complete(win));
        MPI_OK(MPI_Win_wait(win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* The model: every op of every origin, in any order (none conflict). */
    for (int o = 0; o < size; ++o)
        for (int k = 0; k < nops[o]; ++k) {
            const Op* op = &plan[o][k];
            int* w = model + (size_t)op->target * kW;
            for (int i = 0; op->kind >= 0 && i < op->count; ++i) {
                const int j = target_index(op, r, i);
                if (op->kind == kOpPut) w[j] = op->value + i;
                if (op->kind == kOpAcc || op->kind == kOpGetAcc) w[j] += op->value;
                if (op->kind == kOpFop) w[j] += 1;
            }
        }
    /* My window, my results. */
    for (int j = 0; j < kW; ++j)
        CHECK(base[j] == model[(size_t)rank * kW + j],
              "round %d (epoch kind %d): window element %d is %d, the model says %d "
              "(replay: --seed %llu)",
              r, epoch, j, base[j], model[(size_t)rank * kW + j], (unsigned long long)seed);
    int tickets[kMaxOps][2], nt = 0;
    for (int k = 0; k < nops[rank]; ++k) {
        Op* op = &mine[k];
        const int* b = before + (size_t)(op->kind >= 0 ? op->target : 0) * kW;
        const int* a = model + (size_t)(op->kind >= 0 ? op->target : 0) * kW;
        for (int i = 0; op->kind == kOpGet && i < op->count; ++i)
            CHECK(op->buf[i] == b[target_index(op, r, i)], "round %d: get %d element %d: %d, "
                  "expected %d (replay: --seed %llu)", r, k, i, op->buf[i],
                  b[target_index(op, r, i)], (unsigned long long)seed);
        for (int i = 0; op->kind == kOpGetAcc && i < op->count; ++i) {
            const int j = target_index(op, r, i), v = op->buf[i];
            CHECK(v >= b[j] && v <= a[j] - op->value, "round %d: fetched %d not in [%d, %d] "
                  "(replay: --seed %llu)", r, v, b[j], a[j] - op->value,
                  (unsigned long long)seed);
        }
        if (op->kind == kOpFop) {
            tickets[nt][0] = op->target * kW + target_index(op, r, 0);
            tickets[nt][1] = op->buf[0];
            ++nt;
        }
        if (op->kind >= 0) free(op->buf);
    }
    /* Rank 0: the old values of each ticket are distinct and cover its range. */
    int* counts = rank == 0 ? (int*)xmalloc((size_t)size * sizeof(int)) : NULL;
    int mine2 = 2 * nt;
    MPI_OK(MPI_Gather(&mine2, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD));
    int* displs = NULL;
    int* all = NULL;
    int total = 0;
    if (rank == 0) {
        displs = (int*)xmalloc((size_t)size * sizeof(int));
        for (int o = 0; o < size; ++o) {
            displs[o] = total;
            total += counts[o];
        }
        all = (int*)xmalloc((size_t)(total ? total : 1) * sizeof(int));
    }
    MPI_OK(MPI_Gatherv(tickets, mine2, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        for (int a1 = 0; a1 < total; a1 += 2) {
            const int where = all[a1], old = all[a1 + 1];
            CHECK(old >= before[where] && old < model[where], "round %d: ticket %d got %d, "
                  "outside [%d, %d)", r, where, old, before[where], model[where]);
            for (int b1 = a1 + 2; b1 < total; b1 += 2)
                CHECK(!(all[b1] == where && all[b1 + 1] == old),
                      "round %d: ticket %d handed out %d twice (replay: --seed %llu)", r, where,
                      old, (unsigned long long)seed);
        }
        free(counts);
        free(displs);
        free(all);
    }
    MPI_Group_free(&world);
    free(before);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t seed = (uint64_t)time(NULL);
    double seconds = 3;
    int rounds = 1 << 30;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);
        if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
    }
    MPI_OK(MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
    CHECK(size <= 64, "at most 64 ranks");
    if (rank == 0) printf("rma_storm: seed %llu, %d ranks\n", (unsigned long long)seed, size);
    int* base;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(kW * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win));
    model = (int*)xmalloc((size_t)size * kW * sizeof(int));
    for (int t = 0; t < size; ++t)
        for (int j = 0; j < kW; ++j) model[(size_t)t * kW + j] = value(t, j) % 100000;
    for (int j = 0; j < kW; ++j) base[j] = model[(size_t)rank * kW + j];
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double start = MPI_Wtime();
    int r = 0;
    for (int go = 1; go && r < rounds; ++r) {
        run_round(win, base, seed, r);
        go = MPI_Wtime() - start < seconds;
        MPI_OK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Win_free(&win));
    free(model);
    if (rank == 0) printf("rma_storm: %d rounds ok\n", r);
    MPI_Finalize();
    return 0;
}
