// MPI 4.1's buffered-send buffers of communicators (MPI_Comm_attach_buffer,
// MPI_Comm_detach_buffer) and the flushes of a communicator's or the rank's
// buffer, blocking and not (section 3.6.1). The buffers themselves and the
// choice among a communicator's, its session's and the rank's are in
// requests.cpp; the session calls are in session.cpp. A flush never frees or
// detaches the buffer.
#include "object_checks.hpp"
#include "requests.hpp"

using namespace mpc::mpi;

namespace {

// Both forms of attach and detach (the _c ones take MPI_Count sizes).
int comm_attach(MPI_Comm comm, void* buffer, MPI_Count size) {
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    return raise(c, bsend_attach(c->bsend, buffer, size));
}

int comm_detach(MPI_Comm comm, void* buffer_addr, MPI_Count* size) {
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!buffer_addr || !size)
        return raise(c, make_error(MPI_ERR_ARG, "buffer_addr or size is NULL"));
    return raise(c, bsend_detach(c->bsend, buffer_addr, size));
}

}  // namespace

extern "C" {

int PMPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
    MPC_ENTER_ACTIVE(Comm_attach_buffer);
    return comm_attach(comm, buffer, size);
}

int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void* buffer, MPI_Count size) {
    MPC_ENTER_ACTIVE(Comm_attach_buffer_c);
    return comm_attach(comm, buffer, size);
}

int PMPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
    MPC_ENTER_ACTIVE(Comm_detach_buffer);
    MPI_Count n = 0;
    const int e = comm_detach(comm, buffer_addr, size ? &n : nullptr);
    if (size) *size = int_size(n);
    return e;
}

int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void* buffer_addr, MPI_Count* size) {
    MPC_ENTER_ACTIVE(Comm_detach_buffer_c);
    return comm_detach(comm, buffer_addr, size);
}

int PMPI_Buffer_flush(void) {
    MPC_ENTER_ACTIVE(Buffer_flush);
    bsend_flush(me->bsend.get());
    return MPI_SUCCESS;
}

int PMPI_Buffer_iflush(MPI_Request* request) {
    MPC_ENTER_ACTIVE(Buffer_iflush);
    if (!request) return raise(nullptr, make_error(MPI_ERR_ARG, "request is NULL"));
    return raise(nullptr, bsend_iflush(me, nullptr, me->bsend, request));
}

int PMPI_Comm_flush_buffer(MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Comm_flush_buffer);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    bsend_flush(c->bsend.get());
    return MPI_SUCCESS;
}

int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Comm_iflush_buffer);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!request) return raise(c, make_error(MPI_ERR_ARG, "request is NULL"));
    return raise(c, bsend_iflush(me, c, c->bsend, request));
}

}  // extern "C"

MPC_WEAK(MPI_Comm_attach_buffer)
MPC_WEAK(MPI_Comm_detach_buffer)
MPC_WEAK(MPI_Comm_attach_buffer_c)
MPC_WEAK(MPI_Comm_detach_buffer_c)
MPC_WEAK(MPI_Buffer_flush)
MPC_WEAK(MPI_Buffer_iflush)
MPC_WEAK(MPI_Comm_flush_buffer)
MPC_WEAK(MPI_Comm_iflush_buffer)
