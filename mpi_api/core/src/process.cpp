#include "mpi_api/process.hpp"

#include "mpi_api/api.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/group.hpp"
#include "mpi_api/op.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"

namespace mpc::mpi {
namespace {
NodeHook g_finalize_hook = nullptr;
}

void set_finalize_hook(NodeHook hook) { g_finalize_hook = hook; }

namespace {
const NameService* g_name_service = nullptr;
}  // namespace

void set_name_service(const NameService* service) { g_name_service = service; }
const NameService* name_service() { return g_name_service; }

void process_setup(const JobLayout& layout) {
    g_intra_eager_limit = runtime::env::get_size("MPC_INTRA_EAGER", g_intra_eager_limit);
    g_wait_spin_ns = static_cast<int64_t>(
        runtime::env::get_seconds("MPC_WAIT_SPIN", static_cast<double>(g_wait_spin_ns) * 1e-9) *
        1e9);
    set_stats_report(runtime::env::get_bool("MPC_STATS", false));
    set_poll_mode(static_cast<PollMode>(runtime::env::get_choice(
        "MPC_PROGRESS", static_cast<int>(PollMode::Collaborative),
        {{"wait", static_cast<int>(PollMode::Wait)},
         {"collaborative", static_cast<int>(PollMode::Collaborative)},
         {"thread", static_cast<int>(PollMode::Thread)}})));
    datatype_init_predefined();
    op_init_predefined();
    group_init_predefined();
    world_create(layout.world_size, layout.num_nodes, layout.node_id, layout.node_of);
    world().appnum = layout.appnum;
    runtime::set_identity_provider(&current_world_rank);
    register_tool_variables();
}

void process_teardown() {
    if (g_finalize_hook) g_finalize_hook();
    runtime::set_identity_provider(nullptr);
}

bool rank_ended(RankState* rank, int status) {
    rank->exit_status = status;
    rank->ended.store(true, std::memory_order_relaxed);
    // A rank that leaves with MPI initialized, or a session open, did not
    // finish cleanly.
    return rank->phase.load() != RankState::Initialized && rank->sessions.load() == 0;
}

}  // namespace mpc::mpi
