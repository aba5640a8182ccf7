! Point-to-point from Fortran (use mpi): statuses as INTEGER arrays
! (MPI_SOURCE, MPI_TAG, MPI_GET_COUNT), MPI_STATUS_IGNORE and
! MPI_STATUSES_IGNORE, 1-based indices from MPI_WAITANY / MPI_WAITSOME /
! MPI_TESTANY, LOGICAL flags from MPI_IPROBE / MPI_TEST, MPI_PROC_NULL, and an
! array of statuses that is only 4-byte aligned (in a COMMON block after one
! INTEGER), which the bindings must copy rather than use in place.
program f_p2p
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, size
  call MPI_Init(ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Init ierror')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call ring(rank, size)
  call all_pairs(rank, size)
  call completion_order(rank, size)
  call probing(rank, size)
  call proc_null()
  call MPI_Finalize(ierr)
end program f_p2p

! Every rank sends rank+1 integers to its right neighbour with tag 100+rank;
! the receiver takes any source and any tag and reads the envelope back (on a
! communicator of its own: the later phases' messages must not match).
subroutine ring(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, right, left, req, count, i, st(MPI_STATUS_SIZE), comm
  integer :: out(64), in(64)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  out = [(rank * 1000 + i, i = 1, 64)]
  in = -1
  call MPI_Isend(out, rank + 1, MPI_INTEGER, right, 100 + rank, comm, req, ierr)
  call MPI_Recv(in, 64, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, st, ierr)
  call check_int(st(MPI_SOURCE), left, 'ring: status(MPI_SOURCE)')
  call check_int(st(MPI_TAG), 100 + left, 'ring: status(MPI_TAG)')
  call MPI_Get_count(st, MPI_INTEGER, count, ierr)
  call check_int(count, left + 1, 'ring: MPI_Get_count')
  do i = 1, left + 1
    call check_int(in(i), left * 1000 + i, 'ring: received element')
  end do
  call check_int(in(left + 2), -1, 'ring: element past the message')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check_int(req, MPI_REQUEST_NULL, 'ring: request after MPI_Wait')
  call MPI_Comm_free(comm, ierr)
end subroutine ring

! Every rank exchanges one message with every rank (itself included); the
! statuses land in an INTEGER array that is not 8-byte aligned.
subroutine all_pairs(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer, parameter :: maxn = 16
  integer :: pad, stats(MPI_STATUS_SIZE, 2 * maxn)
  common /misaligned/ pad, stats
  integer :: ierr, p, reqs(2 * maxn), in(maxn), out(maxn), count
  do p = 0, size - 1
    out(p + 1) = rank * 100 + p
    call MPI_Irecv(in(p + 1), 1, MPI_INTEGER, p, 5, MPI_COMM_WORLD, reqs(p + 1), ierr)
  end do
  do p = 0, size - 1
    call MPI_Isend(out(p + 1), 1, MPI_INTEGER, p, 5, MPI_COMM_WORLD, reqs(size + p + 1), ierr)
  end do
  pad = 12345
  call MPI_Waitall(2 * size, reqs, stats, ierr)
  call check_int(ierr, MPI_SUCCESS, 'all_pairs: MPI_Waitall ierror')
  call check_int(pad, 12345, 'all_pairs: the INTEGER before the statuses')
  do p = 0, size - 1
    call check_int(in(p + 1), p * 100 + rank, 'all_pairs: received value')
    call check_int(stats(MPI_SOURCE, p + 1), p, 'all_pairs: statuses(MPI_SOURCE, i)')
    call check_int(stats(MPI_TAG, p + 1), 5, 'all_pairs: statuses(MPI_TAG, i)')
    call MPI_Get_count(stats(1, p + 1), MPI_INTEGER, count, ierr)
    call check_int(count, 1, 'all_pairs: MPI_Get_count of statuses(:, i)')
  end do
  ! Same exchange, statuses ignored.
  do p = 0, size - 1
    call MPI_Irecv(in(p + 1), 1, MPI_INTEGER, p, 6, MPI_COMM_WORLD, reqs(p + 1), ierr)
    call MPI_Isend(out(p + 1), 1, MPI_INTEGER, p, 6, MPI_COMM_WORLD, reqs(size + p + 1), ierr)
  end do
  call MPI_Waitall(2 * size, reqs, MPI_STATUSES_IGNORE, ierr)
  call check_int(ierr, MPI_SUCCESS, 'all_pairs: MPI_Waitall with MPI_STATUSES_IGNORE')
  do p = 0, size - 1
    call check_int(in(p + 1), p * 100 + rank, 'all_pairs: value with statuses ignored')
  end do
end subroutine all_pairs

! Receives from every rank completed with MPI_WAITANY, then MPI_WAITSOME and
! MPI_TESTANY: the indices must be 1-based and name the right request.
subroutine completion_order(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer, parameter :: maxn = 16
  integer :: ierr, p, i, idx, outcount, reqs(maxn), sreqs(maxn), in(maxn), out
  integer :: indices(maxn), st(MPI_STATUS_SIZE), stats(MPI_STATUS_SIZE, maxn)
  logical :: seen(maxn), flag
  integer :: round
  do round = 1, 3
    do p = 0, size - 1
      call MPI_Irecv(in(p + 1), 1, MPI_INTEGER, p, 20 + round, MPI_COMM_WORLD, reqs(p + 1), ierr)
    end do
    out = rank
    do p = 0, size - 1
      call MPI_Isend(out, 1, MPI_INTEGER, p, 20 + round, MPI_COMM_WORLD, sreqs(p + 1), ierr)
    end do
    seen = .false.
    if (round == 1) then
      do i = 1, size
        call MPI_Waitany(size, reqs, idx, st, ierr)
        call check(idx >= 1 .and. idx <= size, 'MPI_Waitany: index out of 1..count')
        call check(.not. seen(idx), 'MPI_Waitany: index returned twice')
        seen(idx) = .true.
        call check_int(st(MPI_SOURCE), idx - 1, 'MPI_Waitany: source of request index')
        call check_int(in(idx), idx - 1, 'MPI_Waitany: value of request index')
      end do
      call MPI_Waitany(size, reqs, idx, st, ierr)
      call check_int(idx, MPI_UNDEFINED, 'MPI_Waitany: index when no request is active')
    else if (round == 2) then
      i = 0
      do while (i < size)
        call MPI_Waitsome(size, reqs, outcount, indices, stats, ierr)
        call check(outcount >= 1, 'MPI_Waitsome: outcount')
        do p = 1, outcount
          idx = indices(p)
          call check(idx >= 1 .and. idx <= size, 'MPI_Waitsome: index out of 1..incount')
          call check(.not. seen(idx), 'MPI_Waitsome: index returned twice')
          seen(idx) = .true.
          call check_int(stats(MPI_SOURCE, p), idx - 1, 'MPI_Waitsome: source of index')
        end do
        i = i + outcount
      end do
      call MPI_Waitsome(size, reqs, outcount, indices, stats, ierr)
      call check_int(outcount, MPI_UNDEFINED, 'MPI_Waitsome: outcount when none is active')
    else
      i = 0
      do while (i < size)
        call MPI_Testany(size, reqs, idx, flag, st, ierr)
        if (flag .and. idx /= MPI_UNDEFINED) then
          call check(.not. seen(idx), 'MPI_Testany: index returned twice')
          seen(idx) = .true.
          call check_int(st(MPI_SOURCE), idx - 1, 'MPI_Testany: source of index')
          i = i + 1
        end if
      end do
    end if
    call check(all(seen(1:size)), 'every request completed once')
    call MPI_Waitall(size, sreqs, MPI_STATUSES_IGNORE, ierr)
  end do
end subroutine completion_order

! MPI_IPROBE until its LOGICAL flag is true, then MPI_PROBE and MPI_TEST.
subroutine probing(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, st(MPI_STATUS_SIZE), count, req, buf(3), dest, src
  logical :: flag
  double precision :: d(5)
  dest = mod(rank + 1, size)
  src = mod(rank + size - 1, size)
  d = 2.5d0 * rank
  call MPI_Isend(d, 5, MPI_DOUBLE_PRECISION, dest, 42, MPI_COMM_WORLD, req, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(src, 42, MPI_COMM_WORLD, flag, st, ierr)
  end do
  call check_int(st(MPI_SOURCE), src, 'MPI_Iprobe: status(MPI_SOURCE)')
  call MPI_Get_count(st, MPI_DOUBLE_PRECISION, count, ierr)
  call check_int(count, 5, 'MPI_Iprobe: MPI_Get_count')
  call MPI_Probe(MPI_ANY_SOURCE, 42, MPI_COMM_WORLD, st, ierr)
  call check_int(st(MPI_TAG), 42, 'MPI_Probe: status(MPI_TAG)')
  d = -1
  call MPI_Recv(d, 5, MPI_DOUBLE_PRECISION, src, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check_real(d(5), 2.5d0 * src, 0d0, 'probe: received double')
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, st, ierr)
  end do
  call check_int(req, MPI_REQUEST_NULL, 'MPI_Test: request after completion')
  ! Nothing is pending now: MPI_IPROBE must say .FALSE.
  call MPI_Iprobe(MPI_ANY_SOURCE, 43, MPI_COMM_WORLD, flag, st, ierr)
  call check(.not. flag, 'MPI_Iprobe: flag for a message nobody sent')
  buf = 0
  call MPI_Sendrecv_replace(buf, 0, MPI_INTEGER, dest, 44, src, 44, MPI_COMM_WORLD, st, ierr)
  call check_int(st(MPI_SOURCE), src, 'MPI_Sendrecv_replace: status(MPI_SOURCE)')
end subroutine probing

! A receive from MPI_PROC_NULL completes at once with an empty status.
subroutine proc_null()
  use mpi
  use ftest
  implicit none
  integer :: ierr, st(MPI_STATUS_SIZE), count, buf
  call MPI_Recv(buf, 1, MPI_INTEGER, MPI_PROC_NULL, 1, MPI_COMM_WORLD, st, ierr)
  call check_int(st(MPI_SOURCE), MPI_PROC_NULL, 'MPI_PROC_NULL: status(MPI_SOURCE)')
  call check_int(st(MPI_TAG), MPI_ANY_TAG, 'MPI_PROC_NULL: status(MPI_TAG)')
  call MPI_Get_count(st, MPI_INTEGER, count, ierr)
  call check_int(count, 0, 'MPI_PROC_NULL: MPI_Get_count')
end subroutine proc_null
