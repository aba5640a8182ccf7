/* How ranks end, and what mpcrun then reports. The last rank (the "culprit")
 * ends the way argv[1] says; expect_run.py checks mpcrun's exit status and
 * message:
 *
 *   ok       every rank returns 0 after MPI_Finalize           -> 0
 *   return3  the culprit returns 3 from main after Finalize    -> 3
 *   exit5    the culprit calls exit(5) after MPI_Finalize      -> 5 (the others return 0)
 *   early    the culprit calls exit(4) before MPI_Finalize     -> non-zero, message
 *   abort    the culprit calls MPI_Abort(MPI_COMM_WORLD, 7)     -> 7
 *   segv     the culprit dereferences a null pointer            -> 139, message naming it
 *   late     the culprit calls MPI_Send after MPI_Finalize       -> non-zero, message
 *   early_call  the culprit calls MPI_Send before MPI_Init       -> non-zero, message
 *
 * In the failure modes the other ranks wait in a barrier the culprit never
 * enters: only a launcher that ends the whole job lets the test finish.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "ok";
    if (strcmp(mode, "early_call") == 0) {
        int v = 0;
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD); /* every rank: before MPI_Init */
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int culprit = rank == size - 1;
    if (culprit) {
        if (strcmp(mode, "early") == 0) exit(4);
        if (strcmp(mode, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 7);
        if (strcmp(mode, "segv") == 0) {
            volatile int* volatile p = NULL;
            *p = 42;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (culprit && strcmp(mode, "return3") == 0) return 3;
    if (culprit && strcmp(mode, "exit5") == 0) exit(5);
    if (culprit && strcmp(mode, "late") == 0) {
        int v = 0;
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    return 0;
}
