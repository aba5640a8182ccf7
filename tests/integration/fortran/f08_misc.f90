! The rest of the Fortran 2008 bindings (use mpi_f08): derived datatypes
! (MPI_Type_vector; MPI_Type_create_struct from MPI_Get_address and
! MPI_Aint_diff, resized to the Fortran array stride; MPI_Type_size,
! MPI_Type_size_x, MPI_Type_get_extent with INTEGER(KIND=MPI_ADDRESS_KIND);
! messages with them; MPI_Type_free leaving MPI_DATATYPE_NULL); attribute
! caching (MPI_Comm_create_keyval with a copy function written against the
! f08 abstract interface MPI_Comm_copy_attr_function, with MPI_COMM_DUP_FN /
! MPI_COMM_NULL_DELETE_FN, and MPI_COMM_NULL_COPY_FN with a delete function
! against MPI_Comm_delete_attr_function; what MPI_Comm_dup copies, LOGICAL
! flags, MPI_TAG_UB); info objects (MPI_Info_set, MPI_Info_get_string with
! its buflen rules, MPI_Info_get_nkeys / get_nthkey / delete / dup / free);
! object names, MPI_Get_processor_name, MPI_Get_library_version,
! MPI_Get_version; errors (MPI_ERRORS_RETURN, MPI_Error_class giving
! MPI_ERR_RANK, MPI_Error_string; an error handler against
! MPI_Comm_errhandler_function, called by MPI_Comm_call_errhandler and by a
! failing call); MPI_Alloc_mem with a TYPE(C_PTR) + MPI_Free_mem; one-sided
! MPI_Win_allocate + MPI_Put / MPI_Get between fences, and
! MPI_Win_allocate_shared on an MPI_COMM_TYPE_SHARED communicator with
! MPI_Win_shared_query, MPI_Win_lock_all / sync / unlock_all; MPI_Wtime /
! MPI_Wtick; MPI_Sizeof; MPI_Status_f082f / MPI_Status_f2f08, and C handed
! a TYPE(MPI_Status) (MPI_Status_f082c / c2f08, MPI_F08_STATUS_IGNORE,
! f08_misc_c.c); chapter 11 (MPI_Comm_spawn and MPI_Comm_spawn_multiple
! refused with MPI_ERR_SPAWN, their CHARACTER lists passed; a port opened,
! published, looked up, unpublished and closed); handles rebuilt
! from their MPI_VAL component and used with the mpi module; MPI-IO
! (MPI_File_open with MPI_MODE_DELETE_ON_CLOSE, MPI_File_write_at /
! MPI_File_read_at with INTEGER(KIND=MPI_OFFSET_KIND) offsets, MPI_File_close).
module f08_misc_callbacks
  use mpi_f08
  implicit none
  integer :: copies = 0, deletes = 0, handled = 0, last_code = -1
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = -1
  type(MPI_Comm) :: last_comm
contains
  ! Copies the attribute plus extra_state.
  subroutine copy_add(oldcomm, comm_keyval, extra_state, attribute_val_in, &
                      attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    copies = copies + 1
    attribute_val_out = attribute_val_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine copy_add

  ! Records the value of the attribute being deleted.
  subroutine note_delete(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    deletes = deletes + 1
    last_deleted = attribute_val + extra_state
    ierror = MPI_SUCCESS
  end subroutine note_delete

  ! Records the error and returns.
  subroutine on_error(comm, error_code)
    type(MPI_Comm) :: comm
    integer :: error_code
    handled = handled + 1
    last_code = error_code
    last_comm = comm
  end subroutine on_error
end module f08_misc_callbacks

program f08_misc
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use ftest
  use f08_misc_callbacks
  implicit none
  integer, parameter :: maxn = 16
  integer :: ierr, rank, nprocs, right, left

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call check(nprocs <= maxn, 'more ranks than this test handles')
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  call datatypes()
  call attributes()
  call infos()
  call strings()
  call errors()
  call memory()
  call rma()
  call shared_window()
  call small_things()
  call handles()
  call file_io()
  call status_to_c()
  call dynamic()
  if (rank == 0) write (*, '(a)') 'f08_misc: OK'
  call MPI_Finalize()

contains

  ! A strided vector of INTEGERs sent to the right neighbour and received
  ! both contiguously and with the same vector type (gaps untouched).
  ! A struct describing a SEQUENCE derived type, with displacements from
  ! MPI_Get_address / MPI_Aint_diff, resized to the array stride, used to
  ! send two array elements.
  subroutine datatypes()
    type particle
      sequence
      integer :: id
      double precision :: x(3)
    end type particle
    type(MPI_Datatype) :: vec, tmp, ptype, types(2)
    integer :: a(12), b(12), c(6), i, s, blens(2)
    integer(kind=MPI_ADDRESS_KIND) :: lb, extent, base, addr(2), disps(2), stride
    integer(kind=MPI_COUNT_KIND) :: sx
    type(particle) :: ps(2), pr(2)
    type(MPI_Status) :: st
    integer :: count
    call MPI_Type_vector(3, 2, 4, MPI_INTEGER, vec, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Type_vector ierror')
    call MPI_Type_commit(vec, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Type_commit ierror')
    call MPI_Type_size(vec, s)
    call check_int(s, 6 * 4, 'MPI_Type_size(vector)')
    call MPI_Type_size_x(vec, sx)
    call check(sx == 24_MPI_COUNT_KIND, 'MPI_Type_size_x(vector)')
    call MPI_Type_get_extent(vec, lb, extent, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Type_get_extent ierror')
    call check(lb == 0 .and. extent == 10 * 4, 'MPI_Type_get_extent(vector)')
    a = [(rank * 100 + i, i = 1, 12)]
    c = -1
    call MPI_Sendrecv(a, 1, vec, right, 1, c, 6, MPI_INTEGER, left, 1, MPI_COMM_WORLD, st)
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 6, 'vector received as INTEGERs: MPI_Get_count')
    call check(all(c == left * 100 + [1, 2, 5, 6, 9, 10]), 'vector received as INTEGERs')
    b = -1
    call MPI_Sendrecv(a, 1, vec, right, 2, b, 1, vec, left, 2, MPI_COMM_WORLD, st)
    call MPI_Get_count(st, vec, count)
    call check_int(count, 1, 'vector received as a vector: MPI_Get_count')
    do i = 1, 12
      if (mod(i - 1, 4) < 2 .and. i < 11) then
        call check_int(b(i), left * 100 + i, 'vector received as a vector: data')
      else
        call check_int(b(i), -1, 'vector received as a vector: gap written')
      end if
    end do
    call MPI_Type_free(vec, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Type_free ierror')
    call check(vec == MPI_DATATYPE_NULL, 'MPI_Type_free: handle not MPI_DATATYPE_NULL')

    call MPI_Get_address(ps(1), base, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Get_address ierror')
    call MPI_Get_address(ps(1)%id, addr(1))
    call MPI_Get_address(ps(1)%x, addr(2))
    disps(1) = MPI_Aint_diff(addr(1), base)
    disps(2) = MPI_Aint_diff(addr(2), base)
    call MPI_Get_address(ps(2), addr(1))
    stride = MPI_Aint_diff(addr(1), base)
    call check(disps(1) == 0 .and. disps(2) >= 4 .and. stride >= disps(2) + 24, &
               'MPI_Aint_diff: displacements in the derived type')
    blens = [1, 3]
    types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
    call MPI_Type_create_struct(2, blens, disps, types, tmp, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Type_create_struct ierror')
    call MPI_Type_create_resized(tmp, 0_MPI_ADDRESS_KIND, stride, ptype)
    call MPI_Type_free(tmp)
    call MPI_Type_commit(ptype)
    call MPI_Type_size(ptype, s)
    call check_int(s, 4 + 3 * 8, 'MPI_Type_size(struct)')
    call MPI_Type_get_extent(ptype, lb, extent)
    call check(lb == 0 .and. extent == stride, 'MPI_Type_get_extent(resized struct)')
    do i = 1, 2
      ps(i)%id = rank * 10 + i
      ps(i)%x = [rank + 0.25d0 * i, -1d0 * i, 2d0 * rank]
      pr(i)%id = -1
      pr(i)%x = -1d0
    end do
    call MPI_Sendrecv(ps, 2, ptype, right, 3, pr, 2, ptype, left, 3, MPI_COMM_WORLD, st)
    call MPI_Get_count(st, ptype, count)
    call check_int(count, 2, 'struct: MPI_Get_count')
    do i = 1, 2
      call check_int(pr(i)%id, left * 10 + i, 'struct: INTEGER component')
      call check(all(pr(i)%x == [left + 0.25d0 * i, -1d0 * i, 2d0 * left]), &
                 'struct: DOUBLE PRECISION components')
    end do
    call MPI_Type_free(ptype)
    call check(ptype == MPI_DATATYPE_NULL, 'MPI_Type_free(struct): not MPI_DATATYPE_NULL')
  end subroutine datatypes

  ! Three keyvals on a private communicator: the user copy function adds
  ! extra_state, MPI_COMM_DUP_FN copies as is, MPI_COMM_NULL_COPY_FN does not
  ! copy (and its user delete function sees MPI_Comm_delete_attr and
  ! MPI_Comm_free). MPI_TAG_UB on MPI_COMM_WORLD.
  subroutine attributes()
    type(MPI_Comm) :: base, copy
    integer :: kadd, kdup, knone
    integer(kind=MPI_ADDRESS_KIND) :: val
    logical :: flag
    call MPI_Comm_dup(MPI_COMM_WORLD, base)
    call MPI_Comm_create_keyval(copy_add, MPI_COMM_NULL_DELETE_FN, kadd, &
                                int(7, MPI_ADDRESS_KIND), ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_create_keyval ierror')
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kdup, &
                                int(0, MPI_ADDRESS_KIND))
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, note_delete, knone, &
                                int(5, MPI_ADDRESS_KIND))
    call check(kadd /= kdup .and. kdup /= knone .and. kadd /= knone, 'keyvals not distinct')
    call MPI_Comm_get_attr(base, kadd, val, flag, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_get_attr ierror')
    call check(.not. flag, 'MPI_Comm_get_attr: flag set before any MPI_Comm_set_attr')
    call MPI_Comm_set_attr(base, kadd, int(100 + rank, MPI_ADDRESS_KIND), ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_set_attr ierror')
    call MPI_Comm_set_attr(base, kdup, int(200, MPI_ADDRESS_KIND))
    call MPI_Comm_set_attr(base, knone, int(300, MPI_ADDRESS_KIND))
    call MPI_Comm_dup(base, copy)
    call check_int(copies, 1, 'user copy function calls on MPI_Comm_dup')
    call MPI_Comm_get_attr(copy, kadd, val, flag)
    call check(flag .and. val == 107 + rank, 'user copy function: copied value')
    call MPI_Comm_get_attr(copy, kdup, val, flag)
    call check(flag .and. val == 200, 'MPI_COMM_DUP_FN: copied value')
    call MPI_Comm_get_attr(copy, knone, val, flag)
    call check(.not. flag, 'MPI_COMM_NULL_COPY_FN: attribute was copied')
    call MPI_Comm_get_attr(base, kadd, val, flag)
    call check(flag .and. val == 100 + rank, 'original attribute changed by MPI_Comm_dup')
    call MPI_Comm_delete_attr(base, knone, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_delete_attr ierror')
    call check(deletes == 1 .and. last_deleted == 305, 'delete function on MPI_Comm_delete_attr')
    call MPI_Comm_get_attr(base, knone, val, flag)
    call check(.not. flag, 'attribute still there after MPI_Comm_delete_attr')
    call MPI_Comm_set_attr(base, knone, int(400, MPI_ADDRESS_KIND))
    call MPI_Comm_free(copy)
    call check_int(deletes, 1, 'delete function called for an attribute never copied')
    call MPI_Comm_free(base)
    call check(deletes == 2 .and. last_deleted == 405, 'delete function on MPI_Comm_free')
    call MPI_Comm_free_keyval(kadd, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_free_keyval ierror')
    call MPI_Comm_free_keyval(kdup)
    call MPI_Comm_free_keyval(knone)
    call check(kadd == MPI_KEYVAL_INVALID .and. kdup == MPI_KEYVAL_INVALID .and. &
               knone == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval: not MPI_KEYVAL_INVALID')
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_get_attr(MPI_TAG_UB) ierror')
    call check(flag, 'MPI_TAG_UB: flag')
    call check(val >= 32767, 'MPI_TAG_UB below 32767')
  end subroutine attributes

  ! Info objects; MPI_Info_get_string returns the value's length in buflen
  ! (Fortran: no terminator), truncates to the buffer, and with buflen 0
  ! only reports the length.
  subroutine infos()
    type(MPI_Info) :: info, dup
    integer :: n, buflen, i
    character(len=MPI_MAX_INFO_KEY) :: key
    character(len=32) :: value
    character(len=4) :: short
    logical :: flag, seen(2)
    call MPI_Info_create(info, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Info_create ierror')
    call check(info /= MPI_INFO_NULL, 'MPI_Info_create: MPI_INFO_NULL returned')
    call MPI_Info_set(info, 'fibermpi_color', 'deep blue', ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Info_set ierror')
    call MPI_Info_set(info, 'fibermpi_count', '42')
    call MPI_Info_get_nkeys(info, n, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Info_get_nkeys ierror')
    call check_int(n, 2, 'MPI_Info_get_nkeys')
    seen = .false.
    do i = 0, n - 1
      call MPI_Info_get_nthkey(info, i, key)
      if (key == 'fibermpi_color') seen(1) = .true.
      if (key == 'fibermpi_count') seen(2) = .true.
    end do
    call check(all(seen), 'MPI_Info_get_nthkey: keys')
    buflen = len(value)
    value = '?'
    call MPI_Info_get_string(info, 'fibermpi_color', buflen, value, flag, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Info_get_string ierror')
    call check(flag, 'MPI_Info_get_string: flag')
    call check(value == 'deep blue', 'MPI_Info_get_string: value')
    call check_int(buflen, 9, 'MPI_Info_get_string: buflen')
    buflen = len(short)
    call MPI_Info_get_string(info, 'fibermpi_color', buflen, short, flag)
    call check(flag .and. short == 'deep', 'MPI_Info_get_string: truncated value')
    call check_int(buflen, 9, 'MPI_Info_get_string: buflen after truncation')
    buflen = 0
    value = 'untouched'
    call MPI_Info_get_string(info, 'fibermpi_color', buflen, value, flag)
    call check(flag .and. value == 'untouched', 'MPI_Info_get_string(buflen=0): value changed')
    call check_int(buflen, 9, 'MPI_Info_get_string(buflen=0): buflen')
    buflen = len(value)
    call MPI_Info_get_string(info, 'fibermpi_none', buflen, value, flag)
    call check(.not. flag .and. value == 'untouched', 'MPI_Info_get_string: missing key')
    call MPI_Info_dup(info, dup, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Info_dup ierror')
    call MPI_Info_delete(info, 'fibermpi_count', ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Info_delete ierror')
    call MPI_Info_get_nkeys(info, n)
    call check_int(n, 1, 'MPI_Info_get_nkeys after MPI_Info_delete')
    buflen = len(value)
    call MPI_Info_get_string(dup, 'fibermpi_count', buflen, value, flag)
    call check(flag .and. value == '42' .and. buflen == 2, 'MPI_Info_dup: copied value')
    call MPI_Info_free(info, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Info_free ierror')
    call MPI_Info_free(dup)
    call check(info == MPI_INFO_NULL .and. dup == MPI_INFO_NULL, &
               'MPI_Info_free: handle not MPI_INFO_NULL')
  end subroutine infos

  ! Object names, processor name, library version, MPI version.
  subroutine strings()
    type(MPI_Comm) :: comm
    type(MPI_Datatype) :: t
    character(len=MPI_MAX_OBJECT_NAME) :: name
    character(len=MPI_MAX_PROCESSOR_NAME) :: host
    character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: lib
    integer :: n, version, subversion
    call MPI_Comm_get_name(MPI_COMM_WORLD, name, n, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_get_name ierror')
    call check(n == 14 .and. name(1:n) == 'MPI_COMM_WORLD', 'name of MPI_COMM_WORLD')
    call MPI_Comm_get_name(MPI_COMM_SELF, name, n)
    call check(n == 13 .and. name(1:n) == 'MPI_COMM_SELF', 'name of MPI_COMM_SELF')
    call MPI_Comm_dup(MPI_COMM_WORLD, comm)
    call MPI_Comm_set_name(comm, 'f08 misc comm', ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_set_name ierror')
    call MPI_Comm_get_name(comm, name, n)
    call check(n == 13 .and. name(1:n) == 'f08 misc comm', 'MPI_Comm_set_name / get_name')
    call MPI_Comm_free(comm)
    call MPI_Type_contiguous(2, MPI_INTEGER, t)
    call MPI_Type_set_name(t, 'pair')
    call MPI_Type_get_name(t, name, n)
    call check(n == 4 .and. name(1:n) == 'pair', 'MPI_Type_set_name / get_name')
    call MPI_Type_free(t)
    call MPI_Get_processor_name(host, n, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Get_processor_name ierror')
    call check(n >= 1 .and. n <= MPI_MAX_PROCESSOR_NAME, 'MPI_Get_processor_name: resultlen')
    call MPI_Get_library_version(lib, n, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Get_library_version ierror')
    call check(n >= 1 .and. n <= MPI_MAX_LIBRARY_VERSION_STRING .and. len_trim(lib(1:n)) > 0, &
               'MPI_Get_library_version: resultlen')
    call MPI_Get_version(version, subversion)
    call check(version == MPI_VERSION .and. subversion == MPI_SUBVERSION, &
               'MPI_Get_version vs MPI_VERSION / MPI_SUBVERSION')
  end subroutine strings

  ! MPI_ERRORS_RETURN on MPI_COMM_WORLD: a send to rank = size fails with
  ! class MPI_ERR_RANK and a message. Then a user error handler on a
  ! duplicate, called by MPI_Comm_call_errhandler and by a failing call.
  subroutine errors()
    type(MPI_Comm) :: comm
    type(MPI_Errhandler) :: eh
    character(len=MPI_MAX_ERROR_STRING) :: msg
    integer :: buf(1), cls, n, res
    buf = 0
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_set_errhandler ierror')
    call MPI_Send(buf, 1, MPI_INTEGER, nprocs, 0, MPI_COMM_WORLD, ierr)
    call check(ierr /= MPI_SUCCESS, 'MPI_Send to rank = size succeeded')
    call MPI_Error_class(ierr, cls, res)
    call check_int(res, MPI_SUCCESS, 'MPI_Error_class ierror')
    call check_int(cls, MPI_ERR_RANK, 'MPI_Error_class of a send to rank = size')
    msg = ''
    call MPI_Error_string(ierr, msg, n, res)
    call check_int(res, MPI_SUCCESS, 'MPI_Error_string ierror')
    call check(n >= 1 .and. n <= MPI_MAX_ERROR_STRING .and. len_trim(msg(1:n)) > 0, &
               'MPI_Error_string: empty message')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)

    call MPI_Comm_create_errhandler(on_error, eh, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_create_errhandler ierror')
    call check(eh /= MPI_ERRHANDLER_NULL, 'MPI_Comm_create_errhandler: null handle')
    call MPI_Comm_dup(MPI_COMM_WORLD, comm)
    call MPI_Comm_set_errhandler(comm, eh)
    call MPI_Comm_call_errhandler(comm, MPI_ERR_OTHER, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_call_errhandler ierror')
    call check_int(handled, 1, 'user error handler calls from MPI_Comm_call_errhandler')
    call check_int(last_code, MPI_ERR_OTHER, 'user error handler: error_code')
    call MPI_Comm_compare(last_comm, comm, res)
    call check_int(res, MPI_IDENT, 'user error handler: comm')
    call MPI_Send(buf, 1, MPI_INTEGER, nprocs, 0, comm, ierr)
    call check(ierr /= MPI_SUCCESS, 'MPI_Send to rank = size succeeded (user handler)')
    call check_int(handled, 2, 'user error handler calls after a failing MPI_Send')
    call MPI_Error_class(last_code, cls)
    call check_int(cls, MPI_ERR_RANK, 'user error handler: class of the error_code')
    call MPI_Errhandler_free(eh, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Errhandler_free ierror')
    call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free: not MPI_ERRHANDLER_NULL')
    call MPI_Comm_free(comm)
  end subroutine errors

  ! MPI_Alloc_mem hands back a TYPE(C_PTR); the memory, seen through
  ! c_f_pointer, serves as a buffer; MPI_Free_mem takes the array back.
  subroutine memory()
    type(c_ptr) :: p
    double precision, pointer, asynchronous :: a(:)
    integer(kind=MPI_ADDRESS_KIND) :: bytes
    bytes = 10 * 8
    call MPI_Alloc_mem(bytes, MPI_INFO_NULL, p, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Alloc_mem ierror')
    call check(c_associated(p), 'MPI_Alloc_mem: null pointer')
    call c_f_pointer(p, a, [10])
    a = dble(rank)
    a(10) = 1d0
    call MPI_Allreduce(MPI_IN_PLACE, a, 10, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call check_real(a(1), dble(nprocs * (nprocs - 1) / 2), 0d0, 'MPI_Alloc_mem buffer: sum')
    call check_real(a(10), dble(nprocs), 0d0, 'MPI_Alloc_mem buffer: last element')
    call MPI_Free_mem(a, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Free_mem ierror')
    call detached()
  end subroutine memory

  ! MPI_Buffer_detach gives back the attached buffer's address as a TYPE(C_PTR)
  ! (and its size), for the int and the large-count form.
  subroutine detached()
    character(len=1), allocatable, target :: b(:)
    type(c_ptr) :: back
    integer :: n
    integer(kind=MPI_COUNT_KIND) :: big
    allocate (b(4096 + MPI_BSEND_OVERHEAD))
    call MPI_Buffer_attach(b, size(b))
    back = c_null_ptr
    call MPI_Buffer_detach(back, n, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Buffer_detach ierror')
    call check(c_associated(back, c_loc(b)), 'MPI_Buffer_detach: not the attached address')
    call check_int(n, size(b), 'MPI_Buffer_detach: size')
    call MPI_Buffer_attach(b, size(b))
    back = c_null_ptr
    call MPI_Buffer_detach(back, big)
    call check(c_associated(back, c_loc(b)), 'MPI_Buffer_detach (large count): address')
    call check(big == size(b), 'MPI_Buffer_detach (large count): size')
  end subroutine detached

  ! MPI_Win_allocate: every rank puts a value into its right neighbour's
  ! window at the slot of its own rank, then gets it back.
  subroutine rma()
    type(MPI_Win) :: win
    type(c_ptr) :: base
    double precision, pointer, asynchronous :: w(:)
    double precision, asynchronous :: src, got
    integer :: i
    call MPI_Win_allocate(int(8 * nprocs, MPI_ADDRESS_KIND), 8, MPI_INFO_NULL, &
                          MPI_COMM_WORLD, base, win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Win_allocate ierror')
    call check(win /= MPI_WIN_NULL, 'MPI_Win_allocate: MPI_WIN_NULL returned')
    call c_f_pointer(base, w, [nprocs])
    w = -1d0
    call MPI_Win_fence(0, win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Win_fence ierror')
    src = 1000d0 + rank
    call MPI_Put(src, 1, MPI_DOUBLE_PRECISION, right, int(rank, MPI_ADDRESS_KIND), 1, &
                 MPI_DOUBLE_PRECISION, win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Put ierror')
    call MPI_Win_fence(0, win)
    do i = 0, nprocs - 1
      if (i == left) then
        call check_real(w(i + 1), 1000d0 + left, 0d0, 'MPI_Put: value in the window')
      else
        call check_real(w(i + 1), -1d0, 0d0, 'MPI_Put: other slots untouched')
      end if
    end do
    got = -1d0
    call MPI_Get(got, 1, MPI_DOUBLE_PRECISION, right, int(rank, MPI_ADDRESS_KIND), 1, &
                 MPI_DOUBLE_PRECISION, win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Get ierror')
    call MPI_Win_fence(0, win)
    call check_real(got, 1000d0 + rank, 0d0, 'MPI_Get: value')
    call MPI_Win_free(win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Win_free ierror')
    call check(win == MPI_WIN_NULL, 'MPI_Win_free: handle not MPI_WIN_NULL')
  end subroutine rma

  ! MPI_Win_allocate_shared on the ranks sharing memory with this one: each
  ! writes its segment under MPI_Win_lock_all, synchronizes (sync, barrier,
  ! sync) and reads every segment through MPI_Win_shared_query; by default
  ! the segments are contiguous in rank order.
  subroutine shared_window()
    type(MPI_Comm) :: shm
    type(MPI_Win) :: win
    type(c_ptr) :: base, qbase
    integer, pointer, asynchronous :: mine(:), other(:)
    integer :: srank, ssize, r, qdisp
    integer(kind=MPI_ADDRESS_KIND) :: qsize, addr0, addr
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, shm, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Comm_split_type ierror')
    call MPI_Comm_rank(shm, srank)
    call MPI_Comm_size(shm, ssize)
    call check(ssize >= 1 .and. ssize <= nprocs, 'MPI_COMM_TYPE_SHARED: size')
    call MPI_Win_allocate_shared(int(2 * 4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, shm, &
                                 base, win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Win_allocate_shared ierror')
    call c_f_pointer(base, mine, [2])
    call MPI_Win_lock_all(0, win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Win_lock_all ierror')
    mine = [srank, 100 + srank]
    call MPI_Win_sync(win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Win_sync ierror')
    call MPI_Barrier(shm)
    call MPI_Win_sync(win)
    do r = 0, ssize - 1
      call MPI_Win_shared_query(win, r, qsize, qdisp, qbase, ierr)
      call check_int(ierr, MPI_SUCCESS, 'MPI_Win_shared_query ierror')
      call check(qsize == 8 .and. qdisp == 4, 'MPI_Win_shared_query: size and disp_unit')
      call c_f_pointer(qbase, other, [2])
      call check(all(other == [r, 100 + r]), 'shared window: segment contents')
      call MPI_Get_address(other, addr)
      if (r == 0) addr0 = addr
      call check(MPI_Aint_diff(addr, addr0) == 8 * r, 'shared window: segments not contiguous')
    end do
    call MPI_Win_unlock_all(win, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Win_unlock_all ierror')
    call MPI_Win_free(win)
    call MPI_Comm_free(shm)
  end subroutine shared_window

  ! MPI_Wtime / MPI_Wtick; MPI_Sizeof; a status converted to the INTEGER
  ! array form and back (source, tag and count survive).
  subroutine small_things()
    double precision :: t0, t1, tick, d(5)
    integer :: i, s, count, fst(MPI_STATUS_SIZE)
    integer, parameter :: i8 = selected_int_kind(15)
    integer(kind=i8) :: big(2, 2)
    complex :: z
    real :: r
    integer :: out(3), in(3)
    type(MPI_Status) :: st, st2
    t0 = MPI_Wtime()
    t1 = MPI_Wtime()
    tick = MPI_Wtick()
    call check(t1 >= t0, 'MPI_Wtime went backwards')
    call check(tick > 0d0 .and. tick < 1d0, 'MPI_Wtick')
    call MPI_Sizeof(i, s, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Sizeof ierror')
    call check_int(s, storage_size(i) / 8, 'MPI_Sizeof(INTEGER)')
    call MPI_Sizeof(d, s)
    call check_int(s, 8, 'MPI_Sizeof(DOUBLE PRECISION array)')
    call MPI_Sizeof(big, s)
    call check_int(s, 8, 'MPI_Sizeof(INTEGER(8) 2-D array)')
    call MPI_Sizeof(z, s)
    call check_int(s, 2 * (storage_size(r) / 8), 'MPI_Sizeof(COMPLEX)')

    out = [rank, 1, 2]
    call MPI_Sendrecv(out, 3, MPI_INTEGER, right, 40 + rank, in, 3, MPI_INTEGER, &
                      MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
    fst = -99
    call MPI_Status_f082f(st, fst, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Status_f082f ierror')
    call check_int(fst(MPI_SOURCE), left, 'MPI_Status_f082f: status(MPI_SOURCE)')
    call check_int(fst(MPI_TAG), 40 + left, 'MPI_Status_f082f: status(MPI_TAG)')
    call MPI_Status_f2f08(fst, st2, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Status_f2f08 ierror')
    call check_int(st2%MPI_SOURCE, left, 'MPI_Status_f2f08: status%MPI_SOURCE')
    call check_int(st2%MPI_TAG, 40 + left, 'MPI_Status_f2f08: status%MPI_TAG')
    call MPI_Get_count(st2, MPI_INTEGER, count)
    call check_int(count, 3, 'MPI_Status_f2f08: MPI_Get_count of the converted status')
    call check(in(1) == left, 'MPI_Sendrecv: data')
  end subroutine small_things

  ! Handles rebuilt from their MPI_VAL (the INTEGER handle of the mpi module)
  ! compare equal and work; the INTEGER values are those of the mpi module,
  ! and a communicator made here works with the mpi module's routines.
  subroutine handles()
    use mpi, only: f_world => MPI_COMM_WORLD, f_integer => MPI_INTEGER, &
                   f_sum => MPI_SUM, f_comm_size => MPI_Comm_size, f_comm_rank => MPI_Comm_rank
    type(MPI_Comm) :: c, dup
    type(MPI_Datatype) :: t
    type(MPI_Op) :: op
    integer :: s, r, x, y, fcomm
    call check_int(MPI_COMM_WORLD%MPI_VAL, f_world, 'MPI_COMM_WORLD%MPI_VAL')
    call check_int(MPI_INTEGER%MPI_VAL, f_integer, 'MPI_INTEGER%MPI_VAL')
    call check_int(MPI_SUM%MPI_VAL, f_sum, 'MPI_SUM%MPI_VAL')
    c%MPI_VAL = f_world
    call check(c == MPI_COMM_WORLD, 'communicator rebuilt from MPI_VAL /= MPI_COMM_WORLD')
    t = MPI_Datatype(f_integer)
    op = MPI_Op(f_sum)
    x = rank
    call MPI_Allreduce(x, y, 1, t, op, c)
    call check_int(y, nprocs * (nprocs - 1) / 2, 'MPI_Allreduce with rebuilt handles')
    call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, dup)
    fcomm = dup%MPI_VAL
    call f_comm_size(fcomm, s, ierr)
    call check(ierr == 0 .and. s == nprocs, 'mpi module MPI_COMM_SIZE on comm%MPI_VAL')
    call f_comm_rank(fcomm, r, ierr)
    call check_int(r, nprocs - 1 - rank, 'mpi module MPI_COMM_RANK on comm%MPI_VAL')
    call check(MPI_Comm(fcomm) == dup, 'MPI_Comm(comm%MPI_VAL) /= comm')
    call MPI_Comm_free(dup)
  end subroutine handles

  ! MPI-IO on a file named per job (the pid of rank 0): each rank writes 4
  ! INTEGERs at byte offset 16*rank, then (after sync, barrier, sync) reads
  ! its left neighbour's; reading past the end gives count 0; the file goes
  ! away on close.
  subroutine file_io()
    interface
      function c_getpid() bind(c, name='getpid')
        import :: c_int
        integer(c_int) :: c_getpid
      end function c_getpid
    end interface
    type(MPI_File) :: fh
    type(MPI_Status) :: st
    integer :: pid, out(4), in(4), count
    integer(kind=MPI_OFFSET_KIND) :: off, fsize
    character(len=64) :: fname
    logical :: exists
    pid = 0
    if (rank == 0) pid = int(c_getpid())
    call MPI_Bcast(pid, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    write (fname, '(a,i0,a)') '/tmp/f08_misc_', pid, '.dat'
    call MPI_File_open(MPI_COMM_WORLD, trim(fname), &
                       MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                       MPI_INFO_NULL, fh, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_File_open ierror')
    call check(fh /= MPI_FILE_NULL, 'MPI_File_open: MPI_FILE_NULL returned')
    out = [rank, 2 * rank, 3 * rank, -rank - 1]
    off = 16_MPI_OFFSET_KIND * rank
    call MPI_File_write_at(fh, off, out, 4, MPI_INTEGER, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_File_write_at ierror')
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 4, 'MPI_File_write_at: MPI_Get_count')
    call MPI_File_sync(fh, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_File_sync ierror')
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_File_sync(fh)
    call MPI_File_get_size(fh, fsize, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_File_get_size ierror')
    call check(fsize == 16_MPI_OFFSET_KIND * nprocs, 'MPI_File_get_size')
    in = -7
    off = 16_MPI_OFFSET_KIND * left
    call MPI_File_read_at(fh, off, in, 4, MPI_INTEGER, st, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_File_read_at ierror')
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 4, 'MPI_File_read_at: MPI_Get_count')
    call check(all(in == [left, 2 * left, 3 * left, -left - 1]), 'MPI_File_read_at: data')
    in = -7
    call MPI_File_read_at(fh, fsize, in, 4, MPI_INTEGER, st)
    call MPI_Get_count(st, MPI_INTEGER, count)
    call check_int(count, 0, 'MPI_File_read_at past the end: MPI_Get_count')
    call check(all(in == -7), 'MPI_File_read_at past the end: buffer changed')
    call MPI_File_close(fh, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_File_close ierror')
    call check(fh == MPI_FILE_NULL, 'MPI_File_close: handle not MPI_FILE_NULL')
    call MPI_Barrier(MPI_COMM_WORLD)
    if (rank == 0) then
      inquire (file=trim(fname), exist=exists)
      call check(.not. exists, 'MPI_MODE_DELETE_ON_CLOSE: file still there')
    end if
  end subroutine file_io

  ! A status handed to C (f08_misc_c.c): MPI_Status_f082c and back, and
  ! MPI_STATUS_IGNORE seen from C as MPI_F08_STATUS_IGNORE.
  subroutine status_to_c()
    interface
      integer(c_int) function c_f08_status(st) bind(C)
        import :: MPI_Status, c_int
        type(MPI_Status), intent(in) :: st
      end function c_f08_status
    end interface
    integer :: out(3), in(3)
    type(MPI_Status) :: st
    out = [1, 2, 3]
    call MPI_Sendrecv(out, 3, MPI_INTEGER, 0, 9, in, 3, MPI_INTEGER, 0, 9, MPI_COMM_SELF, st)
    call check_int(c_f08_status(st), 0, 'MPI_Status_f082c: source of a status from mpi_f08')
    call check_int(c_f08_status(MPI_STATUS_IGNORE), -4, &
                   'MPI_F08_STATUS_IGNORE is not mpi_f08''s MPI_STATUS_IGNORE')
  end subroutine status_to_c

  ! Chapter 11: no process can be added to the job (MPI_ERR_SPAWN, with
  ! argument lists as CHARACTER arrays, MPI_ARGV_NULL and MPI_ARGVS_NULL);
  ! ports and names within it.
  subroutine dynamic()
    character(len=MPI_MAX_PORT_NAME) :: port, found
    character(len=8) :: args(3), cmds(2), argvs(2, 2)
    character(len=32) :: svc
    integer :: codes(4), maxprocs(2), cls
    type(MPI_Info) :: infos(2)
    type(MPI_Comm) :: inter
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    args = [character(len=8) :: '-v', 'x', ' ']
    codes = 0
    call MPI_Comm_spawn('./worker', args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, codes, ierr)
    call MPI_Error_class(ierr, cls)
    call check_int(cls, MPI_ERR_SPAWN, 'MPI_Comm_spawn: error class')
    call check(inter == MPI_COMM_NULL, 'MPI_Comm_spawn: intercomm not MPI_COMM_NULL')
    if (rank == 0) call check(all(codes(1:2) == MPI_ERR_SPAWN), 'MPI_Comm_spawn: errcodes')
    call MPI_Comm_spawn('./worker', MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                        MPI_ERRCODES_IGNORE, ierr)
    call MPI_Error_class(ierr, cls)
    call check_int(cls, MPI_ERR_SPAWN, 'MPI_Comm_spawn (MPI_ARGV_NULL): error class')
    cmds = [character(len=8) :: './a', './b']
    argvs = ' '
    argvs(1, 1) = '-q'
    maxprocs = [1, 2]
    infos = MPI_INFO_NULL
    call MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, inter, codes, &
                                 ierr)
    call MPI_Error_class(ierr, cls)
    call check_int(cls, MPI_ERR_SPAWN, 'MPI_Comm_spawn_multiple: error class')
    if (rank == 0) call check(all(codes(1:3) == MPI_ERR_SPAWN), 'MPI_Comm_spawn_multiple: errcodes')
    call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, &
                                 inter, MPI_ERRCODES_IGNORE, ierr)
    call MPI_Error_class(ierr, cls)
    call check_int(cls, MPI_ERR_SPAWN, 'MPI_Comm_spawn_multiple (MPI_ARGVS_NULL): error class')

    call MPI_Open_port(MPI_INFO_NULL, port, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Open_port ierror')
    call check(len_trim(port) > 0, 'MPI_Open_port: empty port name')
    write (svc, '(a,i0)') 'f08-misc-', rank
    call MPI_Publish_name(svc, MPI_INFO_NULL, port)
    found = 'none'
    call MPI_Lookup_name(svc, MPI_INFO_NULL, found, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_Lookup_name ierror')
    call check(found == port, 'MPI_Lookup_name: not the published port')
    call MPI_Unpublish_name(svc, MPI_INFO_NULL, port)
    call MPI_Lookup_name(svc, MPI_INFO_NULL, found, ierr)
    call MPI_Error_class(ierr, cls)
    call check_int(cls, MPI_ERR_NAME, 'MPI_Lookup_name after unpublishing: error class')
    call MPI_Close_port(port)
    call MPI_Close_port(port, ierr)
    call MPI_Error_class(ierr, cls)
    call check_int(cls, MPI_ERR_PORT, 'MPI_Close_port twice: error class')
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
  end subroutine dynamic

end program f08_misc
