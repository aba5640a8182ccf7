// Language interoperability (MPI 3.1 section 17.2.4): handles are ints equal
// to their Fortran values, so the handle conversions are the identity, and a
// Fortran status is the C struct seen as MPI_STATUS_SIZE integers. Usable at
// any time, before MPI_Init and after MPI_Finalize included.
#include <cstring>

#include "mpi_api/api.hpp"

using namespace mpc::mpi;

#define MPC_HANDLE_CONVERSIONS(Kind, CType)                       \
    CType PMPI_##Kind##_f2c(MPI_Fint handle) { return handle; }  \
    MPI_Fint PMPI_##Kind##_c2f(CType handle) { return handle; }

extern "C" {

MPC_HANDLE_CONVERSIONS(Comm, MPI_Comm)
MPC_HANDLE_CONVERSIONS(Group, MPI_Group)
MPC_HANDLE_CONVERSIONS(Type, MPI_Datatype)
MPC_HANDLE_CONVERSIONS(Op, MPI_Op)
MPC_HANDLE_CONVERSIONS(Errhandler, MPI_Errhandler)
MPC_HANDLE_CONVERSIONS(Request, MPI_Request)
MPC_HANDLE_CONVERSIONS(Info, MPI_Info)
MPC_HANDLE_CONVERSIONS(Win, MPI_Win)
MPC_HANDLE_CONVERSIONS(File, MPI_File)
MPC_HANDLE_CONVERSIONS(Message, MPI_Message)
MPC_HANDLE_CONVERSIONS(Session, MPI_Session)

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
    if (!f_status || !c_status || c_status == MPI_STATUS_IGNORE)
        return raise(nullptr, make_error(MPI_ERR_ARG, "a status argument is NULL or ignored"));
    memcpy(c_status, f_status, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
    if (!f_status || !c_status || c_status == MPI_STATUS_IGNORE)
        return raise(nullptr, make_error(MPI_ERR_ARG, "a status argument is NULL or ignored"));
    memcpy(f_status, c_status, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

// An mpi_f08 status has the words of a Fortran one (mpi.h).
static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPI_F08_status layout");

static int copy_status(const void* from, void* to, const void* ignored) {
    if (!from || !to || to == ignored || from == ignored)
        return raise(nullptr, make_error(MPI_ERR_ARG, "a status argument is NULL or ignored"));
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

int PMPI_Status_f082c(const MPI_F08_status* f08_status, MPI_Status* c_status) {
    return copy_status(f08_status, c_status, MPI_STATUS_IGNORE);
}

int PMPI_Status_c2f08(const MPI_Status* c_status, MPI_F08_status* f08_status) {
    return copy_status(c_status, f08_status, MPI_STATUS_IGNORE);
}

int PMPI_Status_f082f(const MPI_F08_status* f08_status, MPI_Fint* f_status) {
    return copy_status(f08_status, f_status, nullptr);
}

int PMPI_Status_f2f08(const MPI_Fint* f_status, MPI_F08_status* f08_status) {
    return copy_status(f_status, f08_status, nullptr);
}

// MPI_F_STATUS_IGNORE and MPI_F_STATUSES_IGNORE come from the Fortran
// bindings (mpi_api/fortran) when they are built; without them, no Fortran
// status exists to compare with, and these stand in.
__attribute__((weak)) MPI_Fint* MPI_F_status_ignore_(void) {
    static MPI_Fint none[sizeof(MPI_Status) / sizeof(MPI_Fint)];
    return none;
}
__attribute__((weak)) MPI_Fint* MPI_F_statuses_ignore_(void) {
    static MPI_Fint none[sizeof(MPI_Status) / sizeof(MPI_Fint)];
    return none;
}

}  // extern "C"

#define MPC_WEAK_CONVERSIONS(Kind) MPC_WEAK(MPI_##Kind##_f2c) MPC_WEAK(MPI_##Kind##_c2f)
MPC_WEAK_CONVERSIONS(Comm)
MPC_WEAK_CONVERSIONS(Group)
MPC_WEAK_CONVERSIONS(Type)
MPC_WEAK_CONVERSIONS(Op)
MPC_WEAK_CONVERSIONS(Errhandler)
MPC_WEAK_CONVERSIONS(Request)
MPC_WEAK_CONVERSIONS(Info)
MPC_WEAK_CONVERSIONS(Win)
MPC_WEAK_CONVERSIONS(File)
MPC_WEAK_CONVERSIONS(Message)
MPC_WEAK_CONVERSIONS(Session)
MPC_WEAK_CONVERSIONS(Status)
MPC_WEAK(MPI_Status_f082c)
MPC_WEAK(MPI_Status_c2f08)
MPC_WEAK(MPI_Status_f082f)
MPC_WEAK(MPI_Status_f2f08)
