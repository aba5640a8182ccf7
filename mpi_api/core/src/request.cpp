#include "mpi_api/request.hpp"

#include "mpi_api/datatype.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_api/hang_watch.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/sync.hpp"

// The object MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE point at; never written.
namespace {
MPI_Status g_status_ignore[1];
}  // namespace
extern "C" MPI_Status* const MPI_Status_ignore_ = g_status_ignore;

namespace mpc::mpi {

std::atomic<int64_t> g_wait_spin_ns{50000};

namespace {

// Outlives every thread (handles.hpp). Made at load, not at first use: a
// function-local static costs a guard test at each of the three uses per
// nonblocking request (no request exists before the library's constructors
// have run).
HandlePool<Request, HandleKind::Request>* const g_pool =
    new HandlePool<Request, HandleKind::Request>(1);

HandlePool<Request, HandleKind::Request>& pool() {
    return *g_pool;
}

}  // namespace

void Request::reset() {
    state.store(0, std::memory_order_relaxed);
    status = MPI_Status{};
    handle = MPI_REQUEST_NULL;
    kind = Kind::Send;
    persistent = false;
    active = false;
    cancel_requested = false;
    peer_completes = false;
    mode = SendMode::Standard;
    rank = nullptr;
    comm = nullptr;
    buf = nullptr;
    count = 0;
    type = nullptr;
    peer = 0;
    tag = 0;
    context = 0;
    next = prev = nullptr;
    bsend_block = nullptr;
    message = nullptr;
    query_fn = nullptr;
    free_fn = nullptr;
    cancel_fn = nullptr;
    extra_state = nullptr;
    held_type = nullptr;
    notify = nullptr;
    operation = nullptr;
    owned = nullptr;
    owned_free = nullptr;
}

bool Request::arm(sched::Waiter* w) {
    uintptr_t cur = state.load(std::memory_order_acquire);
    for (;;) {
        if (cur == kComplete) return false;
        if (state.compare_exchange_weak(cur, reinterpret_cast<uintptr_t>(w),
                                        std::memory_order_seq_cst))
            return true;
    }
}

void Request::disarm(sched::Waiter* w) {
    uintptr_t expected = reinterpret_cast<uintptr_t>(w);
    state.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
}

bool Request::mark_user_freed() {
    uintptr_t cur = state.load(std::memory_order_acquire);
    for (;;) {
        if (cur == kComplete) return false;
        if (state.compare_exchange_weak(cur, kUserFreed, std::memory_order_acq_rel)) return true;
    }
}

void complete(Request* r) {
    RankState* notify = r->notify;  // read first: r may be gone after the exchange
    if (hang_watch_on() && r->rank) r->rank->completions.fetch_add(1, std::memory_order_relaxed);
    uintptr_t prev = r->state.exchange(Request::kComplete, std::memory_order_seq_cst);
    if (notify) progress_notify(notify);
    // From here on r may be gone (a stack request whose owner saw completion).
    if (prev == Request::kUserFreed) {
        request_release(r);  // pool requests only: nobody will ever wait on it
    } else if (prev != 0) {
        // Waiters are never freed, so a late unpark is only a spurious wake-up.
        reinterpret_cast<sched::Waiter*>(prev)->unpark();
    }
}

void complete_with_error(Request* r, int code) {
    r->status.MPI_ERROR = code;
    complete(r);
}

void set_empty_status(MPI_Status* s) {
    if (!s || s == MPI_STATUS_IGNORE) return;
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    s->mpc_cancelled = 0;
    s->mpc_count = 0;
}

Request* request_allocate(Request::Kind kind, RankState* rank, Comm* comm) {
    int h;
    Request* r = pool().allocate(&h);
    r->reset();
    r->handle = h;
    r->kind = kind;
    r->rank = rank;
    r->comm = comm;
    return r;
}

Request* request_lookup(MPI_Request handle) {
    return pool().lookup(handle);
}

void request_for_each_live(void (*fn)(Request* r, void* ctx), void* ctx) {
    pool().for_each_live([&](Request* r) { fn(r, ctx); });
}

int grequest_free(Request* r) {
    MPI_Grequest_free_function* fn = r->free_fn;
    if (r->kind != Request::Kind::Generalized || !fn) return MPI_SUCCESS;
    r->free_fn = nullptr;  // called once, whoever releases the request
    return fn(r->extra_state);
}

void request_release(Request* r) {
    if (r->handle == MPI_REQUEST_NULL) return;  // a stack request
    // A generalized request freed by the user before it completed goes here
    // from MPI_Grequest_complete: its free_fn has not run yet.
    (void)grequest_free(r);
    int h = r->handle;
    r->handle = MPI_REQUEST_NULL;
    datatype_release(r->held_type);
    r->held_type = nullptr;
    delete r->operation;
    r->operation = nullptr;
    if (r->owned_free) r->owned_free(r->owned);
    r->owned = nullptr;
    r->owned_free = nullptr;
    pool().release(h);
}

void Doorbell::arm(Entry* e, sched::Waiter* w) {
    e->waiter = w;
    lock_.lock();
    e->next = head_;
    head_ = e;
    lock_.unlock();
    armed_.fetch_add(1, std::memory_order_seq_cst);
}

void Doorbell::disarm(Entry* e) {
    armed_.fetch_sub(1, std::memory_order_relaxed);
    lock_.lock();
    Entry** link = &head_;
    while (*link != e) link = &(*link)->next;
    *link = e->next;
    lock_.unlock();
}

void Doorbell::ring_armed() {
    lock_.lock();
    for (Entry* e = head_; e; e = e->next) e->waiter->unpark();
    lock_.unlock();
}

bool arm_doorbell(Doorbell::Entry* entry, sched::Waiter* w) {
    RankState* me = current_rank();
    if (!me) return true;
    me->doorbell.arm(entry, w);
    // Operations of the rank flagged before the doorbell was armed rang nobody:
    // the caller must progress them instead of parking.
    return !me->progress_pending.load(std::memory_order_seq_cst);
}

void disarm_doorbell(Doorbell::Entry* entry) {
    if (RankState* me = current_rank()) me->doorbell.disarm(entry);
}

namespace {

// How long a wait for a request that another rank completes looks at the
// request alone before it waits as any other (polling, then parking).
constexpr int64_t kPeerSpinNs = 2000;

// A wait for a request another rank's thread completes (peer_completes): no
// poll is needed for it, and the completer is usually a microsecond away, on
// another VP or on this one. So for a bounded time: the request's line only,
// and the other tasks of this VP run (the completer may be one of them)
// without the poll a yield makes. Returns whether r completed.
bool wait_for_peer(Request* r) {
    WaitRecord record;
    int64_t start = -1;
    for (unsigned spins = 0;; ++spins) {
        if (sched::others_runnable()) {
            sched::yield(false);
        } else if (sched::cores_shared()) {
            break;  // spinning would keep the core from the completer
        } else {
            runtime::cpu_relax();
        }
        if (r->is_complete()) return true;
        // The clock from the 16th look on: most waits end before it.
        if (spins % 16 == 15) {
            const int64_t now = runtime::now_ns();
            if (start < 0)
                start = now;
            else if (now - start >= kPeerSpinNs)
                break;
        }
    }
    record.discard();  // block_until records the rest as one wait
    return false;
}

}  // namespace

void wait_complete(Request* r) {
    if (r->is_complete()) return;
    if (r->peer_completes && wait_for_peer(r)) return;
    // For the hang report: what the rank's own task waits for.
    RankState* const owner = hang_watch_on() && sched::in_task() ? r->rank : nullptr;
    const Request* outer =
        owner ? owner->blocked_on.exchange(r, std::memory_order_relaxed) : nullptr;
    block_until([r] { return r->is_complete(); }, [r](sched::Waiter* w) { r->arm(w); },
                [r](sched::Waiter* w) { r->disarm(w); }, r->kind == Request::Kind::Collective);
    if (owner) owner->blocked_on.store(outer, std::memory_order_relaxed);
}

}  // namespace mpc::mpi
