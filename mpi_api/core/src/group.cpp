#include "mpi_api/group.hpp"

#include <algorithm>

#include "mpi_api/handles.hpp"

namespace mpc::mpi {
namespace {

HandlePool<Group, HandleKind::Group>& pool() {
    // Outlives every thread (handles.hpp).
    static auto* p = new HandlePool<Group, HandleKind::Group>(2);
    return *p;
}

}  // namespace

int GroupData::rank_of(int w) const {
    if (identity) {
        int r = w - identity_offset;
        return (r >= 0 && r < size) ? r : MPI_UNDEFINED;
    }
    auto it = std::find(ranks.begin(), ranks.end(), w);
    return it == ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - ranks.begin());
}

std::shared_ptr<const GroupData> GroupData::make_identity(int size, int offset) {
    auto g = std::make_shared<GroupData>();
    g->size = size;
    g->identity = true;
    g->identity_offset = offset;
    return g;
}

std::shared_ptr<const GroupData> GroupData::make(std::vector<int> world_ranks) {
    auto g = std::make_shared<GroupData>();
    g->size = static_cast<int>(world_ranks.size());
    g->ranks = std::move(world_ranks);
    return g;
}

void group_init_predefined() {
    Group* empty = pool().at(handle_index(MPI_GROUP_EMPTY));
    empty->data = GroupData::make({});
    empty->predefined = true;
    pool().mark_live(handle_index(MPI_GROUP_EMPTY));
}

Group* group_lookup(MPI_Group handle) { return pool().lookup(handle); }

MPI_Group group_create(GroupRef data) {
    int h;
    Group* g = pool().allocate(&h);
    g->data = std::move(data);
    g->predefined = false;
    g->session = MPI_SESSION_NULL;
    return h;
}

void group_release(MPI_Group handle) {
    Group* g = pool().lookup(handle);
    if (!g || g->predefined) return;
    g->data.reset();
    pool().release(handle);
}

}  // namespace mpc::mpi
