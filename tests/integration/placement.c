/* Where ranks and their threads run. Node processes sharing the machine split
 * its cores: with no more node processes than cores, every VP is bound to one
 * core and no two node processes share a core; with more, nobody is bound. A
 * thread a rank creates is not stuck on its VP's core: it gets the cores the
 * node process started with. (Masks as 64-bit words: skipped beyond 64 CPUs.)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "common.h"

static uint64_t mask_of(const cpu_set_t* s) {
    uint64_t m = 0;
    for (int c = 0; c < 64; ++c)
        if (CPU_ISSET(c, s)) m |= UINT64_C(1) << c;
    return m;
}

static void* thread_mask(void* out) {
    cpu_set_t s;
    CPU_ZERO(&s);
    pthread_getaffinity_np(pthread_self(), sizeof(s), &s);
    *(uint64_t*)out = mask_of(&s);
    return NULL;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cpu_set_t s;
    CPU_ZERO(&s);
    pthread_getaffinity_np(pthread_self(), sizeof(s), &s);
    int beyond = 0;
    for (int c = 64; c < CPU_SETSIZE; ++c) beyond |= CPU_ISSET(c, &s);
    uint64_t mine[3] = {(uint64_t)getpid(), mask_of(&s), 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_mask, &mine[2]) == 0, "pthread_create");
    pthread_join(t, NULL);
    int any_beyond = 0;
    MPI_OK(MPI_Allreduce(&beyond, &any_beyond, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    if (any_beyond) {
        if (rank == 0) printf("placement: SKIP (CPUs beyond 64)\n");
        MPI_Finalize();
        return 77;
    }
    uint64_t* all = malloc(sizeof(uint64_t) * 3 * (size_t)size);
    MPI_OK(MPI_Gather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        const uint64_t initial = all[2];  /* rank 0's thread: the process's cores */
        const int ncores = __builtin_popcountll(initial);
        int nprocs = 0;
        for (int r = 0; r < size; ++r) {
            int first = 1;
            for (int q = 0; q < r; ++q) first &= all[3 * q] != all[3 * r];
            nprocs += first;
        }
        for (int r = 0; r < size; ++r) {
            const uint64_t vp = all[3 * r + 1], thread = all[3 * r + 2];
            CHECK(thread == initial, "rank %d's thread runs on cores 0x%llx, not the process's 0x%llx",
                  r, (unsigned long long)thread, (unsigned long long)initial);
            if (nprocs > ncores) {
                CHECK(vp == initial, "%d node processes on %d cores: rank %d is bound (0x%llx)",
                      nprocs, ncores, r, (unsigned long long)vp);
                continue;
            }
            CHECK(__builtin_popcountll(vp) == 1 && (vp & initial),
                  "rank %d's VP is not bound to one of the cores (0x%llx)", r,
                  (unsigned long long)vp);
            for (int q = 0; q < r; ++q)
                CHECK(all[3 * q] == all[3 * r] || (all[3 * q + 1] & vp) == 0,
                      "ranks %d and %d of different node processes share core mask 0x%llx", q, r,
                      (unsigned long long)vp);
        }
        printf("placement: OK (%d node processes, %d cores)\n", nprocs, ncores);
    }
    free(all);
    MPI_Finalize();
    return 0;
}
