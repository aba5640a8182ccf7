/* Hybrid MPI + OpenMP: the default team size and the cores of each rank's
 * OpenMP threads, as mpirun --bind-to with one block of cores per rank would
 * give them.
 *
 * usage: omp_places [THREADS]   THREADS: OMP_NUM_THREADS of the run, which
 *                               then sets every team's size (0: unset).
 *
 * The node process's cores are what a rank's own pthread gets. With at most
 * as many ranks in the node process as cores, each rank has a block of them:
 * its team defaults to the block's size, the threads the OpenMP runtime
 * starts for it run on the block, and the blocks of the ranks of a node
 * process are disjoint and cover its cores. With more ranks than cores, each
 * rank's team defaults to one thread. (Masks as 64-bit words: skipped beyond
 * 64 CPUs.)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include "common.h"

static uint64_t my_mask(void) {
    cpu_set_t s;
    CPU_ZERO(&s);
    pthread_getaffinity_np(pthread_self(), sizeof(s), &s);
    uint64_t m = 0;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &s)) m |= c < 64 ? UINT64_C(1) << c : ~UINT64_C(0);
    return m;
}

static void* plain_thread(void* out) {
    *(uint64_t*)out = my_mask();
    return NULL;
}

static int bits(uint64_t m) { return __builtin_popcountll(m); }

int main(int argc, char** argv) {
    const int env_team = argc > 1 ? atoi(argv[1]) : 0;
    int provided = -1, rank = -1;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int local = -1, nlocal = 0;
    MPI_OK(MPI_Comm_rank(node, &local));
    MPI_OK(MPI_Comm_size(node, &nlocal));

    uint64_t cores = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, plain_thread, &cores) == 0, "pthread_create");
    pthread_join(t, NULL);
    const int ncores = bits(cores);
    int skip = cores == ~UINT64_C(0), any_skip = 0;
    MPI_OK(MPI_Allreduce(&skip, &any_skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (any_skip) {
        if (rank == 0) printf("omp_places: SKIP (CPUs beyond 64)\n");
        MPI_Finalize();
        return 0;
    }

    /* Node processes sharing the machine split its cores among them: their
     * share is not what a plain thread gets (the machine's), so only a lone
     * node process checks the blocks exactly. */
    int size = 0;
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size != nlocal) {
        CHECK(env_team || omp_get_max_threads() * nlocal <= ncores || omp_get_max_threads() == 1,
              "local rank %d of %d: a team of %d threads by default on %d cores", local, nlocal,
              omp_get_max_threads(), ncores);
        MPI_OK(MPI_Comm_free(&node));
        MPI_OK(MPI_Finalize());
        return 0;
    }
    const int blocks = nlocal <= ncores;
    const int team = omp_get_max_threads();
    const int want = env_team        ? env_team
                     : blocks        ? (local + 1) * ncores / nlocal - local * ncores / nlocal
                                     : 1;
    CHECK(team == want, "local rank %d of %d on %d cores: a team of %d threads by default, not %d",
          local, nlocal, ncores, team, want);

    /* The cores of the threads the runtime started for this rank. */
    uint64_t workers = 0;
#pragma omp parallel reduction(| : workers)
    if (omp_get_thread_num() > 0) workers |= my_mask();
    if (team > 1) {
        CHECK((workers & ~cores) == 0, "worker threads on %#llx, outside the node's %#llx",
              (unsigned long long)workers, (unsigned long long)cores);
        if (blocks && !env_team)
            CHECK(bits(workers) >= team, "a team of %d on %d CPUs (%#llx)", team, bits(workers),
                  (unsigned long long)workers);
    }
    /* Blocks of the ranks of a node process: disjoint, covering its cores. */
    uint64_t* all = (uint64_t*)xmalloc(sizeof(uint64_t) * (size_t)nlocal);
    MPI_OK(MPI_Allgather(&workers, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, node));
    int teams_of_many = team > 1, everyone = 0;
    MPI_OK(MPI_Allreduce(&teams_of_many, &everyone, 1, MPI_INT, MPI_LAND, node));
    if (blocks && everyone && !env_team) {
        uint64_t seen = 0;
        for (int r = 0; r < nlocal; ++r) {
            CHECK((seen & all[r]) == 0, "local ranks share CPUs %#llx",
                  (unsigned long long)(seen & all[r]));
            seen |= all[r];
        }
        CHECK(seen == cores, "the blocks cover %#llx of the node's %#llx", (unsigned long long)seen,
              (unsigned long long)cores);
    }
    free(all);
    MPI_OK(MPI_Comm_free(&node));
    MPI_OK(MPI_Finalize());
    return 0;
}
