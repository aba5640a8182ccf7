// Data representations: the predefined three, the registry of user ones (per
// rank: a rank is a process, and its functions belong to its program image),
// file sizes, scaled file types and conversions.
#include "datarep.hpp"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "mpi_api/errors.hpp"

namespace mpc::io {
namespace {

const Datarep kNative{"native", Datarep::Kind::Native};
const Datarep kInternal{"internal", Datarep::Kind::Native};
const Datarep kExternal32{"external32", Datarep::Kind::External32};

struct Registry {
    std::mutex mutex;
    // rank -> name -> representation (map nodes never move: views point at them)
    std::map<const RankState*, std::map<std::string, std::unique_ptr<Datarep>>> by_rank;
};
Registry& registry() {
    static auto* r = new Registry();
    return *r;
}

// Calls f(primitive, n) for the primitives of one element of t, in order.
template <class F>
void for_each_primitive(const Datatype& t, uint64_t n, F& f) {
    if (n == 0) return;
    if (t.signature.empty()) return f(t, n);
    if (t.basic != MPI_DATATYPE_NULL) {
        const Datatype* b = mpi::datatype_lookup(t.basic);
        if (b && b->signature.empty()) return f(*b, n * t.basic_count);
    }
    for (uint64_t i = 0; i < n; ++i)
        for (const mpi::SigPart& p : t.signature) for_each_primitive(*p.type, p.count, f);
}

bool portable(const Datatype& t) {
    switch (t.combiner) {
        case MPI_COMBINER_NAMED:
            return true;
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_CONTIGUOUS:
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_INDEXED:
        case MPI_COMBINER_INDEXED_BLOCK:
        case MPI_COMBINER_SUBARRAY:
        case MPI_COMBINER_DARRAY:
            return !t.children.empty() && portable(*t.children[0]);
        default:
            return false;
    }
}

// A type we built: one reference of our own, no handle.
Datatype* owned(Datatype* t) {
    mpi::datatype_retain(t);
    mpi::type_free(t);
    return t;
}

// t rebuilt with every primitive replaced by its size in the file (t portable).
int rebuild(const Datarep& rep, Datatype* t, Datatype** out) {
    Datatype* byte = mpi::datatype_lookup(MPI_BYTE);
    if (t->combiner == MPI_COMBINER_NAMED) {
        uint64_t n = 0;
        if (int e = file_size_of(rep, *t, 1, &n)) return e;
        if (n == t->size && n == static_cast<uint64_t>(t->extent)) {
            *out = mpi::datatype_retain(t);  // same bytes in the file
            return MPI_SUCCESS;
        }
        Datatype* c = nullptr;
        if (int e = mpi::type_contiguous(static_cast<int>(n), byte, &c)) return e;
        *out = owned(c);
        return MPI_SUCCESS;
    }
    Datatype* child = nullptr;
    if (int e = rebuild(rep, t->children[0], &child)) return e;
    const std::vector<int>& v = t->ints;
    Datatype* made = nullptr;
    int e = MPI_SUCCESS;
    switch (t->combiner) {
        case MPI_COMBINER_DUP:
            *out = child;
            return MPI_SUCCESS;
        case MPI_COMBINER_CONTIGUOUS:
            e = mpi::type_contiguous(v[0], child, &made);
            break;
        case MPI_COMBINER_VECTOR:
            e = mpi::type_vector(v[0], v[1], v[2], child, &made);
            break;
        case MPI_COMBINER_INDEXED:
            e = mpi::type_indexed(v[0], &v[1], &v[1 + v[0]], child, &made);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:
            e = mpi::type_indexed_block(v[0], v[1], &v[2], child, &made);
            break;
        case MPI_COMBINER_SUBARRAY: {
            const int nd = v[0];
            e = mpi::type_subarray(nd, &v[1], &v[1 + nd], &v[1 + 2 * nd], v[1 + 3 * nd], child,
                                   &made);
            break;
        }
        default: {  // MPI_COMBINER_DARRAY
            const int nd = v[2];
            e = mpi::type_darray(v[0], v[1], nd, &v[3], &v[3 + nd], &v[3 + 2 * nd], &v[3 + 3 * nd],
                                 v[3 + 4 * nd], child, &made);
        }
    }
    mpi::datatype_release(child);
    if (e) return e;
    *out = owned(made);
    return MPI_SUCCESS;
}

}  // namespace

const Datarep* find_datarep(RankState* me, const std::string& name) {
    if (name == "native") return &kNative;
    if (name == "internal") return &kInternal;
    if (name == "external32") return &kExternal32;
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    auto ranks = r.by_rank.find(me);
    if (ranks == r.by_rank.end()) return nullptr;
    auto it = ranks->second.find(name);
    return it == ranks->second.end() ? nullptr : it->second.get();
}

int register_datarep(RankState* me, const char* name, MPI_Datarep_conversion_function* read,
                     MPI_Datarep_conversion_function* write, MPI_Datarep_extent_function* extent,
                     void* extra_state) {
    if (!name || !*name) return mpi::make_error(MPI_ERR_ARG, "the datarep name is empty");
    if (strlen(name) >= MPI_MAX_DATAREP_STRING)
        return mpi::make_error(MPI_ERR_ARG, "datarep name longer than MPI_MAX_DATAREP_STRING");
    if (!extent)
        return mpi::make_error(MPI_ERR_ARG, "dtype_file_extent_fn of datarep '%s' is NULL", name);
    if (find_datarep(me, name))
        return mpi::make_error(MPI_ERR_DUP_DATAREP, "datarep '%s' is already defined", name);
    auto rep = std::make_unique<Datarep>();
    rep->name = name;
    rep->kind = Datarep::Kind::User;
    rep->read = read;
    rep->write = write;
    rep->extent = extent;
    rep->extra_state = extra_state;
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    r.by_rank[me][name] = std::move(rep);
    return MPI_SUCCESS;
}

int file_size_of(const Datarep& rep, const Datatype& t, uint64_t count, uint64_t* out) {
    switch (rep.kind) {
        case Datarep::Kind::Native:
            *out = t.size * count;
            return MPI_SUCCESS;
        case Datarep::Kind::External32:
            *out = t.external_size * count;
            return MPI_SUCCESS;
        case Datarep::Kind::User:
            break;
    }
    uint64_t per = 0;
    int err = MPI_SUCCESS;
    auto add = [&](const Datatype& p, uint64_t n) {
        if (err) return;
        MPI_Aint ext = 0;
        if (rep.extent(p.handle, &ext, rep.extra_state) != MPI_SUCCESS || ext < 0)
            err = mpi::make_error(MPI_ERR_CONVERSION,
                                  "the extent function of datarep '%s' failed for %s",
                                  rep.name.c_str(), p.name.c_str());
        per += static_cast<uint64_t>(ext) * n;
    };
    for_each_primitive(t, 1, add);
    *out = per * count;
    return err;
}

int stream_size(const Datarep& rep, Dir d, const Datatype& t, uint64_t count, uint64_t* out) {
    if (rep.native_for(d)) {
        *out = t.size * count;
        return MPI_SUCCESS;
    }
    return file_size_of(rep, t, count, out);
}

int file_type_of(const Datarep& rep, Datatype* t, Datatype** out) {
    if (rep.kind == Datarep::Kind::Native || !portable(*t)) {
        *out = mpi::datatype_retain(t);
        return MPI_SUCCESS;
    }
    return rebuild(rep, t, out);
}

int to_file(const Datarep& rep, const void* buf, int count, Datatype* t, void* out) {
    if (rep.native_for(Dir::Write)) {
        mpi::pack(buf, static_cast<size_t>(count), *t, 0, out,
                  static_cast<size_t>(count) * t->size);
        return MPI_SUCCESS;
    }
    if (rep.kind == Datarep::Kind::External32)
        return mpi::pack_external32(buf, static_cast<size_t>(count), *t, out);
    const uint64_t items = static_cast<uint64_t>(count) * t->elements;
    if (items > INT32_MAX)
        return mpi::make_error(MPI_ERR_CONVERSION, "more than 2^31 data items in one access");
    if (rep.write(const_cast<void*>(buf), t->handle, static_cast<int>(items), out, 0,
                  rep.extra_state) != MPI_SUCCESS)
        return mpi::make_error(MPI_ERR_CONVERSION,
                               "the write conversion function of datarep '%s' failed",
                               rep.name.c_str());
    return MPI_SUCCESS;
}

int from_file(const Datarep& rep, const void* in, void* buf, int count, Datatype* t) {
    if (rep.native_for(Dir::Read)) {
        mpi::unpack(buf, static_cast<size_t>(count), *t, 0, in,
                    static_cast<size_t>(count) * t->size);
        return MPI_SUCCESS;
    }
    if (rep.kind == Datarep::Kind::External32)
        return mpi::unpack_external32(in, buf, static_cast<size_t>(count), *t);
    const uint64_t items = static_cast<uint64_t>(count) * t->elements;
    if (items > INT32_MAX)
        return mpi::make_error(MPI_ERR_CONVERSION, "more than 2^31 data items in one access");
    if (rep.read(buf, t->handle, static_cast<int>(items), const_cast<void*>(in), 0,
                 rep.extra_state) != MPI_SUCCESS)
        return mpi::make_error(MPI_ERR_CONVERSION,
                               "the read conversion function of datarep '%s' failed",
                               rep.name.c_str());
    return MPI_SUCCESS;
}

}  // namespace mpc::io
