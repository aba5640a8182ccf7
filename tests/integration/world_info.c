/* What every rank learns about the job: rank and size (argv[1] is the expected
 * size: 1 when the program is started alone, as ./world_info 1, a singleton),
 * distinct ranks covering 0..size-1, MPI_COMM_SELF, Initialized/Finalized,
 * version, processor name and a monotonic MPI_Wtime. Each rank keeps its own
 * copy of argv.
 */
#include "common.h"

int main(int argc, char** argv) {
    int flag = 1;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(!flag, "MPI_Initialized true before MPI_Init");
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag, "MPI_Initialized false after MPI_Init");
    int rank = -1, size = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int expected = argc > 1 ? atoi(argv[1]) : 1;
    CHECK(size == expected, "MPI_COMM_WORLD has %d ranks, expected %d", size, expected);
    CHECK(rank >= 0 && rank < size, "rank %d out of range", rank);

    /* Every rank number appears exactly once. */
    int* counts = (int*)xmalloc(sizeof(int) * (size_t)size);
    int* mine = (int*)xmalloc(sizeof(int) * (size_t)size);
    memset(mine, 0, sizeof(int) * (size_t)size);
    mine[rank] = 1;
    MPI_OK(MPI_Allreduce(mine, counts, size, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r) CHECK(counts[r] == 1, "rank %d is held by %d ranks", r, counts[r]);
    free(counts);
    free(mine);

    int srank = -1, ssize = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &srank));
    MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &ssize));
    CHECK(srank == 0 && ssize == 1, "MPI_COMM_SELF: rank %d size %d", srank, ssize);

    int version = 0, subversion = -1;
    MPI_OK(MPI_Get_version(&version, &subversion));
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION, "version %d.%d", version,
          subversion);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = -1;
    MPI_OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && (int)strlen(name) == len, "processor name of length %d", len);

    double t0 = MPI_Wtime(), t1 = MPI_Wtime();
    CHECK(t1 >= t0 && MPI_Wtick() > 0 && MPI_Wtick() < 1, "Wtime/Wtick");

    /* Ranks own their argv: changing it does not change another rank's. */
    if (argc > 1) {
        argv[1][0] = (char)('A' + rank % 26);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(argv[1][0] == (char)('A' + rank % 26), "argv is shared with another rank");
    }

    MPI_OK(MPI_Finalize());
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag, "MPI_Finalized false after MPI_Finalize");
    if (rank == 0) printf("world_info: %d ranks\n", size);
    return 0;
}
