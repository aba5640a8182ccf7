// The registry of control and performance variables (see runtime/tools.hpp).
// One mutex guards the tables; entries are shared pointers, so a reader keeps
// the entry it looked up even if the name is registered again meanwhile.
#include "runtime/tools.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace mpc::runtime::tools {

Gate g_transport;
Gate g_functions;

namespace {

struct Registry {
    std::mutex mutex;
    std::vector<std::shared_ptr<const Cvar>> cvars;
    std::vector<std::shared_ptr<const Pvar>> pvars;
    // Indices by name (pvars: name and class): a thousand registrations at
    // start-up, and every get_index, without a scan.
    std::unordered_map<std::string, int> cvar_index, pvar_index;
    std::vector<Category> categories;
    std::vector<std::unique_ptr<Enumeration>> enumerations;
    int stamp = 0;
};

Registry& registry() {
    // Outlives every static destructor that might look.
    static Registry* r = [] {
        auto* made = new Registry();
        made->categories.push_back(Category{kRootCategory,
                                            "fibermpi: every variable of the runtime, one "
                                            "category per room",
                                            {},
                                            {},
                                            {},
                                            {}});
        return made;
    }();
    return *r;
}

int find_category_locked(Registry& r, const std::string& name) {
    for (size_t i = 0; i < r.categories.size(); ++i)
        if (r.categories[i].name == name) return static_cast<int>(i);
    return -1;
}

int category_locked(Registry& r, const std::string& name) {
    int i = find_category_locked(r, name);
    if (i >= 0) return i;
    r.categories.push_back(Category{name, "", {}, {}, {}, {}});
    ++r.stamp;
    return static_cast<int>(r.categories.size()) - 1;
}

std::string pvar_key(const std::string& name, Class c) {
    return name + '#' + std::to_string(static_cast<int>(c));
}

template <class V>
int add_variable(Registry& r, std::vector<std::shared_ptr<const V>>& table,
                 std::unordered_map<std::string, int>& by_key, const std::string& key, V v,
                 std::vector<int> Category::*members) {
    std::lock_guard<std::mutex> g(r.mutex);
    if (auto it = by_key.find(key); it != by_key.end()) {
        // Same name: keep the index (and the category it was listed in).
        const auto i = static_cast<size_t>(it->second);
        v.category = table[i]->category;
        table[i] = std::make_shared<const V>(std::move(v));
        return it->second;
    }
    const int index = static_cast<int>(table.size());
    by_key.emplace(key, index);
    if (!v.category.empty()) {
        const int c = category_locked(r, v.category);
        (r.categories[static_cast<size_t>(c)].*members).push_back(index);
    }
    table.push_back(std::make_shared<const V>(std::move(v)));
    ++r.stamp;
    return index;
}

}  // namespace

int add_cvar(Cvar v) {
    Registry& r = registry();
    const std::string key = v.name;
    return add_variable<Cvar>(r, r.cvars, r.cvar_index, key, std::move(v), &Category::cvars);
}

int add_pvar(Pvar v) {
    Registry& r = registry();
    const std::string key = pvar_key(v.name, v.var_class);
    return add_variable<Pvar>(r, r.pvars, r.pvar_index, key, std::move(v), &Category::pvars);
}

void add_event_to_category(const std::string& name, int index) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    r.categories[static_cast<size_t>(category_locked(r, name))].events.push_back(index);
    ++r.stamp;
}

int add_category(const std::string& name, const std::string& desc, const std::string& parent) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    const int i = category_locked(r, name);
    r.categories[static_cast<size_t>(i)].desc = desc;
    if (!parent.empty()) {
        const int p = category_locked(r, parent);
        auto& subs = r.categories[static_cast<size_t>(p)].categories;
        if (p != i && std::find(subs.begin(), subs.end(), i) == subs.end()) {
            subs.push_back(i);
            ++r.stamp;
        }
    }
    return i;
}

const Enumeration* add_enumeration(Enumeration e) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    for (const auto& known : r.enumerations)
        if (known->name == e.name) return known.get();
    r.enumerations.push_back(std::make_unique<Enumeration>(std::move(e)));
    return r.enumerations.back().get();
}

int num_cvars() {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    return static_cast<int>(r.cvars.size());
}

int num_pvars() {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    return static_cast<int>(r.pvars.size());
}

int num_categories() {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    return static_cast<int>(r.categories.size());
}

std::shared_ptr<const Cvar> cvar(int index) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    if (index < 0 || static_cast<size_t>(index) >= r.cvars.size()) return nullptr;
    return r.cvars[static_cast<size_t>(index)];
}

std::shared_ptr<const Pvar> pvar(int index) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    if (index < 0 || static_cast<size_t>(index) >= r.pvars.size()) return nullptr;
    return r.pvars[static_cast<size_t>(index)];
}

bool category(int index, Category* out) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    if (index < 0 || static_cast<size_t>(index) >= r.categories.size()) return false;
    *out = r.categories[static_cast<size_t>(index)];
    return true;
}

int find_cvar(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    auto it = r.cvar_index.find(name);
    return it == r.cvar_index.end() ? -1 : it->second;
}

int find_pvar(const std::string& name, Class var_class) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    auto it = r.pvar_index.find(pvar_key(name, var_class));
    return it == r.pvar_index.end() ? -1 : it->second;
}

int find_category(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    return find_category_locked(r, name);
}

int stamp() {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    return r.stamp;
}

bool known_enumeration(const Enumeration* e) {
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    for (const auto& known : r.enumerations)
        if (known.get() == e) return true;
    return false;
}

size_t type_size(Type t) {
    switch (t) {
        case Type::Int:
            return sizeof(int);
        case Type::Unsigned:
            return sizeof(unsigned);
        case Type::UnsignedLong:
            return sizeof(unsigned long);
        case Type::UnsignedLongLong:
            return sizeof(unsigned long long);
        case Type::Double:
            return sizeof(double);
        case Type::Char:
            return 1;
    }
    return 1;
}

namespace {

bool is_relative(Class c) {
    return c == Class::Counter || c == Class::Timer || c == Class::Aggregate;
}

void store(void* out, uint64_t v, bool timer) {
    if (timer)
        *static_cast<double*>(out) = static_cast<double>(v) * 1e-9;
    else
        *static_cast<unsigned long long*>(out) = v;
}

}  // namespace

void add_rank_and_node(const PerRank& v) {
    const bool timer = v.var_class == Class::Timer;
    Pvar p;
    p.name = kRootCategory + ("_" + v.name);
    p.desc = v.desc + " (this rank)";
    p.category = v.category;
    p.verbosity = v.verbosity;
    p.var_class = v.var_class;
    p.type = timer ? Type::Double : Type::UnsignedLongLong;
    p.readonly = !is_relative(v.var_class);
    p.atomic = !p.readonly;
    p.gate = v.gate;
    p.read = [get = v.get, ranks = v.ranks, timer](const Subject& s, void* out) {
        store(out, s.local >= 0 && s.local < ranks() ? get(s.local) : 0, timer);
    };
    add_pvar(p);
    p.name = kRootCategory + ("_node_" + v.name);
    p.desc = v.desc + " (summed over the ranks of this node process)";
    p.atomic = false;
    if (v.verbosity != Verbosity::UserAll && v.verbosity != Verbosity::TunerAll &&
        v.verbosity != Verbosity::DevAll)
        p.verbosity = static_cast<Verbosity>(static_cast<int>(v.verbosity) + 1);
    p.read = [get = v.get, ranks = v.ranks, timer](const Subject&, void* out) {
        uint64_t sum = 0;
        for (int r = 0, n = ranks(); r < n; ++r) sum += get(r);
        store(out, sum, timer);
    };
    add_pvar(p);
}

Cvar string_cvar(std::string name, std::string desc, std::string category, Verbosity verbosity,
                 std::function<std::string()> get) {
    Cvar v;
    v.name = std::move(name);
    v.desc = std::move(desc);
    v.category = std::move(category);
    v.verbosity = verbosity;
    v.type = Type::Char;
    v.scope = Scope::Constant;
    v.count = [get](const Subject&) { return static_cast<int>(get().size()) + 1; };
    v.read = [get](const Subject&, void* out) {
        const std::string s = get();
        memcpy(out, s.c_str(), s.size() + 1);
    };
    return v;
}

}  // namespace mpc::runtime::tools
