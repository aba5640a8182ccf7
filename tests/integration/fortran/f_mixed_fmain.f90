! Mixed languages, Fortran main: the main program (use mpi) hands its
! communicator and a status it received to C (f_mixed_c.c), which converts
! them with MPI_Comm_f2c / MPI_Status_f2c and does MPI work of its own.
program f_mixed_fmain
  use, intrinsic :: iso_c_binding, only: c_int
  use mpi
  use ftest
  implicit none
  interface
    integer(c_int) function c_ring_sum(comm, value) bind(c, name='c_ring_sum')
      import :: c_int
      integer(c_int), value :: comm, value
    end function c_ring_sum
    integer(c_int) function c_status_source(status) bind(c, name='c_status_source')
      import :: c_int
      integer(c_int) :: status(*)
    end function c_status_source
    integer(c_int) function c_is_status_ignore(status) bind(c, name='c_is_status_ignore')
      import :: c_int
      integer(c_int) :: status(*)
    end function c_is_status_ignore
  end interface
  integer :: ierr, rank, size, comm, st(MPI_STATUS_SIZE), buf
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, comm, ierr)
  ! In C: every rank adds its value around the reversed communicator.
  call check_int(c_ring_sum(comm, rank + 1), size * (size + 1) / 2, 'sum computed by C')
  buf = rank
  call MPI_Sendrecv_replace(buf, 1, MPI_INTEGER, mod(rank + 1, size), 9, &
                            mod(rank + size - 1, size), 9, MPI_COMM_WORLD, st, ierr)
  call check_int(c_status_source(st), mod(rank + size - 1, size), 'status read by C')
  call check_int(c_is_status_ignore(MPI_STATUS_IGNORE), 1, 'MPI_F_STATUS_IGNORE in C')
  call check_int(c_is_status_ignore(MPI_STATUSES_IGNORE), 2, 'MPI_F_STATUSES_IGNORE in C')
  call check_int(c_is_status_ignore(st), 0, 'a status is no MPI_F_STATUS_IGNORE')
  call MPI_Comm_free(comm, ierr)
  call MPI_Finalize(ierr)
end program f_mixed_fmain
