// Datatype objects: the handle pool, predefined types, reference counting,
// MPI_Type_free, and the signature-derived fields of new types.
#include "mpi_api/datatype.hpp"

#include <cstddef>
#include <mutex>
#include <type_traits>

#include "datatype_layout.hpp"
#include "mpi_api/attributes.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_tables.inc"
#include "runtime/log.hpp"

namespace mpc::mpi {
namespace {

static_assert(gen::kNumPredefinedTypes + 1 <= static_cast<int>(kPredefinedTypeSlots));

HandlePool<Datatype, HandleKind::Datatype>& pool() {
    // Outlives every thread (handles.hpp).
    static auto* p = new HandlePool<Datatype, HandleKind::Datatype>(gen::kNumPredefinedTypes + 1);
    return *p;
}

// Resets a pool slot, freeing what it holds.
void clear(Datatype& t) {
    t.handle = MPI_DATATYPE_NULL;
    t.size = 0;
    t.lb = t.extent = t.true_lb = t.true_extent = 0;
    t.contiguous = true;
    t.predefined = t.committed = false;
    t.category = TypeCategory::None;
    t.basic = MPI_DATATYPE_NULL;
    t.basic_count = 0;
    t.name = std::string();
    t.shape = Shape();
    t.signature = std::vector<SigPart>();
    t.elements = 0;
    t.external_size = 0;
    t.combiner = MPI_COMBINER_NAMED;
    t.ints = std::vector<int>();
    t.aints = std::vector<MPI_Aint>();
    t.large_counts = std::vector<MPI_Count>();
    t.children = std::vector<Datatype*>();
    t.refs.store(0, std::memory_order_relaxed);
    t.freed.store(false, std::memory_order_relaxed);
}

// The MPI type of a member of a MINLOC/MAXLOC pair.
template <class V>
constexpr int handle_of() {
    if constexpr (std::is_same_v<V, float>)
        return MPI_FLOAT;
    else if constexpr (std::is_same_v<V, double>)
        return MPI_DOUBLE;
    else if constexpr (std::is_same_v<V, long double>)
        return MPI_LONG_DOUBLE;
    else if constexpr (std::is_same_v<V, long>)
        return MPI_LONG;
    else if constexpr (std::is_same_v<V, short>)
        return MPI_SHORT;
    else {
        static_assert(std::is_same_v<V, int>, "unexpected pair member type");
        return MPI_INT;
    }
}

template <class T>
void define_predefined(int handle, const char* name, TypeCategory cat) {
    Datatype* t = pool().at(handle_index(handle));
    clear(*t);
    t->handle = handle;
    t->name = name;
    t->predefined = true;
    t->committed = true;
    t->category = cat;
    t->basic = handle;
    t->basic_count = 1;
    t->refs.store(1, std::memory_order_relaxed);
    if constexpr (requires {
                      &T::v;
                      &T::i;
                  }) {
        // A pair: {value, index}, data of both members, extent of the C struct.
        using V = decltype(T::v);
        using I = decltype(T::i);
        Shape v = shape_basic(sizeof(V), alignof(V)), i = shape_basic(sizeof(I), alignof(I));
        Shape s;
        MPC_CHECK(shape_blocks({{static_cast<MPI_Aint>(offsetof(T, v)), 1, &v},
                                {static_cast<MPI_Aint>(offsetof(T, i)), 1, &i}},
                               &s));
        MPC_CHECK(s.extent == static_cast<MPI_Aint>(sizeof(T)));
        const Datatype* vt = pool().at(handle_index(handle_of<V>()));
        const Datatype* it = pool().at(handle_index(handle_of<I>()));
        t->signature = {SigPart{vt, 1}, SigPart{it, 1}};
        t->elements = 2;
        t->external_size = vt->external_size + it->external_size;
        apply_shape(*t, std::move(s));
    } else {
        t->elements = 1;
        t->external_size = external32_size(handle);
        apply_shape(*t, shape_basic(sizeof(T), alignof(T)));
    }
    pool().mark_live(handle_index(handle));
}

void destroy(Datatype* t) {
    for (Datatype* c : t->children) datatype_release(c);
    int h = t->handle;
    clear(*t);
    t->freed.store(true, std::memory_order_release);  // until the slot is reused
    pool().release(h);
}

}  // namespace

void datatype_init_predefined() {
    static std::once_flag once;
    std::call_once(once, [] {
#define MPC_DEFINE_TYPE(name, ctype, cat) define_predefined<ctype>(name, #name, cat);
        MPC_FOR_EACH_PREDEFINED_TYPE(MPC_DEFINE_TYPE)
#undef MPC_DEFINE_TYPE
        // Published once all are complete (before any rank runs).
        for (uint32_t i = 1; i <= static_cast<uint32_t>(gen::kNumPredefinedTypes); ++i)
            g_predefined_types[i] = pool().at(i);
    });
}

Datatype* g_predefined_types[kPredefinedTypeSlots];

Datatype* datatype_lookup_pool(MPI_Datatype handle) {
    Datatype* t = pool().lookup(handle);
    if (!t || t->freed.load(std::memory_order_acquire)) return nullptr;
    return t;
}

Datatype* datatype_retain(Datatype* t) {
    if (t && !t->predefined) t->refs.fetch_add(1, std::memory_order_relaxed);
    return t;
}

void datatype_release(Datatype* t) {
    if (!t || t->predefined) return;
    if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(t);
}

Datatype* datatype_create(int combiner) {
    int h;
    Datatype* t = pool().allocate(&h);
    clear(*t);
    t->handle = h;
    t->category = TypeCategory::Derived;
    t->combiner = combiner;
    t->refs.store(1, std::memory_order_relaxed);
    return t;
}

void datatype_complete(Datatype* t, Shape shape, std::vector<SigPart> signature) {
    uint64_t elements = 0;
    size_t external = 0, basic_count = 0;
    int basic = MPI_DATATYPE_NULL;
    bool any = false, mixed = false;
    for (const SigPart& p : signature) {
        elements += p.count * p.type->elements;
        external += p.count * p.type->external_size;
        if (p.count == 0) continue;
        if (!any) basic = p.type->basic;
        mixed = mixed || p.type->basic == MPI_DATATYPE_NULL || p.type->basic != basic;
        any = true;
        basic_count += p.count * p.type->basic_count;
    }
    // An empty type keeps the basic type of its (first) component.
    if (!any && !signature.empty()) basic = signature[0].type->basic;
    t->basic = mixed ? MPI_DATATYPE_NULL : basic;
    t->basic_count = mixed ? 0 : basic_count;
    t->elements = elements;
    t->external_size = external;
    t->signature = std::move(signature);
    for (Datatype* c : t->children) datatype_retain(c);
    apply_shape(*t, std::move(shape));
}

int type_free(Datatype* t) {
    if (t->predefined)
        return make_error(MPI_ERR_TYPE, "predefined datatype %s cannot be freed", t->name.c_str());
    // Attributes go first (their delete callbacks may fail the free): the
    // handle may be reused as soon as it is released.
    if (int e = type_attrs_delete_all(t->handle)) return e;
    if (t->freed.exchange(true, std::memory_order_acq_rel))
        return make_error(MPI_ERR_TYPE, "datatype already freed");
    datatype_release(t);
    return MPI_SUCCESS;
}

Datatype* type_contents_copy(Datatype* t) {
    if (t->predefined) return t;
    Datatype* c = datatype_create(t->combiner);
    c->ints = t->ints;
    c->aints = t->aints;
    c->large_counts = t->large_counts;
    c->children = t->children;
    c->committed = t->committed;
    datatype_complete(c, t->shape, t->signature);
    return c;
}

}  // namespace mpc::mpi
