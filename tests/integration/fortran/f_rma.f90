! One-sided communication from Fortran (use mpi): windows on an array
! (MPI_WIN_CREATE) and on memory MPI allocates (MPI_WIN_ALLOCATE,
! MPI_ALLOC_MEM, MPI_WIN_ALLOCATE_SHARED: BASEPTR is an address integer,
! reached through C_F_POINTER), the predefined attributes as address-sized
! integers, fence epochs with Put, Get and Accumulate, passive target with
! Fetch_and_op, Compare_and_swap and MPI_RGET + MPI_WAIT, post-start-
! complete-test with a LOGICAL flag, window names, keyvals with a Fortran
! delete callback, and a Fortran error handler.
module f_rma_callbacks
  implicit none
  integer :: deleted = 0, handled = 0, handled_class = -1
contains
  subroutine delete_fn(win, keyval, value, extra, ierr)
    use mpi
    integer :: win, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: value, extra
    deleted = deleted + int(value) + int(extra)
    ierr = MPI_SUCCESS
  end subroutine delete_fn

  subroutine handler(win, code)
    use mpi
    integer :: win, code, ierr
    handled = handled + 1
    call MPI_Error_class(code, handled_class, ierr)
  end subroutine handler
end module f_rma_callbacks

program f_rma
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, size
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call fences(rank, size)
  call passive(rank, size)
  call pscw(rank, size)
  call objects(rank)
  call shared(rank)
  call MPI_Finalize(ierr)
end program f_rma

subroutine fences(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, win, right, left, i
  logical :: flag
  integer :: a(10), got(10), one
  integer(kind=MPI_ADDRESS_KIND) :: bytes, attr
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  a = -1
  bytes = 10 * 4
  call MPI_Win_create(a, bytes, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, attr, flag, ierr)
  call check(flag .and. attr == bytes, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, attr, flag, ierr)
  call check(flag .and. attr == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, attr, flag, ierr)
  call check(attr == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
  call MPI_Win_get_attr(win, MPI_WIN_MODEL, attr, flag, ierr)
  call check(attr == MPI_WIN_UNIFIED, 'MPI_WIN_MODEL')
  call MPI_Win_fence(0, win, ierr)
  got = [(rank * 100 + i, i = 1, 10)]
  ! Elements 0..4 of the right neighbour's window (displacements in units of 4 bytes).
  call MPI_Put(got, 5, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 5, MPI_INTEGER, win, ierr)
  one = rank + 1
  call MPI_Accumulate(one, 1, MPI_INTEGER, 0, 9_MPI_ADDRESS_KIND, 1, MPI_INTEGER, MPI_SUM, &
                      win, ierr)
  call MPI_Win_fence(0, win, ierr)
  do i = 1, 5
    call check_int(a(i), left * 100 + i, 'Put from the left neighbour')
  end do
  if (rank == 0) call check_int(a(10), size * (size + 1) / 2 - 1, 'Accumulate')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  got = -7
  call MPI_Get(got, 5, MPI_INTEGER, right, 0_MPI_ADDRESS_KIND, 5, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
  do i = 1, 5
    call check_int(got(i), rank * 100 + i, 'Get of what I put')
  end do
  call MPI_Win_free(win, ierr)
  call check_int(win, MPI_WIN_NULL, 'MPI_Win_free')
end subroutine fences

subroutine passive(rank, size)
  use mpi
  use ftest
  use, intrinsic :: iso_c_binding
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, win, req, tries
  integer(kind=MPI_ADDRESS_KIND) :: baseptr, bytes
  integer(kind=8), pointer :: w(:)
  integer(kind=8) :: one, old, seen, next, res, got
  type(c_ptr) :: cp
  bytes = 4 * 8
  call MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win, ierr)
  cp = transfer(baseptr, cp)
  call c_f_pointer(cp, w, [4])
  w = 0
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock_all(0, win, ierr)
  one = 1
  call MPI_Fetch_and_op(one, old, MPI_INTEGER8, 0, 0_MPI_ADDRESS_KIND, MPI_SUM, win, ierr)
  call MPI_Win_flush(0, win, ierr)
  call check(old >= 0 .and. old < size, 'Fetch_and_op ticket')
  ! A counter advanced by compare-and-swap retries.
  call MPI_Fetch_and_op(one, seen, MPI_INTEGER8, 0, 1_MPI_ADDRESS_KIND, MPI_NO_OP, win, ierr)
  call MPI_Win_flush(0, win, ierr)
  tries = 0
  do
    next = seen + 1
    call MPI_Compare_and_swap(next, seen, res, MPI_INTEGER8, 0, 1_MPI_ADDRESS_KIND, win, ierr)
    call MPI_Win_flush(0, win, ierr)
    if (res == seen) exit
    seen = res
    tries = tries + 1
    call check(tries < 100000, 'compare-and-swap never wins')
  end do
  call MPI_Win_unlock_all(win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
  call MPI_Rget(got, 1, MPI_INTEGER8, 0, 1_MPI_ADDRESS_KIND, 1, MPI_INTEGER8, win, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Win_unlock(0, win, ierr)
  call check(got == size, 'the compare-and-swap counter')
  if (rank == 0) call check(w(1) == size, 'the ticket counter')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Win_free(win, ierr)
end subroutine passive

subroutine pscw(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, win, world, lg, rg, right, left, v
  integer :: a(2)
  logical :: done
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  a = -1
  call MPI_Win_create(a, 8_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
  call MPI_Group_incl(world, 1, [left], lg, ierr)
  call MPI_Group_incl(world, 1, [right], rg, ierr)
  call MPI_Win_post(lg, 0, win, ierr)
  call MPI_Win_start(rg, 0, win, ierr)
  v = 1000 + rank
  call MPI_Put(v, 1, MPI_INTEGER, right, 1_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_complete(win, ierr)
  done = .false.
  do while (.not. done)
    call MPI_Win_test(win, done, ierr)
  end do
  call check_int(a(2), 1000 + left, 'PSCW put from the left neighbour')
  call MPI_Group_free(lg, ierr)
  call MPI_Group_free(rg, ierr)
  call MPI_Group_free(world, ierr)
  call MPI_Win_free(win, ierr)
end subroutine pscw

subroutine objects(rank)
  use mpi
  use ftest
  use f_rma_callbacks
  use, intrinsic :: iso_c_binding
  implicit none
  integer, intent(in) :: rank
  integer :: ierr, win, keyval, eh, len, x
  integer(kind=MPI_ADDRESS_KIND) :: mem, val, extra
  character(len=MPI_MAX_OBJECT_NAME) :: name
  logical :: flag
  double precision, pointer :: d(:)
  type(c_ptr) :: cp
  call MPI_Alloc_mem(80_MPI_ADDRESS_KIND, MPI_INFO_NULL, mem, ierr)
  cp = transfer(mem, cp)
  call c_f_pointer(cp, d, [10])
  d = 2.5d0
  call MPI_Win_create(d, 80_MPI_ADDRESS_KIND, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_BASE, val, flag, ierr)
  call check(flag .and. val == mem, 'MPI_WIN_BASE is the MPI_Alloc_mem address')
  call MPI_Win_set_name(win, 'fortran window', ierr)
  call MPI_Win_get_name(win, name, len, ierr)
  call check(name == 'fortran window' .and. len == 14, 'window name')
  extra = 1000
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, keyval, extra, ierr)
  val = 7 + rank
  call MPI_Win_set_attr(win, keyval, val, ierr)
  val = 0
  call MPI_Win_get_attr(win, keyval, val, flag, ierr)
  call check(flag .and. val == 7 + rank, 'attribute value')
  call MPI_Win_create_errhandler(handler, eh, ierr)
  call MPI_Win_set_errhandler(win, eh, ierr)
  ! A Put outside any epoch: the Fortran handler sees MPI_ERR_RMA_SYNC.
  x = 1
  call MPI_Put(x, 1, MPI_INTEGER, 0, 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win, ierr)
  call check(handled == 1 .and. handled_class == MPI_ERR_RMA_SYNC, 'Fortran error handler')
  call MPI_Win_free(win, ierr)
  call check_int(deleted, 1000 + 7 + rank, 'delete callback at MPI_Win_free')
  call MPI_Win_free_keyval(keyval, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Free_mem(d, ierr)
end subroutine objects

subroutine shared(rank)
  use mpi
  use ftest
  use, intrinsic :: iso_c_binding
  implicit none
  integer, intent(in) :: rank
  integer :: ierr, node, nrank, nsize, win, unit
  integer(kind=MPI_ADDRESS_KIND) :: baseptr, sz, other
  integer, pointer :: mine(:), right(:)
  type(c_ptr) :: cp
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node, ierr)
  call MPI_Comm_rank(node, nrank, ierr)
  call MPI_Comm_size(node, nsize, ierr)
  call MPI_Win_allocate_shared(16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, node, baseptr, win, ierr)
  cp = transfer(baseptr, cp)
  call c_f_pointer(cp, mine, [4])
  call MPI_Win_shared_query(win, mod(nrank + 1, nsize), sz, unit, other, ierr)
  call check(sz == 16 .and. unit == 4, 'MPI_Win_shared_query')
  cp = transfer(other, cp)
  call c_f_pointer(cp, right, [4])
  call MPI_Win_lock_all(MPI_MODE_NOCHECK, win, ierr)
  right(1) = 500 + nrank
  call MPI_Win_sync(win, ierr)
  call MPI_Barrier(node, ierr)
  call MPI_Win_sync(win, ierr)
  call check_int(mine(1), 500 + mod(nrank + nsize - 1, nsize), 'store into a shared segment')
  call MPI_Win_unlock_all(win, ierr)
  call MPI_Win_free(win, ierr)
  call MPI_Comm_free(node, ierr)
end subroutine shared
