! COMMON blocks, SAVE variables, DATA-initialised blocks and module
! variables are private to each rank (rank images), in fixed form. The
! main program uses the mpi module and the subroutines include mpif.h:
! both declare the same sentinel COMMON block, and MPI_IN_PLACE works
! through either in every rank.
      MODULE RANKSTATE
      INTEGER :: MODVAR = -1
      END MODULE RANKSTATE

      BLOCK DATA INITIAL
      INTEGER COUNTER
      COMMON /INITED/ COUNTER
      DATA COUNTER /42/
      END

      PROGRAM F_COMMON
      USE MPI
      USE FTEST
      USE RANKSTATE
      IMPLICIT NONE
      INTEGER IERR, RANK, SIZE, ROUND, V(3)
      INTEGER MYRANK, VALUES(1000)
      COMMON /RANKDATA/ MYRANK, VALUES
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, SIZE, IERR)
      CALL FILL(RANK)
      MODVAR = RANK
      DO ROUND = 1, 3
         CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
         CALL VERIFY(RANK, ROUND)
         CALL CHECK_INT(MYRANK, RANK, 'COMMON variable seen by main')
         CALL CHECK_INT(MODVAR, RANK, 'module variable')
      END DO
      V = RANK
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, V, 3, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      CALL CHECK_INT(V(3), SIZE * (SIZE - 1) / 2,
     &               'MPI_IN_PLACE from the mpi module')
      CALL MPI_FINALIZE(IERR)
      END

      SUBROUTINE FILL(RANK)
      IMPLICIT NONE
      INTEGER RANK, I, MYRANK, VALUES(1000), COUNTER
      COMMON /RANKDATA/ MYRANK, VALUES
      COMMON /INITED/ COUNTER
      MYRANK = RANK
      DO I = 1, 1000
         VALUES(I) = RANK * 1000 + I
      END DO
      COUNTER = COUNTER + RANK
      END

      SUBROUTINE VERIFY(RANK, ROUND)
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER RANK, ROUND, I, IERR, MYRANK, VALUES(1000), COUNTER
      INTEGER CALLS, SUM(2)
      COMMON /RANKDATA/ MYRANK, VALUES
      COMMON /INITED/ COUNTER
      SAVE CALLS
      DATA CALLS /0/
      CALLS = CALLS + 1
      CALL CHECK_INT(CALLS, ROUND, 'SAVE variable counts this rank')
      CALL CHECK_INT(MYRANK, RANK, 'COMMON /RANKDATA/ MYRANK')
      DO I = 1, 1000
         IF (VALUES(I) .NE. RANK * 1000 + I) THEN
            CALL CHECK_INT(VALUES(I), RANK * 1000 + I,
     &                     'COMMON /RANKDATA/ VALUES')
         END IF
      END DO
      CALL CHECK_INT(COUNTER, 42 + RANK, 'DATA-initialised COMMON')
      SUM(1) = RANK
      SUM(2) = 1
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, SUM, 2, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      CALL CHECK_INT(IERR, MPI_SUCCESS, 'MPI_ALLREDUCE IERROR')
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, I, IERR)
      CALL CHECK_INT(SUM(2), I, 'MPI_IN_PLACE from mpif.h')
      CALL CHECK_INT(SUM(1), I * (I - 1) / 2,
     &               'MPI_IN_PLACE from mpif.h: sum')
      END
