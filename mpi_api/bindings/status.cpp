// Status queries and the datatype queries available to every program, with
// their large-count forms (MPI 4.0). An int result that cannot hold the value
// is MPI_UNDEFINED (MPI 4.0 sections 3.2.5 and 5.1.5).
#include <cstring>

#include "mpi_api/api.hpp"

using namespace mpc::mpi;

namespace {

int elements_of(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* out, bool whole) {
    if (!status || status == MPI_STATUS_IGNORE)
        return make_error(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    Datatype* t;
    if (int e = check_type(datatype, &t)) return e;
    const MPI_Count bytes = status->mpc_count;
    if (t->size == 0) {
        *out = bytes == 0 ? 0 : MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (whole) {
        const MPI_Count size = static_cast<MPI_Count>(t->size);
        *out = bytes % size ? MPI_UNDEFINED : bytes / size;
        return MPI_SUCCESS;
    }
    // Basic elements, including those of a trailing partial element.
    *out = type_elements_in(*t, bytes);
    return MPI_SUCCESS;
}

// MPI_Status_set_elements_x and _c.
int set_elements(MPI_Status* status, MPI_Datatype datatype, MPI_Count count);

int clamp_int(MPI_Count v) {
    if (v == MPI_UNDEFINED) return MPI_UNDEFINED;
    return v > 0x7fffffff ? MPI_UNDEFINED : static_cast<int>(v);
}

}  // namespace

extern "C" {

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
    MPC_ENTER_ACTIVE(Get_count);
    if (!count) return raise(nullptr, make_error(MPI_ERR_ARG, "count is NULL"));
    MPI_Count n = 0;
    if (int e = elements_of(status, datatype, &n, true)) return raise(nullptr, e);
    *count = clamp_int(n);
    return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
    MPC_ENTER_ACTIVE(Get_elements);
    if (!count) return raise(nullptr, make_error(MPI_ERR_ARG, "count is NULL"));
    MPI_Count n = 0;
    if (int e = elements_of(status, datatype, &n, false)) return raise(nullptr, e);
    *count = clamp_int(n);
    return MPI_SUCCESS;
}

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
    MPC_ENTER_ACTIVE(Get_elements_x);
    if (!count) return raise(nullptr, make_error(MPI_ERR_ARG, "count is NULL"));
    return raise(nullptr, elements_of(status, datatype, count, false));
}

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
    MPC_ENTER_ACTIVE(Status_set_elements);
    return PMPI_Status_set_elements_x(status, datatype, count);
}

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
    MPC_ENTER_ACTIVE(Status_set_elements_x);
    return set_elements(status, datatype, count);
}

int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
    MPC_ENTER_ACTIVE(Get_count_c);
    if (!count) return raise(nullptr, make_error(MPI_ERR_ARG, "count is NULL"));
    return raise(nullptr, elements_of(status, datatype, count, true));
}

int PMPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
    MPC_ENTER_ACTIVE(Get_elements_c);
    if (!count) return raise(nullptr, make_error(MPI_ERR_ARG, "count is NULL"));
    return raise(nullptr, elements_of(status, datatype, count, false));
}

int PMPI_Status_set_elements_c(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
    MPC_ENTER_ACTIVE(Status_set_elements_c);
    return set_elements(status, datatype, count);
}

}  // extern "C"

namespace {

int set_elements(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
    if (!status || status == MPI_STATUS_IGNORE)
        return raise(nullptr, make_error(MPI_ERR_ARG, "status is NULL"));
    if (count < 0) return raise(nullptr, make_error(MPI_ERR_COUNT, "negative count"));
    Datatype* t;
    if (int e = check_type(datatype, &t)) return raise(nullptr, e);
    const MPI_Count bytes = type_bytes_for_elements(*t, count);
    if (bytes < 0)
        return raise(nullptr,
                     make_error(MPI_ERR_COUNT, "%lld basic elements of a datatype without data",
                                static_cast<long long>(count)));
    status->mpc_count = bytes;
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
    MPC_ENTER_ACTIVE(Status_set_cancelled);
    if (!status || status == MPI_STATUS_IGNORE)
        return raise(nullptr, make_error(MPI_ERR_ARG, "status is NULL"));
    status->mpc_cancelled = flag ? 1 : 0;
    return MPI_SUCCESS;
}

// MPI 4.1 section 3.2.5: the public fields through calls (for bindings
// without access to the structure, and generalized requests' query_fn).
#define MPC_STATUS_SET(Name, field, value_name)                                                    \
    int PMPI_Status_set_##Name(MPI_Status* status, int value_name) {                               \
        MPC_ENTER(Status_set_##Name);                                                              \
        if (!status || status == MPI_STATUS_IGNORE)                                                \
            return raise(nullptr, make_error(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE")); \
        status->field = value_name;                                                                \
        return MPI_SUCCESS;                                                                        \
    }
#define MPC_STATUS_GET(Name, field, value_name)                                                    \
    int PMPI_Status_get_##Name(const MPI_Status* status, int* value_name) {                        \
        MPC_ENTER(Status_get_##Name);                                                              \
        if (!status || status == MPI_STATUS_IGNORE)                                                \
            return raise(nullptr, make_error(MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE")); \
        if (!value_name) return raise(nullptr, make_error(MPI_ERR_ARG, #value_name " is NULL"));   \
        *value_name = status->field;                                                               \
        return MPI_SUCCESS;                                                                        \
    }
MPC_STATUS_SET(source, MPI_SOURCE, source)
MPC_STATUS_SET(tag, MPI_TAG, tag)
MPC_STATUS_SET(error, MPI_ERROR, err)
MPC_STATUS_GET(source, MPI_SOURCE, source)
MPC_STATUS_GET(tag, MPI_TAG, tag)
MPC_STATUS_GET(error, MPI_ERROR, err)
#undef MPC_STATUS_SET
#undef MPC_STATUS_GET

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
    MPC_ENTER_ACTIVE(Type_size);
    if (!size) return raise(nullptr, make_error(MPI_ERR_ARG, "size is NULL"));
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    *size = t->size > 0x7fffffff ? MPI_UNDEFINED : static_cast<int>(t->size);
    return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
    MPC_ENTER_ACTIVE(Type_size_x);
    if (!size) return raise(nullptr, make_error(MPI_ERR_ARG, "size is NULL"));
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    *size = static_cast<MPI_Count>(t->size);
    return MPI_SUCCESS;
}

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) {
    MPC_ENTER_ACTIVE(Type_size_c);
    if (!size) return raise(nullptr, make_error(MPI_ERR_ARG, "size is NULL"));
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    *size = static_cast<MPI_Count>(t->size);
    return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
    MPC_ENTER_ACTIVE(Type_get_name);
    if (!type_name || !resultlen)
        return raise(nullptr, make_error(MPI_ERR_ARG, "type_name or resultlen is NULL"));
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    size_t n = std::min(t->name.size(), static_cast<size_t>(MPI_MAX_OBJECT_NAME - 1));
    memcpy(type_name, t->name.data(), n);
    type_name[n] = '\0';
    *resultlen = static_cast<int>(n);
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Get_count)
MPC_WEAK(MPI_Get_elements)
MPC_WEAK(MPI_Get_elements_x)
MPC_WEAK(MPI_Status_set_elements)
MPC_WEAK(MPI_Status_set_elements_x)
MPC_WEAK(MPI_Status_set_cancelled)
MPC_WEAK(MPI_Type_size)
MPC_WEAK(MPI_Type_size_x)
MPC_WEAK(MPI_Type_get_name)
MPC_WEAK(MPI_Get_count_c)
MPC_WEAK(MPI_Get_elements_c)
MPC_WEAK(MPI_Status_set_elements_c)
MPC_WEAK(MPI_Type_size_c)
MPC_WEAK(MPI_Status_set_source)
MPC_WEAK(MPI_Status_set_tag)
MPC_WEAK(MPI_Status_set_error)
MPC_WEAK(MPI_Status_get_source)
MPC_WEAK(MPI_Status_get_tag)
MPC_WEAK(MPI_Status_get_error)
