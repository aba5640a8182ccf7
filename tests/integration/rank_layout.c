/* Which node process hosts which rank: `rank_layout MAP P` checks that the
 * ranks sharing a process (same host and pid) are exactly those that MAP
 * (block or cyclic, mpcrun --map) puts on the same one of P node processes,
 * then passes a token around the ring of ranks (neighbours sit in different
 * node processes with cyclic). Rank 0 prints "rank_layout: MAP P ok". */
#include <unistd.h>

#include "common.h"

static int expected_node(const char* map, int rank, int size, int procs) {
    if (strcmp(map, "cyclic") == 0) return rank % procs;
    for (int n = 0; n < procs; ++n)
        if (rank < (int)((long)size * (n + 1) / procs)) return n;
    return -1;
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank = -1, size = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(argc >= 3, "usage: rank_layout block|cyclic NODE_PROCESSES [ignored...]");
    const char* map = argv[1];
    const int procs = atoi(argv[2]);
    CHECK(procs >= 1 && procs <= size, "bad node process count %s", argv[2]);

    /* This process: its host name's hash and its pid. */
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    unsigned long long id = 1469598103934665603ull;
    for (const char* c = host; *c; ++c) id = (id ^ (unsigned char)*c) * 1099511628211ull;
    id = (id << 24) ^ (unsigned long long)getpid();
    unsigned long long* ids = (unsigned long long*)xmalloc(sizeof(id) * (size_t)size);
    MPI_OK(MPI_Allgather(&id, 1, MPI_UNSIGNED_LONG_LONG, ids, 1, MPI_UNSIGNED_LONG_LONG,
                         MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r)
        for (int q = 0; q < r; ++q) {
            const int same_node =
                expected_node(map, r, size, procs) == expected_node(map, q, size, procs);
            CHECK((ids[r] == ids[q]) == same_node,
                  "ranks %d and %d %s a process; %s over %d says %s", q, r,
                  ids[r] == ids[q] ? "share" : "do not share", map, procs,
                  same_node ? "they should" : "they should not");
        }
    free(ids);

    int token = rank == 0 ? 1 : -1;
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (size > 1) {
        if (rank == 0) {
            MPI_OK(MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(token == size, "the token came back as %d, expected %d", token, size);
        } else {
            MPI_OK(MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            ++token;
            MPI_OK(MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD));
        }
    }
    if (rank == 0) printf("rank_layout: %s %d ok\n", map, procs);
    MPI_OK(MPI_Finalize());
    return 0;
}
