// Attribute caching: keyvals, communicator and datatype attributes, and the
// predefined callbacks.
#include "mpi_api/attributes.hpp"
#include "object_checks.hpp"

using namespace mpc::mpi;

namespace {

int check_keyval_out(int* keyval) {
    return check_not_null(keyval, "keyval");
}

int check_datatype_arg(MPI_Datatype type) {
    if (!datatype_lookup(type))
        return make_error(MPI_ERR_TYPE, "0x%x is not a valid datatype", type);
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

// ---- Predefined callbacks (MPI 3.1 section 6.7.2) ---------------------------

int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int* flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_COMM_DUP_FN(MPI_Comm, int, void*, void* attribute_val_in, void* attribute_val_out,
                    int* flag) {
    *static_cast<void**>(attribute_val_out) = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*) {
    return MPI_SUCCESS;
}

int MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void*, void*, void*, int* flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_TYPE_DUP_FN(MPI_Datatype, int, void*, void* attribute_val_in, void* attribute_val_out,
                    int* flag) {
    *static_cast<void**>(attribute_val_out) = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void*, void*) {
    return MPI_SUCCESS;
}

// The MPI-1 forms (deprecated since MPI-2.0, still in MPI 3.1): their C types
// are those of the communicator callbacks.
int MPI_NULL_COPY_FN(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
    return MPI_COMM_NULL_COPY_FN(comm, keyval, extra, in, out, flag);
}

int MPI_DUP_FN(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
    return MPI_COMM_DUP_FN(comm, keyval, extra, in, out, flag);
}

int MPI_NULL_DELETE_FN(MPI_Comm comm, int keyval, void* value, void* extra) {
    return MPI_COMM_NULL_DELETE_FN(comm, keyval, value, extra);
}

// ---- Communicators -----------------------------------------------------------

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval,
                            void* extra_state) {
    MPC_ENTER_ACTIVE(Comm_create_keyval);
    if (int e = check_keyval_out(comm_keyval)) return raise(nullptr, e);
    return raise(nullptr, comm_keyval_create(comm_copy_attr_fn, comm_delete_attr_fn, extra_state,
                                             comm_keyval));
}

int PMPI_Comm_free_keyval(int* comm_keyval) {
    MPC_ENTER_ACTIVE(Comm_free_keyval);
    if (int e = check_keyval_out(comm_keyval)) return raise(nullptr, e);
    return raise(nullptr, keyval_free(KeyvalKind::Comm, comm_keyval));
}

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
    MPC_ENTER_ACTIVE(Comm_set_attr);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    return raise(c, comm_attr_set(c, comm_keyval, attribute_val));
}

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
    MPC_ENTER_ACTIVE(Comm_get_attr);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!attribute_val || !flag)
        return raise(c, make_error(MPI_ERR_ARG, "attribute_val or flag is NULL"));
    return raise(c, comm_attr_get(c, comm_keyval, static_cast<void**>(attribute_val), flag));
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
    MPC_ENTER_ACTIVE(Comm_delete_attr);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    return raise(c, comm_attr_delete(c, comm_keyval));
}

// MPI_Keyval_create and friends: the communicator calls under their MPI-1
// names (MPI 3.1 section 15.1), with their own names in error messages.
int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                       void* extra_state) {
    MPC_ENTER_ACTIVE(Keyval_create);
    if (int e = check_keyval_out(keyval)) return raise(nullptr, e);
    return raise(nullptr, comm_keyval_create(copy_fn, delete_fn, extra_state, keyval));
}

int PMPI_Keyval_free(int* keyval) {
    MPC_ENTER_ACTIVE(Keyval_free);
    if (int e = check_keyval_out(keyval)) return raise(nullptr, e);
    return raise(nullptr, keyval_free(KeyvalKind::Comm, keyval));
}

int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
    MPC_ENTER_ACTIVE(Attr_put);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    return raise(c, comm_attr_set(c, keyval, attribute_val));
}

int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
    MPC_ENTER_ACTIVE(Attr_get);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!attribute_val || !flag)
        return raise(c, make_error(MPI_ERR_ARG, "attribute_val or flag is NULL"));
    return raise(c, comm_attr_get(c, keyval, static_cast<void**>(attribute_val), flag));
}

int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
    MPC_ENTER_ACTIVE(Attr_delete);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    return raise(c, comm_attr_delete(c, keyval));
}

// ---- Datatypes ---------------------------------------------------------------

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                            MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                            void* extra_state) {
    MPC_ENTER_ACTIVE(Type_create_keyval);
    if (int e = check_keyval_out(type_keyval)) return raise(nullptr, e);
    return raise(nullptr, type_keyval_create(type_copy_attr_fn, type_delete_attr_fn, extra_state,
                                             type_keyval));
}

int PMPI_Type_free_keyval(int* type_keyval) {
    MPC_ENTER_ACTIVE(Type_free_keyval);
    if (int e = check_keyval_out(type_keyval)) return raise(nullptr, e);
    return raise(nullptr, keyval_free(KeyvalKind::Type, type_keyval));
}

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
    MPC_ENTER_ACTIVE(Type_set_attr);
    if (int e = check_datatype_arg(datatype)) return raise(nullptr, e);
    return raise(nullptr, type_attr_set(datatype, type_keyval, attribute_val));
}

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
    MPC_ENTER_ACTIVE(Type_get_attr);
    if (int e = check_datatype_arg(datatype)) return raise(nullptr, e);
    if (!attribute_val || !flag)
        return raise(nullptr, make_error(MPI_ERR_ARG, "attribute_val or flag is NULL"));
    return raise(nullptr,
                 type_attr_get(datatype, type_keyval, static_cast<void**>(attribute_val), flag));
}

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
    MPC_ENTER_ACTIVE(Type_delete_attr);
    if (int e = check_datatype_arg(datatype)) return raise(nullptr, e);
    return raise(nullptr, type_attr_delete(datatype, type_keyval));
}

}  // extern "C"

MPC_WEAK(MPI_Comm_create_keyval)
MPC_WEAK(MPI_Comm_free_keyval)
MPC_WEAK(MPI_Comm_set_attr)
MPC_WEAK(MPI_Comm_get_attr)
MPC_WEAK(MPI_Comm_delete_attr)
MPC_WEAK(MPI_Type_create_keyval)
MPC_WEAK(MPI_Type_free_keyval)
MPC_WEAK(MPI_Type_set_attr)
MPC_WEAK(MPI_Type_get_attr)
MPC_WEAK(MPI_Type_delete_attr)
MPC_WEAK(MPI_Keyval_create)
MPC_WEAK(MPI_Keyval_free)
MPC_WEAK(MPI_Attr_put)
MPC_WEAK(MPI_Attr_get)
MPC_WEAK(MPI_Attr_delete)
