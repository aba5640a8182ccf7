// runtime/tools: the registry of the runtime's control and performance
// variables, which the MPI tools information interface (MPI_T, MPI 3.1
// section 14.3) reads through.
//
// Every room registers what it has: its MPC_* settings as control variables
// (read when the room starts, some writable while the job runs), its counters
// and levels as performance variables, grouped in categories. The registry
// lives in the bottom room so that each room registers into it without
// knowing who reads; the C bindings turn it into MPI_T's indices, handles and
// sessions. A variable's index never changes and none is ever removed:
// registering a name again replaces its description and accessors in place.
//
// Counters that cost something on a fast path are counted only while a Gate
// is open (an MPI_T handle of theirs is started, or MPC_STATS is on): they are
// MPI_T's start/stop variables. Always-counted ones are continuous. Nothing
// here knows about MPI objects: a variable bound to a communicator receives
// the object the bindings resolved, as an opaque pointer.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mpc::runtime::tools {

// The element types MPI_T allows (MPI_INT, MPI_UNSIGNED, MPI_UNSIGNED_LONG,
// MPI_UNSIGNED_LONG_LONG, MPI_DOUBLE, MPI_CHAR).
enum class Type : uint8_t { Int, Unsigned, UnsignedLong, UnsignedLongLong, Double, Char };
// What a variable is bound to (MPI_T_BIND_*): nothing, or a communicator.
enum class Bind : uint8_t { NoObject, Comm };
// When a control variable may change (MPI_T_SCOPE_*).
enum class Scope : uint8_t { Constant, ReadOnly, Local, Group, GroupEq, All, AllEq };
// Performance variable classes (MPI_T_PVAR_CLASS_*).
enum class Class : uint8_t {
    State,
    Level,
    Size,
    Percentage,
    HighWatermark,
    LowWatermark,
    Counter,
    Aggregate,
    Timer,
    Generic
};
// MPI_T_VERBOSITY_{USER,TUNER,MPIDEV}_{BASIC,DETAIL,ALL}, in that order.
enum class Verbosity : uint8_t {
    UserBasic,
    UserDetail,
    UserAll,
    TunerBasic,
    TunerDetail,
    TunerAll,
    DevBasic,
    DevDetail,
    DevAll
};

// What a control variable's writer answers.
enum class WriteStatus : uint8_t {
    Ok,
    NotNow,   // cannot be set at this moment
    Never,    // cannot be set for the rest of the run
    Invalid,  // the value is out of range
};

// Who a variable is read or written for: the MPI process (a rank, by its
// index among the ranks of this node process; -1 for none) and, for bound
// variables, the object (a communicator of that rank, as the layer that
// registered the variable knows it).
struct Subject {
    int local = -1;
    const void* object = nullptr;
};

// An enumeration (MPI_T_enum): names of the values an MPI_INT variable takes.
struct Enumeration {
    std::string name;
    std::vector<std::pair<int, std::string>> items;
};

// Elements of the variable's type, `count` of them (for Char: the string and
// its terminating zero, count bytes at most).
using Reader = std::function<void(const Subject&, void* out)>;
using Writer = std::function<WriteStatus(const Subject&, const void* in)>;
using Counter = std::function<int(const Subject&)>;

// A switch for counters kept only while someone looks: open while at least
// one user holds it. on() is one relaxed load, for fast paths.
class Gate {
  public:
    void open() { users_.fetch_add(1, std::memory_order_relaxed); }
    void close() { users_.fetch_sub(1, std::memory_order_relaxed); }
    bool on() const { return users_.load(std::memory_order_relaxed) != 0; }

  private:
    std::atomic<int> users_{0};
};
// Message and byte counts per path, polls, intra-node steals, waits.
extern Gate g_transport;
// Calls and time of every MPI function.
extern Gate g_functions;

struct Cvar {
    std::string name, desc, category;
    Verbosity verbosity = Verbosity::UserBasic;
    Type type = Type::Int;
    const Enumeration* enumeration = nullptr;
    Bind bind = Bind::NoObject;
    Scope scope = Scope::Constant;
    Counter count;  // null: one element
    Reader read;
    Writer write;  // null: never writable
};

struct Pvar {
    std::string name, desc, category;
    Verbosity verbosity = Verbosity::UserBasic;
    Class var_class = Class::Counter;
    Type type = Type::UnsignedLongLong;
    const Enumeration* enumeration = nullptr;
    Bind bind = Bind::NoObject;
    bool readonly = true;  // MPI_T sessions may write/reset their view unless readonly
    bool atomic = false;   // read + reset as one step (one counter, one load)
    Gate* gate = nullptr;  // null: continuous; else counted only while the gate is open
    Counter count;         // null: one element
    Reader read;           // the raw value(s): totals since start for counters
};

// The category every room's category hangs from (index 0).
inline constexpr const char* kRootCategory = "mpc";

struct Category {
    std::string name, desc;
    std::vector<int> cvars, pvars, categories;  // indices, in registration order
    std::vector<int> events;                    // event types (runtime/tool_events.hpp)
};

// Registration: returns the variable's index. A name registered again (a
// pvar: name and class) keeps its index and gets the new description and
// accessors. A category named by a variable is created when missing.
int add_cvar(Cvar v);
int add_pvar(Pvar v);
int add_category(const std::string& name, const std::string& desc, const std::string& parent = "");
// The enumeration lives as long as the process; registering a name again
// returns the first one.
const Enumeration* add_enumeration(Enumeration e);

// Look-ups (any thread). The shared pointers stay valid after a replacement.
int num_cvars();
int num_pvars();
int num_categories();
std::shared_ptr<const Cvar> cvar(int index);  // null when out of range
std::shared_ptr<const Pvar> pvar(int index);
bool category(int index, Category* out);
int find_cvar(const std::string& name);  // -1 when unknown
int find_pvar(const std::string& name, Class var_class);
int find_category(const std::string& name);
// Lists event type `index` in a category, created when missing (the event
// registry's; bumps the stamp).
void add_event_to_category(const std::string& name, int index);
// Changes whenever a variable or category is added (MPI_T_category_changed).
int stamp();
// True when the enumeration is one of the registry's.
bool known_enumeration(const Enumeration* e);

// Elements of a variable for a subject.
inline int count_of(const Counter& c, const Subject& s) {
    return c ? c(s) : 1;
}
size_t type_size(Type t);

// Shapes most registrations take.
template <class T>
constexpr Type type_of() {
    if constexpr (std::is_same_v<T, int>)
        return Type::Int;
    else if constexpr (std::is_same_v<T, unsigned>)
        return Type::Unsigned;
    else if constexpr (std::is_same_v<T, unsigned long>)
        return Type::UnsignedLong;
    else if constexpr (std::is_same_v<T, unsigned long long>)
        return Type::UnsignedLongLong;
    else {
        static_assert(std::is_same_v<T, double>, "MPI_T has no such type");
        return Type::Double;
    }
}
// A reader of one value computed when read.
template <class T, class F>
Reader value_reader(F get) {
    return [get](const Subject& s, void* out) { *static_cast<T*>(out) = get(s); };
}
// A value kept per rank: "mpc_<name>" reads the calling rank's,
// "mpc_node_<name>" the sum over the node process's ranks (one verbosity step
// more detailed). Counters and timers may be written and reset by a session
// (which sees its own view); the rank's own is one load, read and reset at
// once; the node total is not (the ranks go on counting while it adds up).
// get(local) gives the raw value of a rank (timers: nanoseconds, read as
// seconds in an MPI_DOUBLE; others as MPI_UNSIGNED_LONG_LONG).
struct PerRank {
    std::string name, desc, category;
    Class var_class = Class::Counter;
    Gate* gate = nullptr;
    Verbosity verbosity = Verbosity::UserBasic;
    std::function<uint64_t(int local)> get;
    std::function<int()> ranks;  // ranks of the node process
};
void add_rank_and_node(const PerRank& v);

// A string control variable, read-only and fixed for the run (handles size
// their buffers from its length when allocated).
Cvar string_cvar(std::string name, std::string desc, std::string category, Verbosity verbosity,
                 std::function<std::string()> get);

}  // namespace mpc::runtime::tools
