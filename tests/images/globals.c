/* Rank images: every rank has its own copy of the program's globals, statics,
 * static locals and thread-local variables.
 *   globals          each rank must see only its own values
 *   globals shared   (run with MPC_SHARED_GLOBALS=1) the ranks of a node
 *                    share them: the opt-out must really share */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

int counter;                 /* zero-initialised (.bss) */
int initialised = 1000;      /* .data */
static int file_static = 7;
__thread int per_thread = 3;
const char* label = "label";

static int bump(void) {
    static int calls;        /* static local */
    return ++calls;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size, local_size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local_size);
    int shared = argc > 1 && strcmp(argv[1], "shared") == 0;

    /* Every rank changes every variable by its own rank number (atomically
     * where the shared run checks the sum: ranks of two VPs add at once). */
    __atomic_fetch_add(&counter, rank + 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&initialised, rank + 1, __ATOMIC_RELAXED);
    file_static += rank + 1;
    per_thread += rank + 1;
    for (int i = 0; i <= rank; ++i) bump();
    MPI_Barrier(MPI_COMM_WORLD);

    if (!shared) {
        CHECK(counter == rank + 1, "counter %d, expected %d", counter, rank + 1);
        CHECK(initialised == 1001 + rank, "initialised %d", initialised);
        CHECK(file_static == 8 + rank, "file static %d", file_static);
        CHECK(per_thread == 4 + rank, "thread-local %d", per_thread);
        CHECK(bump() == rank + 2, "static local");
        CHECK(strcmp(label, "label") == 0, "label");
    } else {
        /* The ranks of this node added 1..local ranks' (rank+1) to one counter. */
        int local_sum = 0, mine = rank + 1;
        MPI_Allreduce(&mine, &local_sum, 1, MPI_INT, MPI_SUM, node);
        CHECK(counter == local_sum, "shared counter %d, expected %d", counter, local_sum);
        CHECK(initialised == 1000 + local_sum, "shared initialised %d", initialised);
    }
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
