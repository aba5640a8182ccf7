! The rest of MPI 4.0/4.1 from Fortran through `use mpi`, and a few calls
! through mpif.h: a session made before MPI_Init, its process sets
! (MPI_Session_get_nth_pset's PSET_LEN counts characters in Fortran) and a
! communicator made from the WORLD set (MPI_Comm_create_from_group); then
! MPI_Isendrecv and MPI_Isendrecv_replace around a ring, MPI_Info_get_string
! (BUFLEN in characters: truncation, the length needed), the status field
! calls, and MPI_Remove_error_string/code/class (a predefined class refused
! with MPI_ERR_ARG); MPI_Isendrecv again through mpif.h.
program f_mpi4rest
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, size, session
  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Session_init before MPI_Init')
  call session_comm(session)
  call MPI_Session_finalize(session, ierr)
  call check_int(session, MPI_SESSION_NULL, 'MPI_Session_finalize')
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call ring(rank, size)
  call info_string()
  call status_and_errors()
  call ring_mpif(rank, size)
  call MPI_Finalize(ierr)
end program f_mpi4rest

subroutine session_comm(session)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: session
  integer :: ierr, n, k, len, group, comm, rank, size, sum, found
  character(len=MPI_MAX_PSET_NAME_LEN) :: name
  character(len=4) :: short
  call MPI_Session_get_num_psets(session, MPI_INFO_NULL, n, ierr)
  call check(n >= 3, 'MPI_Session_get_num_psets')
  found = 0
  do k = 0, n - 1
    len = 0
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, k, len, name, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Session_get_nth_pset (length)')
    call check(len > 0 .and. len < MPI_MAX_PSET_NAME_LEN, 'pset length in characters')
    len = MPI_MAX_PSET_NAME_LEN
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, k, len, name, ierr)
    call check_int(len_trim(name), len, 'pset name length')
    if (trim(name) == 'mpi://WORLD') found = found + 1
    if (trim(name) == 'mpi://SELF') found = found + 1
    len = 4
    call MPI_Session_get_nth_pset(session, MPI_INFO_NULL, k, len, short, ierr)
    call check(short == name(1:4), 'pset name truncated to PSET_LEN')
  end do
  call check_int(found, 2, 'mpi://WORLD and mpi://SELF among the process sets')
  call MPI_Group_from_session_pset(session, 'mpi://WORLD', group, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Group_from_session_pset')
  call MPI_Comm_create_from_group(group, 'f_mpi4rest', MPI_INFO_NULL, MPI_ERRORS_RETURN, &
                                  comm, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_create_from_group')
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_size(comm, size, ierr)
  call MPI_Allreduce(rank, sum, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check_int(sum, size * (size - 1) / 2, 'MPI_Allreduce on the session communicator')
  call MPI_Comm_free(comm, ierr)
  call MPI_Group_free(group, ierr)
end subroutine session_comm

subroutine ring(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, left, right, req, i, status(MPI_STATUS_SIZE), count
  integer, asynchronous :: out(8), in(8), buf(8)
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  out = [(rank * 100 + i, i = 1, 8)]
  in = -1
  call MPI_Isendrecv(out, 8, MPI_INTEGER, right, 4, in, 8, MPI_INTEGER, left, 4, &
                     MPI_COMM_WORLD, req, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Isendrecv')
  call MPI_Wait(req, status, ierr)
  call check_int(status(MPI_SOURCE), left, 'MPI_Isendrecv status source')
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check_int(count, 8, 'MPI_Isendrecv count')
  do i = 1, 8
    call check_int(in(i), left * 100 + i, 'MPI_Isendrecv data')
  end do
  buf = [(rank * 1000 + i, i = 1, 8)]
  call MPI_Isendrecv_replace(buf, 8, MPI_INTEGER, right, 5, left, 5, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  do i = 1, 8
    call check_int(buf(i), left * 1000 + i, 'MPI_Isendrecv_replace data')
  end do
end subroutine ring

subroutine info_string()
  use mpi
  use ftest
  implicit none
  integer :: ierr, info, buflen
  logical :: flag
  character(len=32) :: value
  character(len=3) :: small
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'planet', 'neptune', ierr)
  buflen = len(value)
  call MPI_Info_get_string(info, 'planet', buflen, value, flag, ierr)
  call check(flag, 'MPI_Info_get_string flag')
  call check(value == 'neptune', 'MPI_Info_get_string value')
  call check_int(buflen, 7, 'MPI_Info_get_string BUFLEN (characters)')
  buflen = len(small)
  call MPI_Info_get_string(info, 'planet', buflen, small, flag, ierr)
  call check(small == 'nep', 'MPI_Info_get_string truncated')
  call check_int(buflen, 7, 'MPI_Info_get_string BUFLEN after truncation')
  call MPI_Info_get_string(info, 'moon', buflen, value, flag, ierr)
  call check(.not. flag, 'MPI_Info_get_string absent key')
  call MPI_Info_free(info, ierr)
end subroutine info_string

subroutine status_and_errors()
  use mpi
  use ftest
  implicit none
  integer :: ierr, status(MPI_STATUS_SIZE), v, cls, code, eclass
  call MPI_Status_set_source(status, 3, ierr)
  call MPI_Status_set_tag(status, 9, ierr)
  call MPI_Status_set_error(status, MPI_ERR_OTHER, ierr)
  call check_int(status(MPI_SOURCE), 3, 'MPI_Status_set_source')
  call check_int(status(MPI_TAG), 9, 'MPI_Status_set_tag')
  call MPI_Status_get_error(status, v, ierr)
  call check_int(v, MPI_ERR_OTHER, 'MPI_Status_get_error')
  call MPI_Status_get_source(status, v, ierr)
  call check_int(v, 3, 'MPI_Status_get_source')
  call MPI_Add_error_class(cls, ierr)
  call MPI_Add_error_code(cls, code, ierr)
  call MPI_Add_error_string(code, 'fortran code', ierr)
  call MPI_Remove_error_string(code, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Remove_error_string')
  call MPI_Remove_error_code(code, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Remove_error_code')
  call MPI_Remove_error_class(cls, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Remove_error_class')
  call MPI_Remove_error_class(MPI_ERR_ARG, ierr)
  call MPI_Error_class(ierr, eclass, v)
  call check_int(eclass, MPI_ERR_ARG, 'MPI_Remove_error_class of a predefined class')
end subroutine status_and_errors

subroutine ring_mpif(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer :: ierr, req, x, y
  x = rank + 7
  y = -1
  call MPI_Isendrecv(x, 1, MPI_INTEGER, mod(rank + 1, size), 6, y, 1, MPI_INTEGER, &
                     mod(rank + size - 1, size), 6, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check_int(y, mod(rank + size - 1, size) + 7, 'MPI_Isendrecv through mpif.h')
end subroutine ring_mpif
