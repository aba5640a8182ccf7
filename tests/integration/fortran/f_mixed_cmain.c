/* Mixed languages, C main: MPI is initialised in C, then a Fortran subroutine
 * (f_mixed_f.f90, use mpi) does point-to-point and collective work on a
 * communicator handed over with MPI_Comm_c2f; its result is checked here. */
#include <mpi.h>
#include <stdio.h>

void f_ring(const MPI_Fint* comm, int* result);

int main(int argc, char** argv) {
    int rank, size, result = -1;
    MPI_Comm dup;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Fint fdup = MPI_Comm_c2f(dup);
    f_ring(&fdup, &result);
    /* Fortran returns (left neighbour) + sum of all ranks. */
    int expected = (rank + size - 1) % size + size * (size - 1) / 2;
    if (result != expected) {
        fprintf(stderr, "FAIL rank %d: the Fortran subroutine returned %d, expected %d\n", rank,
                result, expected);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
