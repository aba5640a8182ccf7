#include "mpi_api/pset.hpp"

#include <strings.h>

#include <cstdlib>

namespace mpc::mpi {

std::vector<std::string> pset_names() {
    std::vector<std::string> names{kPsetWorld, kPsetSelf};
    for (int k = 0; k < world().num_nodes; ++k)
        names.push_back(kPsetNodePrefix + std::to_string(k));
    return names;
}

bool pset_members(const std::string& name, const RankState* me, std::vector<int>* world_ranks) {
    world_ranks->clear();
    const World& w = world();
    if (strcasecmp(name.c_str(), kPsetWorld) == 0) {
        for (int r = 0; r < w.size; ++r) world_ranks->push_back(r);
        return true;
    }
    if (strcasecmp(name.c_str(), kPsetSelf) == 0) {
        if (!me) return false;
        world_ranks->push_back(me->world_rank);
        return true;
    }
    const std::string prefix = kPsetNodePrefix;
    if (name.compare(0, prefix.size(), prefix) != 0) return false;
    const std::string num = name.substr(prefix.size());
    if (num.empty() || num.size() > 6 || num.find_first_not_of("0123456789") != std::string::npos)
        return false;
    const int node = std::atoi(num.c_str());
    if (node >= w.num_nodes || (num.size() > 1 && num[0] == '0')) return false;
    for (int r = 0; r < w.size; ++r)
        if (w.node_of[static_cast<size_t>(r)] == node) world_ranks->push_back(r);
    return true;
}

}  // namespace mpc::mpi
