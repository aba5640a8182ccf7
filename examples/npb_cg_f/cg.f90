! An NPB-style CG benchmark in Fortran: inverse power iteration for the
! smallest eigenvalue of a sparse symmetric matrix, each step solving a
! linear system by conjugate gradients (NPB CG's structure: zeta = 1/(x.z),
! x = z/||z||). The matrix is the 5-point Laplacian of an n x n grid with
! Dirichlet boundaries, stored in CSR and distributed by blocks of grid rows;
! its smallest eigenvalue is known exactly, 8 sin^2(pi / (2 (n + 1))), which
! is what the run is verified against (plus the true residual of the last
! solve).
!
!   mpcrun -n 4 npb_cg_f [S|W|A]      (n = 64, 128, 256)
program npb_cg_f
  implicit none
  include 'mpif.h'
  include 'cgcommon.h'
  integer, parameter :: niter = 15, cgitmax = 5000
  double precision, parameter :: cgtol = 1d-11, pi = 3.14159265358979323846d0
  double precision, external :: dot
  character(len=8) :: arg
  character :: cls
  integer :: ierr, it, iters, total_iters, i
  double precision :: zeta, exact, err, rnorm, znorm, t0, t, mops
  logical :: ok

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  cls = 'S'
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    cls = arg(1:1)
  end if
  select case (cls)
  case ('S')
    n = 64
  case ('W')
    n = 128
  case ('A')
    n = 256
  case default
    if (me == 0) write (*, '(3a)') 'npb_cg_f: unknown class ', cls, ' (S, W or A)'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end select
  if (nprocs > n) then
    if (me == 0) write (*, '(a)') 'npb_cg_f: more ranks than grid rows'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call makea()
  if (me == 0) then
    write (*, '(/a)') ' NAS Parallel Benchmarks style - CG benchmark (Fortran, fibermpi)'
    write (*, '(a,a1,a,i0,a,i0,a,i0,a)') ' Class ', cls, ': ', n, ' x ', n, ' grid, ', &
      n * n, ' unknowns'
    write (*, '(a,i0,a,i0)') ' Ranks: ', nprocs, '   Outer iterations: ', niter
    write (*, '(/a)') '   iteration   CG iterations   ||r||             zeta'
  end if

  ! x = (1, ..., 1) / ||.||: only the odd-odd modes, the lowest one dominant.
  do i = 1, nloc * n
    x(i) = 1d0 / n
  end do
  total_iters = 0
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  t0 = MPI_Wtime()
  do it = 1, niter
    call conj_grad(cgtol, cgitmax, iters, rnorm)
    total_iters = total_iters + iters
    zeta = 1d0 / dot(x, z)
    znorm = sqrt(dot(z, z))
    do i = 1, nloc * n
      x(i) = z(i) / znorm
    end do
    if (me == 0) write (*, '(i10,i14,4x,es14.6,f22.14)') it, iters, rnorm, zeta
  end do
  t = MPI_Wtime() - t0
  call MPI_Bcast(t, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)

  exact = 8d0 * sin(pi / (2d0 * (n + 1)))**2
  err = abs(zeta - exact) / exact
  ok = err <= 1d-9 .and. rnorm <= 1d-9
  ! Flops: per CG iteration one product (2 per nonzero: 5 n^2 - 4 n of them)
  ! and five vector operations of 2 flops per element.
  mops = total_iters * (2d0 * (5d0 * n * n - 4d0 * n) + 10d0 * n * n) / (t * 1d6)
  if (me == 0) then
    write (*, '(/a,f12.4)') ' Time in seconds =', t
    write (*, '(a,f12.2)') ' Mop/s total     =', mops
    write (*, '(a,i12)') ' CG iterations   =', total_iters
    write (*, '(a,f20.14)') ' zeta            =', zeta
    write (*, '(a,f20.14)') ' exact           =', exact
    write (*, '(a,es12.4)') ' relative error  =', err
    if (ok) then
      write (*, '(a)') ' VERIFICATION SUCCESSFUL'
    else
      write (*, '(a)') ' VERIFICATION FAILED'
    end if
  end if
  call MPI_Finalize(ierr)
  if (.not. ok) stop 1
end program npb_cg_f

! Distributes the grid rows over the ranks and builds this rank's CSR rows:
! 4 on the diagonal, -1 for each neighbour inside the domain. Local vector
! index of grid point (i, j): (j - row0 - 1) * n + i, ghosts included.
subroutine makea()
  implicit none
  include 'mpif.h'
  include 'cgcommon.h'
  integer :: i, j, row, nz
  row0 = int(int(n, 8) * me / nprocs)
  nloc = int(int(n, 8) * (me + 1) / nprocs) - row0
  below = MPI_PROC_NULL
  above = MPI_PROC_NULL
  if (me > 0) below = me - 1
  if (me < nprocs - 1) above = me + 1
  nz = 0
  do j = row0 + 1, row0 + nloc
    do i = 1, n
      row = (j - row0 - 1) * n + i
      rowstr(row) = nz + 1
      if (j > 1) call add_entry(row - n, -1d0)
      if (i > 1) call add_entry(row - 1, -1d0)
      call add_entry(row, 4d0)
      if (i < n) call add_entry(row + 1, -1d0)
      if (j < n) call add_entry(row + n, -1d0)
    end do
  end do
  rowstr(nloc * n + 1) = nz + 1
contains
  subroutine add_entry(col, v)
    integer, intent(in) :: col
    double precision, intent(in) :: v
    nz = nz + 1
    colidx(nz) = col
    a(nz) = v
  end subroutine add_entry
end subroutine makea
