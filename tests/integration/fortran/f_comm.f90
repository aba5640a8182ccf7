! Communicators and everything hanging off them, from Fortran (use mpi):
! splits and duplicates, groups (ranges are INTEGER RANGES(3, N)), Cartesian
! topologies with LOGICAL periods, neighbor collectives, a distributed graph
! with MPI_UNWEIGHTED, attributes with copy/delete callbacks written in
! Fortran and the predefined ones, and every CHARACTER argument: names, info
! keys and values, processor name, library version.
program f_comm
  use mpi
  use ftest
  implicit none
  integer :: ierr, rank, size
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call splits(rank, size)
  call groups(rank, size)
  call cartesian(rank, size)
  call dist_graph(rank, size)
  call attributes(rank)
  call strings()
  call MPI_Finalize(ierr)
end program f_comm

subroutine splits(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, half, hrank, hsize, dup, result, sum
  logical :: inter
  ! Two halves by parity, ranks reversed inside each (key = -rank).
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_rank(half, hrank, ierr)
  call MPI_Comm_size(half, hsize, ierr)
  call check_int(hsize, (size + 1 - mod(rank, 2)) / 2, 'MPI_Comm_split: size')
  call check_int(hrank, hsize - 1 - rank / 2, 'MPI_Comm_split: rank ordered by key')
  call MPI_Allreduce(rank, sum, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  call check_int(sum, parity_sum(mod(rank, 2)), 'MPI_Allreduce on a split communicator')
  call MPI_Comm_dup(half, dup, ierr)
  call MPI_Comm_compare(half, dup, result, ierr)
  call check_int(result, MPI_CONGRUENT, 'MPI_Comm_compare of a duplicate')
  call MPI_Comm_test_inter(dup, inter, ierr)
  call check(.not. inter, 'MPI_Comm_test_inter of an intracommunicator')
  call MPI_Comm_free(dup, ierr)
  call check_int(dup, MPI_COMM_NULL, 'MPI_Comm_free')
  call MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, dup, ierr)
  call check_int(dup, MPI_COMM_NULL, 'MPI_Comm_split with MPI_UNDEFINED')
  call MPI_Comm_free(half, ierr)
contains
  integer function parity_sum(p)
    integer, intent(in) :: p
    integer :: r
    parity_sum = 0
    do r = p, size - 1, 2
      parity_sum = parity_sum + r
    end do
  end function parity_sum
end subroutine splits

subroutine groups(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, world, evens, ranges(3, 1), gsize, grank, comm, ranks(1), out(1)
  call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
  ranges(:, 1) = [0, size - 1, 2]
  call MPI_Group_range_incl(world, 1, ranges, evens, ierr)
  call MPI_Group_size(evens, gsize, ierr)
  call check_int(gsize, (size + 1) / 2, 'MPI_Group_range_incl: size')
  call MPI_Group_rank(evens, grank, ierr)
  if (mod(rank, 2) == 0) then
    call check_int(grank, rank / 2, 'MPI_Group_rank in the range')
  else
    call check_int(grank, MPI_UNDEFINED, 'MPI_Group_rank outside the range')
  end if
  ranks(1) = (size - 1) / 2
  call MPI_Group_translate_ranks(evens, 1, ranks, world, out, ierr)
  call check_int(out(1), 2 * ((size - 1) / 2), 'MPI_Group_translate_ranks')
  call MPI_Comm_create(MPI_COMM_WORLD, evens, comm, ierr)
  if (mod(rank, 2) == 0) then
    call MPI_Comm_size(comm, gsize, ierr)
    call check_int(gsize, (size + 1) / 2, 'MPI_Comm_create: size')
    call MPI_Comm_free(comm, ierr)
  else
    call check_int(comm, MPI_COMM_NULL, 'MPI_Comm_create outside the group')
  end if
  call MPI_Group_free(evens, ierr)
  call MPI_Group_free(world, ierr)
  call check_int(world, MPI_GROUP_NULL, 'MPI_Group_free')
end subroutine groups

! A periodic ring (one dimension) and a 2-D grid from MPI_DIMS_CREATE.
subroutine cartesian(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, ring, grid, row, dims(2), coords(2), src, dest, nb(2), ndims, t, grank
  logical :: periods(2), remain(2)
  dims(1) = size
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., ring, ierr)
  call MPI_Topo_test(ring, t, ierr)
  call check_int(t, MPI_CART, 'MPI_Topo_test')
  call MPI_Cart_shift(ring, 0, 1, src, dest, ierr)
  call check_int(dest, mod(rank + 1, size), 'MPI_Cart_shift on a periodic ring: dest')
  call check_int(src, mod(rank + size - 1, size), 'MPI_Cart_shift on a periodic ring: source')
  call MPI_Neighbor_allgather(rank, 1, MPI_INTEGER, nb, 1, MPI_INTEGER, ring, ierr)
  call check_int(nb(1), src, 'MPI_Neighbor_allgather: from the lower neighbour')
  call check_int(nb(2), dest, 'MPI_Neighbor_allgather: from the upper neighbour')
  call MPI_Comm_free(ring, ierr)
  dims = 0
  call MPI_Dims_create(size, 2, dims, ierr)
  call check_int(dims(1) * dims(2), size, 'MPI_Dims_create')
  periods = [.false., .true.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .true., grid, ierr)
  call MPI_Comm_rank(grid, grank, ierr)
  periods = [.true., .false.]
  call MPI_Cart_get(grid, 2, dims, periods, coords, ierr)
  call check(.not. periods(1) .and. periods(2), 'MPI_Cart_get: LOGICAL periods')
  call check_int(coords(1) * dims(2) + coords(2), grank, 'MPI_Cart_get: row-major coordinates')
  call MPI_Cart_shift(grid, 0, 1, src, dest, ierr)
  if (coords(1) == dims(1) - 1) call check_int(dest, MPI_PROC_NULL, 'MPI_Cart_shift off the grid')
  remain = [.false., .true.]
  call MPI_Cart_sub(grid, remain, row, ierr)
  call MPI_Cartdim_get(row, ndims, ierr)
  call check_int(ndims, 1, 'MPI_Cart_sub: dimensions left')
  call MPI_Comm_size(row, t, ierr)
  call check_int(t, dims(2), 'MPI_Cart_sub: size of a row')
  call MPI_Comm_free(row, ierr)
  call MPI_Comm_free(grid, ierr)
end subroutine cartesian

! Every rank listens to its left neighbour, unweighted.
subroutine dist_graph(rank, size)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank, size
  integer :: ierr, g, src(1), dst(1), indeg, outdeg, got(1), sw(1), dw(1)
  logical :: weighted
  src(1) = mod(rank + size - 1, size)
  dst(1) = mod(rank + 1, size)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., g, ierr)
  call check_int(ierr, MPI_SUCCESS, 'MPI_Dist_graph_create_adjacent')
  call MPI_Dist_graph_neighbors_count(g, indeg, outdeg, weighted, ierr)
  call check(.not. weighted, 'MPI_Dist_graph_neighbors_count: MPI_UNWEIGHTED graph is unweighted')
  call check_int(indeg, 1, 'MPI_Dist_graph_neighbors_count: indegree')
  call MPI_Dist_graph_neighbors(g, 1, got, sw, 1, dst, dw, ierr)
  call check_int(got(1), src(1), 'MPI_Dist_graph_neighbors: source')
  call MPI_Comm_free(g, ierr)
  ! Weighted this time: weights must not be mistaken for the sentinel.
  sw(1) = 7
  dw(1) = 7
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, 1, dst, dw, MPI_INFO_NULL, &
                                      .false., g, ierr)
  call MPI_Dist_graph_neighbors_count(g, indeg, outdeg, weighted, ierr)
  call check(weighted, 'MPI_Dist_graph_neighbors_count: weighted graph')
  call MPI_Comm_free(g, ierr)
end subroutine dist_graph

! Attribute callbacks, called as COPY_FN(OLDCOMM, KEYVAL, EXTRA_STATE,
! VALUE_IN, VALUE_OUT, FLAG, IERROR) and DELETE_FN(COMM, KEYVAL, VALUE,
! EXTRA_STATE, IERROR); the counters live in a COMMON block (private per rank).
subroutine copy_plus_extra(oldcomm, keyval, extra, value_in, value_out, flag, ierror)
  use mpi
  implicit none
  integer :: oldcomm, keyval, ierror
  integer(kind=MPI_ADDRESS_KIND) :: extra, value_in, value_out
  logical :: flag
  integer :: copies, deletes
  common /attr_counts/ copies, deletes
  if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) stop 2
  copies = copies + 1
  value_out = value_in + extra
  flag = .true.
  ierror = MPI_SUCCESS
end subroutine copy_plus_extra

subroutine count_delete(comm, keyval, value, extra, ierror)
  use mpi
  implicit none
  integer :: comm, keyval, ierror
  integer(kind=MPI_ADDRESS_KIND) :: value, extra
  integer :: copies, deletes
  common /attr_counts/ copies, deletes
  if (comm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID .or. value < 0 .or. extra /= 10) &
    stop 2
  deletes = deletes + 1
  ierror = MPI_SUCCESS
end subroutine count_delete

subroutine attributes(rank)
  use mpi
  use ftest
  implicit none
  integer, intent(in) :: rank
  external :: copy_plus_extra, count_delete
  integer :: ierr, key, key2, dup, copies, deletes
  integer(kind=MPI_ADDRESS_KIND) :: extra, val
  logical :: flag
  common /attr_counts/ copies, deletes
  copies = 0
  deletes = 0
  extra = 10
  call MPI_Comm_create_keyval(copy_plus_extra, count_delete, key, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key2, extra, ierr)
  val = 1000 + rank
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, key2, val + 5, ierr)
  val = -1
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, val, flag, ierr)
  call check(flag, 'MPI_Comm_get_attr: flag of a set attribute')
  call check_int(int(val), 1000 + rank, 'MPI_Comm_get_attr: value')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check_int(copies, 1, 'the Fortran copy callback ran on MPI_Comm_dup')
  call MPI_Comm_get_attr(dup, key, val, flag, ierr)
  call check(flag, 'attribute copied by the Fortran callback')
  call check_int(int(val), 1010 + rank, 'value made by the Fortran copy callback')
  call MPI_Comm_get_attr(dup, key2, val, flag, ierr)
  call check(flag .and. val == 1005 + rank, 'attribute copied by MPI_COMM_DUP_FN')
  call MPI_Comm_free(dup, ierr)
  call check_int(deletes, 1, 'the Fortran delete callback ran on MPI_Comm_free')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key, ierr)
  call check_int(deletes, 2, 'the Fortran delete callback ran on MPI_Comm_delete_attr')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, val, flag, ierr)
  call check(.not. flag, 'MPI_Comm_get_attr: flag of a deleted attribute')
  call MPI_Comm_free_keyval(key, ierr)
  call check_int(key, MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, key2, ierr)
  call MPI_Comm_free_keyval(key2, ierr)
  ! Predefined attributes are values in Fortran, not addresses.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call check(flag .and. val >= 32767 .and. val < 2_8**31, 'MPI_TAG_UB is a value in Fortran')
end subroutine attributes

subroutine strings()
  use mpi
  use ftest
  implicit none
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  character(len=8) :: short
  character(len=20) :: value
  character(len=MPI_MAX_INFO_KEY) :: key
  integer :: ierr, rlen, dup, info, nkeys, vlen, v, sv
  logical :: flag
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_set_name(dup, 'fortran dup   ', ierr)
  name = repeat('x', len(name))
  call MPI_Comm_get_name(dup, name, rlen, ierr)
  call check(name == 'fortran dup', 'MPI_Comm_get_name: trailing blanks dropped, result padded')
  call check_int(rlen, 11, 'MPI_Comm_get_name: resultlen')
  short = 'zzzzzzzz'
  call MPI_Comm_get_name(MPI_COMM_WORLD, short, rlen, ierr)
  call check(short == 'MPI_COMM', 'MPI_Comm_get_name into a shorter string: truncated')
  call check_int(rlen, 14, 'MPI_Comm_get_name: resultlen of the whole name')
  call MPI_Comm_free(dup, ierr)
  call MPI_Get_processor_name(host, rlen, ierr)
  call check(rlen > 0 .and. len_trim(host) == rlen, 'MPI_Get_processor_name')
  call MPI_Get_library_version(version, rlen, ierr)
  call check(rlen > 0 .and. index(version, 'fibermpi') > 0, 'MPI_Get_library_version')
  call MPI_Get_version(v, sv, ierr)
  call check_int(v, MPI_VERSION, 'MPI_Get_version')
  ! Info keys and values lose leading and trailing blanks.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, '  color ', ' blue  ', ierr)
  call MPI_Info_set(info, 'size', '42', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call check_int(nkeys, 2, 'MPI_Info_get_nkeys')
  call MPI_Info_get_nthkey(info, 0, key, ierr)
  call check(key == 'color' .or. key == 'size', 'MPI_Info_get_nthkey (counts from 0 in Fortran too)')
  value = 'unchanged'
  call MPI_Info_get(info, 'color', len(value), value, flag, ierr)
  call check(flag .and. value == 'blue', 'MPI_Info_get: value')
  call MPI_Info_get_valuelen(info, 'size', vlen, flag, ierr)
  call check(flag .and. vlen == 2, 'MPI_Info_get_valuelen')
  value = 'unchanged'
  call MPI_Info_get(info, 'shape', len(value), value, flag, ierr)
  call check(.not. flag .and. value == 'unchanged', 'MPI_Info_get of a missing key')
  call MPI_Info_delete(info, 'color', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call check_int(nkeys, 1, 'MPI_Info_delete')
  call MPI_Info_free(info, ierr)
  call check_int(info, MPI_INFO_NULL, 'MPI_Info_free')
end subroutine strings
