// NodeFile registry: the members of one open of a file in this node process
// find each other by their private communicator (context and world ranks: a
// context is reused only after every member freed it, and disjoint
// communicators may share one, so both are the key).
#include "node.hpp"

#include <algorithm>

#include "mpi_api/rank.hpp"

namespace mpc::io {
namespace {

struct Registry {
    std::mutex mutex;
    std::map<uint32_t, std::vector<std::weak_ptr<NodeFile>>> by_context;
};
Registry& registry() {
    static auto* r = new Registry();
    return *r;
}

void describe(NodeFile& n, const Comm& c) {
    const mpi::World& w = mpi::world();
    n.world_ranks.resize(static_cast<size_t>(c.size));
    n.node_of.assign(static_cast<size_t>(c.size), -1);
    std::map<int, int> index_of_process;  // node process -> node index
    std::vector<int> counts;
    for (int r = 0; r < c.size; ++r) {
        const int wr = c.group->world_rank(r);
        n.world_ranks[static_cast<size_t>(r)] = wr;
        const int process = w.node_of[static_cast<size_t>(wr)];
        auto [it, fresh] = index_of_process.emplace(process, static_cast<int>(n.leaders.size()));
        if (fresh) {
            n.leaders.push_back(r);
            counts.push_back(0);
        }
        n.node_of[static_cast<size_t>(r)] = it->second;
        ++counts[static_cast<size_t>(it->second)];
        if (process == w.node_id) n.member_ranks.push_back(r);
    }
    n.num_nodes = static_cast<int>(n.leaders.size());
    n.node_index = index_of_process[w.node_id];
    n.max_members = *std::max_element(counts.begin(), counts.end());
    n.files.assign(n.member_ranks.size(), nullptr);
}

}  // namespace

void node_join(File* f) {
    const Comm& c = *f->comm;
    std::vector<int> ranks(static_cast<size_t>(c.size));
    for (int r = 0; r < c.size; ++r) ranks[static_cast<size_t>(r)] = c.group->world_rank(r);
    Registry& reg = registry();
    std::lock_guard<std::mutex> g(reg.mutex);
    auto& list = reg.by_context[c.context];
    std::shared_ptr<NodeFile> found;
    for (auto it = list.begin(); it != list.end();) {
        std::shared_ptr<NodeFile> n = it->lock();
        if (!n) {
            it = list.erase(it);
            continue;
        }
        if (n->world_ranks == ranks) found = n;
        ++it;
    }
    if (!found) {
        found = std::make_shared<NodeFile>();
        found->context = c.context;
        describe(*found, c);
        list.push_back(found);
    }
    auto at = std::find(found->member_ranks.begin(), found->member_ranks.end(), c.rank);
    f->member = static_cast<int>(at - found->member_ranks.begin());
    found->files[static_cast<size_t>(f->member)] = f;
    f->node = std::move(found);
}

void node_leave(File* f) {
    {
        Registry& reg = registry();
        std::lock_guard<std::mutex> g(reg.mutex);
        f->node->files[static_cast<size_t>(f->member)] = nullptr;
    }
    f->node.reset();
}

}  // namespace mpc::io
