// Argument checks shared by the communicator, group, topology and info
// bindings: MPI_SUCCESS or a detailed error code.
#pragma once

#include "mpi_api/api.hpp"
#include "mpi_api/group.hpp"
#include "mpi_api/info.hpp"

namespace mpc::mpi {

inline int check_intra(const Comm* c) {
    if (c->is_inter())
        return make_error(MPI_ERR_COMM,
                          "an intracommunicator is required, not an intercommunicator");
    return MPI_SUCCESS;
}

inline int check_group(MPI_Group handle, Group** out) {
    Group* g = group_lookup(handle);
    if (!g) {
        if (handle == MPI_GROUP_NULL) return make_error(MPI_ERR_GROUP, "MPI_GROUP_NULL passed");
        return make_error(MPI_ERR_GROUP, "0x%x is not a valid group", handle);
    }
    *out = g;
    return MPI_SUCCESS;
}

// An info argument where MPI_INFO_NULL is allowed (*out is then null).
inline int check_info_arg(MPI_Info handle, Info** out) {
    *out = nullptr;
    if (handle == MPI_INFO_NULL) return MPI_SUCCESS;
    Info* i = info_lookup(handle);
    if (!i) return make_error(MPI_ERR_INFO, "0x%x is not a valid info object", handle);
    *out = i;
    return MPI_SUCCESS;
}

inline int check_not_null(const void* p, const char* name) {
    if (!p) return make_error(MPI_ERR_ARG, "%s is NULL", name);
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
