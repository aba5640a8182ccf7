// Blocking collectives through the shared address space (shm.hpp): flat when
// the whole communicator lives in this node process, hierarchical otherwise.
//
// Hierarchical: the members of each node process form a group whose leader is
// its lowest rank. The data meets in the leaders (an intra-node phase through
// shared memory), the leaders run the collective among themselves with the
// usual schedules (one rank per node process: every message is one that has
// to cross the network anyway), and the result spreads from the leaders (a
// second intra-node phase). The leaders' schedules take the tag the
// communicator's next schedule would have taken, and every member skips it, so
// the collective tags of all members stay in step.
#include "collectives/shm.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "collectives/collectives.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "runtime/env.hpp"
#include "runtime/tools.hpp"
#include "shm_local.hpp"
#include "shm_view.hpp"

namespace mpc::coll::shm {
namespace {

bool enabled() {
    static const bool on = runtime::env::get_bool("MPC_COLL_SHM", true);
    return on;
}

}  // namespace

void register_tool_variables() {
    namespace rt = runtime::tools;
    rt::add_category("mpc_collectives", "Collective operations", rt::kRootCategory);
    rt::Cvar v;
    v.name = "MPC_COLL_SHM";
    v.desc =
        "1: collectives of communicators with several ranks in a node process go through "
        "shared memory there; 0: message schedules only. Fixed at start: every member of "
        "a communicator must take the same path";
    v.category = "mpc_collectives";
    v.verbosity = rt::Verbosity::TunerBasic;
    v.read = rt::value_reader<int>([](const rt::Subject&) { return enabled() ? 1 : 0; });
    rt::add_cvar(v);
}

[[gnu::noinline]] View& make_view(Comm* c) {
    auto v = std::make_shared<View>();
    const auto& w = mpi::world();
    const int n = c->size;
    const int my_node = w.node_id;
    std::vector<int> mine;  // world ranks of my node's members
    std::vector<int> leader_of_node(static_cast<size_t>(w.num_nodes), -1);  // comm rank
    std::vector<int> leaders;                                               // comm ranks
    std::vector<int> members_of_node(static_cast<size_t>(w.num_nodes), 0);
    v->local_index.assign(static_cast<size_t>(n), -1);
    for (int r = 0; r < n; ++r) {
        const int wr = c->group->world_rank(r);
        const int node = w.node_of[static_cast<size_t>(wr)];
        if (leader_of_node[static_cast<size_t>(node)] < 0) {
            leader_of_node[static_cast<size_t>(node)] = r;
            leaders.push_back(r);
        }
        members_of_node[static_cast<size_t>(node)]++;
        if (node == my_node) {
            if (r == c->rank) v->local_rank = static_cast<int>(mine.size());
            v->local_index[static_cast<size_t>(r)] = static_cast<int>(mine.size());
            mine.push_back(wr);
        }
    }
    v->flat = leaders.size() == 1;
    v->useful = *std::max_element(members_of_node.begin(), members_of_node.end()) > 1;
    v->leader_index.resize(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
        const int node = w.node_of[static_cast<size_t>(c->group->world_rank(r))];
        const int leader = leader_of_node[static_cast<size_t>(node)];
        v->leader_index[static_cast<size_t>(r)] =
            static_cast<int>(std::find(leaders.begin(), leaders.end(), leader) - leaders.begin());
    }
    v->node_index.assign(static_cast<size_t>(n), 0);
    v->node_members.resize(leaders.size());
    for (int r = 0; r < n; ++r) {
        auto& members = v->node_members[static_cast<size_t>(v->leader_index[static_cast<size_t>(r)])];
        v->node_index[static_cast<size_t>(r)] = static_cast<int>(members.size());
        if (!members.empty() && members.back() != r - 1) v->blocks = false;
        members.push_back(r);
    }
    v->group = group_for(c->context, std::move(mine));
    if (!v->flat && v->local_rank == 0) {
        // The leaders' communicator: the same contexts, so its traffic is this
        // communicator's collective traffic (under tags nobody else uses).
        auto l = std::make_unique<Comm>();
        std::vector<int> world_ranks;
        for (int r : leaders) world_ranks.push_back(c->group->world_rank(r));
        l->owner = c->owner;
        l->context = c->context;
        l->group = mpi::group_from_world_ranks(std::move(world_ranks));
        l->rank = v->leader_index[static_cast<size_t>(c->rank)];
        l->size = static_cast<int>(leaders.size());
        l->errhandler = MPI_ERRORS_RETURN;
        v->leaders = std::move(l);
    }
    c->shm = v;
    return *v;
}

namespace {

// A nonblocking collective's steps, advanced by whoever polls its owner's
// operations once the owner's earlier ones on the communicator are finished.
class Nonblocking final : public mpi::Progressable {
  public:
    Nonblocking(std::shared_ptr<View> v, std::unique_ptr<Steps> steps, mpi::RankState* owner)
        : v_(std::move(v)), steps_(std::move(steps)), owner_(owner), seq_(v_->nbc_started) {}

    // The owner starting it: publishes what the others need from it, if it
    // can already, and leaves the rest (the reduction work) to whoever polls
    // next: itself at its wait, or an idle rank in the meantime.
    void post() { advance(1); }
    bool progress() override {
        return v_->nbc_finished.load(std::memory_order_acquire) >= seq_ || advance(1 << 30);
    }

  private:
    bool advance(int until) {
        // An earlier one notifies the owner when it finishes; a member that
        // moves notifies it too (shm_group.hpp).
        if (v_->nbc_finished.load(std::memory_order_acquire) + 1 != seq_) return false;
        if (!poll_steps(*v_->group, v_->local_rank, *steps_, until)) return false;
        if (steps_->error() != MPI_SUCCESS) request->status.MPI_ERROR = steps_->error();
        v_->nbc_finished.store(seq_, std::memory_order_release);
        // The next one may go on now, and the owner may be waiting for this
        // one before a blocking collective.
        mpi::progress_notify(owner_);
        return true;
    }

    std::shared_ptr<View> v_;  // keeps the group (and the episode counts) alive
    std::unique_ptr<Steps> steps_;
    mpi::RankState* owner_;
    uint64_t seq_;
};

}  // namespace

void finish_nonblocking(View& v) {
    // Their owner (me) is notified when each one finishes or a member moves.
    auto done = [&v] { return v.nbc_finished.load(std::memory_order_acquire) == v.nbc_started; };
    if (done()) return;
    mpi::block_until(done, [](sched::Waiter*) {}, [](sched::Waiter*) {}, true);
}

Local nonblocking_local(Comm* c) {
    View& v = view_of(c);
    if (!v.nbc_watching) {
        v.group->watch_nonblocking(v.local_rank, c->owner);
        v.nbc_watching = true;
    }
    return Local{*v.group, v.local_rank, &v.episode, &v.all_at};
}

MPI_Request start_steps(Comm* c, Datatype* type, std::unique_ptr<Steps> steps) {
    View& v = view_of(c);
    ++v.nbc_started;
    auto* op = new Nonblocking(std::static_pointer_cast<View>(c->shm), std::move(steps), c->owner);
    mpi::Request* r = mpi::request_allocate(mpi::Request::Kind::Collective, c->owner, c);
    r->active = true;
    r->operation = op;  // freed with the request
    if (type) r->held_type = mpi::datatype_retain(type);
    op->request = r;
    op->post();
    mpi::progress_add(c->owner, op, false);
    return r->handle;
}

bool eligible(Comm* c) {
    if (c->is_inter() || !enabled()) return false;
    // A single rank (MPI_COMM_SELF, say) has nothing to wait for: a copy at
    // most, not a schedule.
    return c->size == 1 || view_of(c).useful;
}

bool eligible(Comm* c, const Op* op) {
    return op->predefined && eligible(c);
}

bool eligible_nonblocking(Comm* c) {
    if (c->is_inter() || !enabled()) return false;
    return c->size == 1 || view_of(c).flat;
}

bool eligible_nonblocking(Comm* c, const Op* op) {
    return op->predefined && eligible_nonblocking(c);
}

MPI_Request ibarrier(Comm* c) {
    return start_nonblocking(c, nullptr, [](const Local& l) { return barrier_steps(l); });
}

MPI_Request iallreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                       Comm* c) {
    return start_nonblocking(c, type, [&](const Local& l) {
        return allreduce_steps(l, sendbuf, recvbuf, count, type, op);
    });
}

MPI_Request ibcast(void* buf, int count, Datatype* type, int root, Comm* c) {
    return start_nonblocking(
        c, type, [&](const Local& l) { return bcast_steps(l, buf, count, type, root); });
}

MPI_Request ireduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
                    int root, Comm* c) {
    return start_nonblocking(c, type, [&](const Local& l) {
        return reduce_steps(l, sendbuf, recvbuf, count, type, op, root);
    });
}

int barrier(Comm* c) {
    View& v = view_of(c);
    const Local l = local_of(v);
    if (v.flat) {
        local_barrier(l);
        return MPI_SUCCESS;
    }
    local_arrive(l);
    const int err = among_leaders(c, v, [](Comm* leaders) { return make_barrier(leaders); });
    local_depart(l);
    return err;
}

int bcast(void* buf, int count, Datatype* type, int root, Comm* c) {
    View& v = view_of(c);
    const Local l = local_of(v);
    if (v.flat) {
        local_bcast(l, buf, count, type, root);
        return MPI_SUCCESS;
    }
    const int root_local = v.local_index[static_cast<size_t>(root)];
    // The root's node spreads the data first (its leader needs it), the
    // others once their leader has it.
    if (root_local >= 0) local_bcast(l, buf, count, type, root_local);
    const int err = among_leaders(c, v, [&](Comm* leaders) {
        return make_bcast(buf, count, type, v.leader_index[static_cast<size_t>(root)], leaders);
    });
    if (root_local < 0) local_bcast(l, buf, count, type, 0);
    return err;
}

int reduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op, int root,
           Comm* c) {
    View& v = view_of(c);
    const Local l = local_of(v);
    if (v.flat) {
        local_reduce(l, sendbuf, recvbuf, count, type, op,
                     v.local_index[static_cast<size_t>(root)]);
        return MPI_SUCCESS;
    }
    // Node partial results in the leaders (in the root's receive buffer when
    // the root leads), reduced among the leaders to the root's node's leader,
    // which hands the result to the root.
    const int root_local = v.local_index[static_cast<size_t>(root)];
    const bool leader = v.local_rank == 0;
    std::unique_ptr<TypedScratch> scratch;
    void* partial = recvbuf;
    if (leader && root_local != 0) {
        scratch = std::make_unique<TypedScratch>(count, type);
        partial = scratch->base;
    }
    local_reduce(l, sendbuf, partial, count, type, op, 0);
    const int err = among_leaders(c, v, [&](Comm* leaders) {
        const bool leaders_root = leaders->rank == v.leader_index[static_cast<size_t>(root)];
        return make_reduce(leaders_root ? MPI_IN_PLACE : partial, partial, count, type, op,
                           v.leader_index[static_cast<size_t>(root)], leaders);
    });
    if (root_local > 0) {
        // The result is in my leader's scratch, laid out as the type: hand it
        // over packed.
        std::unique_ptr<unsigned char[]> packed;
        const size_t bytes = static_cast<size_t>(count) * type->size;
        if (leader) {
            packed.reset(new unsigned char[std::max<size_t>(bytes, 1)]);
            mpi::pack(partial, static_cast<size_t>(count), *type, 0, packed.get(), bytes);
        }
        local_handoff(l, 0, packed.get(), root_local, recvbuf, count, type);
    }
    return err;
}

int allreduce(const void* sendbuf, void* recvbuf, int count, Datatype* type, const Op* op,
              Comm* c) {
    View& v = view_of(c);
    const Local l = local_of(v);
    if (v.flat) {
        local_allreduce(l, sendbuf, recvbuf, count, type, op);
        return MPI_SUCCESS;
    }
    local_reduce(l, sendbuf, recvbuf, count, type, op, 0);
    const int err = among_leaders(c, v, [&](Comm* leaders) {
        return make_allreduce(MPI_IN_PLACE, recvbuf, count, type, op, leaders);
    });
    local_bcast(l, recvbuf, count, type, 0);
    return err;
}

}  // namespace mpc::coll::shm
