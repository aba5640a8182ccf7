// The registry of event types (see runtime/tool_events.hpp). One mutex guards
// the table; the sink is an atomic pointer, read on every open-gate raise.
#include "runtime/tool_events.hpp"

#include <atomic>
#include <mutex>

#include "runtime/sync.hpp"

namespace mpc::runtime::tools {
namespace {

struct Entry {
    std::shared_ptr<const EventType> type;
    EventSite* site;
};

struct EventRegistry {
    std::mutex mutex;
    std::vector<Entry> entries;
};

EventRegistry& registry() {
    static auto* r = new EventRegistry();  // outlives static destructors
    return *r;
}

std::atomic<EventSink> g_sink{nullptr};

}  // namespace

int add_event(EventType t, EventSite* site) {
    EventRegistry& r = registry();
    std::string category;
    int index = -1;
    {
        std::lock_guard<std::mutex> g(r.mutex);
        for (size_t i = 0; i < r.entries.size(); ++i) {
            if (r.entries[i].type->name != t.name) continue;
            t.category = r.entries[i].type->category;
            r.entries[i].type = std::make_shared<const EventType>(std::move(t));
            site->index = static_cast<int>(i);
            return site->index;
        }
        index = static_cast<int>(r.entries.size());
        category = t.category;
        r.entries.push_back(Entry{std::make_shared<const EventType>(std::move(t)), site});
        site->index = index;
    }
    if (!category.empty()) add_event_to_category(category, index);
    return index;
}

int num_events() {
    EventRegistry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    return static_cast<int>(r.entries.size());
}

std::shared_ptr<const EventType> event(int index) {
    EventRegistry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    if (index < 0 || static_cast<size_t>(index) >= r.entries.size()) return nullptr;
    return r.entries[static_cast<size_t>(index)].type;
}

int find_event(const std::string& name) {
    EventRegistry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    for (size_t i = 0; i < r.entries.size(); ++i)
        if (r.entries[i].type->name == name) return static_cast<int>(i);
    return -1;
}

EventSite* event_site(int index) {
    EventRegistry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    if (index < 0 || static_cast<size_t>(index) >= r.entries.size()) return nullptr;
    return r.entries[static_cast<size_t>(index)].site;
}

size_t event_layout(const EventType& t, std::vector<size_t>* offsets) {
    size_t at = 0;
    if (offsets) offsets->clear();
    for (Type e : t.elements) {
        const size_t size = type_size(e);
        at = (at + size - 1) / size * size;
        if (offsets) offsets->push_back(at);
        at += size;
    }
    return at;
}

void set_event_sink(EventSink sink) {
    g_sink.store(sink, std::memory_order_release);
}

void raise_event(const EventSite& site, int local, const void* data, size_t bytes) {
    const EventSink sink = g_sink.load(std::memory_order_acquire);
    if (sink) sink(site.index, local, now_ns(), data, bytes);
}

}  // namespace mpc::runtime::tools
