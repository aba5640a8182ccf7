// Windows as objects: creation in every flavor (collective: the members
// exchange where their memory is and how to reach it), the shared-memory
// queries, attaching memory to dynamic windows, freeing, and the window's
// error handler, predefined attributes and info.
#include <cstdlib>
#include <cstring>
#include <new>

#include "collectives/collectives.hpp"
#include "collectives/shm.hpp"
#include "mpi_api/attributes.hpp"
#include "mpi_api/comm_ops.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_api/net.hpp"
#include "remote.hpp"
#include "target.hpp"

namespace mpc::rma {

// Outlives every thread (handles.hpp).
WinPool* const g_win_pool = new WinPool(1);

namespace {

WinPool& pool() { return *g_win_pool; }

// What a member tells the others at creation.
struct MemberInfo {
    int32_t world, node, disp_unit, rdma;
    uint32_t id;
    int32_t failed;  // its memory could not be allocated: everybody gives up
    uint64_t local;  // its TargetState (meaningful in its node process)
    uint64_t base;
    int64_t size;
    uint64_t rdma_base, rdma_key;
};

mpi::Datatype* byte_type() {
    return mpi::datatype_lookup(MPI_BYTE);
}

int allgather_bytes(Comm* c, const void* mine, void* all, int n) {
    return coll::run_blocking(coll::make_allgather(mine, n, byte_type(), all, n, byte_type(), c));
}

int barrier(Comm* c) {
    return coll::shm::eligible(c) ? coll::shm::barrier(c) : coll::barrier(c);
}

// Segments of a shared window start at multiples of this with
// alloc_shared_noncontig (pages: each member's first touch places its own).
constexpr size_t kNoncontigAlign = 4096;

struct Creation {
    void* base = nullptr;
    MPI_Aint size = 0;
    int disp_unit = 1;
    int flavor = MPI_WIN_FLAVOR_CREATE;
    bool allocate = false;  // the window allocates base (Win_allocate)
    bool shared = false;    // Win_allocate_shared: one allocation for all
};

bool flag_hint(const mpi::Info* info, const char* key) {
    const std::string* v = info ? info->find(key) : nullptr;
    return v && *v == "true";
}

void* allocate_memory(size_t bytes, size_t align) {
    void* p = nullptr;
    if (posix_memalign(&p, align, bytes ? bytes : 1) != 0) return nullptr;
    return p;
}

// The local half of freeing a window (after the members agreed).
void destroy(Win* w) {
    if (w->target && w->target->id) unregister_target(w->target->id);
    if (w->registration) mpi::network()->rma_deregister(w->registration);
    free(w->allocated);
    if (w->comm) mpi::comm_free(w->comm);
    const int handle = w->handle;
    w->~Win();
    new (w) Win();
    pool().release(handle);
}

int create(const Creation& how, const mpi::Info* info, Comm* comm, Win** out) {
    *out = nullptr;
    RankState* me = comm->owner;
    Comm* priv = nullptr;
    // A communicator of the window's own, with its own contexts, so that
    // fences and window creation never meet the user's traffic.
    if (int e = mpi::comm_create(comm, comm->group, &priv)) return e;
    int handle;
    Win* w = pool().allocate(&handle);
    w->~Win();
    new (w) Win();
    w->handle = handle;
    w->owner = me;
    w->comm = priv;
    w->rank = priv->rank;
    w->size = priv->size;
    w->flavor = how.flavor;
    w->disp_unit = how.disp_unit;
    w->bytes = how.size;
    w->peers.reset(new PeerState[static_cast<size_t>(w->size)]);
    set_info(w, info);

    auto t = std::make_unique<TargetState>();
    t->win = w;
    t->rank = me;
    t->disp_unit = how.disp_unit;
    t->size = how.size;
    t->dynamic = how.flavor == MPI_WIN_FLAVOR_DYNAMIC;
    t->posts.reset(new std::atomic<int>[static_cast<size_t>(w->size)]());
    w->target = std::move(t);

    // A member that cannot allocate still takes part in the exchange, which
    // tells everyone to give up: nobody is left waiting in a collective.
    bool failed = false;
    if (how.allocate) {
        w->allocated = allocate_memory(static_cast<size_t>(how.size), 64);
        failed = !w->allocated;
        w->base = w->allocated;
    } else {
        w->base = how.base;
    }
    const mpi::World& world = mpi::world();
    const bool net = network_up();
    if (net) install_handler();

    MemberInfo mine{};
    mine.world = me->world_rank;
    mine.node = world.node_id;
    mine.disp_unit = how.disp_unit;
    mine.size = how.size;
    mine.base = reinterpret_cast<uintptr_t>(w->base);
    mine.local = reinterpret_cast<uintptr_t>(w->target.get());
    // Complete before anyone can name it: a remote origin may send the
    // moment its own creation returns, before this one's does.
    w->target->base = reinterpret_cast<uintptr_t>(w->base);
    mine.id = w->target->id = register_target(w->target.get());
    mine.failed = failed;
    if (net && !how.shared && how.flavor != MPI_WIN_FLAVOR_DYNAMIC && how.size > 0) {
        w->registration = mpi::network()->rma_register(w->base, static_cast<size_t>(how.size),
                                                       &mine.rdma_base, &mine.rdma_key);
        mine.rdma = w->registration != nullptr;
    }
    std::vector<MemberInfo> all(static_cast<size_t>(w->size));
    if (int e = allgather_bytes(priv, &mine, all.data(), static_cast<int>(sizeof mine))) {
        destroy(w);
        return e;
    }
    for (const MemberInfo& a : all)
        if (a.failed) {
            destroy(w);
            return mpi::make_error(MPI_ERR_NO_MEM, "a member cannot allocate its window memory");
        }
    w->members.resize(all.size());
    for (size_t i = 0; i < all.size(); ++i) {
        Member& m = w->members[i];
        const MemberInfo& a = all[i];
        m.world = a.world;
        m.node = a.node;
        m.local = a.node == world.node_id ? reinterpret_cast<TargetState*>(a.local) : nullptr;
        m.base = static_cast<uintptr_t>(a.base);
        m.size = a.size;
        m.disp_unit = a.disp_unit;
        m.id = a.id;
        m.rdma = a.rdma != 0;
        m.rdma_base = a.rdma_base;
        m.rdma_key = a.rdma_key;
        if (!m.local) w->all_local = false;
    }
    if (how.shared) {
        // One allocation, made by the first member, every segment in it.
        const bool noncontig = flag_hint(info, "alloc_shared_noncontig");
        std::vector<size_t> offset(all.size());
        size_t total = 0;
        for (size_t i = 0; i < all.size(); ++i) {
            if (noncontig)
                total = (total + kNoncontigAlign - 1) / kNoncontigAlign * kNoncontigAlign;
            offset[i] = total;
            total += static_cast<size_t>(all[i].size);
        }
        uint64_t shared = 0;
        if (w->rank == 0) {
            void* p = allocate_memory(total, noncontig ? kNoncontigAlign : 64);
            shared = reinterpret_cast<uintptr_t>(p);
            w->allocated = p;
        }
        const int e =
            coll::run_blocking(coll::make_bcast(&shared, sizeof shared, byte_type(), 0, priv));
        if (e || !shared) {
            destroy(w);
            return e ? e
                     : mpi::make_error(MPI_ERR_NO_MEM,
                                       "cannot allocate %zu bytes for the shared window", total);
        }
        for (size_t i = 0; i < all.size(); ++i)
            w->members[i].base = static_cast<uintptr_t>(shared + offset[i]);
        w->base = reinterpret_cast<void*>(w->members[static_cast<size_t>(w->rank)].base);
    }
    w->target->base = reinterpret_cast<uintptr_t>(w->base);  // (shared: known only now)
    *out = w;
    return MPI_SUCCESS;
}

}  // namespace

Win* win_lookup_any(MPI_Win handle) {
    return pool().lookup(handle);
}

int win_create(void* base, MPI_Aint size, int disp_unit, const mpi::Info* info, Comm* comm,
               Win** out) {
    Creation how;
    how.base = base;
    how.size = size;
    how.disp_unit = disp_unit;
    return create(how, info, comm, out);
}

int win_allocate(MPI_Aint size, int disp_unit, const mpi::Info* info, Comm* comm, void** baseptr,
                 Win** out) {
    Creation how;
    how.size = size;
    how.disp_unit = disp_unit;
    how.flavor = MPI_WIN_FLAVOR_ALLOCATE;
    how.allocate = true;
    if (int e = create(how, info, comm, out)) return e;
    *baseptr = (*out)->base;
    return MPI_SUCCESS;
}

int win_allocate_shared(MPI_Aint size, int disp_unit, const mpi::Info* info, Comm* comm,
                        void** baseptr, Win** out) {
    // Every member must live in this node process; each member sees the same
    // (no collective call before this check, so nobody waits for another).
    const mpi::World& world = mpi::world();
    for (int r = 0; r < comm->size; ++r) {
        const int wr = comm->group->world_rank(r);
        if (world.node_of[static_cast<size_t>(wr)] != world.node_id)
            return mpi::make_error(MPI_ERR_RMA_SHARED,
                                   "rank %d of the communicator lives in another node process: a "
                                   "shared window needs them all in one (mpcrun -N)",
                                   r);
    }
    Creation how;
    how.size = size;
    how.disp_unit = disp_unit;
    how.flavor = MPI_WIN_FLAVOR_SHARED;
    how.shared = true;
    if (int e = create(how, info, comm, out)) return e;
    *baseptr = (*out)->base;
    return MPI_SUCCESS;
}

int win_create_dynamic(const mpi::Info* info, Comm* comm, Win** out) {
    Creation how;
    how.flavor = MPI_WIN_FLAVOR_DYNAMIC;
    return create(how, info, comm, out);
}

int win_shared_query(Win* w, int rank, MPI_Aint* size, int* disp_unit, void** baseptr) {
    if (w->flavor != MPI_WIN_FLAVOR_SHARED)
        return mpi::make_error(MPI_ERR_RMA_FLAVOR,
                               "MPI_Win_shared_query needs a window of MPI_Win_allocate_shared");
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        for (int r = 0; r < w->size; ++r)
            if (w->members[static_cast<size_t>(r)].size > 0) {
                rank = r;
                break;
            }
    } else if (rank < 0 || rank >= w->size) {
        return mpi::make_error(MPI_ERR_RANK, "invalid rank %d: the window has %d ranks", rank,
                               w->size);
    }
    const Member& m = w->members[static_cast<size_t>(rank)];
    *size = m.size;
    *disp_unit = m.disp_unit;
    *baseptr = reinterpret_cast<void*>(m.base);
    return MPI_SUCCESS;
}

int win_attach(Win* w, void* base, MPI_Aint size) {
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return mpi::make_error(MPI_ERR_RMA_FLAVOR,
                               "MPI_Win_attach needs a window of MPI_Win_create_dynamic");
    if (size < 0)
        return mpi::make_error(MPI_ERR_SIZE, "negative size %ld", static_cast<long>(size));
    if (size == 0) return MPI_SUCCESS;
    if (!base) return mpi::make_error(MPI_ERR_RMA_ATTACH, "cannot attach memory at NULL");
    TargetState& t = *w->target;
    const auto start = reinterpret_cast<uintptr_t>(base);
    std::lock_guard<runtime::SpinLock> g(t.regions_lock);
    for (const auto& [s, n] : t.regions)
        if (start < s + n && s < start + static_cast<uintptr_t>(size))
            return mpi::make_error(MPI_ERR_RMA_ATTACH,
                                   "the memory overlaps memory already attached to the window");
    t.regions.emplace_back(start, static_cast<size_t>(size));
    return MPI_SUCCESS;
}

int win_detach(Win* w, const void* base) {
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return mpi::make_error(MPI_ERR_RMA_FLAVOR,
                               "MPI_Win_detach needs a window of MPI_Win_create_dynamic");
    TargetState& t = *w->target;
    std::lock_guard<runtime::SpinLock> g(t.regions_lock);
    for (size_t i = 0; i < t.regions.size(); ++i)
        if (t.regions[i].first == reinterpret_cast<uintptr_t>(base)) {
            t.regions.erase(t.regions.begin() + static_cast<long>(i));
            return MPI_SUCCESS;
        }
    return mpi::make_error(MPI_ERR_RMA_ATTACH, "no memory attached to the window starts at %p",
                           base);
}

int win_free(Win* w) {
    if ((w->access != Access::None && w->access != Access::FenceReady) || w->posted)
        return mpi::make_error(MPI_ERR_RMA_SYNC,
                               "MPI_Win_free with an access or exposure epoch still open (complete "
                               "it with MPI_Win_fence, MPI_Win_complete/wait or MPI_Win_unlock)");
    if (int e = mpi::win_attrs_delete_all(w->attributes, w->handle)) return e;
    // Nobody reaches this rank's memory once everybody is here.
    if (int e = barrier(w->comm)) return e;
    destroy(w);
    return MPI_SUCCESS;
}

int raise(Win* w, int code) {
    if (code == MPI_SUCCESS) return code;
    if (!w) return mpi::raise(nullptr, code);
    std::string what = w->name.empty() ? std::string("a window") : "window " + w->name;
    return mpi::raise_object(w->errhandler, w->handle, code, what.c_str());
}

bool predefined_attr(Win* w, int keyval, void** value) {
    switch (keyval) {
        case MPI_WIN_BASE:
            *value = w->base;
            return true;
        case MPI_WIN_SIZE:
            *value = &w->bytes;
            return true;
        case MPI_WIN_DISP_UNIT:
            *value = &w->disp_unit;
            return true;
        case MPI_WIN_CREATE_FLAVOR:
            *value = &w->flavor;
            return true;
        case MPI_WIN_MODEL:
            *value = &w->model;
            return true;
        default:
            return false;
    }
}

void set_info(Win* w, const mpi::Info* info) {
    if (!info) return;
    for (const auto& [k, v] : info->entries) w->hints[k] = v;
}

mpi::Info info_of(const Win* w) {
    mpi::Info i;
    // The hints this implementation follows, with the values in force.
    i.set("accumulate_ordering", "rar,raw,war,waw");
    i.set("accumulate_ops", "same_op_no_op");
    i.set("no_locks", "false");
    i.set("same_size", "false");
    i.set("same_disp_unit", "false");
    if (w->flavor == MPI_WIN_FLAVOR_SHARED) i.set("alloc_shared_noncontig", "false");
    for (const auto& [k, v] : w->hints) i.set(k, v);
    return i;
}

}  // namespace mpc::rma
