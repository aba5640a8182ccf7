// The host's variables for the tools interface (MPI_T): the node process's
// MPC_* settings as the host applied them (ranks, virtual processors, cores,
// stacks, rank images, debug messages) and the idle VPs' sleeps; and the
// registration of the rooms below that have no start-up call of their own
// into which it would fit (network, collectives).
#include <string>

#include "collectives/shm.hpp"
#include "host.hpp"
#include "ib/network.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/tools.hpp"
#include "scheduler/scheduler.hpp"

namespace mpc::host {
namespace {

namespace rt = runtime::tools;
constexpr const char* kCategory = "mpc_runtime";

template <class T>
rt::Cvar fixed(const char* name, const char* desc, rt::Verbosity verbosity, T value) {
    rt::Cvar v;
    v.name = name;
    v.desc = desc;
    v.category = kCategory;
    v.verbosity = verbosity;
    v.type = rt::type_of<T>();
    v.read = rt::value_reader<T>([value](const rt::Subject&) { return value; });
    return v;
}

std::string core_list(const std::vector<int>& cores) {
    std::string s;
    for (int c : cores) {
        if (!s.empty()) s += ',';
        s += std::to_string(c);
    }
    return s;
}

}  // namespace

void register_tool_variables(const HostSettings& h) {
    rt::add_category(kCategory,
                     "The node process: ranks, virtual processors and their cores, rank stacks "
                     "and images, messages",
                     rt::kRootCategory);
    const rt::Verbosity user = rt::Verbosity::UserBasic, tuner = rt::Verbosity::TunerBasic;
    rt::add_cvar(fixed<int>("MPC_NRANKS", "Ranks of the job (mpcrun -n)", user, h.ranks));
    rt::add_cvar(fixed<int>("MPC_VPS", "Virtual processors (kernel threads) of the node process",
                            user, h.vps));
    rt::add_cvar(fixed<int>("MPC_BIND", "1: each virtual processor is bound to a core", tuner,
                            h.bind ? 1 : 0));
    rt::add_cvar(
        fixed<unsigned long>("MPC_STACK_SIZE", "Bytes of each rank's stack", tuner, h.stack_size));
    rt::add_cvar(fixed<int>(
        "MPC_SHARED_GLOBALS",
        "1: one program image for all ranks of the node process (globals shared, as threads)", user,
        h.shared_globals ? 1 : 0));
    const std::string cores = core_list(h.cores);
    rt::add_cvar(rt::string_cvar("MPC_CORES",
                                 "Cores the virtual processors are bound to, hwloc logical "
                                 "indexes (empty: not bound)",
                                 kCategory, tuner, [cores] { return cores; }));
    const char* libs_env = runtime::env::get("MPC_SHARED_LIBS");
    const std::string libs = libs_env ? libs_env : "";
    rt::add_cvar(rt::string_cvar("MPC_SHARED_LIBS",
                                 "User libraries every rank shares instead of its own copy",
                                 kCategory, rt::Verbosity::UserDetail, [libs] { return libs; }));

    rt::Cvar v;
    v.name = "MPC_MAP";
    v.desc = "How ranks are spread over node processes (mpcrun --map)";
    v.category = kCategory;
    v.enumeration = rt::add_enumeration({"mpc_rank_map", {{0, "block"}, {1, "cyclic"}}});
    const int map = h.map;
    v.read = rt::value_reader<int>([map](const rt::Subject&) { return map; });
    rt::add_cvar(v);

    // Read by the idle loop at every round.
    v = rt::Cvar{};
    v.name = "MPC_IDLE_SPIN";
    v.desc = "Seconds an idle virtual processor polls before it sleeps (0 to 10)";
    v.category = kCategory;
    v.verbosity = tuner;
    v.type = rt::Type::Double;
    v.scope = rt::Scope::Local;
    v.read = rt::value_reader<double>([](const rt::Subject&) {
        const sched::Scheduler* s = sched::current_scheduler();
        return s ? static_cast<double>(s->idle_spin_ns()) * 1e-9 : 0.0;
    });
    v.write = [](const rt::Subject&, const void* in) {
        const double x = *static_cast<const double*>(in);
        if (!(x >= 0 && x <= 10)) return rt::WriteStatus::Invalid;
        sched::Scheduler* s = sched::current_scheduler();
        if (!s) return rt::WriteStatus::NotNow;  // before the ranks run (nobody can ask)
        s->set_idle_spin_ns(static_cast<int64_t>(x * 1e9));
        return rt::WriteStatus::Ok;
    };
    rt::add_cvar(v);

    v = rt::Cvar{};
    v.name = "MPC_DEBUG";
    v.desc = "1: debug messages (on stderr), from now on";
    v.category = kCategory;
    v.verbosity = rt::Verbosity::DevBasic;
    v.scope = rt::Scope::Local;
    v.read =
        rt::value_reader<int>([](const rt::Subject&) { return runtime::debug_enabled() ? 1 : 0; });
    v.write = [](const rt::Subject&, const void* in) {
        const int x = *static_cast<const int*>(in);
        if (x != 0 && x != 1) return rt::WriteStatus::Invalid;
        runtime::set_debug_enabled(x == 1);
        return rt::WriteStatus::Ok;
    };
    rt::add_cvar(v);

    rt::Pvar p;
    p.name = "mpc_vp_sleeps";
    p.desc = "Times an idle virtual processor of the node process went to sleep";
    p.category = kCategory;
    p.verbosity = rt::Verbosity::TunerDetail;
    p.readonly = false;
    p.atomic = true;
    p.read = [](const rt::Subject&, void* out) {
        const sched::Scheduler* s = sched::current_scheduler();
        *static_cast<unsigned long long*>(out) = s ? s->sleeps() : 0;
    };
    rt::add_pvar(p);

    ib::register_tool_variables();
    coll::shm::register_tool_variables();
}

}  // namespace mpc::host
