// The network's variables for the tools interface (MPI_T): its MPC_* settings
// as control variables (the values in force: a driver's defaults once the
// network runs), and as performance variables what --stats reports of it per
// rank (work requests processed by the rank and stolen by others, rendezvous
// timers) plus messages and bytes per protocol, connection queues and the
// registration cache. Without a network (one node process) the settings read
// as configured and the counters stay 0.
#include <mutex>
#include <string>

#include "network_impl.hpp"
#include "runtime/env.hpp"
#include "runtime/tools.hpp"

namespace mpc::ib {
namespace {

namespace rt = runtime::tools;
constexpr const char* kCategory = "mpc_network";

// The running network, for the readers. They hold the mutex while they read,
// so the network cannot go away under them.
std::mutex g_live_mutex;
NetworkImpl* g_live = nullptr;

template <class F>
auto with_live(F f, decltype(f(nullptr)) none) {
    std::lock_guard<std::mutex> g(g_live_mutex);
    return g_live ? f(g_live) : none;
}

// The settings as read from the environment, for a node process without network.
const NetworkConfig& configured() {
    static const NetworkConfig c = NetworkConfig::from_env();
    return c;
}

template <class T>
rt::Cvar constant(const char* name, const char* desc, rt::Verbosity verbosity,
                  std::function<T(NetworkImpl*)> live, T fallback) {
    rt::Cvar v;
    v.name = name;
    v.desc = desc;
    v.category = kCategory;
    v.verbosity = verbosity;
    v.type = rt::type_of<T>();
    v.read = rt::value_reader<T>([live, fallback](const rt::Subject&) {
        return with_live([&](NetworkImpl* n) { return live(n); }, fallback);
    });
    return v;
}

std::string env_or(const char* name, const char* fallback) {
    const char* v = runtime::env::get(name);
    return v ? v : fallback;
}

void setting_variables() {
    const NetworkConfig& c = configured();
    const rt::Enumeration* drivers = rt::add_enumeration(
        {"mpc_net_driver", {{0, "auto"}, {1, "tcp"}, {2, "ofi"}, {3, "verbs"}}});
    int asked = 0;
    for (const auto& [value, word] : drivers->items)
        if (c.driver == word) asked = value;
    rt::Cvar v;
    v.name = "MPC_NET";
    v.desc =
        "Network driver between node processes (mpcrun --net): the one running, or the "
        "setting (auto: verbs where a device exists, else tcp) without a network";
    v.category = kCategory;
    v.enumeration = drivers;
    v.read = rt::value_reader<int>([drivers, asked](const rt::Subject&) {
        const std::string name =
            with_live([](NetworkImpl* n) { return std::string(n->driver_name()); }, std::string());
        for (const auto& [value, word] : drivers->items)
            if (name == word) return value;
        return asked;
    });
    rt::add_cvar(v);

    const rt::Verbosity tuner = rt::Verbosity::TunerBasic;
    rt::add_cvar(constant<unsigned long>(
        "MPC_EAGER_LIMIT",
        "Network messages up to this many bytes go in one send (eager); fixed at start: "
        "receivers size their buffers and check fragments against the same limits",
        tuner, [](NetworkImpl* n) { return n->eager_limit(); }, c.eager_limit));
    rt::add_cvar(constant<unsigned long>(
        "MPC_RNDV_THRESHOLD",
        "Network messages larger than this many bytes go by rendezvous (an RDMA write into the "
        "receive buffer), smaller ones above the eager limit as fragments; fixed at start",
        tuner, [](NetworkImpl* n) { return n->rendezvous_threshold(); }, c.rendezvous_threshold));
    rt::add_cvar(constant<unsigned long>(
        "MPC_NET_BUFFER", "Bytes of each network bounce buffer (header included)", tuner,
        [](NetworkImpl* n) { return n->buffer_size(); }, c.buffer_size));
    rt::add_cvar(constant<unsigned>(
        "MPC_NET_SEND_BUFFERS", "Network send buffers of the node process", tuner,
        [](NetworkImpl* n) { return n->send_buffer_count(); }, c.send_buffers));
    rt::add_cvar(constant<unsigned>(
        "MPC_NET_RECV_BUFFERS", "Buffers of the node process's shared receive pool", tuner,
        [](NetworkImpl* n) { return n->recv_buffer_count(); }, c.recv_buffers));
    rt::add_cvar(constant<double>(
        "MPC_CONNECT_TIMEOUT", "Seconds node processes try to connect before giving up",
        rt::Verbosity::UserDetail,
        [](NetworkImpl*) { return runtime::env::get_seconds("MPC_CONNECT_TIMEOUT", 60.0); },
        runtime::env::get_seconds("MPC_CONNECT_TIMEOUT", 60.0)));

    const rt::Enumeration* waits =
        rt::add_enumeration({"mpc_progress_thread", {{0, "hybrid"}, {1, "poll"}, {2, "block"}}});
    v = rt::Cvar{};
    v.name = "MPC_PROGRESS_THREAD";
    v.desc =
        "How the progress thread (progress mode thread) waits between events: hybrid (polls "
        "after activity and while ranks wait, else blocks in the driver), poll, or block";
    v.category = kCategory;
    v.verbosity = tuner;
    v.enumeration = waits;
    v.read = rt::value_reader<int>([&c](const rt::Subject&) { return static_cast<int>(c.thread_wait); });
    rt::add_cvar(v);
    v = rt::Cvar{};
    v.name = "MPC_PROGRESS_THREAD_RT";
    v.desc = "1: the progress thread asked for real-time priority";
    v.category = kCategory;
    v.verbosity = tuner;
    v.read = rt::value_reader<int>([&c](const rt::Subject&) { return c.thread_realtime ? 1 : 0; });
    rt::add_cvar(v);

    const std::string provider = env_or("MPC_OFI_PROVIDER", "tcp");
    rt::add_cvar(rt::string_cvar("MPC_OFI_PROVIDER", "libfabric provider of the ofi driver",
                                 kCategory, rt::Verbosity::UserDetail,
                                 [provider] { return provider; }));
    const std::string iface = env_or("MPC_NET_IF", "");
    rt::add_cvar(rt::string_cvar(
        "MPC_NET_IF",
        "Network interface whose IPv4 address the tcp driver publishes (empty: the first "
        "interface up that is not loopback)",
        kCategory, rt::Verbosity::UserDetail, [iface] { return iface; }));
    const std::string verbs = env_or("MPC_VERBS_ADDR", "");
    rt::add_cvar(rt::string_cvar("MPC_VERBS_ADDR",
                                 "IP address of the IPoIB interface the verbs driver connects "
                                 "through (empty: the device's first)",
                                 kCategory, rt::Verbosity::UserDetail, [verbs] { return verbs; }));
    const std::string fault = env_or("MPC_NET_FAULT", "");
    rt::add_cvar(rt::string_cvar("MPC_NET_FAULT",
                                 "Faults injected into the network, for tests (empty: none)",
                                 kCategory, rt::Verbosity::DevAll, [fault] { return fault; }));

    // Read once by every rendezvous as its writes start.
    v = rt::Cvar{};
    v.name = "MPC_NET_WRITE_CHUNK";
    v.desc =
        "A rendezvous moves its data in RDMA writes of at most this many bytes (4 KiB to "
        "1 GiB); applies to the rendezvous that start after the change";
    v.category = kCategory;
    v.verbosity = tuner;
    v.type = rt::Type::UnsignedLong;
    v.scope = rt::Scope::Local;
    const unsigned long asked_chunk = c.write_chunk;
    v.read = rt::value_reader<unsigned long>([asked_chunk](const rt::Subject&) {
        return with_live([](NetworkImpl* n) { return n->write_chunk(); }, asked_chunk);
    });
    v.write = [](const rt::Subject&, const void* in) {
        const size_t x = *static_cast<const unsigned long*>(in);
        return with_live(
            [x](NetworkImpl* n) {
                return n->set_write_chunk(x) ? rt::WriteStatus::Ok : rt::WriteStatus::Invalid;
            },
            rt::WriteStatus::Never);  // no network in this node process, for good
    };
    rt::add_cvar(v);

    // The cache checks its budget whenever a registration falls unused.
    v = rt::Cvar{};
    v.name = "MPC_RCACHE_MAX";
    v.desc =
        "Bytes of memory registrations the registration cache keeps after their last use "
        "(a smaller budget evicts at once)";
    v.category = kCategory;
    v.verbosity = tuner;
    v.type = rt::Type::UnsignedLong;
    v.scope = rt::Scope::Local;
    const unsigned long asked_max = c.rcache_max_bytes;
    v.read = rt::value_reader<unsigned long>([asked_max](const rt::Subject&) {
        return with_live([](NetworkImpl* n) { return n->rcache().max_cached(); }, asked_max);
    });
    v.write = [](const rt::Subject&, const void* in) {
        const size_t x = *static_cast<const unsigned long*>(in);
        return with_live(
            [x](NetworkImpl* n) {
                n->rcache().set_max_cached(x);
                return rt::WriteStatus::Ok;
            },
            rt::WriteStatus::Never);
    };
    rt::add_cvar(v);
}

using Field = std::atomic<uint64_t> RankNetCounters::*;

void per_rank(const std::string& name, const std::string& desc, rt::Class cls, rt::Gate* gate,
              rt::Verbosity verbosity, std::function<uint64_t(const RankNetCounters&)> get) {
    rt::PerRank v;
    v.name = name;
    v.desc = desc;
    v.category = kCategory;
    v.var_class = cls;
    v.gate = gate;
    v.verbosity = verbosity;
    v.get = [get](int local) {
        return with_live(
            [&](NetworkImpl* n) { return local < n->local_ranks() ? get(n->counters(local)) : 0; },
            uint64_t{0});
    };
    v.ranks = [] { return with_live([](NetworkImpl* n) { return n->local_ranks(); }, 0); };
    rt::add_rank_and_node(v);
}

void per_rank_field(const std::string& name, const std::string& desc, rt::Class cls, rt::Gate* gate,
                    rt::Verbosity verbosity, Field field) {
    per_rank(name, desc, cls, gate, verbosity, [field](const RankNetCounters& c) {
        return (c.*field).load(std::memory_order_relaxed);
    });
}

void counter_variables() {
    const rt::Class counter = rt::Class::Counter, timer = rt::Class::Timer;
    const rt::Verbosity basic = rt::Verbosity::UserBasic, tuner = rt::Verbosity::TunerBasic;
    static constexpr const char* kPaths[][2] = {
        {"net_eager", "network messages sent eager (one send, up to MPC_EAGER_LIMIT bytes)"},
        {"net_frag", "network messages sent as fragments (up to MPC_RNDV_THRESHOLD bytes)"},
        {"net_rndv",
         "network messages sent by rendezvous (an RDMA write into the receive "
         "buffer; larger, or synchronous)"},
    };
    for (int p = 0; p < RankNetStats::kPaths; ++p) {
        per_rank(std::string(kPaths[p][0]) + "_msgs", std::string("Messages: ") + kPaths[p][1],
                 counter, &rt::g_transport, basic, [p](const RankNetCounters& c) {
                     return c.sent_msgs[p].load(std::memory_order_relaxed);
                 });
        per_rank(std::string(kPaths[p][0]) + "_bytes", std::string("Bytes of ") + kPaths[p][1],
                 counter, &rt::g_transport, basic, [p](const RankNetCounters& c) {
                     return c.sent_bytes[p].load(std::memory_order_relaxed);
                 });
    }
    per_rank_field("net_processed_self",
                   "Network work requests for the rank that it processed itself", counter, nullptr,
                   tuner, &RankNetCounters::processed_self);
    per_rank_field("net_stolen_numa",
                   "Network work requests for the rank that another rank or an idle core of "
                   "its NUMA node processed (collaborative polling)",
                   counter, nullptr, tuner, &RankNetCounters::stolen_same_numa);
    per_rank_field("net_stolen_other",
                   "Network work requests for the rank processed from another NUMA node", counter,
                   nullptr, tuner, &RankNetCounters::stolen_other_numa);
    per_rank_field("net_wr_received", "Network work requests dispatched to the rank", counter,
                   nullptr, tuner, &RankNetCounters::wr_received);
    per_rank_field("net_wr_reception_time",
                   "Seconds the rank's network work requests waited between their dispatch and "
                   "their processing (timed while started)",
                   timer, &rt::g_transport, rt::Verbosity::TunerDetail,
                   &RankNetCounters::wr_reception_ns);
    per_rank_field("net_rndv_sends", "Rendezvous sends of the rank that got their answer (ACK)",
                   counter, nullptr, tuner, &RankNetCounters::rndv_count);
    per_rank_field("net_rndv_req_to_ack_time",
                   "Seconds the rank's rendezvous sends waited from REQ to ACK", timer, nullptr,
                   tuner, &RankNetCounters::rndv_req_to_ack_ns);
    per_rank_field("net_rndv_matched", "Rendezvous REQs for the rank that a receive matched",
                   counter, nullptr, tuner, &RankNetCounters::rndv_matched);
    per_rank_field("net_rndv_matching_time",
                   "Seconds rendezvous REQs for the rank waited, unexpected, for their receive",
                   timer, nullptr, tuner, &RankNetCounters::rndv_matching_ns);
}

// Node process values of the network and its registration cache.
void node_variable(const char* name, const char* desc, rt::Class cls,
                   std::function<uint64_t(NetworkImpl*)> get) {
    rt::Pvar p;
    p.name = name;
    p.desc = desc;
    p.category = kCategory;
    p.verbosity = rt::Verbosity::TunerDetail;
    p.var_class = cls;
    p.readonly = cls != rt::Class::Counter;
    p.atomic = !p.readonly;  // one reading under the cache's lock
    p.read = [get](const rt::Subject&, void* out) {
        *static_cast<unsigned long long*>(out) =
            with_live([&](NetworkImpl* n) { return get(n); }, uint64_t{0});
    };
    rt::add_pvar(p);
}

void node_variables() {
    node_variable("mpc_net_queued",
                  "Network messages of the node process waiting for credits or send buffers",
                  rt::Class::Level,
                  [](NetworkImpl* n) { return static_cast<uint64_t>(n->queued_messages()); });
    using C = RegistrationCache::Counters;
    struct Item {
        const char* name;
        const char* desc;
        rt::Class cls;
        uint64_t (*get)(const C&);
    };
    static constexpr Item kItems[] = {
        {"mpc_rcache_hits", "Registrations found in the registration cache", rt::Class::Counter,
         [](const C& c) -> uint64_t { return c.hits; }},
        {"mpc_rcache_misses", "Registrations the cache had to make", rt::Class::Counter,
         [](const C& c) -> uint64_t { return c.misses; }},
        {"mpc_rcache_evicted", "Unused registrations the cache dropped for its byte budget",
         rt::Class::Counter, [](const C& c) -> uint64_t { return c.evicted; }},
        {"mpc_rcache_invalidated", "Registrations dropped because their memory was freed",
         rt::Class::Counter, [](const C& c) -> uint64_t { return c.invalidated; }},
        {"mpc_rcache_failures", "Registrations the driver refused", rt::Class::Counter,
         [](const C& c) -> uint64_t { return c.failures; }},
        {"mpc_rcache_cached_bytes", "Bytes of registrations kept with no user", rt::Class::Level,
         [](const C& c) -> uint64_t { return c.cached_bytes; }},
        {"mpc_rcache_entries", "Registrations in the cache", rt::Class::Level,
         [](const C& c) -> uint64_t { return c.entries; }},
    };
    for (const Item& item : kItems) {
        auto get = item.get;
        node_variable(item.name, item.desc, item.cls,
                      [get](NetworkImpl* n) { return get(n->rcache().counters()); });
    }
}

}  // namespace

void network_started(NetworkImpl* net) {
    std::lock_guard<std::mutex> g(g_live_mutex);
    g_live = net;
}

void network_ended(NetworkImpl* net) {
    std::lock_guard<std::mutex> g(g_live_mutex);
    if (g_live == net) g_live = nullptr;
}

void register_tool_variables() {
    rt::add_category(kCategory,
                     "Network between node processes: protocols, work requests processed for "
                     "other ranks (collaborative polling), rendezvous, registration cache",
                     rt::kRootCategory);
    setting_variables();
    counter_variables();
    node_variables();
}

}  // namespace mpc::ib
