// Keyvals, communicator and datatype attributes, predefined attributes.
#include "mpi_api/attributes.hpp"

#include <map>
#include <mutex>
#include <vector>

#include "mpi_api/api.hpp"
#include "mpi_api/comm.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/rank.hpp"

namespace mpc::mpi {
namespace {

// A user keyval is kKeyvalBase | generation << kIndexBits | index, away from
// the predefined ones (spec.py). The generation of a slot changes when it is
// reused, so a freed keyval stays invalid although another rank (keyvals are
// process-wide) soon gets its slot.
constexpr int kKeyvalBase = 0x10000000;
constexpr int kIndexBits = 18;
constexpr int kMaxKeyvals = 1 << kIndexBits;
constexpr uint32_t kGenerationMask = 0x3ff;

int encode(int index, uint32_t generation) {
    return kKeyvalBase | static_cast<int>((generation & kGenerationMask) << kIndexBits) | index;
}

struct Keyval {
    KeyvalKind kind = KeyvalKind::Comm;
    MPI_Comm_copy_attr_function* comm_copy = nullptr;
    MPI_Comm_delete_attr_function* comm_delete = nullptr;
    MPI_Type_copy_attr_function* type_copy = nullptr;
    MPI_Type_delete_attr_function* type_delete = nullptr;
    MPI_Win_delete_attr_function* win_delete = nullptr;
    void* extra = nullptr;
    int refs = 0;  // the user's handle (until freed) + attributes carrying it
    bool freed = false;
    bool live = false;
    uint32_t generation = 0;
};

// Guards the keyval table and the datatype attributes (both process-wide).
std::mutex g_mutex;
std::vector<Keyval> g_keyvals;
std::vector<int> g_free_slots;
std::map<int, std::map<int, void*>> g_type_attrs;  // datatype handle -> keyval -> value

const char* kind_name(KeyvalKind k) {
    return k == KeyvalKind::Comm ? "communicator" : k == KeyvalKind::Type ? "datatype" : "window";
}

}  // namespace

bool is_predefined_keyval(int keyval) {
    switch (keyval) {
        case MPI_TAG_UB:
        case MPI_HOST:
        case MPI_IO:
        case MPI_WTIME_IS_GLOBAL:
        case MPI_UNIVERSE_SIZE:
        case MPI_LASTUSEDCODE:
        case MPI_APPNUM:
            return true;
        default:
            return false;
    }
}

namespace {

Keyval* slot_locked(int keyval) {
    if ((keyval & ~((1 << (kIndexBits + 10)) - 1)) != kKeyvalBase) return nullptr;
    const size_t i = static_cast<size_t>(keyval & (kMaxKeyvals - 1));
    if (i >= g_keyvals.size()) return nullptr;
    Keyval* k = &g_keyvals[i];
    return k->live && encode(static_cast<int>(i), k->generation) == keyval ? k : nullptr;
}

// A copy of keyval's callbacks when the user may still name it (not freed).
int check_keyval(int keyval, KeyvalKind kind, Keyval* out) {
    if (keyval == MPI_KEYVAL_INVALID)
        return make_error(MPI_ERR_KEYVAL, "MPI_KEYVAL_INVALID passed");
    if (is_predefined_keyval(keyval))
        return make_error(MPI_ERR_KEYVAL, "keyval 0x%x is predefined and cannot be changed",
                          keyval);
    std::lock_guard<std::mutex> g(g_mutex);
    Keyval* k = slot_locked(keyval);
    if (!k || k->freed) return make_error(MPI_ERR_KEYVAL, "0x%x is not a valid keyval", keyval);
    if (k->kind != kind)
        return make_error(MPI_ERR_KEYVAL, "keyval 0x%x is a %s keyval, used on a %s", keyval,
                          kind_name(k->kind), kind_name(kind));
    *out = *k;
    return MPI_SUCCESS;
}

// Callbacks of a keyval some attribute still carries (freed or not).
Keyval attached_keyval(int keyval) {
    std::lock_guard<std::mutex> g(g_mutex);
    Keyval* k = slot_locked(keyval);
    return k ? *k : Keyval{};
}

void unref(int keyval) {
    std::lock_guard<std::mutex> g(g_mutex);
    Keyval* k = slot_locked(keyval);
    if (!k || --k->refs > 0) return;
    const uint32_t next_generation = k->generation + 1;
    *k = Keyval{};
    k->generation = next_generation;
    g_free_slots.push_back(keyval & (kMaxKeyvals - 1));
}

void add_ref(int keyval) {
    std::lock_guard<std::mutex> g(g_mutex);
    if (Keyval* k = slot_locked(keyval)) ++k->refs;
}

int call_delete(const Keyval& k, int handle, int keyval, void* value) {
    if (k.kind == KeyvalKind::Win)
        return k.win_delete ? k.win_delete(handle, keyval, value, k.extra) : MPI_SUCCESS;
    if (k.kind == KeyvalKind::Comm)
        return k.comm_delete ? k.comm_delete(handle, keyval, value, k.extra) : MPI_SUCCESS;
    return k.type_delete ? k.type_delete(handle, keyval, value, k.extra) : MPI_SUCCESS;
}

int call_copy(const Keyval& k, int handle, int keyval, void* in, void* out, int* flag) {
    *flag = 0;
    if (k.kind == KeyvalKind::Comm)
        return k.comm_copy ? k.comm_copy(handle, keyval, k.extra, in, out, flag) : MPI_SUCCESS;
    return k.type_copy ? k.type_copy(handle, keyval, k.extra, in, out, flag) : MPI_SUCCESS;
}

int keyval_create(const Keyval& proto, int* keyval) {
    std::lock_guard<std::mutex> g(g_mutex);
    int i;
    if (!g_free_slots.empty()) {
        i = g_free_slots.back();
        g_free_slots.pop_back();
    } else {
        if (g_keyvals.size() >= kMaxKeyvals)
            return make_error(MPI_ERR_OTHER, "too many keyvals (%d)", kMaxKeyvals);
        i = static_cast<int>(g_keyvals.size());
        g_keyvals.emplace_back();
    }
    Keyval& k = g_keyvals[static_cast<size_t>(i)];
    const uint32_t generation = k.generation;
    k = proto;
    k.generation = generation;
    k.refs = 1;
    k.live = true;
    *keyval = encode(i, generation);
    return MPI_SUCCESS;
}

// Storage for the predefined attributes' values (the caller gets a pointer).
const int kTagUbValue = kTagUpperBound;
const int kHostValue = MPI_PROC_NULL;
const int kIoValue = MPI_ANY_SOURCE;
const int kWtimeIsGlobalValue = 0;
thread_local int t_last_used_code;

void* predefined_value(int keyval) {
    switch (keyval) {
        case MPI_TAG_UB:
            return const_cast<int*>(&kTagUbValue);
        case MPI_HOST:
            return const_cast<int*>(&kHostValue);
        case MPI_IO:
            return const_cast<int*>(&kIoValue);
        case MPI_WTIME_IS_GLOBAL:
            return const_cast<int*>(&kWtimeIsGlobalValue);
        case MPI_UNIVERSE_SIZE:
            return &world().universe_size;
        case MPI_APPNUM:
            return &world().appnum;
        default:
            t_last_used_code = last_used_code();
            return &t_last_used_code;
    }
}

}  // namespace

int comm_keyval_create(MPI_Comm_copy_attr_function* copy_fn,
                       MPI_Comm_delete_attr_function* delete_fn, void* extra_state, int* keyval) {
    Keyval k;
    k.kind = KeyvalKind::Comm;
    k.comm_copy = copy_fn;
    k.comm_delete = delete_fn;
    k.extra = extra_state;
    return keyval_create(k, keyval);
}

int type_keyval_create(MPI_Type_copy_attr_function* copy_fn,
                       MPI_Type_delete_attr_function* delete_fn, void* extra_state, int* keyval) {
    Keyval k;
    k.kind = KeyvalKind::Type;
    k.type_copy = copy_fn;
    k.type_delete = delete_fn;
    k.extra = extra_state;
    return keyval_create(k, keyval);
}

int keyval_free(KeyvalKind kind, int* keyval) {
    Keyval k;
    if (int e = check_keyval(*keyval, kind, &k)) return e;
    {
        std::lock_guard<std::mutex> g(g_mutex);
        slot_locked(*keyval)->freed = true;
    }
    unref(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

// ---- Communicators -----------------------------------------------------------

int comm_attr_set(Comm* c, int keyval, void* value) {
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Comm, &k)) return e;
    auto it = c->attributes.find(keyval);
    if (it == c->attributes.end()) {
        c->attributes[keyval] = value;
        add_ref(keyval);
        return MPI_SUCCESS;
    }
    if (int e = call_delete(k, c->handle, keyval, it->second)) return e;
    c->attributes[keyval] = value;
    return MPI_SUCCESS;
}

int comm_attr_get(Comm* c, int keyval, void** value, int* flag) {
    if (is_predefined_keyval(keyval)) {
        *value = predefined_value(keyval);
        *flag = 1;
        return MPI_SUCCESS;
    }
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Comm, &k)) return e;
    auto it = c->attributes.find(keyval);
    *flag = it != c->attributes.end();
    if (*flag) *value = it->second;
    return MPI_SUCCESS;
}

int comm_attr_delete(Comm* c, int keyval) {
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Comm, &k)) return e;
    auto it = c->attributes.find(keyval);
    if (it == c->attributes.end()) return MPI_SUCCESS;  // nothing to delete (as MPICH)
    if (int e = call_delete(k, c->handle, keyval, it->second)) return e;
    c->attributes.erase(keyval);
    unref(keyval);
    return MPI_SUCCESS;
}

int comm_attrs_copy(Comm* from, Comm* to) {
    const std::map<int, void*> attrs = from->attributes;  // callbacks may change from's
    for (const auto& [keyval, value] : attrs) {
        Keyval k = attached_keyval(keyval);
        void* out = nullptr;
        int flag = 0;
        if (int e = call_copy(k, from->handle, keyval, value, &out, &flag)) {
            comm_attrs_delete_all(to);
            return e;
        }
        if (!flag) continue;
        to->attributes[keyval] = out;
        add_ref(keyval);
    }
    return MPI_SUCCESS;
}

int comm_attrs_delete_all(Comm* c) {
    // Newest keyvals first, the reverse of the usual order of creation.
    while (!c->attributes.empty()) {
        auto it = std::prev(c->attributes.end());
        const int keyval = it->first;
        void* value = it->second;
        if (int e = call_delete(attached_keyval(keyval), c->handle, keyval, value)) return e;
        c->attributes.erase(keyval);
        unref(keyval);
    }
    return MPI_SUCCESS;
}

// ---- Windows -------------------------------------------------------------------

int win_keyval_create(MPI_Win_copy_attr_function*, MPI_Win_delete_attr_function* delete_fn,
                      void* extra_state, int* keyval) {
    Keyval k;
    k.kind = KeyvalKind::Win;
    k.win_delete = delete_fn;
    k.extra = extra_state;
    return keyval_create(k, keyval);
}

int win_attr_set(std::map<int, void*>& attrs, MPI_Win win, int keyval, void* value) {
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Win, &k)) return e;
    auto it = attrs.find(keyval);
    if (it == attrs.end()) {
        attrs[keyval] = value;
        add_ref(keyval);
        return MPI_SUCCESS;
    }
    if (int e = call_delete(k, win, keyval, it->second)) return e;
    attrs[keyval] = value;
    return MPI_SUCCESS;
}

int win_attr_get(const std::map<int, void*>& attrs, int keyval, void** value, int* flag) {
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Win, &k)) return e;
    auto it = attrs.find(keyval);
    *flag = it != attrs.end();
    if (*flag) *value = it->second;
    return MPI_SUCCESS;
}

int win_attr_delete(std::map<int, void*>& attrs, MPI_Win win, int keyval) {
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Win, &k)) return e;
    auto it = attrs.find(keyval);
    if (it == attrs.end()) return MPI_SUCCESS;
    if (int e = call_delete(k, win, keyval, it->second)) return e;
    attrs.erase(keyval);
    unref(keyval);
    return MPI_SUCCESS;
}

int win_attrs_delete_all(std::map<int, void*>& attrs, MPI_Win win) {
    while (!attrs.empty()) {
        auto it = std::prev(attrs.end());
        const int keyval = it->first;
        void* value = it->second;
        if (int e = call_delete(attached_keyval(keyval), win, keyval, value)) return e;
        attrs.erase(keyval);
        unref(keyval);
    }
    return MPI_SUCCESS;
}

// ---- Datatypes ---------------------------------------------------------------

int type_attr_set(MPI_Datatype type, int keyval, void* value) {
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Type, &k)) return e;
    void* old = nullptr;
    bool had = false;
    {
        std::lock_guard<std::mutex> g(g_mutex);
        auto& attrs = g_type_attrs[type];
        auto it = attrs.find(keyval);
        if ((had = it != attrs.end())) old = it->second;
    }
    if (had)
        if (int e = call_delete(k, type, keyval, old)) return e;
    std::lock_guard<std::mutex> g(g_mutex);
    g_type_attrs[type][keyval] = value;
    if (!had)
        if (Keyval* s = slot_locked(keyval)) ++s->refs;
    return MPI_SUCCESS;
}

int type_attr_get(MPI_Datatype type, int keyval, void** value, int* flag) {
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Type, &k)) return e;
    std::lock_guard<std::mutex> g(g_mutex);
    *flag = 0;
    auto t = g_type_attrs.find(type);
    if (t == g_type_attrs.end()) return MPI_SUCCESS;
    auto it = t->second.find(keyval);
    if (it == t->second.end()) return MPI_SUCCESS;
    *value = it->second;
    *flag = 1;
    return MPI_SUCCESS;
}

namespace {

// Removes one datatype attribute after its delete callback succeeded.
int type_attr_remove(MPI_Datatype type, int keyval, const Keyval& k, void* value) {
    if (int e = call_delete(k, type, keyval, value)) return e;
    {
        std::lock_guard<std::mutex> g(g_mutex);
        auto t = g_type_attrs.find(type);
        if (t != g_type_attrs.end()) {
            t->second.erase(keyval);
            if (t->second.empty()) g_type_attrs.erase(t);
        }
    }
    unref(keyval);
    return MPI_SUCCESS;
}

std::map<int, void*> type_attrs_snapshot(MPI_Datatype type) {
    std::lock_guard<std::mutex> g(g_mutex);
    auto t = g_type_attrs.find(type);
    return t == g_type_attrs.end() ? std::map<int, void*>{} : t->second;
}

}  // namespace

int type_attr_delete(MPI_Datatype type, int keyval) {
    Keyval k;
    if (int e = check_keyval(keyval, KeyvalKind::Type, &k)) return e;
    std::map<int, void*> attrs = type_attrs_snapshot(type);
    auto it = attrs.find(keyval);
    if (it == attrs.end()) return MPI_SUCCESS;
    return type_attr_remove(type, keyval, k, it->second);
}

int type_attrs_copy(MPI_Datatype from, MPI_Datatype to) {
    for (const auto& [keyval, value] : type_attrs_snapshot(from)) {
        Keyval k = attached_keyval(keyval);
        void* out = nullptr;
        int flag = 0;
        if (int e = call_copy(k, from, keyval, value, &out, &flag)) {
            type_attrs_delete_all(to);
            return e;
        }
        if (!flag) continue;
        std::lock_guard<std::mutex> g(g_mutex);
        g_type_attrs[to][keyval] = out;
        if (Keyval* s = slot_locked(keyval)) ++s->refs;
    }
    return MPI_SUCCESS;
}

int type_attrs_delete_all(MPI_Datatype type) {
    std::map<int, void*> attrs = type_attrs_snapshot(type);
    for (auto it = attrs.rbegin(); it != attrs.rend(); ++it)
        if (int e = type_attr_remove(type, it->first, attached_keyval(it->first), it->second))
            return e;
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
