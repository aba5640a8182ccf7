#include "mpi_api/hardware.hpp"

#include <strings.h>

#include <algorithm>
#include <set>

#include "mpi_api/comm_ops.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/internal_coll.hpp"
#include "mpi_api/pset.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/topology.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::mpi {
namespace {

// Instances are numbered per node process: node * kPerNode + hwloc index.
constexpr int kPerNode = 1 << 20;

int core_of(const RankState* me) {
    const sched::Scheduler* s = sched::current_scheduler();
    if (!s || !me || me->vp < 0) return 0;
    return sched::core_of_vp(s->options(), me->vp);
}

}  // namespace

std::vector<HwLevel> hw_levels_of(const RankState* me) {
    const int node = world().node_id;
    std::vector<HwLevel> levels{{kSharedMemory, node}};
    // The machine comes right below: in this runtime it splits a group
    // exactly as the node processes do (instances are per node process).
    for (const auto& o : runtime::Topology::instance().objects_of_core(core_of(me)))
        levels.push_back({"hwloc://" + o.type, node * kPerNode + o.index % kPerNode});
    return levels;
}

Info hw_resource_info(const RankState* me) {
    Info info;
    for (const HwLevel& l : hw_levels_of(me)) info.set(l.name, std::to_string(l.instance));
    return info;
}

namespace {

// Sets the key on the new communicator, whose get_info reports it.
int finish(Comm* n, const std::string& type, Comm** out) {
    if (n) n->hints[kHwResourceKey] = type;
    *out = n;
    return MPI_SUCCESS;
}

}  // namespace

int comm_split_hw_guided(Comm* c, const std::string& type, int key, Comm** out) {
    *out = nullptr;
    int color = MPI_UNDEFINED;
    bool known = type == kSharedMemory;
    for (const HwLevel& l : hw_levels_of(c->owner))
        if (strcasecmp(l.name.c_str(), type.c_str()) == 0) color = l.instance;
    // A type no rank of this machine has is unknown everywhere (the same
    // value at every rank): no collective, MPI_COMM_NULL for all.
    if (!known && type.rfind("hwloc://", 0) != 0) return MPI_SUCCESS;
    Comm* n = nullptr;
    if (int e = comm_split(c, color, key, &n)) return e;
    return finish(n, type, out);
}

int comm_split_hw_unguided(Comm* c, int key, Comm** out) {
    *out = nullptr;
    if (c->is_inter())
        return make_error(MPI_ERR_COMM,
                          "MPI_COMM_TYPE_HW_UNGUIDED on an intercommunicator is not supported");
    const std::vector<HwLevel> mine = hw_levels_of(c->owner);
    // Every rank's levels side by side (node processes of one machine have
    // the same hierarchy; the shortest one bounds the comparison).
    const Team team = Team::all(c);
    const int n = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<size_t>(c->size));
    allgather_ints(team, &n, 1, lengths.data(), next_coll_tag(c));
    const int depth = *std::min_element(lengths.begin(), lengths.end());
    std::vector<int> row(static_cast<size_t>(depth));
    for (int l = 0; l < depth; ++l)
        row[static_cast<size_t>(l)] = mine[static_cast<size_t>(l)].instance;
    std::vector<int> all(static_cast<size_t>(depth) * static_cast<size_t>(c->size));
    allgather_ints(team, row.data(), depth, all.data(), next_coll_tag(c));
    // The highest level at which the group falls apart: each part a strict
    // subset of comm's group.
    for (int l = 0; l < depth; ++l) {
        std::set<int> colors;
        for (int r = 0; r < c->size; ++r)
            colors.insert(
                all[static_cast<size_t>(r) * static_cast<size_t>(depth) + static_cast<size_t>(l)]);
        if (colors.size() < 2) continue;
        Comm* nc = nullptr;
        if (int e = comm_split(c, row[static_cast<size_t>(l)], key, &nc)) return e;
        return finish(nc, mine[static_cast<size_t>(l)].name, out);
    }
    return MPI_SUCCESS;  // nothing splits it further: MPI_COMM_NULL everywhere
}

int comm_split_pset(Comm* c, const std::string& pset, int key, Comm** out) {
    *out = nullptr;
    std::vector<int> members;
    if (!pset_members(pset, c->owner, &members)) return MPI_SUCCESS;  // unknown: NULL
    const int me = c->owner->world_rank;
    int color = MPI_UNDEFINED;
    if (std::binary_search(members.begin(), members.end(), me))
        color = strcasecmp(pset.c_str(), kPsetSelf) == 0 ? me : 0;
    Comm* n = nullptr;
    if (int e = comm_split(c, color, key, &n)) return e;
    if (n) n->hints["mpi_pset_name"] = pset;
    *out = n;
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
