! The profiling interface of mpi_f08 (MPI 4.1 section 15.2.6): a program
! that defines MPI_Barrier_f08 and MPI_Allreduce_f08 itself intercepts
! MPI_Barrier and MPI_Allreduce (and, by the large-count specific name,
! MPI_Allreduce with an INTEGER(KIND=MPI_COUNT_KIND) count); its wrappers
! reach the library through PMPI_Barrier and PMPI_Allreduce.
module f08_profile_counts
  implicit none
  integer :: barriers = 0, allreduces = 0
end module f08_profile_counts

subroutine MPI_Barrier_f08(comm, ierror)
  use mpi_f08, only: MPI_Comm, PMPI_Barrier
  use f08_profile_counts
  implicit none
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  barriers = barriers + 1
  call PMPI_Barrier(comm, ierror)
end subroutine MPI_Barrier_f08

subroutine MPI_Allreduce_f08c(sendbuf, recvbuf, count, datatype, op, comm, ierror)
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Op, MPI_COUNT_KIND, PMPI_Allreduce
  use f08_profile_counts
  implicit none
  !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
  type(*), dimension(*) :: sendbuf, recvbuf
  integer(kind=MPI_COUNT_KIND), intent(in) :: count
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Op), intent(in) :: op
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  allreduces = allreduces + 1
  call PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierror)
end subroutine MPI_Allreduce_f08c

program f08_profile
  use mpi_f08
  use ftest
  use f08_profile_counts
  implicit none
  integer :: rank, nprocs, ierr, mine, total
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call check_int(ierr, MPI_SUCCESS, 'PMPI_Barrier through the wrapper: ierror')
  call check_int(barriers, 2, 'calls of MPI_Barrier the wrapper saw')
  mine = rank + 1
  call MPI_Allreduce(mine, total, 1_MPI_COUNT_KIND, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check_int(total, nprocs * (nprocs + 1) / 2, 'MPI_Allreduce (large count) through PMPI')
  call check_int(allreduces, 1, 'calls of the large-count MPI_Allreduce the wrapper saw')
  ! The int form is not intercepted: it goes straight to the library.
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check_int(allreduces, 1, 'the int MPI_Allreduce reached the large-count wrapper')
  if (rank == 0) write (*, '(a)') 'f08_profile: OK'
  call MPI_Finalize()
end program f08_profile
