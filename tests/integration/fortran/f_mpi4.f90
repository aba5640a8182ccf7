! MPI 4.0 calls from Fortran through `use mpi` (explicit interfaces): persistent
! collectives (Barrier_init, Bcast_init, Allreduce_init; Startall, several
! starts with new data each) and partitioned communication around a ring
! (Psend_init / Precv_init with an INTEGER(KIND=MPI_COUNT_KIND) count,
! Pready, Pready_range, Pready_list, Parrived returning a LOGICAL, the
! requests completed by MPI_Wait), and a partition out of range returning
! MPI_ERR_ARG; then MPI_Allreduce_init once more through mpif.h (no
! interfaces). Partitions are numbered from 0 in Fortran as in C. The buffers
! are ASYNCHRONOUS (MPI 4.0 section 19.1.17): MPI_Start and MPI_Wait do not
! name them, so the compiler must not keep them in registers across.
program f_mpi4
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, size
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call persistent_colls(rank, size)
  call partitioned_ring(rank, size)
  call allreduce_init_mpif(rank, size)
  call MPI_Finalize(ierr)
end program f_mpi4

subroutine persistent_colls(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer, parameter :: runs = 3
  integer :: ierr, run, i, reqs(3)
  integer, asynchronous :: x(4), sum(4), b(5)
  call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, reqs(1), ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Barrier_init')
  call MPI_Allreduce_init(x, sum, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &
                          reqs(2), ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Allreduce_init')
  call MPI_Bcast_init(b, 5, MPI_INTEGER, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, reqs(3), ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Bcast_init')
  do run = 1, runs
    x = [((rank + 1) * (i + run), i = 1, 4)]
    sum = -1
    b = -1
    if (rank == size - 1) b = [(100 * run + i, i = 1, 5)]
    call MPI_Startall(3, reqs, ierr)
    call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Waitall of persistent collectives')
    do i = 1, 4
      call check_int(sum(i), size * (size + 1) / 2 * (i + run), 'MPI_Allreduce_init result')
    end do
    do i = 1, 5
      call check_int(b(i), 100 * run + i, 'MPI_Bcast_init result')
    end do
  end do
  do i = 1, 3
    call MPI_Request_free(reqs(i), ierr)
    call check_int(reqs(i), MPI_REQUEST_NULL, 'MPI_Request_free of a persistent collective')
  end do
end subroutine persistent_colls

! Rank r sends 4 partitions of 3 integers to r + 1 and receives from r - 1.
subroutine partitioned_ring(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer, parameter :: parts = 4, per = 3, runs = 3
  integer(kind=MPI_COUNT_KIND) :: count
  integer :: ierr, run, i, p, dest, src, sreq, rreq, eclass
  integer, asynchronous :: sbuf(parts * per), rbuf(parts * per)
  logical :: flag
  count = per
  dest = mod(rank + 1, size)
  src = mod(rank - 1 + size, size)
  call MPI_Precv_init(rbuf, parts, count, MPI_INTEGER, src, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &
                      rreq, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Precv_init')
  call MPI_Psend_init(sbuf, parts, count, MPI_INTEGER, dest, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &
                      sreq, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Psend_init')
  do run = 1, runs
    sbuf = [(1000 * rank + 10 * run + i, i = 1, parts * per)]
    rbuf = -1
    call MPI_Start(rreq, ierr)
    call MPI_Start(sreq, ierr)
    call MPI_Pready_range(0, 1, sreq, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Pready_range')
    call MPI_Pready_list(1, [3], sreq, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Pready_list')
    call MPI_Pready(2, sreq, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Pready')
    ! Each partition as soon as it is there.
    do p = parts - 1, 0, -1
      flag = .false.
      do while (.not. flag)
        call MPI_Parrived(rreq, p, flag, ierr)
        call check_int(ierr, MPI_SUCCESS, 'MPI_Parrived')
      end do
      do i = p * per + 1, (p + 1) * per
        call check_int(rbuf(i), 1000 * src + 10 * run + i, 'partition data after MPI_Parrived')
      end do
    end do
    call MPI_Wait(rreq, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Wait of a partitioned send')
  end do
  ! A partition out of range, on an active request, returns MPI_ERR_ARG.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Start(rreq, ierr)
  call MPI_Start(sreq, ierr)
  call MPI_Pready(parts, sreq, ierr)
  call MPI_Error_class(ierr, eclass, ierr)
  call check_int(eclass, MPI_ERR_ARG, 'MPI_Pready of a partition out of range')
  call MPI_Pready_range(0, parts - 1, sreq, ierr)
  call MPI_Wait(rreq, MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_Request_free(sreq, ierr)
  call MPI_Request_free(rreq, ierr)
end subroutine partitioned_ring

subroutine allreduce_init_mpif(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer :: ierr, req, run
  double precision, asynchronous :: x, y
  call MPI_Allreduce_init(x, y, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, &
                          MPI_INFO_NULL, req, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Allreduce_init through mpif.h')
  do run = 1, 2
    x = 0.5d0 * rank + run
    call MPI_Start(req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check_real(y, 0.5d0 * (size - 1) + run, 0d0, 'MPI_Allreduce_init MPI_MAX')
  end do
  call MPI_Request_free(req, ierr)
end subroutine allreduce_init_mpif
