! Error handling from Fortran (use mpi): with MPI_ERRORS_RETURN the error
! code comes back in IERROR (and its class and string can be queried), a
! Fortran error handler (SUBROUTINE HANDLER(COMM, CODE)) is called with the
! communicator and the code, and user error classes, codes and strings work.
! The tools interface's error classes (MPI_T is C only, its classes are not)
! are classes in the mpi module and in mpif.h alike.
program f_errors
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, size
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call returned_codes(size)
  call fortran_handler(rank)
  call user_codes()
  call tool_classes_module()
  call tool_classes_mpif()
  call MPI_Finalize(ierr)
end program f_errors

subroutine returned_codes(size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: size
  integer :: ierr, cls, rlen, buf(2), eh, code
  character(len=MPI_MAX_ERROR_STRING) :: text
  character(len=10) :: short
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Comm_get_errhandler(MPI_COMM_WORLD, eh, ierr)
  call check_int(eh, MPI_ERRORS_RETURN, 'MPI_Comm_get_errhandler')
  buf = 0
  call MPI_Send(buf, 2, MPI_INTEGER, size, 0, MPI_COMM_WORLD, code)
  call check(code /= MPI_SUCCESS, 'MPI_Send to rank = size returns an error')
  call MPI_Error_class(code, cls, ierr)
  call check_int(cls, MPI_ERR_RANK, 'class of the error of MPI_Send to a bad rank')
  call MPI_Send(buf, 2, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, code)
  call MPI_Error_class(code, cls, ierr)
  call check_int(cls, MPI_ERR_TYPE, 'class of the error of MPI_Send with MPI_DATATYPE_NULL')
  call MPI_Send(buf, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, code)
  call MPI_Error_class(code, cls, ierr)
  call check_int(cls, MPI_ERR_COUNT, 'class of the error of MPI_Send with count -1')
  text = repeat('#', len(text))
  call MPI_Error_string(MPI_ERR_TRUNCATE, text, rlen, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Error_string ierror')
  call check(rlen > 0 .and. len_trim(text) == rlen, 'MPI_Error_string: length and blank padding')
  call check(text(rlen + 1:) == ' ', 'MPI_Error_string: blanks after the text')
  short = '##########'
  call MPI_Error_string(MPI_ERR_TRUNCATE, short, rlen, ierr)
  call check(short == text(1:10), 'MPI_Error_string into a short string')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
end subroutine returned_codes

subroutine record_error(comm, code)
  use mpi
  implicit none
  integer :: comm, code
  integer :: calls, last_code, last_comm
  common /handler_log/ calls, last_code, last_comm
  calls = calls + 1
  last_code = code
  last_comm = comm
end subroutine record_error

subroutine fortran_handler(rank)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank
  external :: record_error
  integer :: ierr, eh, comm, cls, buf, code
  integer :: calls, last_code, last_comm
  common /handler_log/ calls, last_code, last_comm
  calls = 0
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_create_errhandler(record_error, eh, ierr)
  call MPI_Comm_set_errhandler(comm, eh, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call check_int(eh, MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')
  call MPI_Recv(buf, 1, MPI_INTEGER, rank, -5, comm, MPI_STATUS_IGNORE, code)
  call check_int(calls, 1, 'the Fortran error handler was called')
  call check_int(last_comm, comm, 'the handler got the communicator')
  call check_int(last_code, code, 'the handler got the code IERROR returns')
  call MPI_Error_class(last_code, cls, ierr)
  call check_int(cls, MPI_ERR_TAG, 'class of the error of MPI_Recv with tag -5')
  call MPI_Comm_call_errhandler(comm, MPI_ERR_OTHER, ierr)
  call check_int(calls, 2, 'MPI_Comm_call_errhandler called the Fortran handler')
  call check_int(last_code, MPI_ERR_OTHER, 'MPI_Comm_call_errhandler: code')
  call MPI_Comm_free(comm, ierr)
end subroutine fortran_handler

subroutine user_codes()
  use mpi
  use ftest
  implicit none
  integer :: ierr, cls, code, got, rlen
  character(len=40) :: text
  call MPI_Add_error_class(cls, ierr)
  call MPI_Add_error_code(cls, code, ierr)
  call MPI_Add_error_string(code, 'fortran made this error   ', ierr)
  call MPI_Error_string(code, text, rlen, ierr)
  call check(text == 'fortran made this error', 'MPI_Add_error_string / MPI_Error_string')
  call check_int(rlen, 23, 'resultlen of a user error string')
  call MPI_Error_class(code, got, ierr)
  call check_int(got, cls, 'MPI_Error_class of a user code')
end subroutine user_codes

! Each MPI_T_ERR_* is its own class, with a message of its own.
subroutine check_tool_class(c, name)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: c
  character(len=*), intent(in) :: name
  integer :: ierr, cls, rlen
  character(len=MPI_MAX_ERROR_STRING) :: text
  call MPI_Error_class(c, cls, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Error_class of ' // name)
  call check_int(cls, c, 'MPI_Error_class of ' // name)
  call MPI_Error_string(c, text, rlen, ierr)
  call check(ierr == MPI_SUCCESS .and. rlen > 0, 'MPI_Error_string of ' // name)
end subroutine check_tool_class

subroutine tool_classes_module()
  use mpi
  implicit none
  call check_tool_class(MPI_T_ERR_MEMORY, 'MPI_T_ERR_MEMORY')
  call check_tool_class(MPI_T_ERR_NOT_INITIALIZED, 'MPI_T_ERR_NOT_INITIALIZED')
  call check_tool_class(MPI_T_ERR_CANNOT_INIT, 'MPI_T_ERR_CANNOT_INIT')
  call check_tool_class(MPI_T_ERR_INVALID_INDEX, 'MPI_T_ERR_INVALID_INDEX')
  call check_tool_class(MPI_T_ERR_INVALID_ITEM, 'MPI_T_ERR_INVALID_ITEM')
  call check_tool_class(MPI_T_ERR_INVALID_HANDLE, 'MPI_T_ERR_INVALID_HANDLE')
  call check_tool_class(MPI_T_ERR_OUT_OF_HANDLES, 'MPI_T_ERR_OUT_OF_HANDLES')
  call check_tool_class(MPI_T_ERR_OUT_OF_SESSIONS, 'MPI_T_ERR_OUT_OF_SESSIONS')
  call check_tool_class(MPI_T_ERR_INVALID_SESSION, 'MPI_T_ERR_INVALID_SESSION')
  call check_tool_class(MPI_T_ERR_CVAR_SET_NOT_NOW, 'MPI_T_ERR_CVAR_SET_NOT_NOW')
  call check_tool_class(MPI_T_ERR_CVAR_SET_NEVER, 'MPI_T_ERR_CVAR_SET_NEVER')
  call check_tool_class(MPI_T_ERR_PVAR_NO_STARTSTOP, 'MPI_T_ERR_PVAR_NO_STARTSTOP')
  call check_tool_class(MPI_T_ERR_PVAR_NO_WRITE, 'MPI_T_ERR_PVAR_NO_WRITE')
  call check_tool_class(MPI_T_ERR_PVAR_NO_ATOMIC, 'MPI_T_ERR_PVAR_NO_ATOMIC')
  call check_tool_class(MPI_T_ERR_INVALID_NAME, 'MPI_T_ERR_INVALID_NAME')
  call check_tool_class(MPI_T_ERR_INVALID, 'MPI_T_ERR_INVALID')
end subroutine tool_classes_module

! The same names from mpif.h, with the same values.
subroutine tool_classes_mpif()
  use ftest
  implicit none
  include 'mpif.h'
  integer :: classes(16), i, j
  classes = (/ MPI_T_ERR_MEMORY, MPI_T_ERR_NOT_INITIALIZED, MPI_T_ERR_CANNOT_INIT, &
               MPI_T_ERR_INVALID_INDEX, MPI_T_ERR_INVALID_ITEM, MPI_T_ERR_INVALID_HANDLE, &
               MPI_T_ERR_OUT_OF_HANDLES, MPI_T_ERR_OUT_OF_SESSIONS, &
               MPI_T_ERR_INVALID_SESSION, MPI_T_ERR_CVAR_SET_NOT_NOW, &
               MPI_T_ERR_CVAR_SET_NEVER, MPI_T_ERR_PVAR_NO_STARTSTOP, &
               MPI_T_ERR_PVAR_NO_WRITE, MPI_T_ERR_PVAR_NO_ATOMIC, MPI_T_ERR_INVALID_NAME, &
               MPI_T_ERR_INVALID /)
  do i = 1, 16
    call check(classes(i) > MPI_SUCCESS .and. classes(i) <= MPI_ERR_LASTCODE, &
               'an MPI_T_ERR_* of mpif.h is in the class range')
    do j = 1, i - 1
      call check(classes(i) /= classes(j), 'the MPI_T_ERR_* of mpif.h are distinct')
    end do
  end do
  call check_tool_class(MPI_T_ERR_INVALID, 'MPI_T_ERR_INVALID (mpif.h)')
end subroutine tool_classes_mpif
