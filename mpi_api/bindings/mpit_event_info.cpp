// MPI_T events (MPI 4.1 section 15.3.8): the event types (from the runtime's
// registry, runtime/tool_events.hpp), the event sources, and what a callback
// reads of the event instance it receives. The instance calls (read, copy,
// timestamp, source) are the ones a restricted callback may make: they lock
// nothing, and may run on any thread while the runtime holds a lock.
#include <climits>
#include <cstring>

#include "mpi_api/rank.hpp"
#include "mpit_event.hpp"
#include "runtime/sync.hpp"

using namespace mpc::mpi;
using namespace mpc::mpi::tools;
namespace rt = mpc::runtime::tools;

namespace {

// One source per node process: its monotonic clock, in nanoseconds. Every
// event is stamped from it when raised, so a rank's events are in order.
constexpr int kNumSources = 1;
constexpr const char* kSourceName = "mpc_clock";
constexpr const char* kSourceDesc =
    "the node process's monotonic clock (CLOCK_MONOTONIC), in nanoseconds: every event of "
    "the node process's ranks is stamped from it when raised";

bool valid_instance(MPI_T_event_instance i) {
    return i && i->magic == mpc_t_event_instance_s::kMagic && i->type && i->offsets;
}

}  // namespace

extern "C" {

int PMPI_T_source_get_num(int* num_sources) {
    MPC_ENTER(T_source_get_num);
    deliver_pending(me);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!num_sources) return MPI_T_ERR_INVALID;
    *num_sources = kNumSources;
    return MPI_SUCCESS;
}

int PMPI_T_source_get_info(int source_index, char* name, int* name_len, char* desc, int* desc_len,
                           MPI_T_source_order* ordering, MPI_Count* ticks_per_second,
                           MPI_Count* max_ticks, MPI_Info* info) {
    MPC_ENTER(T_source_get_info);
    deliver_pending(me);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (source_index < 0 || source_index >= kNumSources) return MPI_T_ERR_INVALID_INDEX;
    return_string(kSourceName, name, name_len);
    return_string(kSourceDesc, desc, desc_len);
    if (ordering) *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second) *ticks_per_second = 1000000000;
    if (max_ticks) *max_ticks = LLONG_MAX;
    if (info) *info = info_of({});
    return MPI_SUCCESS;
}

int PMPI_T_source_get_timestamp(int source_index, MPI_Count* timestamp) {
    MPC_ENTER(T_source_get_timestamp);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (source_index < 0 || source_index >= kNumSources) return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp) return MPI_T_ERR_INVALID;
    *timestamp = mpc::runtime::now_ns();
    return MPI_SUCCESS;
}

int PMPI_T_event_get_num(int* num_events) {
    MPC_ENTER(T_event_get_num);
    deliver_pending(me);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!num_events) return MPI_T_ERR_INVALID;
    *num_events = rt::num_events();
    return MPI_SUCCESS;
}

int PMPI_T_event_get_info(int event_index, char* name, int* name_len, int* verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int* num_elements, MPI_T_enum* enumtype, MPI_Info* info, char* desc,
                          int* desc_len, int* bind) {
    MPC_ENTER(T_event_get_info);
    deliver_pending(me);
    ToolsCall call(me);
    if (call.error()) return call.error();
    auto t = rt::event(event_index);
    if (!t) return MPI_T_ERR_INVALID_INDEX;
    const int n = static_cast<int>(t->elements.size());
    // num_elements is in/out: the arrays' length in, the element count out;
    // at most that many entries are written.
    if (num_elements && *num_elements < 0) return MPI_T_ERR_INVALID;
    if (num_elements) {
        std::vector<size_t> offsets;
        rt::event_layout(*t, &offsets);
        const int room = std::min(*num_elements, n);
        for (int i = 0; i < room; ++i) {
            if (array_of_datatypes)
                array_of_datatypes[i] = datatype_of(t->elements[static_cast<size_t>(i)]);
            if (array_of_displacements)
                array_of_displacements[i] = static_cast<MPI_Aint>(offsets[static_cast<size_t>(i)]);
        }
        *num_elements = n;
    }
    return_string(t->name, name, name_len);
    return_string(t->desc, desc, desc_len);
    if (verbosity) *verbosity = verbosity_of(t->verbosity);
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    if (info) *info = info_of({});
    if (bind) *bind = bind_of(t->bind);
    return MPI_SUCCESS;
}

int PMPI_T_event_get_index(const char* name, int* event_index) {
    MPC_ENTER(T_event_get_index);
    deliver_pending(me);
    ToolsCall call(me);
    if (call.error()) return call.error();
    if (!name || !event_index) return MPI_T_ERR_INVALID;
    const int i = rt::find_event(name);
    if (i < 0) return MPI_T_ERR_INVALID_NAME;
    *event_index = i;
    return MPI_SUCCESS;
}

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void* buffer) {
    MPC_ENTER(T_event_read);
    if (!valid_instance(event_instance)) return MPI_T_ERR_INVALID_HANDLE;
    const auto& elements = event_instance->type->elements;
    if (element_index < 0 || static_cast<size_t>(element_index) >= elements.size())
        return MPI_T_ERR_INVALID_INDEX;
    if (!buffer) return MPI_T_ERR_INVALID;
    const size_t at = (*event_instance->offsets)[static_cast<size_t>(element_index)];
    memcpy(buffer, event_instance->data + at,
           rt::type_size(elements[static_cast<size_t>(element_index)]));
    return MPI_SUCCESS;
}

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void* buffer) {
    MPC_ENTER(T_event_copy);
    if (!valid_instance(event_instance)) return MPI_T_ERR_INVALID_HANDLE;
    if (!buffer) return MPI_T_ERR_INVALID;
    // The elements at the displacements MPI_T_event_get_info reports.
    memcpy(buffer, event_instance->data, event_instance->bytes);
    return MPI_SUCCESS;
}

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count* event_timestamp) {
    MPC_ENTER(T_event_get_timestamp);
    if (!valid_instance(event_instance)) return MPI_T_ERR_INVALID_HANDLE;
    if (!event_timestamp) return MPI_T_ERR_INVALID;
    *event_timestamp = event_instance->time_ns;
    return MPI_SUCCESS;
}

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int* source_index) {
    MPC_ENTER(T_event_get_source);
    if (!valid_instance(event_instance)) return MPI_T_ERR_INVALID_HANDLE;
    if (!source_index) return MPI_T_ERR_INVALID;
    *source_index = 0;
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_T_source_get_num)
MPC_WEAK(MPI_T_source_get_info)
MPC_WEAK(MPI_T_source_get_timestamp)
MPC_WEAK(MPI_T_event_get_num)
MPC_WEAK(MPI_T_event_get_info)
MPC_WEAK(MPI_T_event_get_index)
MPC_WEAK(MPI_T_event_read)
MPC_WEAK(MPI_T_event_copy)
MPC_WEAK(MPI_T_event_get_timestamp)
MPC_WEAK(MPI_T_event_get_source)
