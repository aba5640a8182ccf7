/* Output of every kind from every rank, for the output options of mpcrun
 * (--tag-output, -prepend-rank, --output-filename; mpcrun_check.py, case
 * dropin_output): a line in two printf calls, a line with write(2), a line
 * on stderr, and a last line without its newline. The lines are easy to
 * attribute: each names its rank. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("first of rank %d", rank);
    MPI_Barrier(MPI_COMM_WORLD); /* the other ranks print meanwhile */
    printf(", still rank %d\n", rank);
    char line[64];
    int n = snprintf(line, sizeof line, "write of rank %d\n", rank);
    if (write(STDOUT_FILENO, line, (size_t)n) != n) return 1;
    fprintf(stderr, "error line of rank %d\n", rank);
    printf("unfinished of rank %d", rank);
    MPI_Finalize();
    return 0;
}
