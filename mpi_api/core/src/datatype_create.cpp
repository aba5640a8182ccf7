// Datatype constructors (MPI 3.1 sections 4.1.2 and 4.1.7): argument checks,
// the shape of the new type, its signature, and the envelope/contents record.
#include "datatype_layout.hpp"
#include "mpi_api/attributes.hpp"
#include "mpi_api/errors.hpp"

namespace mpc::mpi {
namespace {

int check_old(const Datatype* old) {
    return old ? MPI_SUCCESS : make_error(MPI_ERR_TYPE, "invalid oldtype");
}

int check_count_arg(int count) {
    return count < 0 ? make_error(MPI_ERR_COUNT, "negative count %d", count) : MPI_SUCCESS;
}

int check_blocklength(int bl) {
    return bl < 0 ? make_error(MPI_ERR_ARG, "negative block length %d", bl) : MPI_SUCCESS;
}

int check_array(int count, const void* a, const char* what) {
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

struct Contents {
    int combiner;
    std::vector<int> ints;
    std::vector<MPI_Aint> aints;
    std::vector<Datatype*> children;
};

int finish(Contents c, Shape shape, std::vector<SigPart> sig, Datatype** out) {
    Datatype* t = datatype_create(c.combiner);
    t->ints = std::move(c.ints);
    t->aints = std::move(c.aints);
    t->children = std::move(c.children);
    datatype_complete(t, std::move(shape), std::move(sig));
    *out = t;
    return MPI_SUCCESS;
}

// Blocks of `old` at byte displacements: the indexed family.
int indexed_family(Contents c, int count, const int* bls, const MPI_Aint* byte_disps, Datatype* old,
                   Datatype** out) {
    std::vector<BlockSpec> specs(static_cast<size_t>(count));
    size_t total = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
        specs[i] = BlockSpec{byte_disps[i], static_cast<size_t>(bls[i]), &old->shape};
        total += specs[i].count;
    }
    Shape s;
    if (!shape_blocks(specs, &s)) return too_large();
    return finish(std::move(c), std::move(s), {SigPart{old, total}}, out);
}

int check_blocklengths(int count, const int* bls) {
    for (int i = 0; i < count; ++i)
        if (int e = check_blocklength(bls[i])) return e;
    return MPI_SUCCESS;
}

}  // namespace

int type_contiguous(int count, Datatype* old, Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    Shape s;
    if (!shape_blocks({{0, static_cast<size_t>(count), &old->shape}}, &s)) return too_large();
    return finish({MPI_COMBINER_CONTIGUOUS, {count}, {}, {old}}, std::move(s),
                  {SigPart{old, static_cast<size_t>(count)}}, out);
}

int type_vector(int count, int blocklength, int stride, Datatype* old, Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    if (int e = check_blocklength(blocklength)) return e;
    Shape s;
    MPI_Aint stride_bytes;
    if (!scaled(stride, old->extent, &stride_bytes) ||
        !shape_vector(static_cast<size_t>(count), static_cast<size_t>(blocklength), stride_bytes,
                      old->shape, &s))
        return too_large();
    return finish({MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {old}}, std::move(s),
                  {SigPart{old, static_cast<size_t>(count) * static_cast<size_t>(blocklength)}},
                  out);
}

int type_hvector(int count, int blocklength, MPI_Aint stride, Datatype* old, Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    if (int e = check_blocklength(blocklength)) return e;
    Shape s;
    if (!shape_vector(static_cast<size_t>(count), static_cast<size_t>(blocklength), stride,
                      old->shape, &s))
        return too_large();
    return finish({MPI_COMBINER_HVECTOR, {count, blocklength}, {stride}, {old}}, std::move(s),
                  {SigPart{old, static_cast<size_t>(count) * static_cast<size_t>(blocklength)}},
                  out);
}

int type_indexed(int count, const int* bls, const int* displs, Datatype* old, Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    if (int e = check_array(count, bls, "array_of_blocklengths")) return e;
    if (int e = check_array(count, displs, "array_of_displacements")) return e;
    if (int e = check_blocklengths(count, bls)) return e;
    Contents c{MPI_COMBINER_INDEXED, {count}, {}, {old}};
    c.ints.insert(c.ints.end(), bls, bls + count);
    c.ints.insert(c.ints.end(), displs, displs + count);
    std::vector<MPI_Aint> bytes(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
        if (!scaled(displs[i], old->extent, &bytes[static_cast<size_t>(i)])) return too_large();
    return indexed_family(std::move(c), count, bls, bytes.data(), old, out);
}

int type_hindexed(int count, const int* bls, const MPI_Aint* displs, Datatype* old,
                  Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    if (int e = check_array(count, bls, "array_of_blocklengths")) return e;
    if (int e = check_array(count, displs, "array_of_displacements")) return e;
    if (int e = check_blocklengths(count, bls)) return e;
    Contents c{MPI_COMBINER_HINDEXED, {count}, {displs, displs + count}, {old}};
    c.ints.insert(c.ints.end(), bls, bls + count);
    return indexed_family(std::move(c), count, bls, displs, old, out);
}

int type_indexed_block(int count, int blocklength, const int* displs, Datatype* old,
                       Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    if (int e = check_blocklength(blocklength)) return e;
    if (int e = check_array(count, displs, "array_of_displacements")) return e;
    Contents c{MPI_COMBINER_INDEXED_BLOCK, {count, blocklength}, {}, {old}};
    c.ints.insert(c.ints.end(), displs, displs + count);
    std::vector<MPI_Aint> bytes(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i)
        if (!scaled(displs[i], old->extent, &bytes[static_cast<size_t>(i)])) return too_large();
    std::vector<int> bls(static_cast<size_t>(count), blocklength);
    return indexed_family(std::move(c), count, bls.data(), bytes.data(), old, out);
}

int type_hindexed_block(int count, int blocklength, const MPI_Aint* displs, Datatype* old,
                        Datatype** out) {
    if (int e = check_old(old)) return e;
    if (int e = check_count_arg(count)) return e;
    if (int e = check_blocklength(blocklength)) return e;
    if (int e = check_array(count, displs, "array_of_displacements")) return e;
    Contents c{MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength}, {displs, displs + count}, {old}};
    std::vector<int> bls(static_cast<size_t>(count), blocklength);
    return indexed_family(std::move(c), count, bls.data(), displs, old, out);
}

int type_struct(int count, const int* bls, const MPI_Aint* displs, Datatype* const* types,
                Datatype** out) {
    if (int e = check_count_arg(count)) return e;
    if (int e = check_array(count, bls, "array_of_blocklengths")) return e;
    if (int e = check_array(count, displs, "array_of_displacements")) return e;
    if (int e = check_array(count, types, "array_of_types")) return e;
    if (int e = check_blocklengths(count, bls)) return e;
    for (int i = 0; i < count; ++i)
        if (!types[i])
            return make_error(MPI_ERR_TYPE, "array_of_types[%d] is not a valid datatype", i);
    Contents c{MPI_COMBINER_STRUCT, {count}, {displs, displs + count}, {types, types + count}};
    c.ints.insert(c.ints.end(), bls, bls + count);
    std::vector<BlockSpec> specs;
    std::vector<SigPart> sig;
    for (int i = 0; i < count; ++i) {
        size_t n = static_cast<size_t>(bls[i]);
        specs.push_back(BlockSpec{displs[i], n, &types[i]->shape});
        if (n) sig.push_back(SigPart{types[i], n});
    }
    Shape s;
    if (!shape_blocks(specs, &s)) return too_large();
    return finish(std::move(c), std::move(s), std::move(sig), out);
}

int type_resized(Datatype* old, MPI_Aint lb, MPI_Aint extent, Datatype** out) {
    if (int e = check_old(old)) return e;
    MPI_Aint ub;
    if (__builtin_add_overflow(lb, extent, &ub))
        return make_error(MPI_ERR_ARG, "lb %ld plus extent %ld leaves MPI_Aint",
                          static_cast<long>(lb), static_cast<long>(extent));
    return finish({MPI_COMBINER_RESIZED, {}, {lb, extent}, {old}},
                  shape_resized(old->shape, lb, extent), {SigPart{old, 1}}, out);
}

int type_dup(Datatype* old, Datatype** out) {
    if (int e = check_old(old)) return e;
    int e = finish({MPI_COMBINER_DUP, {}, {}, {old}}, old->shape, {SigPart{old, 1}}, out);
    if (e) return e;
    (*out)->committed = old->committed;
    if (int ce = type_attrs_copy(old->handle, (*out)->handle)) {  // copy callbacks
        type_free(*out);
        return ce;
    }
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
