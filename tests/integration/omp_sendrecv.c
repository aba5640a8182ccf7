/* Hybrid MPI + OpenMP: every thread of every rank's team calls MPI from
 * inside parallel regions (MPI_THREAD_MULTIPLE).
 *
 * usage: omp_sendrecv [THREADS]   THREADS: the team size the run gives
 *                                 (OMP_NUM_THREADS); 0 or absent: any.
 *
 * Thread t of rank r exchanges a message with thread t of rank r^1 (itself
 * when r^1 does not exist) on tag t, with MPI_Sendrecv, in every round:
 * small, eager and rendezvous sizes, data checked. A rank whose master
 * blocks in that call lets another rank run on the same kernel thread: that
 * rank's parallel region must still start from its own OpenMP state (level
 * 1, a full team), its threads must be its rank for MPI (Comm_rank), only
 * its master the main thread (Is_thread_main), and a __thread variable of
 * the program must keep each thread's value across the call. After each
 * region the round's checksum goes through MPI_Allreduce from outside any
 * region (level 0 again).
 */
#include <omp.h>

#include "common.h"

#define ROUNDS 12
#define MAX_SIZE 40000

static __thread int tl_mark; /* the program's own thread-local variable */

static uint32_t seed_of(int rank, int thread, int round) {
    return (uint32_t)(rank * 7919 + thread * 131 + round);
}

static size_t size_of(int thread, int round) {
    static const size_t sizes[] = {8, 1000, MAX_SIZE};
    return sizes[(thread + round) % 3];
}

int main(int argc, char** argv) {
    const int expected = argc > 1 ? atoi(argv[1]) : 0;
    int provided = -1, rank = -1, size = 0;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "Init_thread provided %d", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int peer = (rank ^ 1) < size ? rank ^ 1 : rank;

    /* Team sizes may differ between ranks (their share of cores): thread t
     * talks to the peer only when both teams have a thread t. */
    int team = omp_get_max_threads(), peer_team = -1;
    if (expected) CHECK(team == expected, "omp_get_max_threads() is %d", team);
    MPI_OK(MPI_Sendrecv(&team, 1, MPI_INT, peer, 99, &peer_team, 1, MPI_INT, peer, 99,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));

    long total = 0;
    for (int round = 0; round < ROUNDS; ++round) {
        long sum = 0;
#pragma omp parallel reduction(+ : sum)
        {
            const int t = omp_get_thread_num();
            CHECK(omp_get_num_threads() == team, "round %d: a team of %d threads, not %d", round,
                  omp_get_num_threads(), team);
            /* (A team of one thread is an inactive region.) */
            CHECK(omp_get_level() == 1 && omp_in_parallel() == (team > 1),
                  "round %d thread %d: level %d, in parallel %d", round, t, omp_get_level(),
                  omp_in_parallel());
            int seen = -1, is_main = -1;
            MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &seen));
            CHECK(seen == rank, "thread %d is rank %d for MPI", t, seen);
            MPI_OK(MPI_Is_thread_main(&is_main));
            CHECK(is_main == (t == 0), "thread %d: Is_thread_main says %d", t, is_main);

            tl_mark = rank * 1000 + t;
            if (t < peer_team) {
                const size_t n = size_of(t, round);
                unsigned char* out = (unsigned char*)xmalloc(n);
                unsigned char* in = (unsigned char*)xmalloc(n);
                fill_pattern(out, n, seed_of(rank, t, round));
                memset(in, 0, n);
                MPI_Status st;
                MPI_OK(MPI_Sendrecv(out, (int)n, MPI_BYTE, peer, t, in, (int)n, MPI_BYTE, peer, t,
                                    MPI_COMM_WORLD, &st));
                CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == t, "thread %d: from %d tag %d", t,
                      st.MPI_SOURCE, st.MPI_TAG);
                char what[64];
                snprintf(what, sizeof(what), "round %d thread %d", round, t);
                CHECK_PATTERN(in, n, seed_of(peer, t, round), what);
                sum += in[0] + in[n - 1];
                free(out);
                free(in);
            }
            CHECK(tl_mark == rank * 1000 + t,
                  "thread %d: its __thread variable holds %d after MPI_Sendrecv", t, tl_mark);
        }
        CHECK(omp_get_level() == 0 && !omp_in_parallel(), "after round %d: level %d", round,
              omp_get_level());
        long all = 0;
        MPI_OK(MPI_Allreduce(&sum, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        total += all;
    }
    /* Every rank saw the same totals. */
    long lo = 0, hi = 0;
    MPI_OK(MPI_Allreduce(&total, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(&total, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
    CHECK(lo == hi && total > 0, "totals %ld..%ld", lo, hi);
    MPI_OK(MPI_Finalize());
    return 0;
}
