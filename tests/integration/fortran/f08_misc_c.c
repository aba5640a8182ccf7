/* C half of f08_misc: reads a status that comes from mpi_f08 (MPI 4.1
 * section 19.3.5). */
#include <mpi.h>
#include <string.h>

int c_f08_status(const MPI_F08_status* f08);

/* The source of a status of 3 MPI_INTEGERs with tag 9, converted to C and
 * back unchanged; -4 for mpi_f08's MPI_STATUS_IGNORE, other negatives for
 * what went wrong. */
int c_f08_status(const MPI_F08_status* f08) {
    MPI_Status c;
    MPI_F08_status back;
    int count = -1;
    if (f08 == MPI_F08_STATUS_IGNORE) return -4;
    if (MPI_Status_f082c(f08, &c) != MPI_SUCCESS) return -1;
    MPI_Get_count(&c, MPI_INTEGER, &count);
    if (count != 3 || c.MPI_TAG != 9 || c.MPI_SOURCE != f08->MPI_SOURCE) return -2;
    if (MPI_Status_c2f08(&c, &back) != MPI_SUCCESS || memcmp(&back, f08, sizeof back) != 0)
        return -3;
    return c.MPI_SOURCE;
}
