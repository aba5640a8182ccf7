// Completion: Wait, Test and their any/all/some forms, Request_free, Cancel,
// and Request_get_status with its any/all/some forms (MPI 4.1), which report
// completion but must never free or deactivate a request.
#include <algorithm>
#include <utility>
#include <vector>

#include "mpi_api/p2p.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/progress_engine.hpp"
#include "requests.hpp"

using namespace mpc::mpi;

namespace {

bool ignore(const MPI_Status* s) { return !s || s == MPI_STATUS_IGNORE; }

// Looks up request i of an array; *r is null for MPI_REQUEST_NULL. Returns an
// error for an invalid handle.
int lookup(MPI_Request h, Request** r) {
    *r = nullptr;
    if (h == MPI_REQUEST_NULL) return MPI_SUCCESS;
    *r = request_lookup(h);
    if (!*r) return make_error(MPI_ERR_REQUEST, "0x%x is not a valid request", h);
    return MPI_SUCCESS;
}

int check_array(int count, const MPI_Request* reqs) {
    if (count < 0) return make_error(MPI_ERR_COUNT, "negative count %d", count);
    if (count > 0 && !reqs) return make_error(MPI_ERR_ARG, "array_of_requests is NULL");
    return MPI_SUCCESS;
}

// The requests of an array, looked up once. Halo exchanges wait for a handful
// at a time, bandwidth and message-rate loops for windows of 64: those live on
// the stack (a heap vector cost a malloc and a free per MPI_Waitall, 5% of an
// Isend/Irecv/Waitall round trip).
class Collected {
public:
    Collected() = default;
    Collected(const Collected&) = delete;
    Collected& operator=(const Collected&) = delete;
    void assign(int count) {
        n_ = static_cast<size_t>(count);
        if (n_ > kInline) {
            heap_.assign(n_, nullptr);
            data_ = heap_.data();
        } else {
            std::fill(inline_, inline_ + n_, nullptr);
        }
    }
    Request*& operator[](size_t i) { return data_[i]; }
    Request* operator[](size_t i) const { return data_[i]; }
    Request* const* begin() const { return data_; }
    Request* const* end() const { return data_ + n_; }

private:
    static constexpr size_t kInline = 64;
    Request* inline_[kInline];
    std::vector<Request*> heap_;
    Request** data_ = inline_;
    size_t n_ = 0;
};

// Whether every active request of rs has completed.
bool all_complete(const Collected& rs) {
    for (Request* r : rs)
        if (r && !r->is_complete()) return false;
    return true;
}

// Active requests of an array (null entries and inactive persistent ones skipped).
int collect(int count, const MPI_Request* reqs, Collected& out) {
    out.assign(count);
    for (int i = 0; i < count; ++i) {
        Request* r;
        if (int e = lookup(reqs[i], &r)) return e;
        if (!request_inactive(reqs[i], r)) out[static_cast<size_t>(i)] = r;
    }
    return MPI_SUCCESS;
}

// Blocks until at least one of rs (non-null entries) is complete.
void wait_any_of(const Collected& rs) {
    auto any_done = [&] {
        for (Request* r : rs)
            if (r && r->is_complete()) return true;
        return false;
    };
    if (any_done()) return;
    bool collective = false;
    for (Request* r : rs) collective = collective || (r && r->kind == Request::Kind::Collective);
    block_until(
        any_done,
        [&](mpc::sched::Waiter* w) {
            for (Request* r : rs)
                if (r) r->arm(w);
        },
        [&](mpc::sched::Waiter* w) {
            for (Request* r : rs)
                if (r) r->disarm(w);
        },
        collective);
}

// The requests' own codes, for the MPI_ERROR fields of an array of statuses:
// written only when the call returns MPI_ERR_IN_STATUS, then in every status
// it returns (MPI_SUCCESS for the requests that did not fail). Kept only once
// one failed: the common call allocates nothing.
class Codes {
public:
    void note(int i, int code, Comm* c) {
        if (code == MPI_SUCCESS) {
            if (!codes_.empty()) codes_.push_back(MPI_SUCCESS);
            return;
        }
        if (codes_.empty()) codes_.assign(static_cast<size_t>(i), MPI_SUCCESS);
        codes_.push_back(code);
        if (!failed_on_) failed_on_ = c;
        failed_ = true;
    }
    // MPI_SUCCESS, or MPI_ERR_IN_STATUS raised with the fields of the first n
    // statuses written.
    int result(MPI_Status* statuses, int n) const {
        if (!failed_) return MPI_SUCCESS;
        if (!ignore(statuses))
            for (int i = 0; i < n; ++i)
                statuses[i].MPI_ERROR =
                    static_cast<size_t>(i) < codes_.size() ? codes_[static_cast<size_t>(i)]
                                                            : MPI_SUCCESS;
        return raise(failed_on_, MPI_ERR_IN_STATUS);
    }

private:
    std::vector<int> codes_;  // empty until a failure
    Comm* failed_on_ = nullptr;
    bool failed_ = false;
};

// Waitall/Testall epilogue: statuses out, requests finished; MPI_ERR_IN_STATUS
// when any failed.
int finish_all(int count, MPI_Request* reqs, const Collected& rs,
               MPI_Status* statuses) {
    Codes codes;
    for (int i = 0; i < count; ++i) {
        Request* r = rs[static_cast<size_t>(i)];
        MPI_Status* st = ignore(statuses) ? MPI_STATUS_IGNORE : &statuses[i];
        if (!r) {
            set_empty_status(st);
            codes.note(i, MPI_SUCCESS, nullptr);
            continue;
        }
        Comm* c = r->comm;
        codes.note(i, finish_request(r, &reqs[i], st), c);
    }
    return codes.result(statuses, count);
}

}  // namespace

extern "C" {

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Wait);
    if (!request) return raise(nullptr, make_error(MPI_ERR_REQUEST, "request is NULL"));
    Request* r;
    if (int e = lookup(*request, &r)) return raise(nullptr, e);
    if (request_inactive(*request, r)) {
        set_empty_status(status);
        return MPI_SUCCESS;
    }
    wait_complete(r);
    Comm* c = r->comm;
    return raise(c, finish_request(r, request, status));
}

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Test);
    if (!request || !flag)
        return raise(nullptr, make_error(MPI_ERR_ARG, "request or flag is NULL"));
    Request* r;
    if (int e = lookup(*request, &r)) return raise(nullptr, e);
    if (request_inactive(*request, r)) {
        *flag = 1;
        set_empty_status(status);
        return MPI_SUCCESS;
    }
    if (!r->is_complete()) progress_for_test();
    *flag = r->is_complete();
    if (!*flag) return MPI_SUCCESS;
    Comm* c = r->comm;
    return raise(c, finish_request(r, request, status));
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
    MPC_ENTER_ACTIVE(Waitall);
    if (int e = check_array(count, array_of_requests)) return raise(nullptr, e);
    Collected rs;
    if (int e = collect(count, array_of_requests, rs)) return raise(nullptr, e);
    for (Request* r : rs)
        if (r) wait_complete(r);
    return finish_all(count, array_of_requests, rs, array_of_statuses);
}

int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag,
                 MPI_Status array_of_statuses[]) {
    MPC_ENTER_ACTIVE(Testall);
    if (int e = check_array(count, array_of_requests)) return raise(nullptr, e);
    if (!flag) return raise(nullptr, make_error(MPI_ERR_ARG, "flag is NULL"));
    Collected rs;
    if (int e = collect(count, array_of_requests, rs)) return raise(nullptr, e);
    if (!all_complete(rs)) progress_for_test();
    *flag = all_complete(rs);
    if (!*flag) return MPI_SUCCESS;
    return finish_all(count, array_of_requests, rs, array_of_statuses);
}

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Waitany);
    if (int e = check_array(count, array_of_requests)) return raise(nullptr, e);
    if (!index) return raise(nullptr, make_error(MPI_ERR_ARG, "index is NULL"));
    Collected rs;
    if (int e = collect(count, array_of_requests, rs)) return raise(nullptr, e);
    bool any = false;
    for (Request* r : rs) any = any || r;
    if (!any) {
        *index = MPI_UNDEFINED;
        set_empty_status(status);
        return MPI_SUCCESS;
    }
    wait_any_of(rs);
    for (int i = 0; i < count; ++i) {
        Request* r = rs[static_cast<size_t>(i)];
        if (r && r->is_complete()) {
            *index = i;
            Comm* c = r->comm;
            return raise(c, finish_request(r, &array_of_requests[i], status));
        }
    }
    return raise(nullptr, make_error(MPI_ERR_INTERN, "Waitany woke without a completion"));
}

int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag,
                 MPI_Status* status) {
    MPC_ENTER_ACTIVE(Testany);
    if (int e = check_array(count, array_of_requests)) return raise(nullptr, e);
    if (!index || !flag) return raise(nullptr, make_error(MPI_ERR_ARG, "index or flag is NULL"));
    Collected rs;
    if (int e = collect(count, array_of_requests, rs)) return raise(nullptr, e);
    bool any = false;
    for (Request* r : rs) any = any || r;
    if (!any) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        set_empty_status(status);
        return MPI_SUCCESS;
    }
    bool any_done = false;
    for (Request* r : rs) any_done = any_done || (r && r->is_complete());
    if (!any_done) progress_for_test();
    for (int i = 0; i < count; ++i) {
        Request* r = rs[static_cast<size_t>(i)];
        if (r && r->is_complete()) {
            *flag = 1;
            *index = i;
            Comm* c = r->comm;
            return raise(c, finish_request(r, &array_of_requests[i], status));
        }
    }
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int some(int incount, MPI_Request* reqs, int* outcount, int* indices,
                MPI_Status* statuses, bool block) {
    if (int e = check_array(incount, reqs)) return raise(nullptr, e);
    if (!outcount || (incount > 0 && !indices))
        return raise(nullptr, make_error(MPI_ERR_ARG, "outcount or array_of_indices is NULL"));
    Collected rs;
    if (int e = collect(incount, reqs, rs)) return raise(nullptr, e);
    bool any = false;
    for (Request* r : rs) any = any || r;
    if (!any) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (block) {
        wait_any_of(rs);
    } else {
        bool any_done = false;
        for (Request* r : rs) any_done = any_done || (r && r->is_complete());
        if (!any_done) progress_for_test();
    }
    int n = 0;
    Codes codes;
    for (int i = 0; i < incount; ++i) {
        Request* r = rs[static_cast<size_t>(i)];
        if (!r || !r->is_complete()) continue;
        MPI_Status* st = ignore(statuses) ? MPI_STATUS_IGNORE : &statuses[n];
        Comm* c = r->comm;
        codes.note(n, finish_request(r, &reqs[i], st), c);
        indices[n++] = i;
    }
    *outcount = n;
    return codes.result(statuses, n);
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[]) {
    MPC_ENTER_ACTIVE(Waitsome);
    return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, true);
}

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[]) {
    MPC_ENTER_ACTIVE(Testsome);
    return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses,
                false);
}

int PMPI_Request_free(MPI_Request* request) {
    MPC_ENTER_ACTIVE(Request_free);
    if (!request) return raise(nullptr, make_error(MPI_ERR_REQUEST, "request is NULL"));
    Request* r;
    if (int e = lookup(*request, &r)) return raise(nullptr, e);
    if (!r) return raise(nullptr, make_error(MPI_ERR_REQUEST, "MPI_REQUEST_NULL passed"));
    if (r->persistent && r->active &&
        (r->kind == Request::Kind::Collective || r->kind == Request::Kind::Partitioned))
        return raise(r->comm, make_error(MPI_ERR_REQUEST,
                                         "an active persistent collective or partitioned request "
                                         "cannot be freed: complete it first"));
    // Pending requests are recycled by whoever completes them (a generalized
    // one's free_fn runs then, in MPI_Grequest_complete).
    int err = MPI_SUCCESS;
    if (!r->mark_user_freed()) {
        err = grequest_free(r);
        request_release(r);
    }
    *request = MPI_REQUEST_NULL;
    return raise(nullptr, err);
}

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Request_get_status);
    if (!flag) return raise(nullptr, make_error(MPI_ERR_ARG, "flag is NULL"));
    Request* r;
    if (int e = lookup(request, &r)) return raise(nullptr, e);
    if (request_inactive(request, r)) {
        *flag = 1;
        set_empty_status(status);
        return MPI_SUCCESS;
    }
    if (!r->is_complete()) progress_for_test();
    *flag = r->is_complete();
    if (!*flag) return MPI_SUCCESS;
    if (r->kind == Request::Kind::Generalized) return raise(r->comm, grequest_query(r, status));
    status_out(status, r->status);
    return MPI_SUCCESS;
}

// The status of a completed request, the request left as it is; returns the
// request's own error code (a generalized request's from its query_fn).
static int peek_status(Request* r, MPI_Status* status) {
    if (r->kind == Request::Kind::Generalized) return grequest_query(r, status);
    status_out(status, r->status);
    return r->status.MPI_ERROR;
}

// Whether any request is active, and whether any of those has completed.
static std::pair<bool, bool> any_active_done(const Collected& rs) {
    bool any = false, done = false;
    for (Request* r : rs) {
        any = any || r;
        done = done || (r && r->is_complete());
    }
    return {any, done};
}

// MPI 4.1 section 3.7.6: as MPI_Testany, but the request is neither freed nor
// made inactive; no active request: flag true, index MPI_UNDEFINED.
int PMPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int* index,
                                int* flag, MPI_Status* status) {
    MPC_ENTER_ACTIVE(Request_get_status_any);
    if (int e = check_array(count, array_of_requests)) return raise(nullptr, e);
    if (!index || !flag) return raise(nullptr, make_error(MPI_ERR_ARG, "index or flag is NULL"));
    Collected rs;
    if (int e = collect(count, array_of_requests, rs))
        return raise(nullptr, e);
    const auto [any, any_done] = any_active_done(rs);
    *index = MPI_UNDEFINED;
    if (!any) {
        *flag = 1;
        set_empty_status(status);
        return MPI_SUCCESS;
    }
    if (!any_done) progress_for_test();
    for (int i = 0; i < count; ++i) {
        Request* r = rs[static_cast<size_t>(i)];
        if (r && r->is_complete()) {
            *flag = 1;
            *index = i;
            return raise(r->comm, peek_status(r, status));
        }
    }
    *flag = 0;
    return MPI_SUCCESS;
}

// As MPI_Testall without freeing: flag true when every active request has
// completed, then the statuses (empty ones for null and inactive handles).
int PMPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int* flag,
                                MPI_Status array_of_statuses[]) {
    MPC_ENTER_ACTIVE(Request_get_status_all);
    if (int e = check_array(count, array_of_requests)) return raise(nullptr, e);
    if (!flag) return raise(nullptr, make_error(MPI_ERR_ARG, "flag is NULL"));
    Collected rs;
    if (int e = collect(count, array_of_requests, rs))
        return raise(nullptr, e);
    if (!all_complete(rs)) progress_for_test();
    *flag = all_complete(rs);
    if (!*flag) return MPI_SUCCESS;
    Codes codes;
    for (int i = 0; i < count; ++i) {
        Request* r = rs[static_cast<size_t>(i)];
        MPI_Status* st = ignore(array_of_statuses) ? MPI_STATUS_IGNORE : &array_of_statuses[i];
        if (!r) {
            set_empty_status(st);
            codes.note(i, MPI_SUCCESS, nullptr);
            continue;
        }
        codes.note(i, peek_status(r, st), r->comm);
    }
    return codes.result(array_of_statuses, count);
}

// As MPI_Testsome without freeing: the completed active requests' indices
// and statuses; outcount MPI_UNDEFINED when no request is active.
int PMPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[],
                                 int* outcount, int array_of_indices[],
                                 MPI_Status array_of_statuses[]) {
    MPC_ENTER_ACTIVE(Request_get_status_some);
    if (int e = check_array(incount, array_of_requests)) return raise(nullptr, e);
    if (!outcount || (incount > 0 && !array_of_indices))
        return raise(nullptr, make_error(MPI_ERR_ARG, "outcount or array_of_indices is NULL"));
    Collected rs;
    if (int e = collect(incount, array_of_requests, rs))
        return raise(nullptr, e);
    const auto [any, any_done] = any_active_done(rs);
    if (!any) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (!any_done) progress_for_test();
    int n = 0;
    Codes codes;
    for (int i = 0; i < incount; ++i) {
        Request* r = rs[static_cast<size_t>(i)];
        if (!r || !r->is_complete()) continue;
        MPI_Status* st = ignore(array_of_statuses) ? MPI_STATUS_IGNORE : &array_of_statuses[n];
        codes.note(n, peek_status(r, st), r->comm);
        array_of_indices[n++] = i;
    }
    *outcount = n;
    return codes.result(array_of_statuses, n);
}

int PMPI_Cancel(MPI_Request* request) {
    MPC_ENTER_ACTIVE(Cancel);
    if (!request) return raise(nullptr, make_error(MPI_ERR_REQUEST, "request is NULL"));
    Request* r;
    if (int e = lookup(*request, &r)) return raise(nullptr, e);
    if (!r) return raise(nullptr, make_error(MPI_ERR_REQUEST, "MPI_REQUEST_NULL passed"));
    if (r->persistent && !r->active)
        return raise(r->comm, make_error(MPI_ERR_REQUEST, "the persistent request is inactive"));
    if (r->kind == Request::Kind::Collective && !(r->operation && r->operation->cancel()))
        return raise(r->comm, make_error(MPI_ERR_REQUEST,
                                         "a nonblocking collective operation cannot be cancelled"));
    // A generalized request's cancel_fn is told whether it completed already.
    if (r->kind == Request::Kind::Generalized) {
        if (!r->cancel_fn) return MPI_SUCCESS;
        return raise(r->comm, r->cancel_fn(r->extra_state, r->is_complete()));
    }
    // Receives that have not matched are cancelled; a send, once started, is
    // delivered (the standard allows a cancel to fail: Test_cancelled says false).
    if (r->kind == Request::Kind::Recv && !r->is_complete()) p2p_cancel_recv(r);
    return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
    MPC_ENTER_ACTIVE(Test_cancelled);
    if (ignore(status) || !flag)
        return raise(nullptr, make_error(MPI_ERR_ARG, "status or flag is NULL"));
    *flag = status->mpc_cancelled;
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Wait)
MPC_WEAK(MPI_Test)
MPC_WEAK(MPI_Waitall)
MPC_WEAK(MPI_Testall)
MPC_WEAK(MPI_Waitany)
MPC_WEAK(MPI_Testany)
MPC_WEAK(MPI_Waitsome)
MPC_WEAK(MPI_Testsome)
MPC_WEAK(MPI_Request_free)
MPC_WEAK(MPI_Request_get_status)
MPC_WEAK(MPI_Request_get_status_any)
MPC_WEAK(MPI_Request_get_status_all)
MPC_WEAK(MPI_Request_get_status_some)
MPC_WEAK(MPI_Cancel)
MPC_WEAK(MPI_Test_cancelled)
