! One-sided communication from fixed-form Fortran (include 'mpif.h'):
! a fence epoch around a ring with Put and Get_accumulate, and an
! exclusive lock around a read-modify-write of one counter.
      PROGRAM F_RMA_MPIF
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, SIZE, WIN, RIGHT, LEFT, I
      INTEGER A(8), B(8), OLD(2), TWO(2)
      INTEGER(KIND=MPI_ADDRESS_KIND) BYTES, DISP
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, SIZE, IERR)
      RIGHT = MOD(RANK + 1, SIZE)
      LEFT = MOD(RANK + SIZE - 1, SIZE)
      DO I = 1, 8
        A(I) = 0
        B(I) = RANK * 10 + I
      END DO
      BYTES = 32
      CALL MPI_WIN_CREATE(A, BYTES, 4, MPI_INFO_NULL, MPI_COMM_WORLD,
     &                    WIN, IERR)
      CALL MPI_WIN_FENCE(0, WIN, IERR)
      DISP = 0
      CALL MPI_PUT(B, 4, MPI_INTEGER, RIGHT, DISP, 4, MPI_INTEGER,
     &             WIN, IERR)
      TWO(1) = 2
      TWO(2) = 3
      DISP = 4
      CALL MPI_GET_ACCUMULATE(TWO, 2, MPI_INTEGER, OLD, 2, MPI_INTEGER,
     &     RIGHT, DISP, 2, MPI_INTEGER, MPI_SUM, WIN, IERR)
      CALL MPI_WIN_FENCE(0, WIN, IERR)
      DO I = 1, 4
        CALL CHECK_INT(A(I), LEFT * 10 + I, 'PUT FROM THE LEFT')
      END DO
      CALL CHECK_INT(A(5), 2, 'GET_ACCUMULATE SUM')
      CALL CHECK_INT(A(6), 3, 'GET_ACCUMULATE SUM')
      CALL CHECK_INT(OLD(1), 0, 'GET_ACCUMULATE OLD VALUE')
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL MPI_WIN_LOCK(MPI_LOCK_EXCLUSIVE, 0, 0, WIN, IERR)
      DISP = 7
      CALL MPI_GET(I, 1, MPI_INTEGER, 0, DISP, 1, MPI_INTEGER, WIN,
     &             IERR)
      CALL MPI_WIN_FLUSH(0, WIN, IERR)
      I = I + 1
      CALL MPI_PUT(I, 1, MPI_INTEGER, 0, DISP, 1, MPI_INTEGER, WIN,
     &             IERR)
      CALL MPI_WIN_UNLOCK(0, WIN, IERR)
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) CALL CHECK_INT(A(8), SIZE, 'EXCLUSIVE COUNTER')
      CALL MPI_WIN_FREE(WIN, IERR)
      CALL MPI_FINALIZE(IERR)
      END
