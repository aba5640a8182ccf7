! Every collective family from Fortran with include 'mpif.h' (no interfaces):
! broadcast, reductions (predefined operations on INTEGER, DOUBLE PRECISION,
! LOGICAL, MINLOC/MAXLOC pairs), gather/scatter and their v variants,
! all-to-all (v, w), reduce-scatter, scans, user operations written in
! Fortran (commutative and not), the nonblocking variants, and MPI_IN_PLACE
! wherever MPI allows it, at every root.
program f_coll
  use ftest
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, size
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call bcast_reduce(rank, size)
  call allreduce_ops(rank, size)
  call gather_scatter(rank, size)
  call all_to_all(rank, size)
  call scans(rank, size)
  call user_ops(rank, size)
  call nonblocking(rank, size)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program f_coll

subroutine bcast_reduce(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer :: ierr, root, i, a(10), s(10)
  double precision :: d(4)
  do root = 0, size - 1
    a = -1
    if (rank == root) a = [(root * 10 + i, i = 1, 10)]
    call MPI_Bcast(a, 10, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    do i = 1, 10
      call check_int(a(i), root * 10 + i, 'MPI_Bcast INTEGER')
    end do
    d = 0
    if (rank == root) d = 0.5d0 * root
    call MPI_Bcast(d, 4, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD, ierr)
    call check_real(d(4), 0.5d0 * root, 0d0, 'MPI_Bcast DOUBLE PRECISION')
    ! Reduce, then the same with MPI_IN_PLACE at the root.
    a = [((rank + 1) * i, i = 1, 10)]
    s = -1
    call MPI_Reduce(a, s, 10, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    if (rank == root) then
      do i = 1, 10
        call check_int(s(i), i * size * (size + 1) / 2, 'MPI_Reduce MPI_SUM')
      end do
      call MPI_Reduce(MPI_IN_PLACE, a, 10, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
      do i = 1, 10
        call check_int(a(i), i * size * (size + 1) / 2, 'MPI_Reduce MPI_IN_PLACE at the root')
      end do
    else
      call check_int(s(1), -1, 'MPI_Reduce: receive buffer of a non-root')
      call MPI_Reduce(a, s, 10, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    end if
  end do
end subroutine bcast_reduce

subroutine allreduce_ops(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer :: ierr, a(3), r(3), pair(2, 2), pres(2, 2)
  double precision :: d(2), dr(2), dpair(2), dpres(2)
  logical :: l(2), lr(2)
  a = [rank, -rank, ieor(rank, 5)]
  call MPI_Allreduce(a, r, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check_int(r(1), size - 1, 'MPI_Allreduce MPI_MAX')
  call MPI_Allreduce(a(2), r(2), 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  call check_int(r(2), 1 - size, 'MPI_Allreduce MPI_MIN')
  call MPI_Allreduce(a(3), r(3), 1, MPI_INTEGER, MPI_BXOR, MPI_COMM_WORLD, ierr)
  call check_int(r(3), bxor_all(size), 'MPI_Allreduce MPI_BXOR')
  d = [2d0, dble(rank + 1)]
  call MPI_Allreduce(d, dr, 2, MPI_DOUBLE_PRECISION, MPI_PROD, MPI_COMM_WORLD, ierr)
  call check_real(dr(1), 2d0**size, 0d0, 'MPI_Allreduce MPI_PROD')
  call check_real(dr(2), gamma(dble(size + 1)), 1d-6, 'MPI_Allreduce MPI_PROD factorial')
  ! LOGICAL with MPI_LAND / MPI_LOR: only rank 0 says .TRUE.
  l = rank == 0
  call MPI_Allreduce(l(1), lr(1), 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(l(2), lr(2), 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(lr(1) .eqv. (size == 1), 'MPI_Allreduce MPI_LAND on LOGICAL')
  call check(lr(2), 'MPI_Allreduce MPI_LOR on LOGICAL')
  ! MPI_IN_PLACE.
  a = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, a, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_int(a(3), size * (size + 1) / 2, 'MPI_Allreduce MPI_IN_PLACE')
  ! MINLOC / MAXLOC on pairs (value, index).
  pair(:, 1) = [abs(rank - size / 2), rank]
  pair(:, 2) = [mod(rank, 2), rank]
  call MPI_Allreduce(pair, pres, 2, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call check_int(pres(1, 1), 0, 'MPI_MINLOC value')
  call check_int(pres(2, 1), size / 2, 'MPI_MINLOC index')
  call check_int(pres(2, 2), 0, 'MPI_MINLOC index of the first of equal values')
  dpair = [dble(rank), dble(rank)]
  call MPI_Allreduce(dpair, dpres, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check_real(dpres(2), dble(size - 1), 0d0, 'MPI_MAXLOC index')
contains
  integer function bxor_all(n)
    integer, intent(in) :: n
    integer :: k
    bxor_all = 0
    do k = 0, n - 1
      bxor_all = ieor(bxor_all, ieor(k, 5))
    end do
  end function bxor_all
end subroutine allreduce_ops

subroutine gather_scatter(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer, parameter :: maxn = 16
  integer :: ierr, root, p, i, k, mine(2), all(2 * maxn), counts(maxn), displs(maxn)
  integer :: v(maxn * maxn), got(maxn)
  do p = 1, size
    counts(p) = p
    displs(p) = (p - 1) * (p + 2) / 2  ! rank p-1 starts after a gap of one element
  end do
  do root = 0, size - 1
    mine = [rank * 10 + 1, rank * 10 + 2]
    all = -9
    call MPI_Gather(mine, 2, MPI_INTEGER, all, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    if (rank == root) then
      do p = 0, size - 1
        call check_int(all(2 * p + 2), p * 10 + 2, 'MPI_Gather')
      end do
      all(2 * root + 1:2 * root + 2) = mine
      call MPI_Gather(MPI_IN_PLACE, 2, MPI_INTEGER, all, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
      call check_int(all(2 * size - 1), (size - 1) * 10 + 1, 'MPI_Gather MPI_IN_PLACE')
    else
      call MPI_Gather(mine, 2, MPI_INTEGER, all, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    end if
    ! Gatherv: rank p sends p+1 values into a block with a one-element gap.
    got = [(rank * 100 + i, i = 1, maxn)]
    v = -9
    call MPI_Gatherv(got, rank + 1, MPI_INTEGER, v, counts, displs, MPI_INTEGER, root, &
                     MPI_COMM_WORLD, ierr)
    if (rank == root) then
      do p = 0, size - 1
        do i = 1, p + 1
          call check_int(v(displs(p + 1) + i), p * 100 + i, 'MPI_Gatherv')
        end do
        call check_int(v(displs(p + 1) + p + 2), -9, 'MPI_Gatherv gap')
      end do
    end if
    ! Scatterv back, then Scatter.
    got = -9
    call MPI_Scatterv(v, counts, displs, MPI_INTEGER, got, rank + 1, MPI_INTEGER, root, &
                      MPI_COMM_WORLD, ierr)
    call check_int(got(rank + 1), rank * 100 + rank + 1, 'MPI_Scatterv')
    call check_int(got(rank + 2), -9, 'MPI_Scatterv: past the block')
    if (rank == root) all(1:2 * size) = [(k, k = 1, 2 * size)]
    call MPI_Scatter(all, 2, MPI_INTEGER, mine, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check_int(mine(2), 2 * rank + 2, 'MPI_Scatter')
  end do
  ! Allgather, with MPI_IN_PLACE, and Allgatherv.
  mine = [rank, -rank]
  call MPI_Allgather(mine, 2, MPI_INTEGER, all, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do p = 0, size - 1
    call check_int(all(2 * p + 2), -p, 'MPI_Allgather')
  end do
  all = -9
  all(2 * rank + 1:2 * rank + 2) = [rank + 7, rank + 8]
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do p = 0, size - 1
    call check_int(all(2 * p + 1), p + 7, 'MPI_Allgather MPI_IN_PLACE')
  end do
  got = [(rank * 100 + i, i = 1, maxn)]
  v = -9
  call MPI_Allgatherv(got, rank + 1, MPI_INTEGER, v, counts, displs, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
  do p = 0, size - 1
    call check_int(v(displs(p + 1) + p + 1), p * 100 + p + 1, 'MPI_Allgatherv')
  end do
end subroutine gather_scatter

subroutine all_to_all(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer, parameter :: maxn = 16
  integer :: ierr, p, i, s(maxn), r(maxn), sc(maxn), sd(maxn), rc(maxn), rd(maxn)
  integer :: types(maxn), sv(maxn * maxn), rv(maxn * maxn), red(maxn * maxn), blk(2)
  s = [(rank * 100 + p, p = 0, maxn - 1)]
  r = -9
  call MPI_Alltoall(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do p = 0, size - 1
    call check_int(r(p + 1), p * 100 + rank, 'MPI_Alltoall')
  end do
  ! Alltoallv: to rank p, p+1 values; from rank p, rank+1 values. (Entries
  ! past size are zero: Alltoallw's sd * 4 computes them all.)
  sc = 0
  sd = 0
  rc = 0
  rd = 0
  do p = 0, size - 1
    sc(p + 1) = p + 1
    sd(p + 1) = p * (p + 1) / 2
    rc(p + 1) = rank + 1
    rd(p + 1) = p * (rank + 1)
  end do
  sv = [(rank * 1000 + i, i = 1, maxn * maxn)]
  rv = -9
  call MPI_Alltoallv(sv, sc, sd, MPI_INTEGER, rv, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do p = 0, size - 1
    do i = 1, rank + 1
      call check_int(rv(rd(p + 1) + i), p * 1000 + rank * (rank + 1) / 2 + i, 'MPI_Alltoallv')
    end do
  end do
  ! Alltoallw: the same exchange, displacements in bytes.
  types = MPI_INTEGER
  rv = -9
  call MPI_Alltoallw(sv, sc, sd * 4, types, rv, rc, rd * 4, types, MPI_COMM_WORLD, ierr)
  call check_int(rv(rd(size) + rank + 1), (size - 1) * 1000 + rank * (rank + 1) / 2 + rank + 1, &
                 'MPI_Alltoallw')
  ! Reduce_scatter: rank r gets r+1 elements of the global sum of sv(j) = rank + j.
  sv = [(rank + i, i = 1, maxn * maxn)]
  red = -9
  call MPI_Reduce_scatter(sv, red, sc, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, rank + 1
    call check_int(red(i), size * (size - 1) / 2 + size * (sd(rank + 1) + i), 'MPI_Reduce_scatter')
  end do
  call MPI_Reduce_scatter_block(sv, blk, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_int(blk(2), size * (size - 1) / 2 + size * (2 * rank + 2), 'MPI_Reduce_scatter_block')
end subroutine all_to_all

subroutine scans(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer :: ierr, a, r
  a = rank + 1
  call MPI_Scan(a, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check_int(r, (rank + 1) * (rank + 2) / 2, 'MPI_Scan')
  r = -9
  call MPI_Exscan(a, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) call check_int(r, rank * (rank + 1) / 2, 'MPI_Exscan')
  r = a
  call MPI_Scan(MPI_IN_PLACE, r, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check_int(r, rank + 1, 'MPI_Scan MPI_IN_PLACE')
  if (rank == size - 1) call check_int(r, size, 'MPI_Scan MPI_IN_PLACE on the last rank')
end subroutine scans

! A user operation is called as USER_FN(INVEC, INOUTVEC, LEN, DATATYPE).
subroutine int_sum(invec, inoutvec, len, datatype)
  implicit none
  include 'mpif.h'
  integer :: len, datatype
  integer :: invec(len), inoutvec(len)
  if (datatype /= MPI_INTEGER) stop 3
  inoutvec = inoutvec + invec
end subroutine int_sum

! Not commutative: a op b = a, so a reduction in rank order yields rank 0's value.
subroutine take_left(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype
  double precision :: invec(len), inoutvec(len)
  if (datatype == 0) stop 3
  inoutvec = invec
end subroutine take_left

subroutine user_ops(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  external :: int_sum, take_left
  integer :: ierr, sum_op, left_op, a(5), r(5), root
  double precision :: d(3), dr(3)
  logical :: commute
  call MPI_Op_create(int_sum, .true., sum_op, ierr)
  call MPI_Op_create(take_left, .false., left_op, ierr)
  call MPI_Op_commutative(sum_op, commute, ierr)
  call check(commute, 'MPI_Op_commutative of a commutative Fortran operation')
  call MPI_Op_commutative(left_op, commute, ierr)
  call check(.not. commute, 'MPI_Op_commutative of a non-commutative Fortran operation')
  a = rank + 1
  call MPI_Allreduce(a, r, 5, MPI_INTEGER, sum_op, MPI_COMM_WORLD, ierr)
  call check_int(r(5), size * (size + 1) / 2, 'MPI_Allreduce with a Fortran operation')
  d = dble(rank + 1)
  do root = 0, size - 1
    dr = 0
    call MPI_Reduce(d, dr, 3, MPI_DOUBLE_PRECISION, left_op, root, MPI_COMM_WORLD, ierr)
    if (rank == root) call check_real(dr(3), 1d0, 0d0, 'MPI_Reduce, non-commutative operation')
  end do
  r = 1
  call MPI_Reduce_local(a, r, 5, MPI_INTEGER, sum_op, ierr)
  call check_int(r(1), rank + 2, 'MPI_Reduce_local with a Fortran operation')
  call MPI_Op_free(sum_op, ierr)
  call MPI_Op_free(left_op, ierr)
  call check_int(sum_op, MPI_OP_NULL, 'MPI_Op_free')
end subroutine user_ops

subroutine nonblocking(rank, size)
  use ftest
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, size
  integer, parameter :: maxn = 16
  integer :: ierr, reqs(8), a(4), s(4), g(maxn), all(maxn), sc, x, y, z, p
  integer :: st(MPI_STATUS_SIZE, 8)
  a = 0
  if (rank == size - 1) a = [1, 2, 3, 4]
  call MPI_Ibcast(a, 4, MPI_INTEGER, size - 1, MPI_COMM_WORLD, reqs(1), ierr)
  s = rank
  call MPI_Iallreduce(MPI_IN_PLACE, s, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(2), ierr)
  x = rank * 3
  call MPI_Igather(x, 1, MPI_INTEGER, g, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Iallgather(x, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_Iscan(rank, sc, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(5), ierr)
  call MPI_Ibarrier(MPI_COMM_WORLD, reqs(6), ierr)
  z = rank + 1
  call MPI_Ireduce(z, y, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, reqs(7), ierr)
  call MPI_Iexscan(rank, p, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(8), ierr)
  call MPI_Waitall(8, reqs, st, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Waitall of nonblocking collectives')
  call check_int(a(4), 4, 'MPI_Ibcast')
  call check_int(s(1), size * (size - 1) / 2, 'MPI_Iallreduce MPI_IN_PLACE')
  if (rank == 0) call check_int(g(size), 3 * (size - 1), 'MPI_Igather')
  if (rank == 0) call check_int(y, size, 'MPI_Ireduce')
  call check_int(all(size), 3 * (size - 1), 'MPI_Iallgather')
  call check_int(sc, rank * (rank + 1) / 2, 'MPI_Iscan')
  if (rank > 0) call check_int(p, (rank - 1) * rank / 2, 'MPI_Iexscan')
end subroutine nonblocking
