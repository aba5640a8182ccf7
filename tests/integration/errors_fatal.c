/* The default error handler, MPI_ERRORS_ARE_FATAL, ends the whole job: one rank
 * makes an erroneous call while the others wait in a barrier that can never
 * complete. Run by expect_run.py, which checks for a non-zero exit status and an
 * error message naming the function and the error.
 *
 *   errors_fatal rank      MPI_Send to a rank that does not exist
 *   errors_fatal truncate  a receive too small for its message
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* mode = argc > 1 ? argv[1] : "rank";
    const int culprit = size - 1;
    if (rank == culprit) {
        int v[4] = {1, 2, 3, 4};
        if (strcmp(mode, "truncate") == 0) {
            MPI_Send(v, 4, MPI_INT, rank, 1, MPI_COMM_WORLD);
            MPI_Recv(v, 2, MPI_INT, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(v, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
        }
        printf("errors_fatal: the erroneous call returned\n");
        return 0; /* never reached with MPI_ERRORS_ARE_FATAL */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("errors_fatal: rank %d left a barrier the culprit never entered\n", rank);
    MPI_Finalize();
    return 0;
}
