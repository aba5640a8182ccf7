// Groups: size, rank, translation, comparison, set operations, rank lists.
// Errors are raised on MPI_COMM_WORLD (a group belongs to no communicator).
#include "object_checks.hpp"

using namespace mpc::mpi;

namespace {

// The handle of a new group: MPI_GROUP_EMPTY when it has no member.
MPI_Group new_handle(GroupRef data) {
    if (data->size == 0) return MPI_GROUP_EMPTY;
    return group_create(std::move(data));
}

using SetOp = GroupRef (*)(const GroupData&, const GroupData&);

int set_operation(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup, SetOp op) {
    Group *a = nullptr, *b = nullptr;
    if (int e = check_group(group1, &a)) return raise(nullptr, e);
    if (int e = check_group(group2, &b)) return raise(nullptr, e);
    if (int e = check_not_null(newgroup, "newgroup")) return raise(nullptr, e);
    *newgroup = new_handle(op(*a->data, *b->data));
    return MPI_SUCCESS;
}

using ListOp = int (*)(const GroupData&, int, const int*, GroupRef*);
using RangeOp = int (*)(const GroupData&, int, const int (*)[3], GroupRef*);

template <class Op, class List>
int list_operation(MPI_Group group, int n, List list, MPI_Group* newgroup, Op op) {
    Group* g = nullptr;
    if (int e = check_group(group, &g)) return raise(nullptr, e);
    if (int e = check_not_null(newgroup, "newgroup")) return raise(nullptr, e);
    if (n > 0)
        if (int e = check_not_null(list, "the rank list")) return raise(nullptr, e);
    GroupRef out;
    if (int e = op(*g->data, n, list, &out)) return raise(nullptr, e);
    *newgroup = new_handle(std::move(out));
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Group_size(MPI_Group group, int* size) {
    MPC_ENTER_ACTIVE(Group_size);
    Group* g = nullptr;
    if (int e = check_group(group, &g)) return raise(nullptr, e);
    if (int e = check_not_null(size, "size")) return raise(nullptr, e);
    *size = g->data->size;
    return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int* rank) {
    MPC_ENTER_ACTIVE(Group_rank);
    Group* g = nullptr;
    if (int e = check_group(group, &g)) return raise(nullptr, e);
    if (int e = check_not_null(rank, "rank")) return raise(nullptr, e);
    *rank = g->data->rank_of(me->world_rank);
    return MPI_SUCCESS;
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
    MPC_ENTER_ACTIVE(Group_translate_ranks);
    Group *a = nullptr, *b = nullptr;
    if (int e = check_group(group1, &a)) return raise(nullptr, e);
    if (int e = check_group(group2, &b)) return raise(nullptr, e);
    if (n > 0 && (!ranks1 || !ranks2))
        return raise(nullptr, make_error(MPI_ERR_ARG, "ranks1 or ranks2 is NULL"));
    return raise(nullptr, group_translate(*a->data, n, ranks1, *b->data, ranks2));
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
    MPC_ENTER_ACTIVE(Group_compare);
    Group *a = nullptr, *b = nullptr;
    if (int e = check_group(group1, &a)) return raise(nullptr, e);
    if (int e = check_group(group2, &b)) return raise(nullptr, e);
    if (int e = check_not_null(result, "result")) return raise(nullptr, e);
    *result = group_compare(*a->data, *b->data);
    return MPI_SUCCESS;
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    MPC_ENTER_ACTIVE(Group_union);
    return set_operation(group1, group2, newgroup, group_union);
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    MPC_ENTER_ACTIVE(Group_intersection);
    return set_operation(group1, group2, newgroup, group_intersection);
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    MPC_ENTER_ACTIVE(Group_difference);
    return set_operation(group1, group2, newgroup, group_difference);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
    MPC_ENTER_ACTIVE(Group_incl);
    return list_operation(group, n, ranks, newgroup, static_cast<ListOp>(group_incl));
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
    MPC_ENTER_ACTIVE(Group_excl);
    return list_operation(group, n, ranks, newgroup, static_cast<ListOp>(group_excl));
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
    MPC_ENTER_ACTIVE(Group_range_incl);
    return list_operation(group, n, const_cast<const int(*)[3]>(ranges), newgroup,
                          static_cast<RangeOp>(group_range_incl));
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
    MPC_ENTER_ACTIVE(Group_range_excl);
    return list_operation(group, n, const_cast<const int(*)[3]>(ranges), newgroup,
                          static_cast<RangeOp>(group_range_excl));
}

int PMPI_Group_free(MPI_Group* group) {
    MPC_ENTER_ACTIVE(Group_free);
    Group* g = nullptr;
    if (int e = check_not_null(group, "group")) return raise(nullptr, e);
    if (int e = check_group(*group, &g)) return raise(nullptr, e);
    // MPI_GROUP_EMPTY comes back from set operations, so freeing it is allowed
    // (as in MPICH); the object itself stays.
    group_release(*group);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Group_size)
MPC_WEAK(MPI_Group_rank)
MPC_WEAK(MPI_Group_translate_ranks)
MPC_WEAK(MPI_Group_compare)
MPC_WEAK(MPI_Group_union)
MPC_WEAK(MPI_Group_intersection)
MPC_WEAK(MPI_Group_difference)
MPC_WEAK(MPI_Group_incl)
MPC_WEAK(MPI_Group_excl)
MPC_WEAK(MPI_Group_range_incl)
MPC_WEAK(MPI_Group_range_excl)
MPC_WEAK(MPI_Group_free)
