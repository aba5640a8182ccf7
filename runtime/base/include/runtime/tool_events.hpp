// runtime/tool_events: the registry of the runtime's event types, which the
// MPI tools interface's events (MPI 4.1 section 15.3.8) report through.
//
// A room registers an event type (name, description, category, the types of
// its elements) and keeps an EventSite for it; where the event happens it
// calls raise(), which costs one relaxed load and a predictable branch while
// no tool has a callback on the type (the site's gate is closed). When the
// gate is open, the raise copies the elements and hands them to the sink the
// MPI_T bindings installed, which calls or buffers the tools' callbacks.
// This room never calls a tool's callback itself and never knows about MPI
// objects; an event type's index never changes and none is ever removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/tools.hpp"

namespace mpc::runtime::tools {

struct EventType {
    std::string name, desc, category;
    Verbosity verbosity = Verbosity::UserBasic;
    // The elements, in order; each lies at the next offset aligned to its
    // size (a C struct of the same members has the same layout).
    std::vector<Type> elements;
    Bind bind = Bind::NoObject;
};

// The bytes one raise may carry (elements of every registered type fit).
inline constexpr size_t kMaxEventBytes = 64;

// Where a room raises one event type: its index and the gate the MPI_T
// bindings open while a callback is registered on the type.
struct EventSite {
    Gate gate;
    int index = -1;
};

// Registers `t` for `site` (sets site->index; a name registered again keeps
// its index and site). Returns the index.
int add_event(EventType t, EventSite* site);
int num_events();
std::shared_ptr<const EventType> event(int index);  // null when out of range
int find_event(const std::string& name);            // -1 when unknown
EventSite* event_site(int index);                   // null when out of range
// Offset of each element of t, and the bytes of all of them.
size_t event_layout(const EventType& t, std::vector<size_t>* offsets);

// The MPI_T bindings' delivery of a raised event: the event type, the node
// process's index of the rank it happened to (-1: every rank of the node
// process), the time (runtime::now_ns), and its elements laid out as above.
using EventSink = void (*)(int index, int local, int64_t time_ns, const void* data, size_t bytes);
void set_event_sink(EventSink sink);

// Out of line: the gate was open.
void raise_event(const EventSite& site, int local, const void* data, size_t bytes);

// Raises `site`'s event for rank `local` with the elements in `values` (a
// struct laid out as the type's elements). One branch while nobody listens.
template <class T>
inline void raise(const EventSite& site, int local, const T& values) {
    static_assert(sizeof(T) <= kMaxEventBytes, "event elements too large");
    if (__builtin_expect(site.gate.on(), 0)) raise_event(site, local, &values, sizeof(T));
}

}  // namespace mpc::runtime::tools
