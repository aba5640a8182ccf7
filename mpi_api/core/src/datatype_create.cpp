// Datatype constructors (MPI 3.1 sections 4.1.2 and 4.1.7) and their
// large-count forms (MPI 4.0): argument checks, the shape of the new type, its
// signature, and the envelope/contents record.
#include "datatype_layout.hpp"
#include "mpi_api/attributes.hpp"
#include "mpi_api/errors.hpp"

namespace mpc::mpi {
namespace {

int check_old(const Datatype* old) {
    return old ? MPI_SUCCESS : make_error(MPI_ERR_TYPE, "invalid oldtype");
}

int check_count_arg(MPI_Count count) {
    return count < 0 ? make_error(MPI_ERR_COUNT, "negative count %lld", count) : MPI_SUCCESS;
}

int check_blocklength(MPI_Count bl) {
    return bl < 0 ? make_error(MPI_ERR_ARG, "negative block length %lld", bl) : MPI_SUCCESS;
}

int check_array(MPI_Count count, const void* a, const char* what) {
    if (count > 0 && !a) return make_error(MPI_ERR_ARG, "%s is NULL", what);
    return MPI_SUCCESS;
}

int too_large() {
    return make_error(MPI_ERR_ARG, "the datatype would hold more than 2^63 bytes");
}

// n elements of the given extent in bytes; false when that leaves MPI_Aint.
bool scaled(MPI_Aint n, MPI_Aint extent, MPI_Aint* bytes) {
    return !__builtin_mul_overflow(n, extent, bytes);
}

// The constructor's arguments as MPI_Type_get_contents returns them. The int
// constructors and their large-count forms share one implementation: `large`
// says which record the arguments go to (ints and aints, or large_counts).
struct Contents {
    int combiner;
    std::vector<int> ints;
    std::vector<MPI_Aint> aints;
    std::vector<Datatype*> children;
    std::vector<MPI_Count> large;
};

int finish(Contents c, Shape shape, std::vector<SigPart> sig, Datatype** out) {
    Datatype* t = datatype_create(c.combiner);
    t->ints = std::move(c.ints);
    t->aints = std::move(c.aints);
    t->children = std::move(c.children);
    t->large_counts = std::move(c.large);
    datatype_complete(t, std::move(shape), std::move(sig));
    *out = t;
    return MPI_SUCCESS;
}

template <class T>
std::vector<MPI_Count> widened(const T* a, MPI_Count n) {
    return std::vector<MPI_Count>(a, a + n);
}

// Records counts (ints, or large counts for a _c constructor).
void record(Contents& c, bool large, std::initializer_list<MPI_Count> v) {
    for (MPI_Count x : v) {
        if (large)
            c.large.push_back(x);
        else
            c.ints.push_back(static_cast<int>(x));
    }
}
void record(Contents& c, bool large, const std::vector<MPI_Count>& v) {
    for (MPI_Count x : v) record(c, large, {x});
}

// Blocks of `old` at byte displacements: the indexed family.
int indexed_family(Contents c, const std::vector<MPI_Count>& bls,
                   const std::vector<MPI_Aint>& byte_disps, Datatype* old, Datatype** out) {
    std::vector<BlockSpec> specs(bls.size());
    size_t total = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
        specs[i] = BlockSpec{byte_disps[i], static_cast<size_t>(bls[i]), &old->shape};
        total += specs[i].count;
    }
    Shape s;
    if (!shape_blocks(specs, &s)) return too_large();
    return finish(std::move(c), std::move(s), {SigPart{old, total}}, out);
}

int check_blocklengths(const std::vector<MPI_Count>& bls) {
    for (MPI_Count b : bls)
        if (int e = check_blocklength(b)) return e;
    return MPI_SUCCESS;
}

int contiguous(MPI_Count count, Datatype* old, bool large, Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    Shape s;
    if (!shape_blocks({{0, static_cast<size_t>(count), &old->shape}}, &s)) return too_large();
    Contents c{MPI_COMBINER_CONTIGUOUS, {}, {}, {old}, {}};
    record(c, large, {count});
    return finish(std::move(c), std::move(s), {SigPart{old, static_cast<size_t>(count)}}, out);
}

// Vector (stride in elements of old) and hvector (in bytes).
int vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, bool bytes, Datatype* old,
           bool large, Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    if (int e = check_blocklength(blocklength)) return e;
    Shape s;
    MPI_Aint stride_bytes = stride;
    if ((!bytes && !scaled(stride, old->extent, &stride_bytes)) ||
        !shape_vector(static_cast<size_t>(count), static_cast<size_t>(blocklength), stride_bytes,
                      old->shape, &s))
        return too_large();
    Contents c{bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, {}, {}, {old}, {}};
    if (large || !bytes) {
        record(c, large, {count, blocklength, stride});
    } else {
        record(c, false, {count, blocklength});
        c.aints.push_back(stride);
    }
    return finish(std::move(c), std::move(s),
                  {SigPart{old, static_cast<size_t>(count) * static_cast<size_t>(blocklength)}},
                  out);
}

// Indexed (displacements in elements of old) and hindexed (in bytes). The
// int forms record displacements as ints (indexed) or addresses (hindexed).
int indexed(const std::vector<MPI_Count>& bls, const std::vector<MPI_Count>& displs, bool bytes,
            Datatype* old, bool large, Datatype** out) {
    const MPI_Count count = static_cast<MPI_Count>(bls.size());
    if (int e = check_blocklengths(bls)) return e;
    Contents c{bytes ? MPI_COMBINER_HINDEXED : MPI_COMBINER_INDEXED, {}, {}, {old}, {}};
    record(c, large, {count});
    record(c, large, bls);
    if (bytes && !large)
        c.aints.assign(displs.begin(), displs.end());
    else
        record(c, large, displs);
    std::vector<MPI_Aint> byte_disps(displs.begin(), displs.end());
    if (!bytes)
        for (size_t i = 0; i < byte_disps.size(); ++i)
            if (!scaled(displs[i], old->extent, &byte_disps[i])) return too_large();
    return indexed_family(std::move(c), bls, byte_disps, old, out);
}

int indexed_block(MPI_Count blocklength, const std::vector<MPI_Count>& displs, bool bytes,
                  Datatype* old, bool large, Datatype** out) {
    const MPI_Count count = static_cast<MPI_Count>(displs.size());
    if (int e = check_blocklength(blocklength)) return e;
    Contents c{bytes ? MPI_COMBINER_HINDEXED_BLOCK : MPI_COMBINER_INDEXED_BLOCK, {}, {}, {old}, {}};
    record(c, large, {count, blocklength});
    if (bytes && !large)
        c.aints.assign(displs.begin(), displs.end());
    else
        record(c, large, displs);
    std::vector<MPI_Aint> byte_disps(displs.begin(), displs.end());
    if (!bytes)
        for (size_t i = 0; i < byte_disps.size(); ++i)
            if (!scaled(displs[i], old->extent, &byte_disps[i])) return too_large();
    return indexed_family(std::move(c), std::vector<MPI_Count>(displs.size(), blocklength),
                          byte_disps, old, out);
}

// The argument checks every indexed constructor starts with (bls: the block
// lengths array, for those that take one).
int indexed_args(MPI_Count count, const void* displs, Datatype* old) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    return check_array(count, displs, "array_of_displacements");
}
int indexed_args(MPI_Count count, const void* bls, const void* displs, Datatype* old) {
    if (int e = indexed_args(count, displs, old)) return e;
    return check_array(count, bls, "array_of_blocklengths");
}

int structure(MPI_Count count, const std::vector<MPI_Count>& bls, const MPI_Aint* displs,
              Datatype* const* types, bool large, Datatype** out) {
    if (int e = check_blocklengths(bls)) return e;
    for (MPI_Count i = 0; i < count; ++i)
        if (!types[i])
            return make_error(MPI_ERR_TYPE, "array_of_types[%lld] is not a valid datatype", i);
    Contents c{MPI_COMBINER_STRUCT, {}, {}, {types, types + count}, {}};
    record(c, large, {count});
    record(c, large, bls);
    if (large)
        c.large.insert(c.large.end(), displs, displs + count);
    else
        c.aints.assign(displs, displs + count);
    std::vector<BlockSpec> specs;
    std::vector<SigPart> sig;
    for (MPI_Count i = 0; i < count; ++i) {
        size_t n = static_cast<size_t>(bls[static_cast<size_t>(i)]);
        specs.push_back(BlockSpec{displs[i], n, &types[i]->shape});
        if (n) sig.push_back(SigPart{types[i], n});
    }
    Shape s;
    if (!shape_blocks(specs, &s)) return too_large();
    return finish(std::move(c), std::move(s), std::move(sig), out);
}

int struct_args(MPI_Count count, const void* bls, const void* displs, const void* types) {
    if (int e = check_count_arg(count)) return e;
    if (int e = check_array(count, bls, "array_of_blocklengths")) return e;
    if (int e = check_array(count, displs, "array_of_displacements")) return e;
    return check_array(count, types, "array_of_types");
}

int resized(Datatype* old, MPI_Aint lb, MPI_Aint extent, bool large, Datatype** out) {
    if (int e = check_old(old)) return e;
    MPI_Aint ub;
    if (__builtin_add_overflow(lb, extent, &ub))
        return make_error(MPI_ERR_ARG, "lb %ld plus extent %ld leaves MPI_Aint",
                          static_cast<long>(lb), static_cast<long>(extent));
    Contents c{MPI_COMBINER_RESIZED, {}, {}, {old}, {}};
    if (large)
        c.large = {lb, extent};
    else
        c.aints = {lb, extent};
    return finish(std::move(c), shape_resized(old->shape, lb, extent), {SigPart{old, 1}}, out);
}

}  // namespace

int type_contiguous(int count, Datatype* old, Datatype** out) {
    return contiguous(count, old, false, out);
}
int type_contiguous_c(MPI_Count count, Datatype* old, Datatype** out) {
    return contiguous(count, old, true, out);
}

int type_vector(int count, int blocklength, int stride, Datatype* old, Datatype** out) {
    return vector(count, blocklength, stride, false, old, false, out);
}
int type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, Datatype* old,
                  Datatype** out) {
    return vector(count, blocklength, stride, false, old, true, out);
}

int type_hvector(int count, int blocklength, MPI_Aint stride, Datatype* old, Datatype** out) {
    return vector(count, blocklength, stride, true, old, false, out);
}
int type_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, Datatype* old,
                   Datatype** out) {
    return vector(count, blocklength, stride, true, old, true, out);
}

int type_indexed(int count, const int* bls, const int* displs, Datatype* old, Datatype** out) {
    if (int e = indexed_args(count, bls, displs, old)) return e;
    return indexed(widened(bls, count), widened(displs, count), false, old, false, out);
}
int type_indexed_c(MPI_Count count, const MPI_Count* bls, const MPI_Count* displs, Datatype* old,
                   Datatype** out) {
    if (int e = indexed_args(count, bls, displs, old)) return e;
    return indexed(widened(bls, count), widened(displs, count), false, old, true, out);
}

int type_hindexed(int count, const int* bls, const MPI_Aint* displs, Datatype* old,
                  Datatype** out) {
    if (int e = indexed_args(count, bls, displs, old)) return e;
    return indexed(widened(bls, count), widened(displs, count), true, old, false, out);
}
int type_hindexed_c(MPI_Count count, const MPI_Count* bls, const MPI_Count* displs, Datatype* old,
                    Datatype** out) {
    if (int e = indexed_args(count, bls, displs, old)) return e;
    return indexed(widened(bls, count), widened(displs, count), true, old, true, out);
}

int type_indexed_block(int count, int blocklength, const int* displs, Datatype* old,
                       Datatype** out) {
    if (int e = indexed_args(count, displs, old)) return e;
    return indexed_block(blocklength, widened(displs, count), false, old, false, out);
}
int type_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count* displs,
                         Datatype* old, Datatype** out) {
    if (int e = indexed_args(count, displs, old)) return e;
    return indexed_block(blocklength, widened(displs, count), false, old, true, out);
}

int type_hindexed_block(int count, int blocklength, const MPI_Aint* displs, Datatype* old,
                        Datatype** out) {
    if (int e = indexed_args(count, displs, old)) return e;
    return indexed_block(blocklength, widened(displs, count), true, old, false, out);
}
int type_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count* displs,
                          Datatype* old, Datatype** out) {
    if (int e = indexed_args(count, displs, old)) return e;
    return indexed_block(blocklength, widened(displs, count), true, old, true, out);
}

int type_struct(int count, const int* bls, const MPI_Aint* displs, Datatype* const* types,
                Datatype** out) {
    if (int e = struct_args(count, bls, displs, types)) return e;
    return structure(count, widened(bls, count), displs, types, false, out);
}
int type_struct_c(MPI_Count count, const MPI_Count* bls, const MPI_Count* displs,
                  Datatype* const* types, Datatype** out) {
    if (int e = struct_args(count, bls, displs, types)) return e;
    const std::vector<MPI_Aint> d(displs, displs + count);
    return structure(count, widened(bls, count), d.data(), types, true, out);
}

int type_resized(Datatype* old, MPI_Aint lb, MPI_Aint extent, Datatype** out) {
    return resized(old, lb, extent, false, out);
}
int type_resized_c(Datatype* old, MPI_Count lb, MPI_Count extent, Datatype** out) {
    return resized(old, lb, extent, true, out);
}

int type_dup(Datatype* old, Datatype** out) {
    if (int e = check_old(old)) return e;
    int e = finish({MPI_COMBINER_DUP, {}, {}, {old}, {}}, old->shape, {SigPart{old, 1}}, out);
    if (e) return e;
    (*out)->committed = old->committed;
    if (int ce = type_attrs_copy(old->handle, (*out)->handle)) {  // copy callbacks
        type_free(*out);
        return ce;
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
