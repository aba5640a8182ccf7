// Communicator constructors, destructor, comparison and accessors.
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "mpi_api/alloc_kinds.hpp"
#include "mpi_api/comm_ops.hpp"
#include "mpi_api/hardware.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "object_checks.hpp"
#include "requests.hpp"
#include "scheduler/scheduler.hpp"

using namespace mpc::mpi;

namespace {

// Every member of g must be a rank of c.
int check_subgroup(const Comm* c, const GroupData& g) {
    for (int r = 0; r < g.size; ++r)
        if (c->group->rank_of(g.world_rank(r)) == MPI_UNDEFINED)
            return make_error(MPI_ERR_GROUP,
                              "rank %d of the group (world rank %d) is not in the communicator", r,
                              g.world_rank(r));
    return MPI_SUCCESS;
}

// The info hints a communicator keeps: MPI_Comm_get_info returns "the hints
// actually used by the system" (MPI 3.1 section 6.4.4), so a key nobody
// defined is dropped, not echoed. The assertions MPI 4.0 defines for
// communicators are the keys kept (a program may rely on none of them:
// ignoring one changes nothing), with the values "true" or "false".
bool is_comm_hint(const std::string& key, const std::string& value) {
    static const char* const kKeys[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
                                        "mpi_assert_exact_length",
                                        "mpi_assert_allow_overtaking"};
    if (value != "true" && value != "false") return false;
    for (const char* k : kKeys)
        if (key == k) return true;
    return false;
}

void keep_hints(std::map<std::string, std::string>* hints, const Info* i) {
    if (!i) return;
    for (const auto& [k, v] : i->entries)
        if (is_comm_hint(k, v)) (*hints)[k] = v;
}

void keep_hints(Comm* c, const Info* i) {
    keep_hints(&c->hints, i);
}

// MPI_Comm_idup: the duplication runs in a task of the calling rank (the
// agreement blocks until every member has started its own), on the caller's
// virtual processor; the request completes when it is done.
struct IdupWork {
    Comm* old;
    DupTags tags;
    MPI_Comm* newcomm;
    Request* request;
    // MPI_Comm_idup_with_info: the hints of the info, taken in the call (the
    // info may be freed before the duplication runs).
    bool with_info = false;
    std::map<std::string, std::string> hints;
};

void idup_task(void* p) {
    std::unique_ptr<IdupWork> w(static_cast<IdupWork*>(p));
    Comm* n = nullptr;
    const int e = comm_dup_reserved(w->old, w->tags, &n);
    if (n && w->with_info) n->hints = std::move(w->hints);
    *w->newcomm = handle_or_null(n);
    set_empty_status(&w->request->status);
    if (e)
        complete_with_error(w->request, e);
    else
        complete(w->request);
}

int idup(Comm* c, MPI_Comm* newcomm, MPI_Request* request, const Info* info) {
    MPC_TRY(c, check_not_null(newcomm, "newcomm"));
    MPC_TRY(c, check_not_null(request, "request"));
    Request* r = request_allocate(Request::Kind::Collective, c->owner, c);
    r->active = true;
    auto* work = new IdupWork{c, reserve_dup_tags(c), newcomm, r, false, {}};
    if (info) {
        work->with_info = true;
        keep_hints(&work->hints, info);
    }
    *request = r->handle;
    if (mpc::sched::Scheduler* s = mpc::sched::current_scheduler()) {
        const int vp = mpc::sched::current_vp_index();
        s->spawn(vp >= 0 ? vp : c->owner->vp, idup_task, work, c->owner);
    } else {
        idup_task(work);  // no scheduler (never while ranks run): at once
    }
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_dup);
    Comm *c = nullptr, *n = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(newcomm, "newcomm"));
    MPC_TRY(c, comm_dup(c, &n));
    *newcomm = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
    MPC_ENTER_ACTIVE(Comm_idup);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    return idup(c, newcomm, request, nullptr);
}

// MPI 4.0 section 7.4.2: as MPI_Comm_idup, the new communicator's hints
// being those of info instead of comm's.
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                             MPI_Request* request) {
    MPC_ENTER_ACTIVE(Comm_idup_with_info);
    Comm* c = nullptr;
    Info* i = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_info_arg(info, &i));
    static const Info kNoHints;
    return idup(c, newcomm, request, i ? i : &kNoHints);
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_dup_with_info);
    Comm *c = nullptr, *n = nullptr;
    Info* i = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(newcomm, "newcomm"));
    MPC_TRY(c, check_info_arg(info, &i));
    MPC_TRY(c, comm_dup(c, &n));
    n->hints.clear();
    keep_hints(n, i);
    *newcomm = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_split);
    Comm *c = nullptr, *n = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(newcomm, "newcomm"));
    if (color < 0 && color != MPI_UNDEFINED)
        return raise(c,
                     make_error(MPI_ERR_ARG, "color %d: colors are >= 0 or MPI_UNDEFINED", color));
    MPC_TRY(c, comm_split(c, color, key, &n));
    *newcomm = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_split_type);
    Comm *c = nullptr, *n = nullptr;
    Info* i = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(newcomm, "newcomm"));
    MPC_TRY(c, check_info_arg(info, &i));
    const std::string* hw = i ? i->find(kHwResourceKey) : nullptr;
    switch (split_type) {
        case MPI_UNDEFINED:
            MPC_TRY(c, comm_split(c, MPI_UNDEFINED, key, &n));
            break;
        case MPI_COMM_TYPE_SHARED:
            // Shared memory spans exactly the ranks of the caller's node
            // process. On an intercommunicator (MPI 3.1 allows any) the split
            // pairs the local and remote ranks of each node process, as
            // MPI_Comm_split does.
            MPC_TRY(c,
                    comm_split(c, world().node_of[static_cast<size_t>(me->world_rank)], key, &n));
            break;
        case MPI_COMM_TYPE_HW_GUIDED:
            // MPI 4.0 section 7.4.2: no info, no key or a value nobody knows
            // gives MPI_COMM_NULL (the value is the same at every rank).
            if (hw) MPC_TRY(c, comm_split_hw_guided(c, *hw, key, &n));
            break;
        case MPI_COMM_TYPE_HW_UNGUIDED:
            MPC_TRY(c, comm_split_hw_unguided(c, key, &n));
            break;
        case MPI_COMM_TYPE_RESOURCE_GUIDED:
            // MPI 4.1: a process set, or a hardware resource as HW_GUIDED.
            if (const std::string* pset = i ? i->find("mpi_pset_name") : nullptr)
                MPC_TRY(c, comm_split_pset(c, *pset, key, &n));
            else if (hw)
                MPC_TRY(c, comm_split_hw_guided(c, *hw, key, &n));
            break;
        default:
            return raise(c, make_error(MPI_ERR_ARG,
                                       "split_type %d: MPI_COMM_TYPE_SHARED, _HW_GUIDED, "
                                       "_HW_UNGUIDED, _RESOURCE_GUIDED or MPI_UNDEFINED expected",
                                       split_type));
    }
    *newcomm = handle_or_null(n);
    return MPI_SUCCESS;
}

// MPI 4.1 section 11.4: the hardware the calling rank runs on.
int PMPI_Get_hw_resource_info(MPI_Info* hw_info) {
    MPC_ENTER_ACTIVE(Get_hw_resource_info);
    MPC_TRY(nullptr, check_not_null(hw_info, "hw_info"));
    *hw_info = info_create(hw_resource_info(me));
    return MPI_SUCCESS;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_create);
    Comm *c = nullptr, *n = nullptr;
    Group* g = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(newcomm, "newcomm"));
    MPC_TRY(c, check_group(group, &g));
    MPC_TRY(c, check_subgroup(c, *g->data));  // of the local group on an intercommunicator
    MPC_TRY(c, comm_create(c, g->data, &n));
    *newcomm = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
    MPC_ENTER_ACTIVE(Comm_create_group);
    Comm *c = nullptr, *n = nullptr;
    Group* g = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(newcomm, "newcomm"));
    MPC_TRY(c, check_group(group, &g));
    MPC_TRY(c, check_intra(c));
    MPC_TRY(c, check_tag(tag, false));
    MPC_TRY(c, check_subgroup(c, *g->data));
    MPC_TRY(c, comm_create_group(c, g->data, tag, &n));
    *newcomm = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm* comm) {
    MPC_ENTER_ACTIVE(Comm_free);
    Comm* c = nullptr;
    if (!comm) return raise(nullptr, make_error(MPI_ERR_ARG, "comm is NULL"));
    if (int e = check_comm(*comm, &c)) return raise(nullptr, e);
    if (c->predefined)
        return raise(c, make_error(MPI_ERR_COMM, "%s cannot be freed", c->name.c_str()));
    bsend_flush(c->bsend.get());  // an attached buffer's messages leave first
    MPC_TRY(c, comm_free(c));
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

// MPI_Comm_disconnect (MPI 3.1 section 10.5.4), on any communicator: the
// caller's operations still pending on it complete first (nonblocking ones,
// freed ones included), then every member has arrived (a barrier: theirs
// completed too), then the communicator is freed.
namespace {
struct Look {
    const Comm* c;
    RankState* me;
    bool found;
};

// Looks at every live request of the node process, some of them being set
// up or released by their ranks meanwhile: only the caller's own count (no
// one else writes those), and a stale field of another rank's request costs
// at most one more round of the caller's loop. Hidden from ThreadSanitizer
// for that reason (it saw Request::reset of another rank's request).
__attribute__((no_sanitize("thread"), noinline)) void look_at(Request* r, void* p) {
    auto* l = static_cast<Look*>(p);
    if (r->rank == l->me && r->comm == l->c && !(r->persistent && !r->active) &&
        !r->is_complete())
        l->found = true;
}

bool pending_on(const Comm* c, RankState* me) {
    Look look{c, me, false};
    request_for_each_live(look_at, &look);
    return look.found;
}
}  // namespace

int PMPI_Comm_disconnect(MPI_Comm* comm) {
    MPC_ENTER_ACTIVE(Comm_disconnect);
    Comm* c = nullptr;
    if (!comm) return raise(nullptr, make_error(MPI_ERR_ARG, "comm is NULL"));
    if (int e = check_comm(*comm, &c)) return raise(nullptr, e);
    if (c->predefined)
        return raise(c, make_error(MPI_ERR_COMM, "%s cannot be disconnected", c->name.c_str()));
    while (pending_on(c, me)) progress_for_test();
    if (int e = PMPI_Barrier(*comm)) return e;  // raised by the barrier
    bsend_flush(c->bsend.get());
    MPC_TRY(c, comm_free(c));
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
    MPC_ENTER_ACTIVE(Comm_compare);
    Comm *a = nullptr, *b = nullptr;
    if (int e = check_comm(comm1, &a)) return raise(nullptr, e);
    if (int e = check_comm(comm2, &b)) return raise(nullptr, e);
    if (!result) return raise(a, make_error(MPI_ERR_ARG, "result is NULL"));
    *result = comm_compare(a, b);
    return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
    MPC_ENTER_ACTIVE(Comm_group);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!group) return raise(c, make_error(MPI_ERR_ARG, "group is NULL"));
    *group = group_create(c->group);
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
    MPC_ENTER_ACTIVE(Comm_remote_size);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!size) return raise(c, make_error(MPI_ERR_ARG, "size is NULL"));
    if (!c->is_inter())
        return raise(c,
                     make_error(MPI_ERR_COMM, "MPI_Comm_remote_size needs an intercommunicator"));
    *size = c->remote_group->size;
    return MPI_SUCCESS;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
    MPC_ENTER_ACTIVE(Comm_remote_group);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!group) return raise(c, make_error(MPI_ERR_ARG, "group is NULL"));
    if (!c->is_inter())
        return raise(c,
                     make_error(MPI_ERR_COMM, "MPI_Comm_remote_group needs an intercommunicator"));
    *group = group_create(c->remote_group);
    return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
    MPC_ENTER_ACTIVE(Comm_test_inter);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!flag) return raise(c, make_error(MPI_ERR_ARG, "flag is NULL"));
    *flag = c->is_inter();
    return MPI_SUCCESS;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm* newintercomm) {
    MPC_ENTER_ACTIVE(Intercomm_create);
    Comm *c = nullptr, *peer = nullptr, *n = nullptr;
    if (int e = check_comm(local_comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(newintercomm, "newintercomm"));
    MPC_TRY(c, check_intra(c));
    if (local_leader < 0 || local_leader >= c->size)
        return raise(c, make_error(MPI_ERR_RANK,
                                   "local_leader %d: the local communicator has %d "
                                   "ranks",
                                   local_leader, c->size));
    MPC_TRY(c, check_tag(tag, false));
    if (c->rank == local_leader) {  // peer_comm and remote_leader matter there only
        if (int e = check_comm(peer_comm, &peer)) return raise(c, e);
        MPC_TRY(c, check_intra(peer));
        if (remote_leader < 0 || remote_leader >= peer->size || remote_leader == peer->rank)
            return raise(c, make_error(MPI_ERR_RANK,
                                       "remote_leader %d is not another rank of peer_comm (size "
                                       "%d)",
                                       remote_leader, peer->size));
    }
    MPC_TRY(c, intercomm_create(c, local_leader, peer, remote_leader, tag, &n));
    *newintercomm = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
    MPC_ENTER_ACTIVE(Intercomm_merge);
    Comm *c = nullptr, *n = nullptr;
    if (int e = check_comm(intercomm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_not_null(newintracomm, "newintracomm"));
    if (!c->is_inter())
        return raise(c, make_error(MPI_ERR_COMM, "MPI_Intercomm_merge needs an intercommunicator"));
    MPC_TRY(c, intercomm_merge(c, high != 0, &n));
    *newintracomm = handle_or_null(n);
    return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
    MPC_ENTER_ACTIVE(Comm_set_name);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!comm_name) return raise(c, make_error(MPI_ERR_ARG, "comm_name is NULL"));
    c->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
    return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
    MPC_ENTER_ACTIVE(Comm_get_name);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!comm_name || !resultlen)
        return raise(c, make_error(MPI_ERR_ARG, "comm_name or resultlen is NULL"));
    memcpy(comm_name, c->name.c_str(), c->name.size() + 1);
    *resultlen = static_cast<int>(c->name.size());
    return MPI_SUCCESS;
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
    MPC_ENTER_ACTIVE(Comm_set_info);
    Comm* c = nullptr;
    Info* i = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    MPC_TRY(c, check_info_arg(info, &i));
    keep_hints(c, i);
    return MPI_SUCCESS;
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
    MPC_ENTER_ACTIVE(Comm_get_info);
    Comm* c = nullptr;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (!info_used) return raise(c, make_error(MPI_ERR_ARG, "info_used is NULL"));
    Info copy;
    for (const auto& [k, v] : c->hints) copy.set(k, v);
    copy.set(kAllocKindsKey, alloc_kinds_of(c));
    *info_used = info_create(std::move(copy));
    return MPI_SUCCESS;
}

int PMPI_Comm_get_parent(MPI_Comm* parent) {
    MPC_ENTER_ACTIVE(Comm_get_parent);
    if (!parent) return raise(nullptr, make_error(MPI_ERR_ARG, "parent is NULL"));
    *parent = MPI_COMM_NULL;  // no process is ever spawned
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Comm_dup)
MPC_WEAK(MPI_Comm_dup_with_info)
MPC_WEAK(MPI_Comm_idup)
MPC_WEAK(MPI_Comm_idup_with_info)
MPC_WEAK(MPI_Get_hw_resource_info)
MPC_WEAK(MPI_Comm_split)
MPC_WEAK(MPI_Comm_split_type)
MPC_WEAK(MPI_Comm_create)
MPC_WEAK(MPI_Comm_create_group)
MPC_WEAK(MPI_Comm_free)
MPC_WEAK(MPI_Comm_compare)
MPC_WEAK(MPI_Comm_group)
MPC_WEAK(MPI_Comm_remote_size)
MPC_WEAK(MPI_Comm_remote_group)
MPC_WEAK(MPI_Comm_test_inter)
MPC_WEAK(MPI_Intercomm_create)
MPC_WEAK(MPI_Intercomm_merge)
MPC_WEAK(MPI_Comm_set_name)
MPC_WEAK(MPI_Comm_get_name)
MPC_WEAK(MPI_Comm_set_info)
MPC_WEAK(MPI_Comm_get_info)
MPC_WEAK(MPI_Comm_get_parent)
MPC_WEAK(MPI_Comm_disconnect)
