/* MPI_Comm_create_group (MPI 3.1 section 6.4.2), collective over the group
 * only: called again and again on MPI_COMM_WORLD with random groups (members
 * drawn and ordered by a generator every rank seeds alike, so all agree),
 * each rank taking part only in the calls whose group holds it; with tags
 * that vary; and from several threads of a rank at once, each on its own
 * tag, with groups that overlap. Every new communicator must have the
 * group's size, the caller's rank in the group's order, and work (an
 * allreduce of the members' world ranks).
 */
#include <pthread.h>

#include "common.h"

/* Not rand(): each rank needs its own sequence, the same on all. */
static unsigned next(unsigned long long* s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(*s >> 33);
}

/* A random subset of the world in random order; its size. */
static int draw(unsigned long long* seed, int size, int* members) {
    int n = 0;
    for (int r = 0; r < size; ++r)
        if (next(seed) % 2) members[n++] = r;
    for (int i = n - 1; i > 0; --i) {
        const int j = (int)(next(seed) % (unsigned)(i + 1)), t = members[i];
        members[i] = members[j];
        members[j] = t;
    }
    return n;
}

static void create_and_check(MPI_Group world, const int* members, int n, int tag, int rank) {
    int pos = -1;
    for (int i = 0; i < n; ++i)
        if (members[i] == rank) pos = i;
    if (pos < 0) return;
    MPI_Group g;
    MPI_Comm c;
    MPI_OK(MPI_Group_incl(world, n, members, &g));
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &c));
    int csize, crank, sum = 0, expect = 0;
    MPI_OK(MPI_Comm_size(c, &csize));
    MPI_OK(MPI_Comm_rank(c, &crank));
    CHECK(csize == n && crank == pos, "size %d rank %d, expected %d and %d", csize, crank, n,
          pos);
    for (int i = 0; i < n; ++i) expect += members[i];
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == expect, "allreduce over the new communicator: %d, expected %d", sum, expect);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Group_free(&g));
}

typedef struct {
    MPI_Group world;
    int rank, size, id;
} Thread;

/* Thread id's calls: tags of its own; groups of its own stream. */
static void* concurrent(void* p) {
    const Thread* t = (const Thread*)p;
    unsigned long long seed = 1000 + (unsigned long long)t->id;
    int* members = malloc(sizeof(int) * (size_t)t->size);
    for (int i = 0; i < 40; ++i) {
        const int n = draw(&seed, t->size, members);
        create_and_check(t->world, members, n, 100 + t->id, t->rank);
    }
    free(members);
    return NULL;
}

int main(int argc, char** argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group world;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int* members = malloc(sizeof(int) * (size_t)size);
    unsigned long long seed = 42;
    for (int i = 0; i < 200; ++i) {
        const int n = draw(&seed, size, members);
        create_and_check(world, members, n, i % 5, rank);
    }
    /* Two disjoint halves at once, the same tag. */
    int half[2][64], nh[2] = {0, 0};
    for (int r = 0; r < size && r < 128; ++r) half[r % 2][nh[r % 2]++] = r;
    create_and_check(world, half[rank % 2], nh[rank % 2], 7, rank);
    /* Threads of every rank at once on the same parent, each on its tag. */
    enum { THREADS = 3 };
    Thread t[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        t[i] = (Thread){world, rank, size, i};
        CHECK(pthread_create(&th[i], NULL, concurrent, &t[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < THREADS; ++i) pthread_join(th[i], NULL);
    free(members);
    MPI_OK(MPI_Group_free(&world));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
