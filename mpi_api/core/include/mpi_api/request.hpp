// mpi_api/request: the state of one communication operation.
//
// A request completes exactly once: whoever finishes the operation (the owner,
// a sender on another VP, or any rank that polls on the owner's behalf) fills
// the status, then publishes completion and wakes the waiter, if one is parked.
// Blocking calls use requests on their own stack; nonblocking ones take them
// from the handle pool.
#pragma once

#include <atomic>
#include <cstdint>

#include "mpi.h"
#include "scheduler/scheduler.hpp"

namespace mpc::mpi {

struct Comm;
struct Datatype;
struct RankState;
struct Incoming;

enum class SendMode : uint8_t { Standard, Synchronous, Ready, Buffered };

struct Request {
    // File: an I/O operation of mpi_api/io (its comm is the file's private
    // communicator, which carries the file's error handler).
    enum class Kind : uint8_t { Send, Recv, Generalized, Collective, Rma, File, Partitioned };

    // ---- completion --------------------------------------------------------
    // One word holds the whole completion state, so that a completer touches
    // the request exactly once (an exchange) and never after: the request may
    // live on the waiter's stack and vanish the moment completion is visible.
    //   0            pending, nobody waiting
    //   Waiter*      pending, that waiter is (or is about to be) parked on it
    //   kComplete    done
    //   kUserFreed   pending, MPI_Request_free'd: the completer recycles it
    static constexpr uintptr_t kComplete = 1, kUserFreed = 2;
    std::atomic<uintptr_t> state{0};
    MPI_Status status{};

    // ---- identity ----------------------------------------------------------
    int handle = MPI_REQUEST_NULL;  // MPI_REQUEST_NULL for stack requests
    Kind kind = Kind::Send;
    bool persistent = false;
    bool active = false;            // persistent: started and not yet completed
    bool cancel_requested = false;
    // Completed by another rank's thread without anyone polling for it (a
    // persistent collective's last starter): waits look at the state first.
    bool peer_completes = false;
    SendMode mode = SendMode::Standard;
    RankState* rank = nullptr;      // owner
    Comm* comm = nullptr;

    // ---- operation ---------------------------------------------------------
    void* buf = nullptr;
    MPI_Count count = 0;  // elements (MPI_Count: the _c calls pass more than an int holds)
    Datatype* type = nullptr;
    // A reference on a derived `type` (datatype_retain), dropped by request_release,
    // so that MPI_Type_free during the operation is harmless.
    Datatype* held_type = nullptr;
    int peer = 0;  // destination (send) or source (recv), rank in comm
    int tag = 0;
    uint32_t context = 0;
    Request* next = nullptr;        // link in the owner's posted-receive queue
    Request* prev = nullptr;
    void* bsend_block = nullptr;    // buffered send: its block in the attached buffer
    Incoming* message = nullptr;    // Imrecv: the matched message
    // Internal request of an operation in progress: its owner is told at
    // completion (progress_engine.hpp).
    RankState* notify = nullptr;
    // Collective requests: the operation, deleted with the request.
    class Progressable* operation = nullptr;
    // Memory the operation reads until the request goes, owned by it: the
    // int count arrays a large-count (_c) v collective made from the user's
    // MPI_Count ones. owned_free(owned) runs at request_release.
    void* owned = nullptr;
    void (*owned_free)(void*) = nullptr;

    // Generalized requests.
    MPI_Grequest_query_function* query_fn = nullptr;
    MPI_Grequest_free_function* free_fn = nullptr;
    MPI_Grequest_cancel_function* cancel_fn = nullptr;
    void* extra_state = nullptr;

    bool is_complete() const { return state.load(std::memory_order_acquire) == kComplete; }
    // Registers w to be unparked at completion; false when already complete.
    bool arm(sched::Waiter* w);
    void disarm(sched::Waiter* w);
    // MPI_Request_free on a pending request; false when it had completed (the
    // caller then releases it).
    bool mark_user_freed();

    // Resets a recycled request for a new operation.
    void reset();
};

// Publishes completion: status must be filled before. Wakes the waiter. When the
// user already freed the request (MPI_Request_free), recycles it instead.
void complete(Request* r);

// Completes r with an error class in its status.
void complete_with_error(Request* r, int code);

// Pool of nonblocking requests.
Request* request_allocate(Request::Kind kind, RankState* rank, Comm* comm);
Request* request_lookup(MPI_Request handle);
// Calls fn on every allocated (nonblocking) request, under the pool's lock;
// for diagnostics only (fields of requests in use may change meanwhile).
void request_for_each_live(void (*fn)(Request* r, void* ctx), void* ctx);
void request_release(Request* r);
// A generalized request's free_fn (MPI_Grequest_start), at most once per
// request: its return code, MPI_SUCCESS for other requests or when it ran.
// request_release calls it if nobody did before.
int grequest_free(Request* r);

// Blocks the caller (yielding its VP, polling progress) until r completes.
void wait_complete(Request* r);

// Status helpers.
inline void set_status(MPI_Status* s, int source, int tag, MPI_Count bytes) {
    s->MPI_SOURCE = source;
    s->MPI_TAG = tag;
    s->MPI_ERROR = MPI_SUCCESS;
    s->mpc_cancelled = 0;
    s->mpc_count = bytes;
}
void set_empty_status(MPI_Status* s);
// A user's status from a request's, MPI_ERROR aside: a call that completes
// one request returns its error and leaves that field alone; only the array
// forms write it, when they return MPI_ERR_IN_STATUS (MPI 3.1 section 3.2.5).
inline void status_out(MPI_Status* user, const MPI_Status& s) {
    if (!user || user == MPI_STATUS_IGNORE) return;
    user->MPI_SOURCE = s.MPI_SOURCE;
    user->MPI_TAG = s.MPI_TAG;
    user->mpc_cancelled = s.mpc_cancelled;
    user->mpc_count = s.mpc_count;
}
// The same for a message found by a probe, or one from MPI_PROC_NULL.
inline void status_out(MPI_Status* user, int source, int tag, MPI_Count bytes) {
    if (!user || user == MPI_STATUS_IGNORE) return;
    user->MPI_SOURCE = source;
    user->MPI_TAG = tag;
    user->mpc_cancelled = 0;
    user->mpc_count = bytes;
}

}  // namespace mpc::mpi
