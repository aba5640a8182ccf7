! Checks shared by the Fortran integration programs (the counterpart of
! common.h): a failed check prints "FAIL rank R: what (got G, expected E)" and
! calls MPI_ABORT, so the whole job stops at once with a non-zero status.
! Only the check routines are public, so that programs which include mpif.h
! can use this module too.
module ftest
  use mpi, only: MPI_COMM_WORLD, MPI_Abort, MPI_Comm_rank, MPI_Initialized
  implicit none
  private
  public :: check, check_int, check_real

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: rank, ierr
    logical :: up
    rank = -1
    call MPI_Initialized(up, ierr)
    if (up) call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    write (0, '(a,i0,2a)') 'FAIL rank ', rank, ': ', what
    flush (0)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    error stop 1
  end subroutine fail

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) call fail(what)
  end subroutine check

  subroutine check_int(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    character(len=64) :: detail
    if (got /= want) then
      write (detail, '(a,i0,a,i0,a)') ' (got ', got, ', expected ', want, ')'
      call fail(what // trim(detail))
    end if
  end subroutine check_int

  subroutine check_real(got, want, tol, what)
    double precision, intent(in) :: got, want, tol
    character(len=*), intent(in) :: what
    character(len=80) :: detail
    if (abs(got - want) > tol) then
      write (detail, '(a,es16.8,a,es16.8,a)') ' (got ', got, ', expected ', want, ')'
      call fail(what // trim(detail))
    end if
  end subroutine check_real

end module ftest
