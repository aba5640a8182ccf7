#include <unistd.h>

#include <memory>

#include "intranode.hpp"
#include "intranode_rings.hpp"
#include "mpi_api/api.hpp"
#include "mpi_api/comm.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/log.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::mpi {
namespace {

World g_world;
std::vector<std::unique_ptr<RankState>> g_rank_storage;

}  // namespace

World& world() { return g_world; }

void world_create(int size, int num_nodes, int node_id, const std::vector<int>& node_of) {
    MPC_CHECK(size >= 1 && static_cast<int>(node_of.size()) == size);
    g_world.size = size;
    g_world.num_nodes = num_nodes;
    g_world.node_id = node_id;
    g_world.node_of = node_of;
    g_world.universe_size = size;
    g_world.local_of.assign(static_cast<size_t>(size), nullptr);
    g_world.locals.clear();
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    g_world.processor_name = host;
    for (int r = 0; r < size; ++r) {
        if (node_of[static_cast<size_t>(r)] != node_id) continue;
        auto st = std::make_unique<RankState>();
        st->world_rank = r;
        st->local_index = static_cast<int>(g_world.locals.size());
        g_world.local_of[static_cast<size_t>(r)] = st.get();
        g_world.locals.push_back(st.get());
        g_rank_storage.push_back(std::move(st));
    }
    for (RankState* r : g_world.locals) {
        comm_init_rank(r);
        intranode::rings_init(r, g_world.locals.size());
    }
}

void world_destroy() {
    g_world.locals.clear();
    g_world.local_of.clear();
    g_rank_storage.clear();
}

RankState::~RankState() {
    // The last message a rank received in place is still in its inbox.
    intranode::release_inbox(this);
    delete[] fn_stats.load();
}

RankState* current_rank() { return static_cast<RankState*>(sched::current_owner()); }

int current_world_rank() {
    RankState* r = current_rank();
    return r ? r->world_rank : -1;
}

}  // namespace mpc::mpi
