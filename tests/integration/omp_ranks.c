/* Hybrid MPI + OpenMP: the OpenMP state of each rank is its own, as a
 * process's would be (MPI_THREAD_MULTIPLE).
 *
 *  - Internal control variables: rank r asks for teams of 1 + r % 3 threads
 *    (omp_set_num_threads) and for dynamic adjustment off; after blocking MPI
 *    calls, in which the other ranks set theirs, it still has its own.
 *  - Reductions in regions, then MPI_Allreduce of their results.
 *  - threadprivate counters: every thread of rank r adds r + 1 to its copy in
 *    every region (same team size, dynamic off: the copies persist); at the
 *    end each copy holds ROUNDS * (r + 1), never another rank's count.
 *  - Nested regions (max-active-levels 2): teams of 2 inside teams of 2, the
 *    nesting levels and ancestors right, and each inner thread exchanging a
 *    message with the same inner thread of the peer rank.
 */
#include <omp.h>

#include "common.h"

#define ROUNDS 10
#define N 10000

static int counter; /* per thread, hence per rank */
#pragma omp threadprivate(counter)

/* The reduction's expected result: sum of (i * (r + 1)) % 7 over i < N. */
static long expected_sum(int r) {
    long s = 0;
    for (long i = 0; i < N; ++i) s += (i * (r + 1)) % 7;
    return s;
}

static void check_icvs(int rank, int team, const char* when) {
    CHECK(omp_get_max_threads() == team, "%s: omp_get_max_threads() is %d, not %d", when,
          omp_get_max_threads(), team);
    CHECK(!omp_get_dynamic(), "%s: dynamic adjustment is on", when);
    CHECK(omp_get_level() == 0, "%s: level %d outside any region", when, omp_get_level());
    (void)rank;
}

int main(int argc, char** argv) {
    int provided = -1, rank = -1, size = 0;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "Init_thread provided %d", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int peer = (rank ^ 1) < size ? rank ^ 1 : rank;

    const int team = 1 + rank % 3;
    omp_set_dynamic(0);
    omp_set_num_threads(team);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the others set theirs meanwhile */
    check_icvs(rank, team, "after a barrier");

    /* Reductions in regions, then across ranks. */
    long want_all = 0;
    for (int r = 0; r < size; ++r) want_all += expected_sum(r);
    for (int round = 0; round < ROUNDS; ++round) {
        long sum = 0;
        int threads = 0;
#pragma omp parallel for reduction(+ : sum) reduction(max : threads) schedule(static)
        for (long i = 0; i < N; ++i) {
            sum += (i * (rank + 1)) % 7;
            if (omp_get_num_threads() > threads) threads = omp_get_num_threads();
        }
        CHECK(threads == team, "round %d: a team of %d threads", round, threads);
        CHECK(sum == expected_sum(rank), "round %d: reduction gave %ld", round, sum);
        long all = 0;
        MPI_OK(MPI_Allreduce(&sum, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(all == want_all, "round %d: Allreduce of the reductions gave %ld, not %ld", round,
              all, want_all);
        check_icvs(rank, team, "after an Allreduce");
    }

    /* threadprivate counters, with blocking MPI calls between the regions. */
    for (int round = 0; round < ROUNDS; ++round) {
#pragma omp parallel
        counter += rank + 1;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    int wrong = 0;
#pragma omp parallel reduction(+ : wrong)
    {
        if (counter != ROUNDS * (rank + 1)) {
            fprintf(stderr, "rank %d thread %d: threadprivate counter %d, expected %d\n", rank,
                    omp_get_thread_num(), counter, ROUNDS * (rank + 1));
            wrong++;
        }
    }
    CHECK(wrong == 0, "%d threadprivate counters hold another count", wrong);

    /* Nested regions calling MPI from the inner threads. */
    omp_set_max_active_levels(2);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(omp_get_max_active_levels() == 2, "max-active-levels %d after a barrier",
          omp_get_max_active_levels());
    for (int round = 0; round < 3; ++round) {
#pragma omp parallel num_threads(2)
        {
            const int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
            {
                const int inner = omp_get_thread_num();
                CHECK(omp_get_level() == 2 && omp_get_active_level() == 2,
                      "nested: level %d, active level %d", omp_get_level(),
                      omp_get_active_level());
                CHECK(omp_get_num_threads() == 2 && omp_get_ancestor_thread_num(1) == outer,
                      "nested: %d threads, ancestor %d", omp_get_num_threads(),
                      omp_get_ancestor_thread_num(1));
                int seen = -1;
                MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &seen));
                CHECK(seen == rank, "nested thread %d.%d is rank %d for MPI", outer, inner, seen);
                const int tag = 10 + outer * 2 + inner;
                int out = rank * 100 + tag + round, in = -1;
                MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, peer, tag, &in, 1, MPI_INT, peer, tag,
                                    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(in == peer * 100 + tag + round, "nested thread %d.%d received %d", outer,
                      inner, in);
            }
        }
        CHECK(omp_get_level() == 0, "after nested regions: level %d", omp_get_level());
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
