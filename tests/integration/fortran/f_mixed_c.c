/* C half of f_mixed_fmain: works on a communicator and a status that come
 * from Fortran. */
#include <mpi.h>
#include <stdio.h>

int c_ring_sum(MPI_Fint fcomm, int value);
int c_status_source(const MPI_Fint* fstatus);
int c_is_status_ignore(const MPI_Fint* fstatus);

/* Passes partial sums around the ring, then checks them with MPI_Allreduce. */
int c_ring_sum(MPI_Fint fcomm, int value) {
    MPI_Comm comm = MPI_Comm_f2c(fcomm);
    int rank, size, partial = 0, total = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (MPI_Comm_c2f(comm) != fcomm) return -1;
    if (rank > 0) MPI_Recv(&partial, 1, MPI_INT, rank - 1, 1, comm, MPI_STATUS_IGNORE);
    partial += value;
    if (rank < size - 1) MPI_Send(&partial, 1, MPI_INT, rank + 1, 1, comm);
    MPI_Bcast(&partial, 1, MPI_INT, size - 1, comm);
    MPI_Allreduce(&value, &total, 1, MPI_INT, MPI_SUM, comm);
    if (partial != total) {
        fprintf(stderr, "c_ring_sum: ring %d, allreduce %d\n", partial, total);
        return -2;
    }
    return total;
}

int c_status_source(const MPI_Fint* fstatus) {
    MPI_Status status;
    int count = -1;
    /* Fortran's MPI_STATUS_IGNORE, as C code handed a Fortran status sees it. */
    if (fstatus == MPI_F_STATUS_IGNORE) return -4;
    if (MPI_Status_f2c(fstatus, &status) != MPI_SUCCESS) return -1;
    MPI_Get_count(&status, MPI_INTEGER, &count);
    return count == 1 && status.MPI_TAG == 9 ? status.MPI_SOURCE : -3;
}

/* 1 for Fortran's MPI_STATUS_IGNORE, 2 for MPI_STATUSES_IGNORE, else 0. */
int c_is_status_ignore(const MPI_Fint* fstatus) {
    if (fstatus == MPI_F_STATUS_IGNORE) return 1;
    if (fstatus == MPI_F_STATUSES_IGNORE) return 2;
    return 0;
}
