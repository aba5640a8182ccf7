// The MPI engine's event types for MPI_T events (see mpi_api/tool_events.hpp):
// their registration in the runtime's registry. The raise sites are in the
// transports (intranode.cpp, p2p.cpp, progress_engine.cpp, net_glue.cpp).
#include "mpi_api/tool_events.hpp"

namespace mpc::mpi::events {

namespace rt = runtime::tools;

rt::EventSite g_unexpected;
rt::EventSite g_rendezvous;
rt::EventSite g_steal;

namespace {

constexpr const char* kCategory = "mpc_mpi_events";

void add(const char* name, const char* desc, rt::Verbosity v, std::vector<rt::Type> elements,
         rt::EventSite* site) {
    rt::EventType t;
    t.name = name;
    t.desc = desc;
    t.category = kCategory;
    t.verbosity = v;
    t.elements = std::move(elements);
    add_event(std::move(t), site);
}

}  // namespace

void register_events() {
    using rt::Type;
    rt::add_category(kCategory,
                     "MPI engine events: unexpected messages, rendezvous, inbox drains by others",
                     "mpc_mpi");
    static_assert(offsetof(Unexpected, bytes) == 8 && sizeof(Unexpected) == 16);
    add("mpc_unexpected_message",
        "a message arrived before a matching receive and was queued as unexpected; elements: "
        "source (rank in the communicator), tag, bytes",
        rt::Verbosity::UserBasic, {Type::Int, Type::Int, Type::UnsignedLongLong}, &g_unexpected);
    static_assert(offsetof(Rendezvous, bytes) == 8 && sizeof(Rendezvous) == 16);
    add("mpc_intra_rendezvous",
        "an intra-node send too large for a cell (or synchronous) started a rendezvous: the "
        "receiver copies when it matches; elements: destination (rank in the communicator), "
        "tag, bytes",
        rt::Verbosity::TunerBasic, {Type::Int, Type::Int, Type::UnsignedLongLong}, &g_rendezvous);
    static_assert(sizeof(Steal) == 8);
    add("mpc_inbox_steal",
        "another rank of the node process (or the progress thread) drained this rank's inbox "
        "for it; elements: the drained rank and the helper (indices among the node process's "
        "ranks, -1 for the progress thread)",
        rt::Verbosity::TunerDetail, {Type::Int, Type::Int}, &g_steal);
}

}  // namespace mpc::mpi::events
