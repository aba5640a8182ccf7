// runtime/topology: the machine as hwloc sees it: cores, NUMA nodes, distances,
// and binding of the calling thread to a core.
//
// HWLOC_XMLFILE or HWLOC_SYNTHETIC (hwloc's own variables) replace the real
// machine by a described one; binding is then impossible and is skipped with a
// single warning, while the NUMA layout still drives placement and steal order.
#pragma once

#include <sched.h>

#include <cstddef>
#include <string>
#include <vector>

namespace mpc::runtime {

class Topology {
  public:
    // Loaded on first use; shared by the whole process.
    static const Topology& instance();

    int num_cores() const { return static_cast<int>(core_numa_.size()); }
    int num_numa_nodes() const { return num_numa_; }
    int numa_of_core(int core) const {
        return core_numa_[static_cast<size_t>(core) % core_numa_.size()];
    }
    // NUMA nodes from nearest to farthest as seen from `numa` (itself first).
    const std::vector<int>& numa_order_from(int numa) const { return numa_order_[numa]; }
    // True when the topology describes the machine we run on (binding possible).
    bool is_this_system() const { return this_system_; }

    // Binds the calling thread to core (modulo the core count). Returns false (and
    // warns once per process) when binding is impossible.
    bool bind_thread_to_core(int core) const;
    // The processors of core (modulo the core count) as a CPU set, for
    // threads bound to a group of cores. False when binding is impossible.
    bool core_cpus(int core, cpu_set_t* out) const;
    // The binding the process started with (all its allowed cores; null if
    // unknown). A rank's own pthread, created by a VP bound to one core, takes
    // it first thing, so as not to fight that VP for its core. (The runtime's
    // own threads are created before any VP binds.)
    const cpu_set_t* initial_affinity() const { return has_initial_ ? &initial_ : nullptr; }
    // The cores (indexes as bind_thread_to_core takes them) the process may
    // run on: those of its initial binding (a batch system's allocation, a
    // taskset), all of them when that binding is unknown or covers none.
    std::vector<int> allowed_cores() const;

    // One hwloc object that contains a core: its type as hwloc names it
    // ("Machine", "Package", "NUMANode", "L3Cache", "Core", ...) and its
    // logical index among the objects of that type.
    struct Object {
        std::string type;
        int index = 0;
    };
    // The objects containing core (modulo the core count), from the machine
    // down to the core (and its PU when it has only one); a NUMA node comes
    // right below the object it is attached to. For MPI's hardware splits.
    std::vector<Object> objects_of_core(int core) const;

    ~Topology();
    Topology(const Topology&) = delete;
    Topology& operator=(const Topology&) = delete;

  private:
    Topology();
    void* topo_ = nullptr;  // hwloc_topology_t, kept opaque so users need no hwloc headers
    cpu_set_t initial_{};   // the loading thread's binding (before any VP binds)
    bool has_initial_ = false;
    int num_numa_ = 1;
    bool this_system_ = true;
    std::vector<int> core_numa_;                // core index -> NUMA node index
    std::vector<std::vector<int>> numa_order_;  // per NUMA node: nodes by distance
};

}  // namespace mpc::runtime
