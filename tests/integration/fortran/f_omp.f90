! Hybrid MPI + OpenMP in Fortran (NPB-MZ codes are): every thread of a rank's
! team calls MPI (MPI_THREAD_MULTIPLE), a threadprivate COMMON block counts
! per thread and rank, and MPI calls inside an unnamed critical section see
! no other rank's threads (the section is per rank, as in a process). Thread
! t of rank r exchanges with thread t of rank r xor 1 (itself when that rank
! does not exist).
program f_omp
  use mpi
  use omp_lib
  use ftest
  implicit none
  integer, parameter :: rounds = 8
  integer :: ierr, provided, rank, nprocs, peer, t, x, y, seen, round, team, peer_team
  integer :: counter
  common /per_thread/ counter
  !$omp threadprivate(/per_thread/)

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call check_int(provided, MPI_THREAD_MULTIPLE, 'Init_thread provided')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  peer = ieor(rank, 1)
  if (peer >= nprocs) peer = rank
  team = omp_get_max_threads()
  call MPI_Sendrecv(team, 1, MPI_INTEGER, peer, 99, peer_team, 1, MPI_INTEGER, peer, 99, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call omp_set_dynamic(.false.)

  !$omp parallel
  counter = 0
  !$omp end parallel
  do round = 1, rounds
    !$omp parallel private(t, x, y, seen)
    t = omp_get_thread_num()
    call check_int(omp_get_level(), 1, 'nesting level in a region')
    if (t < peer_team) then
      x = rank * 1000 + round * 10 + t
      call MPI_Sendrecv(x, 1, MPI_INTEGER, peer, t, y, 1, MPI_INTEGER, peer, t, &
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check_int(y, peer * 1000 + round * 10 + t, 'Sendrecv from the same thread of the peer')
    end if
    counter = counter + rank + 1
    !$omp critical
    call MPI_Comm_rank(MPI_COMM_WORLD, seen, ierr)
    call check_int(seen, rank, 'Comm_rank of a thread in the critical section')
    x = rank
    call MPI_Sendrecv(x, 1, MPI_INTEGER, peer, 500, y, 1, MPI_INTEGER, peer, 500, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check_int(y, peer, 'Sendrecv in the critical section')
    !$omp end critical
    !$omp end parallel
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  !$omp parallel
  call check_int(counter, rounds * (rank + 1), 'threadprivate COMMON counter')
  !$omp end parallel
  call MPI_Finalize(ierr)
end program f_omp
