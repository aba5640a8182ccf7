// Generalized requests (MPI 3.1 section 12.2): operations the program runs
// itself, completed by MPI_Grequest_complete from any of the rank's threads,
// and waited for, tested, cancelled and freed like any other request, alone
// or in arrays mixed with others. The user's callbacks make the status
// (query_fn, when the request is waited for or its status asked), clean up
// (free_fn, once, when the request goes) and cancel (cancel_fn); they run in
// the thread that makes the MPI call, never under a lock of ours.
#include "mpi_api/request.hpp"
#include "requests.hpp"

using namespace mpc::mpi;

extern "C" {

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn,
                        MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                        MPI_Request* request) {
    MPC_ENTER_ACTIVE(Grequest_start);
    if (!request) return raise(nullptr, make_error(MPI_ERR_ARG, "request is NULL"));
    Request* r = request_allocate(Request::Kind::Generalized, me, nullptr);
    r->query_fn = query_fn;
    r->free_fn = free_fn;
    r->cancel_fn = cancel_fn;
    r->extra_state = extra_state;
    r->active = true;
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Grequest_complete(MPI_Request request) {
    MPC_ENTER_ACTIVE(Grequest_complete);
    Request* r = request == MPI_REQUEST_NULL ? nullptr : request_lookup(request);
    if (!r || r->kind != Request::Kind::Generalized)
        return raise(nullptr,
                     make_error(MPI_ERR_REQUEST, "0x%x is not a generalized request", request));
    if (r->is_complete())
        return raise(nullptr, make_error(MPI_ERR_REQUEST,
                                         "generalized request 0x%x was completed already",
                                         request));
    // Freed by the user meanwhile (MPI_Request_free): its free_fn runs now,
    // and the request goes (complete() releases it).
    const int freed = r->state.load(std::memory_order_acquire) == Request::kUserFreed
                          ? grequest_free(r)
                          : MPI_SUCCESS;
    // The status comes from query_fn when the request is waited for.
    set_empty_status(&r->status);
    complete(r);
    return raise(nullptr, freed);
}

}  // extern "C"

MPC_WEAK(MPI_Grequest_start)
MPC_WEAK(MPI_Grequest_complete)
