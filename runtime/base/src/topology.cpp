#include "runtime/topology.hpp"

#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include <algorithm>
#include <atomic>
#include <numeric>

#include "runtime/log.hpp"

namespace mpc::runtime {
namespace {

hwloc_topology_t as_topo(void* p) {
    return static_cast<hwloc_topology_t>(p);
}

// Distance between two NUMA nodes: hwloc's latency matrix when the topology has
// one, otherwise how far up the tree their common ancestor is.
std::vector<std::vector<double>> numa_distances(hwloc_topology_t topo, int n) {
    std::vector<std::vector<double>> d(static_cast<size_t>(n),
                                       std::vector<double>(static_cast<size_t>(n), 0));
    unsigned nr = 1;
    hwloc_distances_s* dist = nullptr;
    if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &dist,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
        nr == 1 && dist && static_cast<int>(dist->nbobjs) == n) {
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) d[i][j] = static_cast<double>(dist->values[i * n + j]);
        hwloc_distances_release(topo, dist);
        return d;
    }
    if (nr == 1 && dist) hwloc_distances_release(topo, dist);
    int top = hwloc_topology_get_depth(topo);
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            hwloc_obj_t a =
                hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
            hwloc_obj_t b =
                hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(j));
            hwloc_obj_t common = hwloc_get_common_ancestor_obj(topo, a, b);
            d[i][j] = i == j ? 0 : static_cast<double>(top - (common ? common->depth : 0));
        }
    }
    return d;
}

}  // namespace

const Topology& Topology::instance() {
    static Topology t;
    return t;
}

Topology::Topology() {
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
        fatal("hwloc could not load the machine topology");
    topo_ = topo;
    this_system_ = hwloc_topology_is_thissystem(topo) != 0;
    // Loaded before any VP binds (the host asks for the core count first).
    has_initial_ = sched_getaffinity(0, sizeof(initial_), &initial_) == 0;

    num_numa_ = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (ncores <= 0) ncores = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
    core_numa_.assign(static_cast<size_t>(ncores), 0);
    for (int c = 0; c < ncores; ++c) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
        if (!core) core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(c));
        for (int n = 0; n < num_numa_ && core; ++n) {
            hwloc_obj_t numa =
                hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
            if (numa && hwloc_bitmap_intersects(numa->cpuset, core->cpuset)) {
                core_numa_[static_cast<size_t>(c)] = n;
                break;
            }
        }
    }

    auto d = numa_distances(topo, num_numa_);
    numa_order_.resize(static_cast<size_t>(num_numa_));
    for (int i = 0; i < num_numa_; ++i) {
        auto& order = numa_order_[static_cast<size_t>(i)];
        order.resize(static_cast<size_t>(num_numa_));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            if (a == i || b == i) return a == i && b != i;
            return d[i][a] < d[i][b];
        });
    }
}

Topology::~Topology() {
    if (topo_) hwloc_topology_destroy(as_topo(topo_));
}

std::vector<int> Topology::allowed_cores() const {
    std::vector<int> all(static_cast<size_t>(num_cores()));
    std::iota(all.begin(), all.end(), 0);
    if (!has_initial_ || !this_system_) return all;
    hwloc_topology_t topo = as_topo(topo_);
    std::vector<int> allowed;
    for (int c : all) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
        if (!obj) obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(c));
        if (!obj) continue;
        bool usable = false;
        for (int pu = hwloc_bitmap_first(obj->cpuset); pu >= 0 && !usable;
             pu = hwloc_bitmap_next(obj->cpuset, pu))
            usable = pu < CPU_SETSIZE && CPU_ISSET(pu, &initial_);
        if (usable) allowed.push_back(c);
    }
    return allowed.empty() ? all : allowed;
}

std::vector<Topology::Object> Topology::objects_of_core(int core) const {
    hwloc_topology_t topo = as_topo(topo_);
    const int n = num_cores();
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(core % n));
    if (!obj) obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(core % n));
    std::vector<Object> up;  // from the core up
    if (!obj) return up;
    hwloc_obj_t numa = hwloc_get_obj_by_type(
        topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(core_numa_[static_cast<size_t>(core % n)]));
    if (numa && !hwloc_bitmap_intersects(numa->cpuset, obj->cpuset)) numa = nullptr;
    if (obj->type == HWLOC_OBJ_CORE && obj->arity == 1 && obj->children[0]->type == HWLOC_OBJ_PU)
        up.push_back({hwloc_obj_type_string(HWLOC_OBJ_PU),
                      static_cast<int>(obj->children[0]->logical_index)});
    for (hwloc_obj_t o = obj; o; o = o->parent) {
        // A NUMA node hangs off the smallest object that holds its cores.
        if (numa && numa->parent == o)
            up.push_back(
                {hwloc_obj_type_string(HWLOC_OBJ_NUMANODE), static_cast<int>(numa->logical_index)});
        up.push_back({hwloc_obj_type_string(o->type), static_cast<int>(o->logical_index)});
    }
    return {up.rbegin(), up.rend()};
}

bool Topology::core_cpus(int core, cpu_set_t* out) const {
    if (!this_system_) return false;
    hwloc_topology_t topo = as_topo(topo_);
    const int n = num_cores();
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(core % n));
    if (!obj) obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(core % n));
    return obj && hwloc_cpuset_to_glibc_sched_affinity(topo, obj->cpuset, out, sizeof(*out)) == 0;
}

bool Topology::bind_thread_to_core(int core) const {
    static std::atomic<bool> warned{false};
    auto warn_once = [&](const char* why) {
        if (!warned.exchange(true)) warn("threads are not bound to cores: %s", why);
        return false;
    };
    if (!this_system_) return warn_once("the hwloc topology does not describe this machine");
    hwloc_topology_t topo = as_topo(topo_);
    int n = num_cores();
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(core % n));
    if (!obj) obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(core % n));
    if (!obj || hwloc_set_cpubind(topo, obj->cpuset, HWLOC_CPUBIND_THREAD) != 0)
        return warn_once("hwloc_set_cpubind failed");
    return true;
}

}  // namespace mpc::runtime
