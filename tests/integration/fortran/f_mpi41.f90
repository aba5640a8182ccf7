! MPI 4.1's MPI_Request_get_status_any/_all/_some and MPI_Type_get_value_index
! from Fortran, through `use mpi` and mpif.h: the get_status calls leave the
! requests as they are (handles unchanged, a second call sees the same), the
! index of _any and the indices of _some count from 1, MPI_STATUSES_IGNORE is
! accepted, and MPI_Type_get_value_index gives the Fortran pair types
! (MPI_2REAL, MPI_2INTEGER, ...) or MPI_DATATYPE_NULL; the buffered-send
! buffers of a communicator (MPI_BUFFER_AUTOMATIC too), a session and the
! process with their flushes, blocking and not.
program f_mpi41
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, size
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call get_status(rank, size)
  call value_index()
  call value_index_mpif()
  call buffers(rank, size)
  call MPI_Finalize(ierr)
end program f_mpi41

subroutine get_status(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, left, right, idx, outcount, i, spins
  integer :: reqs(3), kept(3), sends(2), indices(3)
  integer :: a(2), b(2), outa(2), outb(2)
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 3)
  logical :: flag
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  outa = (/ rank, 1 /)
  outb = (/ rank, 2 /)
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Irecv(a, 2, MPI_INTEGER, left, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Irecv(b, 2, MPI_INTEGER, left, 2, MPI_COMM_WORLD, reqs(3), ierr)
  kept = reqs
  call MPI_Request_get_status_any(1, reqs, idx, flag, st, ierr)
  call check(flag .and. idx == MPI_UNDEFINED, 'get_status_any of a null handle')
  call MPI_Request_get_status_some(1, reqs, outcount, indices, sts, ierr)
  call check_int(outcount, MPI_UNDEFINED, 'get_status_some of a null handle')
  call MPI_Isend(outa, 2, MPI_INTEGER, right, 1, MPI_COMM_WORLD, sends(1), ierr)
  flag = .false.
  spins = 0
  do while (.not. flag)
    call MPI_Request_get_status_any(3, reqs, idx, flag, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Request_get_status_any')
    spins = spins + 1
    call check(spins < 10000000, 'the tag 1 message never arrived')
  end do
  call check_int(idx, 2, 'get_status_any index (from 1)')
  call check_int(st(MPI_SOURCE), left, 'get_status_any source')
  call check_int(st(MPI_TAG), 1, 'get_status_any tag')
  call MPI_Request_get_status_all(3, reqs, flag, sts, ierr)
  call check(.not. flag, 'get_status_all true with a receive pending')
  call MPI_Request_get_status_some(3, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  call check(outcount == 1 .and. indices(1) == 2, 'get_status_some: one, index 2')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Isend(outb, 2, MPI_INTEGER, right, 2, MPI_COMM_WORLD, sends(2), ierr)
  flag = .false.
  spins = 0
  do while (.not. flag)
    call MPI_Request_get_status_all(3, reqs, flag, sts, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Request_get_status_all')
    spins = spins + 1
    call check(spins < 10000000, 'the tag 2 message never arrived')
  end do
  call check_int(sts(MPI_TAG, 1), MPI_ANY_TAG, 'get_status_all: empty status of a null handle')
  call check_int(sts(MPI_TAG, 2), 1, 'get_status_all: tag of the first')
  call check_int(sts(MPI_TAG, 3), 2, 'get_status_all: tag of the second')
  call MPI_Request_get_status_some(3, reqs, outcount, indices, sts, ierr)
  call check(outcount == 2 .and. indices(1) == 2 .and. indices(2) == 3, 'get_status_some: both')
  do i = 1, 3
    call check_int(reqs(i), kept(i), 'a get_status call changed a handle')
  end do
  call MPI_Waitall(3, reqs, sts, ierr)
  call check(a(1) == left .and. b(2) == 2, 'the data received')
  call MPI_Waitall(2, sends, MPI_STATUSES_IGNORE, ierr)
end subroutine get_status

subroutine value_index()
  use mpi
  use ftest
  implicit none
  integer :: ierr, t
  call MPI_Type_get_value_index(MPI_REAL, MPI_REAL, t, ierr)
  call check_int(t, MPI_2REAL, 'MPI_Type_get_value_index REAL, REAL')
  call MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, t, ierr)
  call check_int(t, MPI_2DOUBLE_PRECISION, 'MPI_Type_get_value_index DOUBLE PRECISION')
  call MPI_Type_get_value_index(MPI_INTEGER, MPI_INTEGER, t, ierr)
  call check_int(t, MPI_2INTEGER, 'MPI_Type_get_value_index INTEGER, INTEGER')
  call MPI_Type_get_value_index(MPI_REAL, MPI_INTEGER, t, ierr)
  call check_int(t, MPI_DATATYPE_NULL, 'MPI_Type_get_value_index REAL, INTEGER')
  call MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INTEGER, t, ierr)
  call check(ierr /= MPI_SUCCESS, 'MPI_Type_get_value_index of MPI_DATATYPE_NULL')
end subroutine value_index

subroutine value_index_mpif()
  use ftest
  implicit none
  include 'mpif.h'
  integer :: ierr, t, reqs(1), idx
  logical :: flag
  call MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, t, ierr)
  call check_int(t, MPI_2DOUBLE_PRECISION, 'MPI_Type_get_value_index through mpif.h')
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Request_get_status_any(1, reqs, idx, flag, MPI_STATUS_IGNORE, ierr)
  call check(flag .and. idx == MPI_UNDEFINED, 'get_status_any through mpif.h')
end subroutine value_index_mpif

subroutine buffers(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, left, right, req, sz, session, group, sc
  integer :: x(4), y(4)
  character :: space(1024), tiny(MPI_BSEND_OVERHEAD)
  integer(kind=MPI_ADDRESS_KIND) :: unused
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  x = (/ rank, 1, 2, 3 /)
  call MPI_Comm_attach_buffer(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_attach_buffer MPI_BUFFER_AUTOMATIC')
  call MPI_Bsend(x, 4, MPI_INTEGER, right, 30, MPI_COMM_WORLD, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Bsend with an automatic buffer')
  call MPI_Comm_iflush_buffer(MPI_COMM_WORLD, req, ierr)
  call MPI_Recv(y, 4, MPI_INTEGER, left, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check_int(y(1), left, 'received through the automatic buffer')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_iflush_buffer and MPI_Wait')
  call MPI_Comm_flush_buffer(MPI_COMM_WORLD, ierr)
  call MPI_Comm_detach_buffer(MPI_COMM_WORLD, unused, sz, ierr)
  call check_int(sz, 0, 'MPI_Comm_detach_buffer of an automatic buffer: size')
  ! The process's buffer, then a session's before it.
  call MPI_Buffer_attach(space, 1024, ierr)
  call MPI_Bsend(x, 4, MPI_INTEGER, right, 31, MPI_COMM_WORLD, ierr)
  call MPI_Buffer_iflush(req, ierr)
  call MPI_Recv(y, 4, MPI_INTEGER, left, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Buffer_flush(ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Buffer_flush')
  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  call MPI_Group_from_session_pset(session, 'mpi://WORLD', group, ierr)
  call MPI_Comm_create_from_group(group, 'fibermpi.test.f_mpi41', MPI_INFO_NULL, &
                                  MPI_ERRORS_RETURN, sc, ierr)
  call MPI_Group_free(group, ierr)
  call MPI_Session_attach_buffer(session, tiny, MPI_BSEND_OVERHEAD, ierr)
  call MPI_Bsend(x, 4, MPI_INTEGER, right, 32, sc, ierr)
  call check(ierr /= MPI_SUCCESS, 'MPI_Bsend used the process buffer, not the session one')
  call MPI_Session_detach_buffer(session, unused, sz, ierr)
  call check_int(sz, MPI_BSEND_OVERHEAD, 'MPI_Session_detach_buffer: size')
  call MPI_Session_attach_buffer(session, MPI_BUFFER_AUTOMATIC, 0, ierr)
  call MPI_Bsend(x, 4, MPI_INTEGER, right, 33, sc, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Bsend with the session buffer')
  call MPI_Session_iflush_buffer(session, req, ierr)
  call MPI_Recv(y, 4, MPI_INTEGER, left, 33, sc, MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Session_flush_buffer(session, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Session_flush_buffer')
  call MPI_Comm_free(sc, ierr)
  call MPI_Session_finalize(session, ierr)
  call MPI_Buffer_detach(unused, sz, ierr)
  call check_int(sz, 1024, 'MPI_Buffer_detach: size')
end subroutine buffers
