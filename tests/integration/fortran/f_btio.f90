! MPI-IO from Fortran in the style of NPB BT-IO (its "full" subtype): every
! rank owns a block of a 3-D grid of 5-component solution vectors, stored with
! ghost cells; each time step appends the whole solution to one file through a
! view (a subarray of the global array in Fortran order, displaced by the
! step's record) and MPI_FILE_WRITE_AT_ALL with a subarray memory type that
! skips the ghosts. At the end every step is read back with another
! decomposition (slabs of planes) and checked, as BT-IO's verification does.
! Also from Fortran: INTEGER(KIND=MPI_OFFSET_KIND) arguments and
! MPI_DISPLACEMENT_CURRENT, LOGICAL atomicity, the datarep string of
! MPI_FILE_GET_VIEW, a file error handler written in Fortran, and a data
! representation registered with a Fortran extent function and
! MPI_CONVERSION_FN_NULL.
module btio_handlers
  use mpi
  implicit none
  integer :: handler_calls = 0, handler_file = -1, handler_code = 0
contains
  subroutine file_handler(fh, code)
    integer :: fh, code
    handler_calls = handler_calls + 1
    handler_file = fh
    handler_code = code
  end subroutine file_handler

  subroutine extent_fn(datatype, extent, extra_state, ierror)
    integer :: datatype, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
    integer(kind=MPI_ADDRESS_KIND) :: lb
    call MPI_Type_get_extent(datatype, lb, extent, ierror)
    if (extra_state /= 0) ierror = MPI_ERR_OTHER
  end subroutine extent_fn
end module btio_handlers

program f_btio
  use mpi
  use ftest
  use btio_handlers
  implicit none
  integer, parameter :: gx = 12, gy = 10, gz = 9, nsteps = 3
  integer :: ierr, rank, nprocs, fh, step, i, j, k, m, count
  integer :: dims(3), coords(3), lo(3), n(3), gsizes(4), subsizes(4), starts(4), msizes(4)
  integer :: filetype, memtype, eh, amode, etype_out, ftype_out
  integer(kind=MPI_OFFSET_KIND) :: record, disp, fsize
  integer(kind=MPI_ADDRESS_KIND) :: calls_state
  double precision, allocatable :: u(:, :, :, :), slab(:, :, :, :)
  integer :: status(MPI_STATUS_SIZE)
  character(len=256) :: dir, path
  character(len=MPI_MAX_DATAREP_STRING) :: rep
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  dir = ''
  if (rank == 0) then
    write (dir, '(a,i0)') '/tmp/fibermpi-btio-', getpid()
    call execute_command_line('mkdir -p ' // trim(dir))
  end if
  call MPI_Bcast(dir, len(dir), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  path = trim(dir) // '/btio.out'

  ! The block decomposition and the solution with one ghost cell per side.
  dims = 0
  call MPI_Dims_create(nprocs, 3, dims, ierr)
  coords(1) = mod(rank, dims(1))
  coords(2) = mod(rank / dims(1), dims(2))
  coords(3) = rank / (dims(1) * dims(2))
  gsizes = [5, gx, gy, gz]
  do i = 1, 3
    lo(i) = coords(i) * gsizes(i + 1) / dims(i)
    n(i) = (coords(i) + 1) * gsizes(i + 1) / dims(i) - lo(i)
  end do
  allocate (u(5, 0:n(1) + 1, 0:n(2) + 1, 0:n(3) + 1))
  subsizes = [5, n(1), n(2), n(3)]
  starts = [0, lo(1), lo(2), lo(3)]
  call MPI_Type_create_subarray(4, gsizes, subsizes, starts, MPI_ORDER_FORTRAN, &
                                MPI_DOUBLE_PRECISION, filetype, ierr)
  call MPI_Type_commit(filetype, ierr)
  msizes = [5, n(1) + 2, n(2) + 2, n(3) + 2]
  call MPI_Type_create_subarray(4, msizes, subsizes, [0, 1, 1, 1], MPI_ORDER_FORTRAN, &
                                MPI_DOUBLE_PRECISION, memtype, ierr)
  call MPI_Type_commit(memtype, ierr)
  record = 5_MPI_OFFSET_KIND * gx * gy * gz * 8

  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, &
                     fh, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_FILE_OPEN')
  do step = 1, nsteps
    u = -1d0
    do k = 1, n(3)
      do j = 1, n(2)
        do i = 1, n(1)
          do m = 1, 5
            u(m, i, j, k) = value(step, m, lo(1) + i, lo(2) + j, lo(3) + k)
          end do
        end do
      end do
    end do
    disp = (step - 1) * record
    call MPI_File_set_view(fh, disp, MPI_DOUBLE_PRECISION, filetype, 'native', MPI_INFO_NULL, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_FILE_SET_VIEW')
    call MPI_File_write_at_all(fh, 0_MPI_OFFSET_KIND, u, 1, memtype, status, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_FILE_WRITE_AT_ALL')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
    call check_int(count, 5 * n(1) * n(2) * n(3), 'doubles written')
  end do
  call MPI_File_get_size(fh, fsize, ierr)
  call check(fsize == nsteps * record, 'file size after the steps')
  call MPI_File_close(fh, ierr)

  ! Read back: rank r reads whole planes of z, a slab, through a contiguous view.
  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_FILE_OPEN read-only')
  lo(3) = rank * gz / nprocs
  n(3) = (rank + 1) * gz / nprocs - lo(3)
  allocate (slab(5, gx, gy, max(n(3), 1)))
  do step = 1, nsteps
    disp = (step - 1) * record + 5_MPI_OFFSET_KIND * gx * gy * lo(3) * 8
    call MPI_File_set_view(fh, disp, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, 'native', &
                           MPI_INFO_NULL, ierr)
    call MPI_File_read_all(fh, slab, 5 * gx * gy * n(3), MPI_DOUBLE_PRECISION, status, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_FILE_READ_ALL')
    do k = 1, n(3)
      do j = 1, gy
        do i = 1, gx
          do m = 1, 5
            call check_real(slab(m, i, j, k), value(step, m, i, j, lo(3) + k), 0d0, &
                            'solution read back')
          end do
        end do
      end do
    end do
  end do

  ! The rest of the Fortran face: views, handlers, atomicity, datareps.
  call MPI_File_get_view(fh, disp, etype_out, ftype_out, rep, ierr)
  call check(trim(rep) == 'native' .and. etype_out == MPI_DOUBLE_PRECISION, 'MPI_FILE_GET_VIEW')
  call MPI_File_get_amode(fh, amode, ierr)
  call check_int(amode, MPI_MODE_RDONLY, 'MPI_FILE_GET_AMODE')
  call MPI_File_set_atomicity(fh, .true., ierr)
  call MPI_File_get_atomicity(fh, flag, ierr)
  call check(flag, 'MPI_FILE_GET_ATOMICITY')
  call MPI_File_create_errhandler(file_handler, eh, ierr)
  call MPI_File_set_errhandler(fh, eh, ierr)
  call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, u, 1, MPI_DOUBLE_PRECISION, status, ierr)
  call check(ierr /= MPI_SUCCESS .and. handler_calls == 1 .and. handler_file == fh, &
             'a Fortran file error handler')
  call MPI_Error_class(handler_code, i, ierr)
  call check_int(i, MPI_ERR_READ_ONLY, 'error class seen by the handler')
  call MPI_Errhandler_free(eh, ierr)
  call MPI_File_close(fh, ierr)

  calls_state = 0
  call MPI_Register_datarep('btio-native', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                            extent_fn, calls_state, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_REGISTER_DATAREP')
  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_DOUBLE_PRECISION, filetype, 'btio-native', &
                         MPI_INFO_NULL, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_FILE_SET_VIEW with a registered datarep')
  call MPI_File_read_at_all(fh, 0_MPI_OFFSET_KIND, u, 1, memtype, status, ierr)
  call check_int(ierr, MPI_SUCCESS, 'read through the registered datarep')
  call check_real(u(3, 1, 1, 1), value(1, 3, starts(2) + 1, starts(3) + 1, starts(4) + 1), &
                  0d0, 'value through the registered datarep')
  call MPI_File_close(fh, ierr)

  ! A sequential file: MPI_DISPLACEMENT_CURRENT is an INTEGER(KIND=MPI_OFFSET_KIND).
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/seq.out', &
                     MPI_MODE_CREATE + MPI_MODE_WRONLY + MPI_MODE_SEQUENTIAL + &
                     MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, fh, ierr)
  call MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INTEGER, MPI_INTEGER, 'native', &
                         MPI_INFO_NULL, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_DISPLACEMENT_CURRENT')
  call MPI_File_write_ordered(fh, [rank, rank], 2, MPI_INTEGER, status, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_get_size(fh, fsize, ierr)
  call check(fsize == 8_MPI_OFFSET_KIND * nprocs, 'ordered writes of a sequential file')
  call MPI_File_close(fh, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_File_delete(path, MPI_INFO_NULL, ierr)
    call check_int(ierr, MPI_SUCCESS, 'MPI_FILE_DELETE')
    call execute_command_line('rmdir ' // trim(dir))
  end if
  call MPI_Type_free(filetype, ierr)
  call MPI_Type_free(memtype, ierr)
  deallocate (u, slab)
  call MPI_Finalize(ierr)

contains

  double precision function value(step, m, i, j, k)
    integer, intent(in) :: step, m, i, j, k
    value = step * 1d6 + m * 1d5 + i * 1d3 + j * 1d1 + k * 1d-2
  end function value

end program f_btio
