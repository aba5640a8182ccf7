! Collectives through the Fortran 2008 bindings (use mpi_f08): MPI_Barrier,
! MPI_Bcast from two roots, MPI_Reduce / MPI_Allreduce with MPI_SUM and
! MPI_MAX on INTEGER and DOUBLE PRECISION (scalars and arrays), MPI_IN_PLACE
! in both, MPI_Gather, MPI_Scatterv, MPI_Allgather, MPI_Alltoall,
! MPI_Iallreduce + MPI_Wait, MPI_Ibcast + an MPI_Test loop; user operations
! from MPI_Op_create with subroutines written against the f08 abstract
! interface MPI_User_function (TYPE(C_PTR) buffers, TYPE(MPI_Datatype)) -
! commutative, and not commutative (the operands must come in rank order) -
! then MPI_Op_free leaving MPI_OP_NULL; MPI_Comm_split (with MPI_UNDEFINED),
! MPI_Comm_dup, MPI_Comm_compare (MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR,
! MPI_UNEQUAL), MPI_Comm_free leaving MPI_COMM_NULL; and MPI 4.0's persistent
! MPI_Allreduce_init started several times.
module f08_coll_ops
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08
  implicit none
  integer :: calls = 0
contains
  ! Commutative: sum of INTEGERs, largest magnitude of DOUBLE PRECISIONs.
  subroutine sum_or_absmax(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: ia(:), ib(:)
    double precision, pointer :: da(:), db(:)
    calls = calls + 1
    if (datatype == MPI_INTEGER) then
      call c_f_pointer(invec, ia, [len])
      call c_f_pointer(inoutvec, ib, [len])
      ib = ia + ib
    else if (datatype == MPI_DOUBLE_PRECISION) then
      call c_f_pointer(invec, da, [len])
      call c_f_pointer(inoutvec, db, [len])
      db = max(abs(da), abs(db))
    else
      calls = -1000000
    end if
  end subroutine sum_or_absmax

  ! Not commutative: composition of maps x -> a*x + b held as (a, b) pairs of
  ! INTEGERs; inoutvec becomes "invec then inoutvec", i.e. applied in rank
  ! order, the lower rank's map first.
  subroutine compose(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: f(:), g(:)
    integer :: i
    if (datatype /= MPI_2INTEGER) calls = -1000000
    call c_f_pointer(invec, f, [2 * len])
    call c_f_pointer(inoutvec, g, [2 * len])
    do i = 1, 2 * len, 2
      ! g(f(x)) = ga * (fa * x + fb) + gb
      g(i + 1) = g(i) * f(i + 1) + g(i + 1)
      g(i) = g(i) * f(i)
    end do
  end subroutine compose
end module f08_coll_ops

program f08_coll
  use mpi_f08
  use ftest
  use f08_coll_ops
  implicit none
  integer, parameter :: maxn = 16
  integer :: ierr, rank, nprocs

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_rank ierror')
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call check(nprocs <= maxn, 'more ranks than this test handles')
  call barrier_bcast()
  call reductions()
  call in_place()
  call gathers()
  call nonblocking()
  call user_ops()
  call communicators()
  call persistent()
  if (rank == 0) write (*, '(a)') 'f08_coll: OK'
  call MPI_Finalize()

contains

  ! MPI_Barrier with and without ierror; MPI_Bcast of INTEGERs from rank 0
  ! and of a DOUBLE PRECISION from the last rank.
  subroutine barrier_bcast()
    integer :: buf(4)
    double precision :: x
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Barrier ierror')
    call MPI_Barrier(MPI_COMM_WORLD)
    buf = -1
    if (rank == 0) buf = [3, 1, 4, 1]
    call MPI_Bcast(buf, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Bcast ierror')
    call check(all(buf == [3, 1, 4, 1]), 'MPI_Bcast from rank 0: data')
    x = -1d0
    if (rank == nprocs - 1) x = 2.5d0
    call MPI_Bcast(x, 1, MPI_DOUBLE_PRECISION, nprocs - 1, MPI_COMM_WORLD)
    call check_real(x, 2.5d0, 0d0, 'MPI_Bcast from the last rank: data')
  end subroutine barrier_bcast

  ! MPI_Reduce to two roots and MPI_Allreduce, MPI_SUM and MPI_MAX, over
  ! INTEGER and DOUBLE PRECISION.
  subroutine reductions()
    integer :: iv(3), ir(3), isum, imax
    double precision :: dv(2), dr(2), dsum
    integer :: root
    iv = [rank, 1, -rank]
    dv = [0.5d0 * rank, -1.25d0]
    isum = nprocs * (nprocs - 1) / 2
    root = nprocs / 2
    ir = -7
    call MPI_Reduce(iv, ir, 3, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Reduce ierror')
    if (rank == root) then
      call check(all(ir == [isum, nprocs, -isum]), 'MPI_Reduce MPI_SUM INTEGER')
    else
      call check(all(ir == -7), 'MPI_Reduce: recvbuf changed on a non-root rank')
    end if
    call MPI_Reduce(dv, dr, 2, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD)
    if (rank == 0) then
      call check_real(dr(1), 0.5d0 * (nprocs - 1), 0d0, 'MPI_Reduce MPI_MAX DOUBLE PRECISION')
      call check_real(dr(2), -1.25d0, 0d0, 'MPI_Reduce MPI_MAX DOUBLE PRECISION (equal)')
    end if
    call MPI_Allreduce(iv, ir, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Allreduce ierror')
    call check(all(ir == [isum, nprocs, -isum]), 'MPI_Allreduce MPI_SUM INTEGER')
    call MPI_Allreduce(iv(3), imax, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    call check_int(imax, 0, 'MPI_Allreduce MPI_MAX INTEGER scalar')
    call MPI_Allreduce(dv(1), dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call check_real(dsum, 0.5d0 * isum, 1d-12, 'MPI_Allreduce MPI_SUM DOUBLE PRECISION')
    call MPI_Allreduce(dv, dr, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
    call check_real(dr(1), 0.5d0 * (nprocs - 1), 0d0, 'MPI_Allreduce MPI_MAX DOUBLE PRECISION')
  end subroutine reductions

  ! MPI_IN_PLACE as the send buffer of MPI_Allreduce (every rank) and of
  ! MPI_Reduce (root only).
  subroutine in_place()
    integer :: buf(2), dummy(2), p
    double precision :: d
    buf = [rank + 1, 2]
    call MPI_Allreduce(MPI_IN_PLACE, buf, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Allreduce MPI_IN_PLACE ierror')
    call check(all(buf == [nprocs * (nprocs + 1) / 2, 2 * nprocs]), &
               'MPI_Allreduce MPI_IN_PLACE MPI_SUM')
    d = dble(mod(rank * 5, 7))
    call MPI_Allreduce(MPI_IN_PLACE, d, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
    call check_real(d, dble(maxval([(mod(5 * p, 7), p = 0, nprocs - 1)])), 0d0, &
                    'MPI_Allreduce MPI_IN_PLACE MPI_MAX')
    buf = [rank, 1]
    dummy = -1
    if (rank == 0) then
      call MPI_Reduce(MPI_IN_PLACE, buf, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
      call check(all(buf == [nprocs * (nprocs - 1) / 2, nprocs]), &
                 'MPI_Reduce MPI_IN_PLACE at the root')
    else
      call MPI_Reduce(buf, dummy, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
      call check(all(buf == [rank, 1]), 'MPI_Reduce: sendbuf changed on a non-root rank')
    end if
  end subroutine in_place

  ! MPI_Gather of two INTEGERs per rank; MPI_Scatterv of rank+1 INTEGERs to
  ! each rank from the last rank; MPI_Allgather; MPI_Alltoall.
  subroutine gathers()
    integer :: two(2), all2(2 * maxn), counts(maxn), displs(maxn), send(maxn * maxn)
    integer :: recv(maxn + 1), one(maxn), a2a_in(maxn), a2a_out(maxn), p, i, j, root
    two = [rank, 10 * rank]
    all2 = -1
    call MPI_Gather(two, 2, MPI_INTEGER, all2, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Gather ierror')
    if (rank == 0) then
      do p = 0, nprocs - 1
        call check(all2(2 * p + 1) == p .and. all2(2 * p + 2) == 10 * p, 'MPI_Gather: data')
      end do
      call check_int(all2(2 * nprocs + 1), -1, 'MPI_Gather: past the end')
    end if
    ! Scatterv: rank p gets p+1 values p*100+1.., laid out in reverse order of
    ! rank in the root's buffer.
    root = nprocs - 1
    send = -1
    if (rank == root) then
      i = 0
      do p = nprocs - 1, 0, -1
        counts(p + 1) = p + 1
        displs(p + 1) = i
        do j = 1, p + 1
          send(i + j) = p * 100 + j
        end do
        i = i + p + 1
      end do
    end if
    recv = -1
    call MPI_Scatterv(send, counts, displs, MPI_INTEGER, recv, rank + 1, MPI_INTEGER, root, &
                      MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Scatterv ierror')
    do i = 1, rank + 1
      call check_int(recv(i), rank * 100 + i, 'MPI_Scatterv: data')
    end do
    call check_int(recv(rank + 2), -1, 'MPI_Scatterv: past the end')
    one = -1
    call MPI_Allgather(rank * rank, 1, MPI_INTEGER, one, 1, MPI_INTEGER, MPI_COMM_WORLD)
    call check(all(one(1:nprocs) == [(p * p, p = 0, nprocs - 1)]), 'MPI_Allgather: data')
    a2a_out = [(rank * 100 + p, p = 0, maxn - 1)]
    a2a_in = -1
    call MPI_Alltoall(a2a_out, 1, MPI_INTEGER, a2a_in, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Alltoall ierror')
    call check(all(a2a_in(1:nprocs) == [(p * 100 + rank, p = 0, nprocs - 1)]), &
               'MPI_Alltoall: data')
  end subroutine gathers

  ! MPI_Iallreduce completed by MPI_Wait; MPI_Ibcast completed by polling
  ! MPI_Test (LOGICAL flag); requests null afterwards.
  subroutine nonblocking()
    integer, asynchronous :: v(2), r(2), b(3)
    type(MPI_Request) :: req
    type(MPI_Status) :: st
    logical :: flag
    v = [rank, 1]
    r = -1
    call MPI_Iallreduce(v, r, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Iallreduce ierror')
    call MPI_Wait(req, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Iallreduce: MPI_Wait ierror')
    call check(req == MPI_REQUEST_NULL, 'MPI_Iallreduce: request not null after MPI_Wait')
    call check(all(r == [nprocs * (nprocs - 1) / 2, nprocs]), 'MPI_Iallreduce: data')
    b = 0
    if (rank == 0) b = [7, 8, 9]
    call MPI_Ibcast(b, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, req)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Ibcast: MPI_Test ierror')
    end do
    call check(req == MPI_REQUEST_NULL, 'MPI_Ibcast: request not null after MPI_Test')
    call check(all(b == [7, 8, 9]), 'MPI_Ibcast: data')
  end subroutine nonblocking

  ! User operations: a commutative one dispatching on the datatype handle,
  ! and a non-commutative composition whose result depends on rank order.
  subroutine user_ops()
    type(MPI_Op) :: op, comp
    integer :: iv(2), ir(2), f(2), g(2), want(2), p
    double precision :: dv(3), dr(3)
    call MPI_Op_create(sum_or_absmax, .true., op, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Op_create ierror')
    call check(op /= MPI_OP_NULL, 'MPI_Op_create: MPI_OP_NULL returned')
    iv = [rank, 2]
    call MPI_Allreduce(iv, ir, 2, MPI_INTEGER, op, MPI_COMM_WORLD)
    call check(all(ir == [nprocs * (nprocs - 1) / 2, 2 * nprocs]), &
               'user op on MPI_INTEGER: data')
    dv = [-dble(rank), 0.5d0, merge(3d0, -1d0, rank == nprocs - 1)]
    call MPI_Allreduce(dv, dr, 3, MPI_DOUBLE_PRECISION, op, MPI_COMM_WORLD, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Allreduce with a user op ierror')
    call check_real(dr(1), dble(nprocs - 1), 0d0, 'user op on DOUBLE PRECISION: element 1')
    call check_real(dr(2), 0.5d0, 0d0, 'user op on DOUBLE PRECISION: element 2')
    call check_real(dr(3), 3d0, 0d0, 'user op on DOUBLE PRECISION: element 3')
    call check(calls >= 0, 'user op called with an unexpected datatype')
    ! Some rank must have combined two operands (not necessarily this one).
    call MPI_Allreduce(min(calls, 1), p, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (nprocs > 1) call check(p > 0, 'user op never called')
    call MPI_Op_free(op, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Op_free ierror')
    call check(op == MPI_OP_NULL, 'MPI_Op_free: handle not MPI_OP_NULL')

    call MPI_Op_create(compose, .false., comp)
    ! Rank p holds x -> (1 + mod(p, 3))*x + p; the composition in rank order
    ! is computed here the same way.
    f = [1 + mod(rank, 3), rank]
    want = [1, 0]
    do p = 0, nprocs - 1
      want = [(1 + mod(p, 3)) * want(1), (1 + mod(p, 3)) * want(2) + p]
    end do
    g = -1
    call MPI_Reduce(f, g, 1, MPI_2INTEGER, comp, 0, MPI_COMM_WORLD)
    if (rank == 0) call check(all(g == want), 'non-commutative user op: rank order')
    g = -1
    call MPI_Allreduce(f, g, 1, MPI_2INTEGER, comp, MPI_COMM_WORLD)
    call check(all(g == want), 'non-commutative user op in MPI_Allreduce: rank order')
    call check(calls >= 0, 'non-commutative user op: unexpected datatype')
    call MPI_Op_free(comp)
    call check(comp == MPI_OP_NULL, 'MPI_Op_free: handle not MPI_OP_NULL')
  end subroutine user_ops

  ! MPI_Comm_split and MPI_Comm_dup, compared with MPI_COMM_WORLD; freed
  ! communicators are MPI_COMM_NULL.
  subroutine communicators()
    type(MPI_Comm) :: dup, rev, half, none
    integer :: res, r, s, color
    call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, res, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_compare ierror')
    call check_int(res, MPI_IDENT, 'MPI_Comm_compare(world, world)')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_dup ierror')
    call check(dup /= MPI_COMM_WORLD .and. dup /= MPI_COMM_NULL, 'MPI_Comm_dup: handle')
    call MPI_Comm_compare(MPI_COMM_WORLD, dup, res)
    call check_int(res, MPI_CONGRUENT, 'MPI_Comm_compare(world, dup)')
    call MPI_Comm_compare(dup, dup, res)
    call check_int(res, MPI_IDENT, 'MPI_Comm_compare(dup, dup)')
    ! Everybody, in reverse order.
    call MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - rank, rev, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_split ierror')
    call MPI_Comm_rank(rev, r)
    call check_int(r, nprocs - 1 - rank, 'MPI_Comm_split (reversed): rank')
    call MPI_Comm_compare(MPI_COMM_WORLD, rev, res)
    if (nprocs == 1) then
      call check_int(res, MPI_CONGRUENT, 'MPI_Comm_compare(world, reversed) on one rank')
    else
      call check_int(res, MPI_SIMILAR, 'MPI_Comm_compare(world, reversed)')
    end if
    ! Even and odd ranks.
    color = mod(rank, 2)
    call MPI_Comm_split(MPI_COMM_WORLD, color, rank, half)
    call MPI_Comm_rank(half, r)
    call MPI_Comm_size(half, s)
    call check_int(r, rank / 2, 'MPI_Comm_split (parity): rank')
    call check_int(s, (nprocs + 1 - color) / 2, 'MPI_Comm_split (parity): size')
    call MPI_Comm_compare(half, dup, res)
    if (nprocs == 1) then
      call check_int(res, MPI_CONGRUENT, 'MPI_Comm_compare(parity, dup) on one rank')
    else
      call check_int(res, MPI_UNEQUAL, 'MPI_Comm_compare(parity, dup)')
    end if
    ! The last rank takes no part.
    color = merge(MPI_UNDEFINED, 1, rank == nprocs - 1 .and. nprocs > 1)
    call MPI_Comm_split(MPI_COMM_WORLD, color, 0, none)
    if (color == MPI_UNDEFINED) then
      call check(none == MPI_COMM_NULL, 'MPI_Comm_split(MPI_UNDEFINED): not MPI_COMM_NULL')
    else
      call MPI_Comm_size(none, s)
      call check_int(s, max(nprocs - 1, 1), 'MPI_Comm_split leaving one out: size')
      call MPI_Comm_free(none)
    end if
    call MPI_Comm_free(rev, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_free ierror')
    call MPI_Comm_free(half)
    call MPI_Comm_free(dup)
    call check(rev == MPI_COMM_NULL .and. half == MPI_COMM_NULL .and. &
               dup == MPI_COMM_NULL .and. none == MPI_COMM_NULL, &
               'MPI_Comm_free: handle not MPI_COMM_NULL')
  end subroutine communicators

  ! MPI 4.0: a persistent MPI_Allreduce_init started four times with new
  ! contents in the send buffer; inactive (not null) between starts, null
  ! after MPI_Request_free.
  subroutine persistent()
    integer, asynchronous :: v(2), r(2)
    type(MPI_Request) :: req
    integer :: round
    call MPI_Allreduce_init(v, r, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &
                            req, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Allreduce_init ierror')
    call check(req /= MPI_REQUEST_NULL, 'MPI_Allreduce_init: MPI_REQUEST_NULL returned')
    do round = 1, 4
      v = [rank * round, round]
      r = -1
      call MPI_Start(req, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Start (persistent collective) ierror')
      call MPI_Wait(req, MPI_STATUS_IGNORE)
      call check(req /= MPI_REQUEST_NULL, 'persistent collective: null after MPI_Wait')
      call check(all(r == [round * nprocs * (nprocs - 1) / 2, round * nprocs]), &
                 'persistent MPI_Allreduce: data')
    end do
    call MPI_Request_free(req)
    call check(req == MPI_REQUEST_NULL, 'persistent collective: not null after free')
  end subroutine persistent

end program f08_coll
