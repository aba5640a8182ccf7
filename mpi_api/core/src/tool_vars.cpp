// The MPI engine's variables for the tools interface (MPI_T): its MPC_*
// settings as control variables, and as performance variables what it counts
// per rank (messages and bytes per intra-node path, polls, inbox drains done
// by others, waits, queue lengths, calls and time of every MPI function), each
// per rank and summed over the node process. Registered once by
// process_setup(); readers only load atomics or take a rank's matching lock
// for a moment, so a tool may read while every rank runs.
#include <atomic>
#include <functional>
#include <string>

#include "mpi_api/api.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/process.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/tool_events.hpp"
#include "runtime/env.hpp"
#include "runtime/tools.hpp"

namespace mpc::mpi {
namespace {

namespace rt = runtime::tools;
constexpr const char* kCategory = "mpc_mpi";
constexpr const char* kFunctions = "mpc_functions";

uint64_t load(const std::atomic<uint64_t>& a) {
    return a.load(std::memory_order_relaxed);
}

using Get = std::function<uint64_t(RankState&)>;

void rank_and_node(const std::string& name, const std::string& desc, const char* category,
                   rt::Class cls, rt::Gate* gate, rt::Verbosity verbosity, Get get) {
    rt::PerRank v;
    v.name = name;
    v.desc = desc;
    v.category = category;
    v.var_class = cls;
    v.gate = gate;
    v.verbosity = verbosity;
    v.get = [get](int local) { return get(*world().locals[static_cast<size_t>(local)]); };
    v.ranks = [] { return static_cast<int>(world().locals.size()); };
    rt::add_rank_and_node(v);
}

void transport_variables() {
    rt::Gate* gate = &rt::g_transport;
    const rt::Class counter = rt::Class::Counter;
    const rt::Verbosity basic = rt::Verbosity::UserBasic;
    struct Path {
        TransportCounters::Path path;
        const char* name;
        const char* what;
    };
    static constexpr Path kPaths[] = {
        {TransportCounters::IntraSlot, "intra_slot",
         "intra-node messages sent in a line of their own (up to 40 bytes: the receiver's inbox "
         "line when empty, or the pair's ring entry)"},
        {TransportCounters::IntraCell, "intra_cell",
         "intra-node messages sent copied into a cell (up to MPC_INTRA_EAGER bytes)"},
        {TransportCounters::IntraRendezvous, "intra_rndv",
         "intra-node messages sent by rendezvous (one copy when the receive matches: larger "
         "than MPC_INTRA_EAGER, or synchronous)"},
    };
    for (const Path& p : kPaths) {
        const int i = p.path;
        rank_and_node(std::string(p.name) + "_msgs", std::string("Messages: ") + p.what, kCategory,
                      counter, gate, basic,
                      [i](RankState& r) { return load(r.transport.msgs[i]); });
        rank_and_node(std::string(p.name) + "_bytes", std::string("Bytes of ") + p.what, kCategory,
                      counter, gate, basic,
                      [i](RankState& r) { return load(r.transport.bytes[i]); });
    }
    rank_and_node("polls", "Times the rank polled for progress while it waited or tested",
                  kCategory, counter, gate, rt::Verbosity::TunerBasic,
                  [](RankState& r) { return load(r.polls); });
    rank_and_node("intra_stolen",
                  "Times another rank (or an idle core) drained the rank's intra-node inbox "
                  "for it: intra-node collaborative polling",
                  kCategory, counter, gate, rt::Verbosity::TunerBasic,
                  [](RankState& r) { return load(r.transport.stolen); });
    rank_and_node("waits", "Times the rank waited in MPI for an operation to complete", kCategory,
                  counter, gate, basic, [](RankState& r) { return load(r.transport.waits); });
    rank_and_node("wait_time", "Seconds the rank spent waiting in MPI for completions", kCategory,
                  rt::Class::Timer, gate, basic,
                  [](RankState& r) { return load(r.transport.wait_ns); });
}

size_t queue_length(RankState& r, bool unexpected) {
    r.match.lock.lock();
    const size_t n = unexpected ? r.match.unexpected_count() : r.match.posted_count();
    r.match.lock.unlock();
    return n;
}

void queue_variables() {
    rank_and_node("unexpected", "Messages arrived that no receive has matched yet", kCategory,
                  rt::Class::Level, nullptr, rt::Verbosity::UserDetail,
                  [](RankState& r) { return queue_length(r, true); });
    rank_and_node("posted", "Receives posted that no message has matched yet", kCategory,
                  rt::Class::Level, nullptr, rt::Verbosity::UserDetail,
                  [](RankState& r) { return queue_length(r, false); });
    // The same for one communicator (its point-to-point and collective traffic).
    for (const bool unexpected : {true, false}) {
        rt::Pvar p;
        p.name = unexpected ? "mpc_comm_unexpected" : "mpc_comm_posted";
        p.desc = unexpected ? "Messages on the communicator that no receive has matched yet"
                            : "Receives posted on the communicator that no message has matched";
        p.category = kCategory;
        p.verbosity = rt::Verbosity::UserDetail;
        p.var_class = rt::Class::Level;
        p.bind = rt::Bind::Comm;
        p.read = [unexpected](const rt::Subject& s, void* out) {
            const Comm* c = static_cast<const Comm*>(s.object);
            size_t posted[2] = {}, unexp[2] = {};
            c->owner->match.lock.lock();
            for (uint32_t k = 0; k < 2; ++k)
                c->owner->match.count_context(c->context + k, &posted[k], &unexp[k]);
            c->owner->match.lock.unlock();
            *static_cast<unsigned long long*>(out) =
                unexpected ? unexp[0] + unexp[1] : posted[0] + posted[1];
        };
        rt::add_pvar(p);
    }
}

uint64_t fn_field(RankState& r, size_t f, bool time) {
    FnStats* s = r.fn_stats.load(std::memory_order_acquire);
    if (!s) return 0;
    return std::atomic_ref<uint64_t>(time ? s[f].ns : s[f].calls).load(std::memory_order_relaxed);
}

void function_variables() {
    rt::add_category(kFunctions,
                     "Calls and time of every MPI function, counted while started (or with "
                     "MPC_STATS=1)",
                     "mpc");
    for (size_t f = 0; f < static_cast<size_t>(gen::Fn::kCount); ++f) {
        const std::string fn = gen::kFnNames[f];
        rank_and_node("calls_" + fn, "Calls of " + fn, kFunctions, rt::Class::Counter,
                      &rt::g_functions, rt::Verbosity::TunerDetail,
                      [f](RankState& r) { return fn_field(r, f, false); });
        rank_and_node("time_" + fn, "Seconds spent in " + fn, kFunctions, rt::Class::Timer,
                      &rt::g_functions, rt::Verbosity::TunerDetail,
                      [f](RankState& r) { return fn_field(r, f, true); });
    }
}

// ---- Control variables --------------------------------------------------------

void setting_variables() {
    const rt::Enumeration* modes = rt::add_enumeration(
        {"mpc_progress_mode", {{0, "wait"}, {1, "collaborative"}, {2, "thread"}}});
    rt::Cvar v;
    v.name = "MPC_PROGRESS";
    v.desc =
        "Progress mode (mpcrun --progress): wait, collaborative or thread; fixed at start "
        "(the progress thread and the network's polling are set up for it)";
    v.category = kCategory;
    v.enumeration = modes;
    v.read = rt::value_reader<int>([](const rt::Subject&) {
        return runtime::env::get_choice("MPC_PROGRESS", 1,
                                        {{"wait", 0}, {"collaborative", 1}, {"thread", 2}});
    });
    rt::add_cvar(v);

    // Read at every send: a new limit applies to the next message. The
    // receiver does not care how a message came (cell or rendezvous).
    v = rt::Cvar{};
    v.name = "MPC_INTRA_EAGER";
    v.desc =
        "Intra-node messages up to this many bytes are copied at send (the sender "
        "completes at once); larger ones are one copy when the receive matches. Applies "
        "to every rank of the node process from the next send on";
    v.category = kCategory;
    v.verbosity = rt::Verbosity::TunerBasic;
    v.type = rt::Type::UnsignedLong;
    v.scope = rt::Scope::Local;
    v.read = rt::value_reader<unsigned long>(
        [](const rt::Subject&) { return g_intra_eager_limit.load(std::memory_order_relaxed); });
    v.write = [](const rt::Subject&, const void* in) {
        const unsigned long x = *static_cast<const unsigned long*>(in);
        if (x > (1ul << 30)) return rt::WriteStatus::Invalid;
        g_intra_eager_limit.store(x, std::memory_order_relaxed);
        return rt::WriteStatus::Ok;
    };
    rt::add_cvar(v);

    // Read when a wait starts.
    v = rt::Cvar{};
    v.name = "MPC_WAIT_SPIN";
    v.desc =
        "Seconds a waiting rank polls before it yields its core and parks; applies to "
        "every rank of the node process from its next wait on";
    v.category = kCategory;
    v.verbosity = rt::Verbosity::TunerBasic;
    v.type = rt::Type::Double;
    v.scope = rt::Scope::Local;
    v.read = rt::value_reader<double>([](const rt::Subject&) {
        return static_cast<double>(g_wait_spin_ns.load(std::memory_order_relaxed)) * 1e-9;
    });
    v.write = [](const rt::Subject&, const void* in) {
        const double s = *static_cast<const double*>(in);
        if (!(s >= 0 && s <= 10)) return rt::WriteStatus::Invalid;
        g_wait_spin_ns.store(static_cast<int64_t>(s * 1e9), std::memory_order_relaxed);
        return rt::WriteStatus::Ok;
    };
    rt::add_cvar(v);

    // The report is printed at the end of the run; counting starts now.
    v = rt::Cvar{};
    v.name = "MPC_STATS";
    v.desc =
        "1: count messages, polls, waits and MPI function calls for every rank of the node "
        "process and print the statistics report at the end of the run (mpcrun --stats)";
    v.category = kCategory;
    v.scope = rt::Scope::Local;
    v.read =
        rt::value_reader<int>([](const rt::Subject&) { return g_stats_enabled.load() ? 1 : 0; });
    v.write = [](const rt::Subject&, const void* in) {
        const int x = *static_cast<const int*>(in);
        if (x != 0 && x != 1) return rt::WriteStatus::Invalid;
        set_stats_report(x == 1);
        return rt::WriteStatus::Ok;
    };
    rt::add_cvar(v);

    v = rt::Cvar{};
    v.name = "MPC_HANG_TIMEOUT";
    v.desc =
        "Seconds every rank may be stalled in MPI before the node process reports what "
        "each waits for and ends the job (mpcrun --timeout); 0: no watchdog";
    v.category = kCategory;
    v.verbosity = rt::Verbosity::UserDetail;
    v.type = rt::Type::Double;
    v.read = rt::value_reader<double>(
        [](const rt::Subject&) { return runtime::env::get_seconds("MPC_HANG_TIMEOUT", 0); });
    rt::add_cvar(v);
}

}  // namespace

void register_tool_variables() {
    rt::add_category(kCategory,
                     "MPI engine: intra-node transport, matching queues, waits and polls", "mpc");
    setting_variables();
    transport_variables();
    queue_variables();
    function_variables();
    events::register_events();
}

}  // namespace mpc::mpi
