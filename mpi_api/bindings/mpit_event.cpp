// MPI_T events (MPI 4.1 section 15.3.8): event registrations, their callbacks
// and hints, and the delivery of raised events (see mpit_event.hpp for when a
// callback is called at once and when it is buffered). Every call returns an
// MPI_T error class directly; a registration is an invalid handle for any
// rank but its owner.
#include "mpit_event.hpp"

#include <algorithm>
#include <cstring>

#include "mpi_api/info.hpp"
#include "mpi_api/rank.hpp"

using namespace mpc::mpi;
using namespace mpc::mpi::tools;
namespace rt = mpc::runtime::tools;

namespace mpc::mpi::tools {

std::mutex g_event_mutex;

namespace {

// Every live registration of the node process (g_event_mutex): few, scanned.
std::vector<mpc_t_event_registration_s*>& registrations() {
    static auto* v = new std::vector<mpc_t_event_registration_s*>();
    return *v;
}

bool valid_safety(int s) {
    return s >= MPI_T_CB_REQUIRE_NONE && s <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE;
}

// The least demanding callback of at least `level`, or -1 (mutex held).
int callback_from(const mpc_t_event_registration_s* r, int level) {
    for (int l = level; l <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE; ++l)
        if (r->callbacks[l].fn) return l;
    return -1;
}

// Opens or closes the event's gate as the registration gains its first
// callback or loses its last (mutex held).
void update_listening(mpc_t_event_registration_s* r) {
    const bool now = !r->freed && callback_from(r, MPI_T_CB_REQUIRE_NONE) >= 0;
    if (now == r->listening) return;
    r->listening = now;
    rt::EventSite* site = rt::event_site(r->event);
    if (!site) return;
    if (now)
        site->gate.open();
    else
        site->gate.close();
}

// Ends one callback of r: the last one of a freed registration frees it.
// Called without the mutex; `safety` is what the calling context allows.
void end_callback(mpc_t_event_registration_s* r, MPI_T_cb_safety safety) {
    std::unique_lock<std::mutex> g(g_event_mutex);
    if (--r->in_flight > 0 || !r->freed) return;
    g.unlock();
    if (r->free_fn) r->free_fn(r, safety, r->free_user_data);
    delete r;
}

void fill_instance(mpc_t_event_instance_s* inst, const mpc_t_event_registration_s* r,
                   int64_t time_ns, const void* data, size_t bytes) {
    inst->time_ns = time_ns;
    inst->type = r->type.get();
    inst->offsets = &r->offsets;
    inst->bytes = std::min(bytes, sizeof inst->data);
    memcpy(inst->data, data, inst->bytes);
}

// A callback to call, as it was when the event was raised (the owner may
// change the registration's callbacks meanwhile).
struct Call {
    mpc_t_event_registration_s* reg;
    int level;
    MPI_T_event_cb_function* fn;
    void* user_data;
};

// The runtime's sink: any thread, maybe under a matching lock.
void sink(int index, int local, int64_t time_ns, const void* data, size_t bytes) {
    Call calls[16];
    int n = 0;
    {
        std::lock_guard<std::mutex> g(g_event_mutex);
        for (mpc_t_event_registration_s* r : registrations()) {
            if (r->event != index || !r->listening || (local >= 0 && r->local != local)) continue;
            const int level = callback_from(r, MPI_T_CB_REQUIRE_THREAD_SAFE);
            if (level >= 0 && n < static_cast<int>(std::size(calls))) {
                ++r->in_flight;
                calls[n++] = Call{r, level, r->callbacks[level].fn, r->callbacks[level].user_data};
            } else if (level < 0 && r->pending.size() < kMaxPending) {
                auto& p = r->pending.emplace_back();
                p.time_ns = time_ns;
                p.bytes = std::min(bytes, sizeof p.data);
                memcpy(p.data, data, p.bytes);
            } else {
                ++r->dropped_count;
            }
        }
    }
    for (int i = 0; i < n; ++i) {
        mpc_t_event_registration_s* r = calls[i].reg;
        mpc_t_event_instance_s inst;
        fill_instance(&inst, r, time_ns, data, bytes);
        calls[i].fn(&inst, r, static_cast<MPI_T_cb_safety>(calls[i].level), calls[i].user_data);
        end_callback(r, MPI_T_CB_REQUIRE_THREAD_SAFE);
    }
}

// A thread delivering buffered events: callbacks that call MPI_T again do not
// deliver again (the order of one registration's events holds).
thread_local bool t_delivering = false;

}  // namespace

mpc_t_event_registration_s* find_registration(RankState* me, MPI_T_event_registration r) {
    for (mpc_t_event_registration_s* x : registrations())
        if (x == r) return x->owner == me ? x : nullptr;
    return nullptr;
}

void deliver_pending(RankState* me) {
    if (!me || t_delivering) return;
    t_delivering = true;
    for (;;) {
        mpc_t_event_registration_s* r = nullptr;
        std::deque<mpc_t_event_registration_s::Pending> batch;
        unsigned long long dropped = 0;
        int level = -1;
        MPI_T_event_cb_function* fn = nullptr;
        MPI_T_event_dropped_cb_function* dropped_fn = nullptr;
        void* user_data = nullptr;
        {
            std::lock_guard<std::mutex> g(g_event_mutex);
            for (mpc_t_event_registration_s* x : registrations()) {
                if (x->owner != me || (x->pending.empty() && !x->dropped_count)) continue;
                level = callback_from(x, MPI_T_CB_REQUIRE_NONE);
                if (level < 0) continue;  // no callback now: kept for a later one
                r = x;
                batch.swap(x->pending);
                dropped = std::exchange(x->dropped_count, 0);
                fn = x->callbacks[level].fn;
                user_data = x->callbacks[level].user_data;
                dropped_fn = x->dropped;
                ++r->in_flight;
                break;
            }
        }
        if (!r) break;
        for (const auto& p : batch) {
            mpc_t_event_instance_s inst;
            fill_instance(&inst, r, p.time_ns, p.data, p.bytes);
            fn(&inst, r, static_cast<MPI_T_cb_safety>(level), user_data);
        }
        if (dropped && dropped_fn)
            dropped_fn(static_cast<MPI_Count>(dropped), r, 0, static_cast<MPI_T_cb_safety>(level),
                       user_data);
        end_callback(r, MPI_T_CB_REQUIRE_NONE);
    }
    t_delivering = false;
}

void release_events(RankState* me) {
    std::vector<mpc_t_event_registration_s*> gone;
    {
        std::lock_guard<std::mutex> g(g_event_mutex);
        auto& all = registrations();
        for (auto it = all.begin(); it != all.end();) {
            if ((*it)->owner != me) {
                ++it;
                continue;
            }
            mpc_t_event_registration_s* r = *it;
            r->freed = true;
            update_listening(r);
            it = all.erase(it);
            if (r->in_flight == 0) gone.push_back(r);  // else its last callback deletes it
        }
    }
    for (auto* r : gone) delete r;
}

bool hints_of(MPI_Info info, InfoHints* out) {
    out->clear();
    if (info == MPI_INFO_NULL) return true;
    const Info* i = info_lookup(info);
    if (!i) return false;
    *out = i->entries;
    return true;
}

MPI_Info info_of(const InfoHints& hints) {
    Info i;
    i.entries = hints;
    return info_create(std::move(i));
}

}  // namespace mpc::mpi::tools

namespace {

// An events call: delivers what waits for the rank, then locks MPI_T's state.
#define MPC_EVENT_CALL(call) \
    deliver_pending(me);     \
    ToolsCall call(me);      \
    if (call.error()) return call.error()

}  // namespace

extern "C" {

int PMPI_T_event_handle_alloc(int event_index, void* obj_handle, MPI_Info info,
                              MPI_T_event_registration* event_registration) {
    MPC_ENTER(T_event_handle_alloc);
    MPC_EVENT_CALL(call);
    auto type = rt::event(event_index);
    if (!type) return MPI_T_ERR_INVALID_INDEX;
    if (!event_registration) return MPI_T_ERR_INVALID;
    MPI_Comm comm = MPI_COMM_NULL;
    if (int e = bound_comm(call.rank(), type->bind, obj_handle, &comm)) return e;
    auto r = std::make_unique<mpc_t_event_registration_s>();
    if (!hints_of(info, &r->hints)) return MPI_T_ERR_INVALID;
    r->event = event_index;
    r->owner = call.rank();
    r->local = call.rank()->local_index;
    r->type = type;
    rt::event_layout(*type, &r->offsets);
    rt::set_event_sink(&sink);
    std::lock_guard<std::mutex> g(g_event_mutex);
    auto& all = registrations();
    if (std::count_if(all.begin(), all.end(), [&](auto* x) { return x->owner == r->owner; }) >=
        kMaxRegistrations)
        return MPI_T_ERR_OUT_OF_HANDLES;
    all.push_back(r.get());
    *event_registration = r.release();
    return MPI_SUCCESS;
}

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info) {
    MPC_ENTER(T_event_handle_set_info);
    MPC_EVENT_CALL(call);
    InfoHints hints;
    if (!hints_of(info, &hints)) return MPI_T_ERR_INVALID;
    std::lock_guard<std::mutex> g(g_event_mutex);
    auto* r = find_registration(call.rank(), event_registration);
    if (!r) return MPI_T_ERR_INVALID_HANDLE;
    // No hint of ours changes the registration: they are kept and reported.
    for (auto& [k, v] : hints) {
        auto it = std::find_if(r->hints.begin(), r->hints.end(),
                               [&](const auto& e) { return e.first == k; });
        if (it != r->hints.end())
            it->second = v;
        else
            r->hints.emplace_back(k, v);
    }
    return MPI_SUCCESS;
}

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info* info_used) {
    MPC_ENTER(T_event_handle_get_info);
    MPC_EVENT_CALL(call);
    if (!info_used) return MPI_T_ERR_INVALID;
    InfoHints hints;
    {
        std::lock_guard<std::mutex> g(g_event_mutex);
        auto* r = find_registration(call.rank(), event_registration);
        if (!r) return MPI_T_ERR_INVALID_HANDLE;
        hints = r->hints;
    }
    *info_used = info_of(hints);
    return MPI_SUCCESS;
}

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void* user_data,
                                   MPI_T_event_cb_function event_cb_function) {
    MPC_ENTER(T_event_register_callback);
    MPC_EVENT_CALL(call);
    if (!valid_safety(cb_safety)) return MPI_T_ERR_INVALID;
    InfoHints hints;
    if (!hints_of(info, &hints)) return MPI_T_ERR_INVALID;
    std::lock_guard<std::mutex> g(g_event_mutex);
    auto* r = find_registration(call.rank(), event_registration);
    if (!r) return MPI_T_ERR_INVALID_HANDLE;
    // A null function removes the level's callback.
    r->callbacks[cb_safety] = {event_cb_function, user_data, std::move(hints)};
    update_listening(r);
    return MPI_SUCCESS;
}

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info) {
    MPC_ENTER(T_event_callback_set_info);
    MPC_EVENT_CALL(call);
    if (!valid_safety(cb_safety)) return MPI_T_ERR_INVALID;
    InfoHints hints;
    if (!hints_of(info, &hints)) return MPI_T_ERR_INVALID;
    std::lock_guard<std::mutex> g(g_event_mutex);
    auto* r = find_registration(call.rank(), event_registration);
    if (!r) return MPI_T_ERR_INVALID_HANDLE;
    if (!r->callbacks[cb_safety].fn) return MPI_T_ERR_INVALID;
    r->callbacks[cb_safety].hints = std::move(hints);
    return MPI_SUCCESS;
}

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info* info_used) {
    MPC_ENTER(T_event_callback_get_info);
    MPC_EVENT_CALL(call);
    if (!valid_safety(cb_safety) || !info_used) return MPI_T_ERR_INVALID;
    InfoHints hints;
    {
        std::lock_guard<std::mutex> g(g_event_mutex);
        auto* r = find_registration(call.rank(), event_registration);
        if (!r) return MPI_T_ERR_INVALID_HANDLE;
        if (!r->callbacks[cb_safety].fn) return MPI_T_ERR_INVALID;
        hints = r->callbacks[cb_safety].hints;
    }
    *info_used = info_of(hints);
    return MPI_SUCCESS;
}

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void* user_data,
                             MPI_T_event_free_cb_function free_cb_function) {
    MPC_ENTER(T_event_handle_free);
    MPC_EVENT_CALL(call);
    mpc_t_event_registration_s* r = nullptr;
    {
        std::lock_guard<std::mutex> g(g_event_mutex);
        r = find_registration(call.rank(), event_registration);
        if (!r) return MPI_T_ERR_INVALID_HANDLE;
        r->freed = true;
        update_listening(r);
        auto& all = registrations();
        all.erase(std::find(all.begin(), all.end(), r));
        r->free_fn = free_cb_function;
        r->free_user_data = user_data;
        // A callback still running (another thread, or the caller's own):
        // the last to end calls the free callback.
        if (r->in_flight > 0) return MPI_SUCCESS;
    }
    if (free_cb_function) free_cb_function(r, MPI_T_CB_REQUIRE_NONE, user_data);
    delete r;
    return MPI_SUCCESS;
}

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function) {
    MPC_ENTER(T_event_set_dropped_handler);
    MPC_EVENT_CALL(call);
    std::lock_guard<std::mutex> g(g_event_mutex);
    auto* r = find_registration(call.rank(), event_registration);
    if (!r) return MPI_T_ERR_INVALID_HANDLE;
    r->dropped = dropped_cb_function;
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_T_event_handle_alloc)
MPC_WEAK(MPI_T_event_handle_set_info)
MPC_WEAK(MPI_T_event_handle_get_info)
MPC_WEAK(MPI_T_event_register_callback)
MPC_WEAK(MPI_T_event_callback_set_info)
MPC_WEAK(MPI_T_event_callback_get_info)
MPC_WEAK(MPI_T_event_handle_free)
MPC_WEAK(MPI_T_event_set_dropped_handler)
