! What MPI 3.1 adds for Fortran programs (use mpi), and the bugs issue 32
! fixed, from Fortran: MPI_SIZEOF over intrinsic types of any rank,
! PMPI_WTIME, MPI_F_SYNC_REG; REAL(16), COMPLEX(16), INTEGER(16) with MPI_REAL16,
! MPI_COMPLEX32, MPI_INTEGER16 in reductions and MPI_TYPE_MATCH_SIZE;
! MPI_TYPE_CREATE_F90_REAL/COMPLEX/INTEGER; a generalized request with
! Fortran callbacks in a MPI_WAITALL with a receive; MPI_DIMS_CREATE's
! choices; STATUS(MPI_ERROR) left alone by single-request calls; a buffered
! send in a buffer of exactly its size plus MPI_BSEND_OVERHEAD; and
! MPI_COMM_GET_INFO returning no key nobody defined (only MPI 4.1's
! mpi_memory_alloc_kinds, which every communicator reports).
module f_mpi31_greq
  use mpi
  implicit none
  integer :: queries = 0, frees = 0, cancels = 0
  logical :: cancelled_complete = .true.
contains
  subroutine query(extra, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierror
    queries = queries + 1
    status(MPI_SOURCE) = 3
    status(MPI_TAG) = int(extra)
    call MPI_Status_set_elements(status, MPI_INTEGER, 2, ierror)
    call MPI_Status_set_cancelled(status, .false., ierror)
    ierror = MPI_SUCCESS
  end subroutine query

  subroutine release(extra, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierror
    if (extra /= 42) frees = -1000
    frees = frees + 1
    ierror = MPI_SUCCESS
  end subroutine release

  subroutine cancel(extra, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierror
    if (extra /= 42) cancels = -1000
    cancels = cancels + 1
    cancelled_complete = complete
    ierror = MPI_SUCCESS
  end subroutine cancel
end module f_mpi31_greq

program f_mpi31
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, size
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call sizes()
  call quad(rank, size)
  call f90_types(rank, size)
  call greq(rank, size)
  call fixed_bugs(rank, size)
  call MPI_Finalize(ierr)
end program f_mpi31

subroutine sizes()
  use mpi
  use ftest
  implicit none
  integer :: s, ierr
  integer(kind=1) :: i1(3)
  integer(kind=8) :: i8
  integer(kind=16) :: i16(2, 2)
  real :: r4
  double precision :: d(5)
  real(kind=10) :: r10
  real(kind=16) :: r16
  complex :: c8(4)
  complex(kind=16) :: c32
  logical :: l
  character(len=7) :: word
  double precision :: t0, t1, tick
  call MPI_Sizeof(i1, s, ierr)
  call check_int(s, 1, 'MPI_SIZEOF(INTEGER(1) array)')
  call MPI_Sizeof(i8, s, ierr)
  call check_int(s, 8, 'MPI_SIZEOF(INTEGER(8))')
  call MPI_Sizeof(i16, s, ierr)
  call check_int(s, 16, 'MPI_SIZEOF(INTEGER(16) 2-D array)')
  call MPI_Sizeof(r4, s, ierr)
  call check_int(s, storage_size(r4) / 8, 'MPI_SIZEOF(REAL)')
  call MPI_Sizeof(d, s, ierr)
  call check_int(s, 8, 'MPI_SIZEOF(DOUBLE PRECISION array)')
  call MPI_Sizeof(r10, s, ierr)
  call check_int(s, storage_size(r10) / 8, 'MPI_SIZEOF(REAL(10))')
  call MPI_Sizeof(r16, s, ierr)
  call check_int(s, 16, 'MPI_SIZEOF(REAL(16))')
  call MPI_Sizeof(c8, s, ierr)
  call check_int(s, 8, 'MPI_SIZEOF(COMPLEX array)')
  call MPI_Sizeof(c32, s, ierr)
  call check_int(s, 32, 'MPI_SIZEOF(COMPLEX(16))')
  call MPI_Sizeof(l, s, ierr)
  call check_int(s, storage_size(l) / 8, 'MPI_SIZEOF(LOGICAL)')
  call MPI_Sizeof(word, s, ierr)
  call check_int(s, 7, 'MPI_SIZEOF(CHARACTER(7))')
  call check_int(ierr, MPI_SUCCESS, 'MPI_SIZEOF ierror')
  ! The profiling names of the timer functions, typed by the module.
  t0 = PMPI_Wtime()
  t1 = MPI_Wtime()
  tick = PMPI_Wtick()
  call check(t1 >= t0 .and. tick > 0d0, 'PMPI_WTIME / PMPI_WTICK')
end subroutine sizes

subroutine quad(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, t, s
  real(kind=16) :: x(2), xs(2)
  complex(kind=16) :: z, zp
  integer(kind=16) :: big, bigsum, bmax
  integer :: r
  x(1) = 1.0_16 / 3.0_16 + rank
  x(2) = -real(rank, 16)
  call MPI_Allreduce(x, xs, 2, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(abs(xs(1) - (size / 3.0_16 + size * (size - 1) / 2)) < 1e-30_16, &
             'MPI_REAL16 sum (quadruple precision)')
  call MPI_Allreduce(x(2), xs(2), 1, MPI_REAL16, MPI_MIN, MPI_COMM_WORLD, ierr)
  call check(abs(xs(2) + real(size - 1, 16)) < 0.5_16, 'MPI_REAL16 min')
  ! The product of (0, 1) over the ranks is i^size.
  z = cmplx(0, 1, kind=16)
  call MPI_Allreduce(z, zp, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD, ierr)
  ! (Parts compared apart: abs of a COMPLEX(16) would need libquadmath.)
  zp = zp - (0.0_16, 1.0_16)**size
  call check(abs(real(zp, 16)) < 1e-30_16 .and. abs(aimag(zp)) < 1e-30_16, &
             'MPI_COMPLEX32 product')
  ! Beyond 64 bits.
  big = 2_16**70 + rank
  call MPI_Allreduce(big, bigsum, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(bigsum == size * 2_16**70 + size * (size - 1) / 2, 'MPI_INTEGER16 sum')
  call MPI_Allreduce(big, bmax, 1, MPI_INTEGER16, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(bmax == 2_16**70 + size - 1, 'MPI_INTEGER16 max')
  ! MPI_TYPE_MATCH_SIZE with the sizes MPI_SIZEOF gives.
  call MPI_Sizeof(x(1), s, ierr)
  call MPI_Type_match_size(MPI_TYPECLASS_REAL, s, t, ierr)
  call check(t == MPI_REAL16, 'TYPE_MATCH_SIZE(REAL, 16)')
  call MPI_Sizeof(z, s, ierr)
  call MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, s, t, ierr)
  call check(t == MPI_COMPLEX32, 'TYPE_MATCH_SIZE(COMPLEX, 32)')
  call MPI_Sizeof(big, s, ierr)
  call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, s, t, ierr)
  call check(t == MPI_INTEGER16, 'TYPE_MATCH_SIZE(INTEGER, 16)')
  call MPI_Type_size(MPI_COMPLEX32, r, ierr)
  call check_int(r, 32, 'MPI_Type_size(MPI_COMPLEX32)')
end subroutine quad

subroutine f90_types(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer, parameter :: dp = selected_real_kind(12, 100), ik = selected_int_kind(15)
  real(kind=dp) :: a(3), b(3)
  integer(kind=ik) :: n, nsum
  integer :: ierr, tr, tr2, tc, ti, ni, na, nd, combiner, ints(2), s
  integer(kind=MPI_ADDRESS_KIND) :: addrs(1)
  integer :: types(1)
  call MPI_Type_create_f90_real(12, 100, tr, ierr)
  call MPI_Type_create_f90_real(12, 100, tr2, ierr)
  call check(tr == tr2, 'same (p, r): same handle')
  call MPI_Type_size(tr, s, ierr)
  call check_int(s, 8, 'F90_REAL(12, 100) size')
  call MPI_Type_get_envelope(tr, ni, na, nd, combiner, ierr)
  call check(combiner == MPI_COMBINER_F90_REAL .and. ni == 2 .and. na == 0 .and. nd == 0, &
             'F90_REAL envelope')
  call MPI_Type_get_contents(tr, 2, 0, 0, ints, addrs, types, ierr)
  call check(ints(1) == 12 .and. ints(2) == 100, 'F90_REAL contents')
  a = [1.5_dp, 2.5_dp, real(rank, dp)]
  call MPI_Allreduce(a, b, 3, tr, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(abs(b(1) - 1.5_dp * size) < 1e-9_dp .and. &
             abs(b(3) - real(size * (size - 1) / 2, dp)) < 1e-9_dp, &
             'reduction over an F90_REAL type')
  call MPI_Type_create_f90_complex(MPI_UNDEFINED, 30, tc, ierr)
  call MPI_Type_size(tc, s, ierr)
  call check_int(s, 8, 'F90_COMPLEX(undefined, 30) size')
  call MPI_Type_create_f90_integer(15, ti, ierr)
  call MPI_Type_get_envelope(ti, ni, na, nd, combiner, ierr)
  call check(combiner == MPI_COMBINER_F90_INTEGER .and. ni == 1, 'F90_INTEGER envelope')
  n = 3_ik**30
  call MPI_Allreduce(n, nsum, 1, ti, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(nsum == size * 3_ik**30, 'reduction over an F90_INTEGER type')
  ! Predefined: they cannot be freed; no kind has 40 digits.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Type_free(tr, ierr)
  call check(ierr /= MPI_SUCCESS, 'an F90 type was freed')
  call MPI_Type_create_f90_real(40, MPI_UNDEFINED, tr2, ierr)
  call check(ierr /= MPI_SUCCESS, 'F90_REAL with 40 digits of precision')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
end subroutine f90_types

subroutine greq(rank, size)
  use mpi
  use ftest
  use f_mpi31_greq
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, reqs(2), statuses(MPI_STATUS_SIZE, 2), got(2), n
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: right, left, out(2)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  extra = 42
  call MPI_Grequest_start(query, release, cancel, extra, reqs(1), ierr)
  out = [rank, -rank]
  call MPI_Irecv(got, 2, MPI_INTEGER, left, 5, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Send(out, 2, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ierr)
  call MPI_F_sync_reg(got)
  call MPI_Cancel(reqs(1), ierr)
  call check_int(cancels, 1, 'cancel callback calls')
  call check(.not. cancelled_complete, 'cancel callback: complete before completion')
  call MPI_Grequest_complete(reqs(1), ierr)
  call MPI_Waitall(2, reqs, statuses, ierr)
  call check_int(ierr, MPI_SUCCESS, 'Waitall with a generalized request')
  call check(queries == 1 .and. frees == 1, 'query and free callbacks run once each')
  call check(statuses(MPI_SOURCE, 1) == 3 .and. statuses(MPI_TAG, 1) == 42, &
             'status made by the query callback')
  call MPI_Get_count(statuses(:, 1), MPI_INTEGER, n, ierr)
  call check_int(n, 2, 'count set by the query callback')
  call check(got(1) == left .and. got(2) == -left, 'the receive beside it')
end subroutine greq

subroutine fixed_bugs(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, dims(3), st(MPI_STATUS_SIZE), msg, v, ps, bsize, info, nkeys, comm
  integer :: buf(100)
  character, allocatable :: bbuf(:)
  character(len=MPI_MAX_INFO_VAL) :: val
  logical :: flag
  ! MPI_DIMS_CREATE: exact for large counts, Open MPI's and MPICH's choice.
  dims = 0
  call MPI_Dims_create(1000000000, 3, dims, ierr)
  call check(all(dims == 1000), 'DIMS_CREATE(10**9, 3)')
  dims = 0
  call MPI_Dims_create(360, 3, dims, ierr)
  call check(all(dims == [10, 6, 6]), 'DIMS_CREATE(360, 3)')
  ! Single-request calls leave STATUS(MPI_ERROR) alone.
  call MPI_Send(rank, 1, MPI_INTEGER, mod(rank + 1, size), 9, MPI_COMM_WORLD, ierr)
  st(MPI_ERROR) = -7
  call MPI_Mprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, msg, st, ierr)
  call check_int(st(MPI_ERROR), -7, 'MPI_MPROBE wrote STATUS(MPI_ERROR)')
  call MPI_Mrecv(v, 1, MPI_INTEGER, msg, st, ierr)
  call check_int(st(MPI_ERROR), -7, 'MPI_MRECV wrote STATUS(MPI_ERROR)')
  call check_int(v, mod(rank + size - 1, size), 'MPI_MRECV data')
  ! A buffer of exactly the packed size plus MPI_BSEND_OVERHEAD.
  call MPI_Pack_size(100, MPI_INTEGER, MPI_COMM_WORLD, ps, ierr)
  bsize = ps + MPI_BSEND_OVERHEAD
  allocate(bbuf(bsize))
  call MPI_Buffer_attach(bbuf, bsize, ierr)
  buf = rank
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Bsend(buf, 100, MPI_INTEGER, rank, 4, MPI_COMM_WORLD, ierr)
  call check_int(ierr, MPI_SUCCESS, 'BSEND in a buffer of its size + MPI_BSEND_OVERHEAD')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_Recv(buf, 100, MPI_INTEGER, rank, 4, MPI_COMM_WORLD, st, ierr)
  call MPI_Buffer_detach(bbuf, bsize, ierr)
  ! MPI_COMM_GET_INFO: a key no one defines is not a hint in use.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'f_mpi31_no_such_hint', 'true', ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_set_info(comm, info, ierr)
  call MPI_Info_free(info, ierr)
  call MPI_Comm_get_info(comm, info, ierr)
  call MPI_Info_get(info, 'f_mpi31_no_such_hint', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(.not. flag, 'COMM_GET_INFO returned a key nobody defines')
  ! Only MPI 4.1's mpi_memory_alloc_kinds, which every communicator reports.
  call MPI_Info_get(info, 'mpi_memory_alloc_kinds', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(flag, 'COMM_GET_INFO without mpi_memory_alloc_kinds')
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call check_int(nkeys, 1, 'COMM_GET_INFO keys')
  call MPI_Info_free(info, ierr)
  call MPI_Comm_free(comm, ierr)
end subroutine fixed_bugs
