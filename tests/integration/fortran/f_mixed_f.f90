! Fortran half of f_mixed_cmain: called from C with a Fortran communicator
! handle; receives its left neighbour's rank and adds the sum of all ranks
! (MPI_IN_PLACE, whose COMMON block C's main program never mentions).
subroutine f_ring(comm, result) bind(c, name='f_ring')
  use, intrinsic :: iso_c_binding, only: c_int
  use mpi
  implicit none
  integer(c_int), intent(in) :: comm
  integer(c_int), intent(out) :: result
  integer :: ierr, rank, size, left, sum(1), st(MPI_STATUS_SIZE)
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_size(comm, size, ierr)
  left = -1
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, mod(rank + 1, size), 3, &
                    left, 1, MPI_INTEGER, mod(rank + size - 1, size), 3, comm, st, ierr)
  if (st(MPI_SOURCE) /= mod(rank + size - 1, size)) left = -100
  sum(1) = rank
  call MPI_Allreduce(MPI_IN_PLACE, sum, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  result = left + sum(1)
end subroutine f_ring
