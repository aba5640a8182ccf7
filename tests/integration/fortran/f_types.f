! Derived datatypes from fixed-form Fortran (include 'mpif.h'): a
! vector over a row of a column-major array, a struct built with
! MPI_GET_ADDRESS over an array of derived-type elements, a struct of
! absolute addresses sent from MPI_BOTTOM, a Fortran-order subarray,
! indexed types, pack and unpack, type names and type attributes.
! Messages go around a ring.
      PROGRAM F_TYPES
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, SIZE, RIGHT, LEFT
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, SIZE, IERR)
      RIGHT = MOD(RANK + 1, SIZE)
      LEFT = MOD(RANK + SIZE - 1, SIZE)
      CALL ROWS(RANK, RIGHT, LEFT)
      CALL STRUCTS(RANK, RIGHT, LEFT)
      CALL ABSOLUTE(RANK, RIGHT, LEFT)
      CALL SUBARRAYS(RANK)
      CALL PACKING(RANK)
      CALL TYPE_ATTRS()
      CALL MPI_FINALIZE(IERR)
      END

! Row 2 of A(5,6) is 6 elements 5 apart: one vector.
      SUBROUTINE ROWS(RANK, RIGHT, LEFT)
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER RANK, RIGHT, LEFT, IERR, ROWTYPE, I, J, SZ
      INTEGER A(5, 6), B(6), ST(MPI_STATUS_SIZE)
      INTEGER(KIND=MPI_ADDRESS_KIND) LB, EXTENT
      DO J = 1, 6
         DO I = 1, 5
            A(I, J) = RANK * 100 + I * 10 + J
         END DO
      END DO
      CALL MPI_TYPE_VECTOR(6, 1, 5, MPI_INTEGER, ROWTYPE, IERR)
      CALL MPI_TYPE_COMMIT(ROWTYPE, IERR)
      CALL MPI_TYPE_SIZE(ROWTYPE, SZ, IERR)
      CALL CHECK_INT(SZ, 24, 'MPI_TYPE_SIZE of the row vector')
      CALL MPI_TYPE_GET_EXTENT(ROWTYPE, LB, EXTENT, IERR)
      CALL CHECK_INT(INT(EXTENT), (5 * 5 + 1) * 4,
     &               'MPI_TYPE_GET_EXTENT of the row vector')
      B = -1
      CALL MPI_SENDRECV(A(2, 1), 1, ROWTYPE, RIGHT, 1,
     &                  B, 6, MPI_INTEGER, LEFT, 1,
     &                  MPI_COMM_WORLD, ST, IERR)
      DO J = 1, 6
         CALL CHECK_INT(B(J), LEFT * 100 + 20 + J, 'row received')
      END DO
      CALL MPI_TYPE_FREE(ROWTYPE, IERR)
      CALL CHECK_INT(ROWTYPE, MPI_DATATYPE_NULL, 'MPI_TYPE_FREE')
      END

! Elements (INTEGER, 3 DOUBLE PRECISION): a struct from MPI_GET_ADDRESS,
! resized to the distance between two elements of the array.
      SUBROUTINE STRUCTS(RANK, RIGHT, LEFT)
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      TYPE PARTICLE
         SEQUENCE
         INTEGER ID
         INTEGER PAD
         DOUBLE PRECISION X(3)
      END TYPE PARTICLE
      INTEGER RANK, RIGHT, LEFT, IERR, I, STRUCT, ELEM
      INTEGER BLENS(2), TYPES(2)
      INTEGER(KIND=MPI_ADDRESS_KIND) BASE, ADDR, DISPS(2), EXT
      TYPE(PARTICLE) P(3), Q(3)
      DO I = 1, 3
         P(I)%ID = RANK * 10 + I
         P(I)%X = DBLE(RANK) + 0.25D0 * I
      END DO
      CALL MPI_GET_ADDRESS(P(1), BASE, IERR)
      CALL MPI_GET_ADDRESS(P(1)%ID, ADDR, IERR)
      DISPS(1) = ADDR - BASE
      CALL MPI_GET_ADDRESS(P(1)%X, ADDR, IERR)
      DISPS(2) = MPI_AINT_DIFF(ADDR, BASE)
      BLENS(1) = 1
      BLENS(2) = 3
      TYPES(1) = MPI_INTEGER
      TYPES(2) = MPI_DOUBLE_PRECISION
      CALL MPI_TYPE_CREATE_STRUCT(2, BLENS, DISPS, TYPES, STRUCT,
     &                            IERR)
      CALL MPI_GET_ADDRESS(P(2), ADDR, IERR)
      EXT = ADDR - BASE
      CALL CHECK_INT(INT(EXT), 32, 'distance between two elements')
      CALL MPI_TYPE_CREATE_RESIZED(STRUCT, 0_MPI_ADDRESS_KIND, EXT,
     &                             ELEM, IERR)
      CALL MPI_TYPE_COMMIT(ELEM, IERR)
      DO I = 1, 3
         Q(I)%ID = -1
         Q(I)%PAD = -7
         Q(I)%X = -1
      END DO
      CALL MPI_SENDRECV(P, 3, ELEM, RIGHT, 2, Q, 3, ELEM, LEFT, 2,
     &                  MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
      DO I = 1, 3
         CALL CHECK_INT(Q(I)%ID, LEFT * 10 + I, 'struct: INTEGER')
         CALL CHECK_INT(Q(I)%PAD, -7, 'struct: the gap is untouched')
         CALL CHECK_REAL(Q(I)%X(3), DBLE(LEFT) + 0.25D0 * I, 0D0,
     &                   'struct: DOUBLE PRECISION')
      END DO
      CALL MPI_TYPE_FREE(ELEM, IERR)
      CALL MPI_TYPE_FREE(STRUCT, IERR)
      END

! Two unrelated variables sent as one message: absolute addresses from
! MPI_GET_ADDRESS and the buffer MPI_BOTTOM.
      SUBROUTINE ABSOLUTE(RANK, RIGHT, LEFT)
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER RANK, RIGHT, LEFT, IERR, STYPE, RTYPE, N, M
      INTEGER BLENS(2), TYPES(2), ST(MPI_STATUS_SIZE), COUNT
      DOUBLE PRECISION D, E
      INTEGER(KIND=MPI_ADDRESS_KIND) DISPS(2)
      N = RANK + 1000
      D = RANK * 0.5D0
      BLENS = 1
      TYPES(1) = MPI_INTEGER
      TYPES(2) = MPI_DOUBLE_PRECISION
      CALL MPI_GET_ADDRESS(N, DISPS(1), IERR)
      CALL MPI_GET_ADDRESS(D, DISPS(2), IERR)
      CALL MPI_TYPE_CREATE_STRUCT(2, BLENS, DISPS, TYPES, STYPE, IERR)
      CALL MPI_TYPE_COMMIT(STYPE, IERR)
      CALL MPI_GET_ADDRESS(M, DISPS(1), IERR)
      CALL MPI_GET_ADDRESS(E, DISPS(2), IERR)
      CALL MPI_TYPE_CREATE_STRUCT(2, BLENS, DISPS, TYPES, RTYPE, IERR)
      CALL MPI_TYPE_COMMIT(RTYPE, IERR)
      M = -1
      E = -1
      CALL MPI_SENDRECV(MPI_BOTTOM, 1, STYPE, RIGHT, 3,
     &                  MPI_BOTTOM, 1, RTYPE, LEFT, 3,
     &                  MPI_COMM_WORLD, ST, IERR)
      CALL CHECK_INT(M, LEFT + 1000, 'MPI_BOTTOM: INTEGER')
      CALL CHECK_REAL(E, LEFT * 0.5D0, 0D0, 'MPI_BOTTOM: DOUBLE')
      CALL MPI_GET_COUNT(ST, RTYPE, COUNT, IERR)
      CALL CHECK_INT(COUNT, 1, 'MPI_GET_COUNT of the struct')
      CALL MPI_TYPE_FREE(STYPE, IERR)
      CALL MPI_TYPE_FREE(RTYPE, IERR)
      END

! The 2x3 block at (3,2) of a 6x5 array, in Fortran order, and an
! indexed type picking the diagonal of a 4x4 array.
      SUBROUTINE SUBARRAYS(RANK)
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER RANK, IERR, SUB, DIAG, I, J
      INTEGER SIZES(2), SUBS(2), STARTS(2), BL(4), DISP(4)
      INTEGER A(6, 5), B(2, 3), C(4, 4), DG(4)
      DO J = 1, 5
         DO I = 1, 6
            A(I, J) = RANK + I * 10 + J
         END DO
      END DO
      SIZES = (/ 6, 5 /)
      SUBS = (/ 2, 3 /)
      STARTS = (/ 2, 1 /)
      CALL MPI_TYPE_CREATE_SUBARRAY(2, SIZES, SUBS, STARTS,
     &     MPI_ORDER_FORTRAN, MPI_INTEGER, SUB, IERR)
      CALL MPI_TYPE_COMMIT(SUB, IERR)
      CALL MPI_SENDRECV(A, 1, SUB, 0, 4, B, 6, MPI_INTEGER, 0, 4,
     &                  MPI_COMM_SELF, MPI_STATUS_IGNORE, IERR)
      DO J = 1, 3
         DO I = 1, 2
            CALL CHECK_INT(B(I, J), RANK + (I + 2) * 10 + J + 1,
     &                     'MPI_TYPE_CREATE_SUBARRAY, Fortran order')
         END DO
      END DO
      DO I = 1, 4
         BL(I) = 1
         DISP(I) = (I - 1) * 5
         DO J = 1, 4
            C(I, J) = I * 10 + J
         END DO
      END DO
      CALL MPI_TYPE_INDEXED(4, BL, DISP, MPI_INTEGER, DIAG, IERR)
      CALL MPI_TYPE_COMMIT(DIAG, IERR)
      CALL MPI_SENDRECV(C, 1, DIAG, 0, 5, DG, 4, MPI_INTEGER, 0, 5,
     &                  MPI_COMM_SELF, MPI_STATUS_IGNORE, IERR)
      DO I = 1, 4
         CALL CHECK_INT(DG(I), I * 11, 'MPI_TYPE_INDEXED diagonal')
      END DO
      CALL MPI_TYPE_FREE(SUB, IERR)
      CALL MPI_TYPE_FREE(DIAG, IERR)
      END

      SUBROUTINE PACKING(RANK)
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER RANK, IERR, POS, N, M, PSIZE, BUF(16)
      DOUBLE PRECISION D(2), E(2)
      N = RANK + 3
      D(1) = 1.5D0
      D(2) = -2.5D0
      CALL MPI_PACK_SIZE(2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD,
     &                   PSIZE, IERR)
      CALL CHECK(PSIZE .GE. 16, 'MPI_PACK_SIZE')
      POS = 0
      CALL MPI_PACK(N, 1, MPI_INTEGER, BUF, 64, POS, MPI_COMM_WORLD,
     &              IERR)
      CALL MPI_PACK(D, 2, MPI_DOUBLE_PRECISION, BUF, 64, POS,
     &              MPI_COMM_WORLD, IERR)
      CALL CHECK_INT(POS, 20, 'MPI_PACK position')
      POS = 0
      CALL MPI_UNPACK(BUF, 64, POS, M, 1, MPI_INTEGER,
     &                MPI_COMM_WORLD, IERR)
      CALL MPI_UNPACK(BUF, 64, POS, E, 2, MPI_DOUBLE_PRECISION,
     &                MPI_COMM_WORLD, IERR)
      CALL CHECK_INT(M, RANK + 3, 'MPI_UNPACK INTEGER')
      CALL CHECK_REAL(E(2), -2.5D0, 0D0, 'MPI_UNPACK DOUBLE')
      END

! A type name (CHARACTER in and out) and an attribute copied by
! MPI_TYPE_DUP_FN when the type is duplicated.
      SUBROUTINE TYPE_ATTRS()
      USE FTEST
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, T, T2, KEY, RLEN
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA, VAL
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_OBJECT_NAME) NAME
      CALL MPI_TYPE_CONTIGUOUS(4, MPI_REAL, T, IERR)
      CALL MPI_TYPE_SET_NAME(T, 'four reals', IERR)
      CALL MPI_TYPE_GET_NAME(T, NAME, RLEN, IERR)
      CALL CHECK(NAME .EQ. 'four reals', 'MPI_TYPE_GET_NAME')
      CALL CHECK_INT(RLEN, 10, 'MPI_TYPE_GET_NAME resultlen')
      CALL MPI_TYPE_GET_NAME(MPI_DOUBLE_PRECISION, NAME, RLEN, IERR)
      CALL CHECK(NAME .EQ. 'MPI_DOUBLE_PRECISION',
     &           'MPI_TYPE_GET_NAME of a predefined type')
      EXTRA = 0
      CALL MPI_TYPE_CREATE_KEYVAL(MPI_TYPE_DUP_FN,
     &     MPI_TYPE_NULL_DELETE_FN, KEY, EXTRA, IERR)
      VAL = 77
      CALL MPI_TYPE_SET_ATTR(T, KEY, VAL, IERR)
      CALL MPI_TYPE_DUP(T, T2, IERR)
      VAL = 0
      CALL MPI_TYPE_GET_ATTR(T2, KEY, VAL, FLAG, IERR)
      CALL CHECK(FLAG, 'type attribute copied by MPI_TYPE_DUP_FN')
      CALL CHECK_INT(INT(VAL), 77, 'type attribute value')
      CALL MPI_TYPE_FREE(T2, IERR)
      CALL MPI_TYPE_FREE(T, IERR)
      CALL MPI_TYPE_FREE_KEYVAL(KEY, IERR)
      END
