! Kernels of the CG benchmark: the halo exchange, the sparse matrix-vector
! product (interior rows computed while the halo is in flight), the global
! dot product, and the conjugate-gradient solve itself. All data lives in
! the COMMON blocks of cgcommon.h; MPI through mpif.h, as in NPB.

! Starts the exchange of v's boundary rows with the ranks below and above;
! finish_halo completes it. My first row goes to the rank below, where it
! fills the upper ghost row (tag 2), and my last row to the rank above.
subroutine start_halo(v, reqs)
  implicit none
  include 'mpif.h'
  include 'cgcommon.h'
  double precision :: v(1 - nmax:vmax + nmax)
  integer :: reqs(4), ierr
  call MPI_Irecv(v(1 - n), n, MPI_DOUBLE_PRECISION, below, 1, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(v(nloc * n + 1), n, MPI_DOUBLE_PRECISION, above, 2, MPI_COMM_WORLD, reqs(2), &
                 ierr)
  call MPI_Isend(v(1), n, MPI_DOUBLE_PRECISION, below, 2, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Isend(v((nloc - 1) * n + 1), n, MPI_DOUBLE_PRECISION, above, 1, MPI_COMM_WORLD, &
                 reqs(4), ierr)
end subroutine start_halo

! w = A v over the CSR rows first..last.
subroutine csr_rows(v, w, first, last)
  implicit none
  include 'cgcommon.h'
  double precision :: v(1 - nmax:vmax + nmax), w(1 - nmax:vmax + nmax)
  integer :: first, last, i, k
  double precision :: s
  do i = first, last
    s = 0d0
    do k = rowstr(i), rowstr(i + 1) - 1
      s = s + a(k) * v(colidx(k))
    end do
    w(i) = s
  end do
end subroutine csr_rows

! w = A v: grid rows 2..nloc-1 need no ghost and run during the exchange.
subroutine matvec(v, w)
  implicit none
  include 'mpif.h'
  include 'cgcommon.h'
  double precision :: v(1 - nmax:vmax + nmax), w(1 - nmax:vmax + nmax)
  integer :: reqs(4), ierr
  call start_halo(v, reqs)
  call csr_rows(v, w, n + 1, (nloc - 1) * n)
  call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
  call csr_rows(v, w, 1, n)
  if (nloc > 1) call csr_rows(v, w, (nloc - 1) * n + 1, nloc * n)
end subroutine matvec

double precision function dot(u, v)
  implicit none
  include 'mpif.h'
  include 'cgcommon.h'
  double precision :: u(1 - nmax:vmax + nmax), v(1 - nmax:vmax + nmax)
  double precision :: local
  integer :: i, ierr
  local = 0d0
  do i = 1, nloc * n
    local = local + u(i) * v(i)
  end do
  call MPI_Allreduce(local, dot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
end function dot

! Solves A z = x by conjugate gradients until the residual is below
! tol * ||x|| (or itmax iterations); returns the iterations done and the true
! residual norm ||x - A z||, recomputed from scratch.
subroutine conj_grad(tol, itmax, iters, rnorm)
  implicit none
  include 'cgcommon.h'
  double precision, intent(in) :: tol
  integer, intent(in) :: itmax
  integer, intent(out) :: iters
  double precision, intent(out) :: rnorm
  double precision, external :: dot
  double precision :: rho, rho0, alpha, beta, xnorm
  integer :: i, m
  m = nloc * n
  do i = 1, m
    z(i) = 0d0
    r(i) = x(i)
    p(i) = x(i)
  end do
  rho = dot(r, r)
  xnorm = sqrt(rho)
  iters = 0
  do while (iters < itmax .and. sqrt(rho) > tol * xnorm)
    iters = iters + 1
    call matvec(p, q)
    alpha = rho / dot(p, q)
    do i = 1, m
      z(i) = z(i) + alpha * p(i)
      r(i) = r(i) - alpha * q(i)
    end do
    rho0 = rho
    rho = dot(r, r)
    beta = rho / rho0
    do i = 1, m
      p(i) = r(i) + beta * p(i)
    end do
  end do
  call matvec(z, r)
  do i = 1, m
    r(i) = x(i) - r(i)
  end do
  rnorm = sqrt(dot(r, r))
end subroutine conj_grad
