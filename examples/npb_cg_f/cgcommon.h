! Problem data of the CG kernel, in COMMON blocks as the NAS Parallel
! Benchmarks keep theirs: every rank has its own copy (rank images), just as
! every process would under a process-based MPI.
      integer, parameter :: nmax = 256
      integer, parameter :: vmax = nmax * nmax
! The mesh: n x n interior points; this rank owns grid rows row0+1 ..
! row0+nloc; below and above are the neighbouring ranks (or MPI_PROC_NULL).
      integer :: n, nloc, row0, me, nprocs, below, above
      common /cgmesh/ n, nloc, row0, me, nprocs, below, above
! The matrix, CSR over this rank's rows. Column indices address the local
! vectors, whose ghost rows 1-n..0 and nloc*n+1..nloc*n+n hold the
! neighbours' boundary rows after a halo exchange.
      integer :: rowstr(vmax + 1), colidx(5 * vmax)
      double precision :: a(5 * vmax)
      common /cgmatrix/ a, rowstr, colidx
      double precision :: x(1 - nmax:vmax + nmax), z(1 - nmax:vmax + nmax)
      double precision :: p(1 - nmax:vmax + nmax), q(1 - nmax:vmax + nmax)
      double precision :: r(1 - nmax:vmax + nmax)
      common /cgvectors/ x, z, p, q, r
