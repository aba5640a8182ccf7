// Planning a job's node processes: see job_plan.hpp.
#include "job_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runtime/bootstrap.hpp"
#include "runtime/netif.hpp"

namespace mpc::launcher {
namespace {

// SLURM_JOB_NUM_NODES (SLURM_NNODES in older Slurm); 0 when not a number.
int allocation_nodes(const EnvLookup& env) {
    for (const char* name : {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) {
        const char* v = env(name);
        if (!v || !*v) continue;
        char* end = nullptr;
        long n = strtol(v, &end, 10);
        return *end == '\0' && n > 0 && n < (1 << 20) ? static_cast<int>(n) : 0;
    }
    return 0;
}

std::string count(int n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

}  // namespace

bool read_hostfile(const std::string& path, std::vector<std::string>* hosts, std::string* error) {
    std::ifstream in(path);
    if (!in) {
        *error = "cannot read the host file '" + path + "'";
        return false;
    }
    // A count after the name, as Open MPI (slots=N, max_slots=N) and hydra
    // (host:N) write it: checked, then ignored (threads fill no slots).
    auto count_ok = [](const std::string& text) {
        return !text.empty() && text.size() < 8 &&
               text.find_first_not_of("0123456789") == std::string::npos;
    };
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::string host, rest;
        if (!(words >> host)) continue;
        const size_t colon = host.rfind(':');
        if (colon != std::string::npos && host.find(':') == colon) {
            if (colon == 0 || !count_ok(host.substr(colon + 1))) {
                *error = path + ":" + std::to_string(number) + ": '" + host +
                         "' is not a host name or host:SLOTS";
                return false;
            }
            host.resize(colon);
        }
        while (words >> rest) {
            const size_t eq = rest.find('=');
            const std::string key = rest.substr(0, eq);
            if (eq == std::string::npos ||
                (key != "slots" && key != "max_slots" && key != "max-slots") ||
                !count_ok(rest.substr(eq + 1))) {
                *error = path + ":" + std::to_string(number) + ": '" + rest +
                         "' after the host name (one host per line, with slots=N at most; use "
                         "-p for several node processes per host)";
                return false;
            }
        }
        hosts->push_back(host);
    }
    if (hosts->empty()) {
        *error = "the host file '" + path + "' names no host";
        return false;
    }
    return true;
}

bool make_plan(const Options& o, const EnvLookup& env, JobPlan* plan, std::string* error) {
    JobPlan p;
    p.per_node = o.per_node;
    std::vector<std::string> hosts = o.hosts;
    if (!o.hostfile.empty() && !read_hostfile(o.hostfile, &hosts, error)) return false;
    const char* launch = env("MPC_LAUNCH");
    const std::string how = launch && *launch ? launch : "auto";
    if (how != "auto" && how != "local" && how != "slurm") {
        *error = "MPC_LAUNCH=" + how + " is not valid: expected auto, local or slurm";
        return false;
    }
    const char* job = env("SLURM_JOB_ID");
    const bool in_allocation = job && *job;
    // -ppn P with -n N and no -N: the first ceil(N/P) nodes (all at most).
    auto nodes_for = [&](int available) {
        if (o.nodes) return o.nodes;
        if (o.ranks_per_node && o.ranks)
            return std::min(available, (o.ranks + o.ranks_per_node - 1) / o.ranks_per_node);
        return available;
    };
    if (!hosts.empty()) {
        p.mode = LaunchMode::kSsh;
        p.nodes = nodes_for(static_cast<int>(hosts.size()));
        if (p.nodes > static_cast<int>(hosts.size())) {
            *error = "-N " + std::to_string(p.nodes) + " asks for more nodes than the " +
                     count(static_cast<int>(hosts.size()), "host") + " given";
            return false;
        }
        p.hosts.assign(hosts.begin(), hosts.begin() + p.nodes);
        for (const std::string& h : p.hosts)
            p.one_host = p.one_host && runtime::netif::is_this_host(h);
    } else if (how == "slurm" || (how == "auto" && in_allocation)) {
        const int available = allocation_nodes(env);
        if (!in_allocation || available == 0) {
            *error =
                "MPC_LAUNCH=slurm, but this is not inside a Slurm allocation (SLURM_JOB_ID "
                "and SLURM_JOB_NUM_NODES unset)";
            return false;
        }
        p.mode = LaunchMode::kSlurm;
        p.nodes = nodes_for(available);
        // One node, and it is this one (salloc's shell may run elsewhere).
        const char* list = env("SLURM_JOB_NODELIST");
        p.one_host = p.nodes == 1 && list && runtime::netif::is_this_host(list);
        if (p.nodes > available) {
            *error = "-N " + std::to_string(p.nodes) + " asks for more nodes than the " +
                     count(available, "node") + " of Slurm allocation " + job;
            return false;
        }
    } else {
        p.mode = LaunchMode::kLocal;
        p.nodes = o.nodes ? o.nodes : 1;
    }
    // --map, else MPC_MAP as the runtime reads it: both must agree on the layout.
    const char* map_env = env("MPC_MAP");
    const std::string map = !o.map.empty() ? o.map : map_env && *map_env ? map_env : "block";
    if (map != "block" && map != "cyclic") {
        *error = "MPC_MAP=" + map + " is not valid: expected block or cyclic";
        return false;
    }
    const long ranks = o.ranks ? o.ranks : static_cast<long>(o.ranks_per_node) * p.nodes;
    if (ranks > (1 << 22)) {
        *error = "-ppn " + std::to_string(o.ranks_per_node) + " over " + count(p.nodes, "node") +
                 " is too many ranks";
        return false;
    }
    p.ranks = static_cast<int>(ranks);
    const long node_procs = static_cast<long>(p.nodes) * p.per_node;
    if (node_procs > p.ranks) {
        *error = "more node processes (" + count(p.nodes, "node") + " x -p " +
                 std::to_string(p.per_node) + ") than ranks (-n " + std::to_string(p.ranks) + ")";
        return false;
    }
    p.node_procs = static_cast<int>(node_procs);
    p.map = map;
    p.node_of_rank = runtime::rank_layout(
        p.ranks, p.node_procs,
        map == "cyclic" ? runtime::RankMap::kCyclic : runtime::RankMap::kBlock);
    *plan = std::move(p);
    return true;
}

std::string JobPlan::host_of(int node_proc) const {
    return mode == LaunchMode::kSsh ? hosts[static_cast<size_t>(node_proc / per_node)]
                                    : std::string();
}

std::string JobPlan::ranks_of(int node_proc) const {
    constexpr int kMaxShown = 8;  // ranges shown before "..."
    std::string text;
    int shown = 0, count = 0;
    const int n = static_cast<int>(node_of_rank.size());
    for (int r = 0; r < n; ++r) {
        if (node_of_rank[static_cast<size_t>(r)] != node_proc) continue;
        int last = r;
        while (last + 1 < n && node_of_rank[static_cast<size_t>(last + 1)] == node_proc) ++last;
        count += last - r + 1;
        if (shown < kMaxShown) {
            if (!text.empty()) text += ',';
            text += std::to_string(r);
            if (last > r) text.append(1, '-').append(std::to_string(last));
        } else if (shown == kMaxShown) {
            text += ",...";
        }
        ++shown;
        r = last;
    }
    return (count == 1 ? "rank " : "ranks ") + text;
}

}  // namespace mpc::launcher
