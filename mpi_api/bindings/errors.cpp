// Error classes, codes, strings and communicator error handlers.
#include <cstring>

#include "mpi_api/api.hpp"

using namespace mpc::mpi;

extern "C" {

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
    MPC_ENTER(Error_string);
    if (!string || !resultlen)
        return raise(nullptr, make_error(MPI_ERR_ARG, "string or resultlen is NULL"));
    std::string text = error_text(errorcode);
    if (error_class_of(errorcode) < 0)
        return raise(nullptr, make_error(MPI_ERR_ARG, "%d is not a valid error code", errorcode));
    size_t n = std::min(text.size(), static_cast<size_t>(MPI_MAX_ERROR_STRING - 1));
    memcpy(string, text.data(), n);
    string[n] = '\0';
    *resultlen = static_cast<int>(n);
    return MPI_SUCCESS;
}

int PMPI_Error_class(int errorcode, int* errorclass) {
    MPC_ENTER(Error_class);
    if (!errorclass) return raise(nullptr, make_error(MPI_ERR_ARG, "errorclass is NULL"));
    int cls = error_class_of(errorcode);
    if (cls < 0)
        return raise(nullptr, make_error(MPI_ERR_ARG, "%d is not a valid error code", errorcode));
    *errorclass = cls;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int* errorclass) {
    MPC_ENTER_ACTIVE(Add_error_class);
    if (!errorclass) return raise(nullptr, make_error(MPI_ERR_ARG, "errorclass is NULL"));
    return raise(nullptr, add_error_class(errorclass));
}

int PMPI_Add_error_code(int errorclass, int* errorcode) {
    MPC_ENTER_ACTIVE(Add_error_code);
    if (!errorcode) return raise(nullptr, make_error(MPI_ERR_ARG, "errorcode is NULL"));
    return raise(nullptr, add_error_code(errorclass, errorcode));
}

int PMPI_Add_error_string(int errorcode, const char* string) {
    MPC_ENTER_ACTIVE(Add_error_string);
    return raise(nullptr, add_error_string(errorcode, string));
}

int PMPI_Remove_error_class(int errorclass) {
    MPC_ENTER_ACTIVE(Remove_error_class);
    return raise(nullptr, remove_error_class(errorclass));
}

int PMPI_Remove_error_code(int errorcode) {
    MPC_ENTER_ACTIVE(Remove_error_code);
    return raise(nullptr, remove_error_code(errorcode));
}

int PMPI_Remove_error_string(int errorcode) {
    MPC_ENTER_ACTIVE(Remove_error_string);
    return raise(nullptr, remove_error_string(errorcode));
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler) {
    MPC_ENTER_ACTIVE(Comm_create_errhandler);
    if (!fn || !errhandler)
        return raise(nullptr, make_error(MPI_ERR_ARG, "function or errhandler is NULL"));
    return errhandler_create(fn, errhandler);
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    MPC_ENTER_ACTIVE(Comm_set_errhandler);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!errhandler_lookup(errhandler))
        return raise(c, make_error(MPI_ERR_ARG, "0x%x is not a valid error handler", errhandler));
    c->errhandler = errhandler;
    return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
    MPC_ENTER_ACTIVE(Comm_get_errhandler);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!errhandler) return raise(c, make_error(MPI_ERR_ARG, "errhandler is NULL"));
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    MPC_ENTER_ACTIVE(Comm_call_errhandler);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    raise(c, errorcode);
    return MPI_SUCCESS;
}

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
    MPC_ENTER(Errhandler_free);
    if (!errhandler) return raise(nullptr, make_error(MPI_ERR_ARG, "errhandler is NULL"));
    return raise(nullptr, errhandler_free(errhandler));
}

}  // extern "C"

MPC_WEAK(MPI_Error_string)
MPC_WEAK(MPI_Error_class)
MPC_WEAK(MPI_Add_error_class)
MPC_WEAK(MPI_Add_error_code)
MPC_WEAK(MPI_Add_error_string)
MPC_WEAK(MPI_Remove_error_class)
MPC_WEAK(MPI_Remove_error_code)
MPC_WEAK(MPI_Remove_error_string)
MPC_WEAK(MPI_Comm_create_errhandler)
MPC_WEAK(MPI_Comm_set_errhandler)
MPC_WEAK(MPI_Comm_get_errhandler)
MPC_WEAK(MPI_Comm_call_errhandler)
MPC_WEAK(MPI_Errhandler_free)
