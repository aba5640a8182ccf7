// Communicator constructors, destructor and comparison (comm_ops.hpp).
#include <algorithm>
#include <tuple>

#include "mpi_api/attributes.hpp"
#include "mpi_api/comm_ops.hpp"
#include "mpi_api/context_id.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/internal_coll.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/rank.hpp"

namespace mpc::mpi {
namespace {

// Agreement priority: by the parent's context, then a sub-key (create_group tags).
uint64_t key_of(const Comm* parent, uint32_t sub = 0) {
    return (uint64_t{parent->context} << 32) | sub;
}
// Intercomm_create has no common parent: after every other agreement, by tag.
uint64_t intercomm_create_key(int tag) {
    return (uint64_t{0xffffffffu} << 32) | static_cast<uint32_t>(tag);
}

Datatype* int_type() {
    return datatype_lookup(MPI_INT);
}

Comm* build_intracomm(const Comm* parent, uint32_t context, GroupRef group, int rank) {
    Comm* c = comm_allocate(parent->owner);
    c->context = context;
    c->size = group->size;
    c->group = std::move(group);
    c->rank = rank;
    c->errhandler = parent->errhandler;
    c->session = parent->session;
    return c;
}

// contexts[0] for the intercommunicator, contexts[1] for its local_comm (the
// two groups' local_comms share that pair: they have no member in common).
Comm* build_intercomm(const Comm* parent, const uint32_t* contexts, GroupRef local, GroupRef remote,
                      int rank) {
    Comm* c = comm_allocate(parent->owner);
    c->context = contexts[0];
    c->size = local->size;
    c->group = local;
    c->remote_group = std::move(remote);
    c->rank = rank;
    c->errhandler = parent->errhandler;
    c->session = parent->session;
    c->local_comm = std::make_unique<Comm>();
    Comm& lc = *c->local_comm;
    lc.owner = parent->owner;
    lc.context = contexts[1];
    lc.size = local->size;
    lc.group = std::move(local);
    lc.rank = rank;
    lc.errhandler = parent->errhandler;
    return c;
}

// Agreement among all ranks of intracommunicator old; with a reserved tag
// (>= 0, MPI_Comm_idup) every round uses it instead of the next collective tag.
int agree_over(Comm* old, bool claims, uint32_t* context, int reserved_tag = -1) {
    Agreement a;
    a.local = Team::all(old);
    a.tags.sequence = old;
    a.tags.fixed = reserved_tag;
    a.key = key_of(old, reserved_tag >= 0 ? static_cast<uint32_t>(reserved_tag) + 1 : 0);
    a.claims = claims;
    return agree_contexts(old->owner, a, 1, context);
}

// Agreement among both groups of intercommunicator inter (reserved tags as above:
// on its local communicator and on itself).
int agree_over_inter(Comm* inter, int npairs, uint32_t* contexts, const int* reserved = nullptr,
                     bool claims = true) {
    Comm* lc = inter->local_comm.get();
    Agreement a;
    a.local = Team::all(lc);
    a.tags.sequence = lc;
    a.cross = inter;
    a.cross_peer = 0;
    a.cross_tags.sequence = inter;
    if (reserved) {
        a.tags.fixed = reserved[0];
        a.cross_tags.fixed = reserved[1];
    }
    a.key = key_of(inter, reserved ? static_cast<uint32_t>(reserved[0]) + 1 : 0);
    a.claims = claims;
    return agree_contexts(inter->owner, a, npairs, contexts);
}

// Ranks r of a group whose (color, key) = ck[2r], ck[2r + 1] has this color,
// ordered by (key, r).
std::vector<int> members_of(const std::vector<int>& ck, int color) {
    std::vector<std::tuple<int, int>> m;
    for (size_t r = 0; 2 * r < ck.size(); ++r)
        if (ck[2 * r] == color) m.emplace_back(ck[2 * r + 1], static_cast<int>(r));
    std::sort(m.begin(), m.end());
    std::vector<int> ranks;
    for (const auto& [k, r] : m) ranks.push_back(r);
    return ranks;
}

// MPI_Comm_split on an intercommunicator: the (color, key) of every rank of
// both groups are gathered in each group and swapped by the two rank 0s; a
// color makes an intercommunicator of its local and its remote members.
int intercomm_split(Comm* inter, int color, int key, Comm** out) {
    Comm* lc = inter->local_comm.get();
    const Team team = Team::all(lc);
    std::vector<int> local(2 * static_cast<size_t>(lc->size));
    std::vector<int> remote(2 * static_cast<size_t>(inter->remote_group->size));
    const int mine[2] = {color, key};
    allgather_ints(team, mine, 2, local.data(), next_coll_tag(lc));
    const int itag = next_coll_tag(inter);
    if (lc->rank == 0)
        coll_sendrecv(inter, local.data(), static_cast<int>(local.size()), int_type(), 0,
                      remote.data(), static_cast<int>(remote.size()), int_type(), 0, itag);
    tree_bcast(team, remote.data(), remote.size() * sizeof(int), 0, next_coll_tag(lc));

    std::vector<int> lm, rm;
    if (color != MPI_UNDEFINED) {
        lm = members_of(local, color);
        rm = members_of(remote, color);
    }
    // One agreement over both groups for all colors, as for intracommunicators:
    // the new intercommunicators are disjoint, so they can share the two pairs.
    const bool member = !rm.empty();
    uint32_t ctx[2];
    if (int e = agree_over_inter(inter, 2, ctx, nullptr, member)) return e;
    *out = nullptr;
    if (!member) return MPI_SUCCESS;
    std::vector<int> lw, rw;
    int rank = 0;
    for (int r : lm) {
        if (r == inter->rank) rank = static_cast<int>(lw.size());
        lw.push_back(inter->group->world_rank(r));
    }
    for (int r : rm) rw.push_back(inter->remote_group->world_rank(r));
    *out = build_intercomm(inter, ctx, group_from_world_ranks(std::move(lw)),
                           group_from_world_ranks(std::move(rw)), rank);
    return MPI_SUCCESS;
}

std::vector<int> world_ranks(const GroupData& g) {
    std::vector<int> w(static_cast<size_t>(g.size));
    for (int r = 0; r < g.size; ++r) w[static_cast<size_t>(r)] = g.world_rank(r);
    return w;
}

}  // namespace

int comm_dup(Comm* old, Comm** out) {
    return comm_dup_reserved(old, DupTags{}, out);
}

DupTags reserve_dup_tags(Comm* old) {
    DupTags t;
    if (old->is_inter()) {
        t.local = next_coll_tag(old->local_comm.get());
        t.cross = next_coll_tag(old);
    } else {
        t.local = next_coll_tag(old);
    }
    return t;
}

int comm_dup_reserved(Comm* old, const DupTags& tags, Comm** out) {
    uint32_t ctx[2];
    Comm* c;
    const bool reserved = tags.local >= 0;
    if (old->is_inter()) {
        const int fixed[2] = {tags.local, tags.cross};
        if (int e = agree_over_inter(old, 2, ctx, reserved ? fixed : nullptr)) return e;
        c = build_intercomm(old, ctx, old->group, old->remote_group, old->rank);
    } else {
        if (int e = agree_over(old, true, ctx, tags.local)) return e;
        c = build_intracomm(old, ctx[0], old->group, old->rank);
    }
    c->hints = old->hints;
    c->topology = old->topology;
    if (int e = comm_attrs_copy(old, c)) {
        comm_free(c);
        return e;
    }
    *out = c;
    return MPI_SUCCESS;
}

int comm_split(Comm* old, int color, int key, Comm** out) {
    if (old->is_inter()) return intercomm_split(old, color, key, out);
    const int n = old->size;
    std::vector<int> all(2 * static_cast<size_t>(n));
    const int mine[2] = {color, key};
    allgather_ints(Team::all(old), mine, 2, all.data(), next_coll_tag(old));

    // Members of the caller's color ordered by (key, rank in old).
    std::vector<std::tuple<int, int>> members;
    for (int r = 0; r < n && color != MPI_UNDEFINED; ++r)
        if (all[2 * static_cast<size_t>(r)] == color)
            members.emplace_back(all[2 * static_cast<size_t>(r) + 1], r);
    std::sort(members.begin(), members.end());

    // One agreement for all colors: the new communicators are disjoint, so
    // they can share the pair.
    uint32_t ctx;
    if (int e = agree_over(old, color != MPI_UNDEFINED, &ctx)) return e;
    *out = nullptr;
    if (color == MPI_UNDEFINED) return MPI_SUCCESS;
    std::vector<int> w;
    int rank = 0;
    for (const auto& [k, r] : members) {
        if (r == old->rank) rank = static_cast<int>(w.size());
        w.push_back(old->group->world_rank(r));
    }
    *out = build_intracomm(old, ctx, group_from_world_ranks(std::move(w)), rank);
    return MPI_SUCCESS;
}

int comm_create(Comm* old, const GroupRef& group, Comm** out) {
    const int rank = group->rank_of(old->owner->world_rank);
    // Intercommunicators: group is the same at every rank of the local group
    // (MPI 3.1 section 6.4.2), which makes this a split by membership.
    if (old->is_inter())
        return intercomm_split(old, rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0, rank, out);
    uint32_t ctx;
    if (int e = agree_over(old, rank != MPI_UNDEFINED, &ctx)) return e;
    *out = rank == MPI_UNDEFINED ? nullptr : build_intracomm(old, ctx, group, rank);
    return MPI_SUCCESS;
}

int comm_create_group(Comm* old, const GroupRef& group, int tag, Comm** out) {
    *out = nullptr;
    const int rank = group->rank_of(old->owner->world_rank);
    if (rank == MPI_UNDEFINED) return MPI_SUCCESS;
    Team team{old, group->size, rank, {}};
    team.members.resize(static_cast<size_t>(group->size));
    for (int r = 0; r < group->size; ++r)
        team.members[static_cast<size_t>(r)] = old->group->rank_of(group->world_rank(r));
    Agreement a;
    a.local = std::move(team);
    a.tags.fixed = kInternalTagBase | tag;
    a.key = key_of(old, 1 + static_cast<uint32_t>(tag));
    uint32_t ctx;
    if (int e = agree_contexts(old->owner, a, 1, &ctx)) return e;
    *out = build_intracomm(old, ctx, group, rank);
    return MPI_SUCCESS;
}

int intercomm_create(Comm* local, int local_leader, Comm* peer, int remote_leader, int tag,
                     Comm** out) {
    const int ptag = kInternalTagBase | tag;
    const bool leader = local->rank == local_leader;
    const Team team = Team::all(local);
    std::vector<int> mine = world_ranks(*local->group), remote;

    // The leaders swap their groups over peer, then tell their group.
    int sizes[2] = {local->size, 0};
    if (leader)
        coll_sendrecv(peer, &sizes[0], 1, int_type(), remote_leader, &sizes[1], 1, int_type(),
                      remote_leader, ptag);
    const int btag = next_coll_tag(local);
    tree_bcast(team, &sizes[1], sizeof(int), local_leader, btag);
    remote.resize(static_cast<size_t>(sizes[1]));
    if (leader)
        coll_sendrecv(peer, mine.data(), sizes[0], int_type(), remote_leader, remote.data(),
                      sizes[1], int_type(), remote_leader, ptag);
    tree_bcast(team, remote.data(), remote.size() * sizeof(int), local_leader, btag);

    GroupRef rgroup = group_from_world_ranks(remote);
    for (int w : mine)  // same verdict in both groups: they hold the same lists
        if (rgroup->rank_of(w) != MPI_UNDEFINED)
            return make_error(MPI_ERR_COMM,
                              "MPI_Intercomm_create: world rank %d is in both groups (the groups "
                              "must be disjoint)",
                              w);
    Agreement a;
    a.local = team;
    a.root = local_leader;
    a.tags.sequence = local;
    if (leader) {
        a.cross = peer;
        a.cross_peer = remote_leader;
    }
    a.cross_tags.fixed = ptag;
    a.key = intercomm_create_key(tag);
    uint32_t ctx[2];
    if (int e = agree_contexts(local->owner, a, 2, ctx)) return e;
    *out = build_intercomm(local, ctx, local->group, std::move(rgroup), local->rank);
    return MPI_SUCCESS;
}

int intercomm_merge(Comm* inter, bool high, Comm** out) {
    Comm* lc = inter->local_comm.get();
    // The leaders swap their group's `high`; the group follows its leader's.
    int flags[2] = {high ? 1 : 0, 0};
    const int itag = next_coll_tag(inter);
    if (lc->rank == 0)
        coll_sendrecv(inter, &flags[0], 1, int_type(), 0, &flags[1], 1, int_type(), 0, itag);
    tree_bcast(Team::all(lc), flags, sizeof(flags), 0, next_coll_tag(lc));
    // Equal `high`: the group holding the lower world rank goes first.
    const bool local_first = flags[0] != flags[1]
                                 ? flags[0] == 0
                                 : inter->group->world_rank(0) < inter->remote_group->world_rank(0);

    uint32_t ctx;
    if (int e = agree_over_inter(inter, 1, &ctx)) return e;
    const GroupData& first = local_first ? *inter->group : *inter->remote_group;
    const GroupData& second = local_first ? *inter->remote_group : *inter->group;
    std::vector<int> w = world_ranks(first), w2 = world_ranks(second);
    w.insert(w.end(), w2.begin(), w2.end());
    const int rank = local_first ? inter->rank : inter->remote_group->size + inter->rank;
    *out = build_intracomm(inter, ctx, group_from_world_ranks(std::move(w)), rank);
    return MPI_SUCCESS;
}

int comm_free(Comm* c) {
    if (int e = comm_attrs_delete_all(c)) return e;
    RankState* me = c->owner;
    // The contexts go back only once this rank's view of the communicator is
    // gone (comm_release drops its shared-memory collective group): another
    // thread of the rank may agree on a free context at once, and a new
    // communicator with the same context and members must not find the old
    // communicator's group still alive (collectives/shm_group.cpp).
    const uint32_t context = c->context;
    const uint32_t local_context = c->local_comm ? c->local_comm->context : 0;
    const bool has_local = c->local_comm != nullptr;
    comm_release(c);
    release_context(me, context);
    if (has_local) release_context(me, local_context);
    return MPI_SUCCESS;
}

int comm_compare(const Comm* a, const Comm* b) {
    if (a == b) return MPI_IDENT;
    if (a->is_inter() != b->is_inter()) return MPI_UNEQUAL;
    int result = group_compare(*a->group, *b->group);
    if (a->is_inter()) result = std::max(result, group_compare(*a->remote_group, *b->remote_group));
    return result == MPI_IDENT ? MPI_CONGRUENT : result;
}

}  // namespace mpc::mpi
