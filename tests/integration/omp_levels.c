/* Hybrid MPI + OpenMP at each thread support level (MPI 3.1 section 12.4):
 * which OpenMP threads may call MPI, and what MPI_Query_thread and
 * MPI_Is_thread_main answer.
 *
 * usage: omp_levels funneled|serialized|multiple
 *
 *  funneled    only the master calls MPI, inside `omp master` (then an
 *              explicit barrier before the team uses what it received).
 *  serialized  any thread calls MPI, one at a time: every thread inside an
 *              unnamed `omp critical` (whose lock, in a process, no other
 *              rank shares), then one thread inside `omp single`.
 *  multiple    every thread calls MPI at once: collectives on a duplicate of
 *              MPI_COMM_WORLD per thread (Allreduce, Bcast, Barrier, Gather),
 *              while the master computes and waits at the region's end.
 *
 * Query_thread answers the level Init_thread provided (the level asked for);
 * Is_thread_main is true for the master of the outermost team only.
 */
#include <omp.h>

#include "common.h"

#define ROUNDS 8

static int level_of(const char* name) {
    if (!strcmp(name, "funneled")) return MPI_THREAD_FUNNELED;
    if (!strcmp(name, "serialized")) return MPI_THREAD_SERIALIZED;
    if (!strcmp(name, "multiple")) return MPI_THREAD_MULTIPLE;
    fprintf(stderr, "usage: omp_levels funneled|serialized|multiple\n");
    exit(2);
}

static void check_levels(int wanted) {
    int provided = -1, is_main = -1;
    MPI_OK(MPI_Query_thread(&provided));
    CHECK(provided == wanted, "Query_thread gave %d, not %d", provided, wanted);
    MPI_OK(MPI_Is_thread_main(&is_main));
    CHECK(is_main == (omp_get_level() == 0 || omp_get_thread_num() == 0),
          "thread %d (level %d): Is_thread_main says %d", omp_get_thread_num(), omp_get_level(),
          is_main);
}

/* FUNNELED: the master exchanges with the peer; the team waits, then reads. */
static void funneled(int rank, int peer) {
    int got[ROUNDS];
    for (int round = 0; round < ROUNDS; ++round) {
        int wrong = 0;
#pragma omp parallel reduction(+ : wrong)
        {
#pragma omp master
            {
                check_levels(MPI_THREAD_FUNNELED);
                int out = rank * 1000 + round;
                MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, peer, round, &got[round], 1, MPI_INT, peer,
                                    round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            }
#pragma omp barrier
            if (got[round] != peer * 1000 + round) wrong++;
        }
        CHECK(wrong == 0, "round %d: %d threads read %d", round, wrong, got[round]);
    }
}

/* SERIALIZED: each thread, inside the critical section, sends its value and
 * receives one of the peer's (matched in order); one thread sums up in single. */
static void serialized(int rank, int peer) {
    for (int round = 0; round < ROUNDS; ++round) {
        long sent = 0, received = 0, everyone = -1;
        int threads = 0;
#pragma omp parallel reduction(+ : sent, received)
        {
            const int t = omp_get_thread_num();
#pragma omp single
            threads = omp_get_num_threads();
#pragma omp critical
            {
                check_levels(MPI_THREAD_SERIALIZED);
                int out = rank * 1000 + round * 10 + t, in = -1;
                MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, peer, 5, &in, 1, MPI_INT, peer, 5,
                                    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(in / 1000 == peer && in % 1000 / 10 == round, "received %d", in);
                sent += out;
                received += in;
            }
#pragma omp single
            {
                check_levels(MPI_THREAD_SERIALIZED);
                long mine = rank;
                MPI_OK(MPI_Allreduce(&mine, &everyone, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
            }
        }
        int size = 0;
        MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        CHECK(everyone == (long)size * (size - 1) / 2, "Allreduce in single gave %ld", everyone);
        /* The peer's threads sent peer*1000 + round*10 + t, t < its team. */
        long expect = 0;
        for (int t = 0; t < threads; ++t) expect += peer * 1000 + round * 10 + t;
        CHECK(received == expect, "round %d: received %ld in all, expected %ld", round, received,
              expect);
        (void)sent;
    }
}

/* MULTIPLE: thread t runs collectives on its own duplicate communicator. */
static void multiple(int rank, int size) {
    const int team = omp_get_max_threads();
    MPI_Comm* comms = (MPI_Comm*)xmalloc(sizeof(MPI_Comm) * (size_t)team);
    for (int t = 0; t < team; ++t) MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    int* gathered = ints((size_t)size * (size_t)team, -1);
    for (int round = 0; round < ROUNDS; ++round) {
        int wrong = 0;
#pragma omp parallel reduction(+ : wrong)
        {
            const int t = omp_get_thread_num();
            check_levels(MPI_THREAD_MULTIPLE);
            if (t == 0 && team > 1) {
                /* The master only computes: the others' collectives must go
                 * on while it waits for them at the region's end. */
                volatile double x = 0;
                for (int i = 0; i < 20000; ++i) x += i * 0.5;
            } else {
                const MPI_Comm c = comms[t];
                long v = rank * 10 + t + round, sum = -1;
                MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c));
                if (sum != (long)size * (size - 1) / 2 * 10 + (long)size * (t + round)) wrong++;
                int root_value = rank == round % size ? 7000 + t + round : -1;
                MPI_OK(MPI_Bcast(&root_value, 1, MPI_INT, round % size, c));
                if (root_value != 7000 + t + round) wrong++;
                MPI_OK(MPI_Barrier(c));
                int mine = rank * 100 + t;
                MPI_OK(MPI_Gather(&mine, 1, MPI_INT, gathered + (size_t)t * (size_t)size, 1,
                                  MPI_INT, 0, c));
                if (rank == 0)
                    for (int r = 0; r < size; ++r)
                        if (gathered[(size_t)t * (size_t)size + (size_t)r] != r * 100 + t) wrong++;
            }
        }
        CHECK(wrong == 0, "round %d: %d wrong collective results", round, wrong);
    }
    for (int t = 0; t < team; ++t) MPI_OK(MPI_Comm_free(&comms[t]));
    free(comms);
    free(gathered);
}

int main(int argc, char** argv) {
    const int wanted = level_of(argc > 1 ? argv[1] : "");
    int provided = -1, rank = -1, size = 0;
    MPI_OK(MPI_Init_thread(&argc, &argv, wanted, &provided));
    CHECK(provided == wanted, "Init_thread provided %d, not %d", provided, wanted);
    check_levels(wanted);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int peer = (rank ^ 1) < size ? rank ^ 1 : rank;
    /* Teams of the same size everywhere: the peer's threads answer ours. */
    int team = omp_get_max_threads(), lo = 0;
    MPI_OK(MPI_Allreduce(&team, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    omp_set_num_threads(lo);
    if (wanted == MPI_THREAD_FUNNELED) funneled(rank, peer);
    if (wanted == MPI_THREAD_SERIALIZED) serialized(rank, peer);
    if (wanted == MPI_THREAD_MULTIPLE) multiple(rank, size);
    MPI_OK(MPI_Finalize());
    return 0;
}
