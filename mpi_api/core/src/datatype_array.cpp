// Array datatypes: MPI_Type_create_subarray and MPI_Type_create_darray (MPI 3.1
// sections 4.1.3 and 4.1.4), built dimension by dimension from the innermost
// one, as the standard defines them: each dimension is a vector (or a vector
// plus a partial block) of the previous dimension's type, and the result is
// resized to the whole array. Memory is O(ndims), whatever the array sizes.
#include "datatype_layout.hpp"
#include "mpi_api/errors.hpp"

namespace mpc::mpi {
namespace {

int too_large() {
    return make_error(MPI_ERR_ARG, "the datatype would hold more than 2^63 bytes");
}

// Byte offsets: false when the result leaves MPI_Aint.
bool mul(MPI_Aint a, MPI_Aint b, MPI_Aint* r) {
    return !__builtin_mul_overflow(a, b, r);
}
bool add(MPI_Aint a, MPI_Aint b, MPI_Aint* r) {
    return !__builtin_add_overflow(a, b, r);
}

int check_order(int order) {
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return make_error(MPI_ERR_ARG, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN",
                          order);
    return MPI_SUCCESS;
}

// Dimension d visited at step k, innermost dimension first.
int dim_at(int k, int ndims, int order) {
    return order == MPI_ORDER_C ? ndims - 1 - k : k;
}

int make(int combiner, std::vector<int> ints, std::vector<MPI_Count> large, Shape shape,
         Datatype* old, size_t mult, Datatype** out) {
    Datatype* t = datatype_create(combiner);
    t->ints = std::move(ints);
    t->large_counts = std::move(large);
    t->children = {old};
    datatype_complete(t, std::move(shape), {SigPart{old, mult}});
    *out = t;
    return MPI_SUCCESS;
}

// The local part of one dimension of a darray: blocks of `b` elements at
// (coord + j*p)*b, for every j that starts inside [0, g).
struct LocalBlocks {
    size_t full = 0;        // whole blocks
    size_t first = 0;       // index of the first block's first element
    size_t partial = 0;     // length of a trailing short block (0 if none)
    size_t partial_at = 0;  // its first element
    size_t elements = 0;
};

LocalBlocks local_blocks(size_t g, size_t p, size_t coord, size_t b) {
    LocalBlocks l;
    l.first = coord * b;
    if (l.first >= g) return l;
    size_t nblocks = (g - 1 - l.first) / (b * p) + 1;
    size_t last = l.first + (nblocks - 1) * b * p;
    size_t last_len = std::min(b, g - last);
    l.full = last_len == b ? nblocks : nblocks - 1;
    if (last_len < b) {
        l.partial = last_len;
        l.partial_at = last;
    }
    l.elements = l.full * b + l.partial;
    return l;
}

// The int and large-count (_c) forms share these; `large` says where the
// sizes go in the contents (ints, or large counts).
int subarray(int ndims, const MPI_Count* sizes, const MPI_Count* subsizes, const MPI_Count* starts,
             int order, Datatype* old, bool large, Datatype** out) {
    if (!old) return make_error(MPI_ERR_TYPE, "invalid oldtype");
    if (ndims <= 0) return make_error(MPI_ERR_ARG, "ndims is %d, must be positive", ndims);
    if (!sizes || !subsizes || !starts) return make_error(MPI_ERR_ARG, "an array argument is NULL");
    if (int e = check_order(order)) return e;
    for (int d = 0; d < ndims; ++d) {
        if (sizes[d] <= 0 || subsizes[d] <= 0 || subsizes[d] > sizes[d] || starts[d] < 0 ||
            starts[d] > sizes[d] - subsizes[d])
            return make_error(MPI_ERR_ARG,
                              "dimension %d: size %lld, subsize %lld, start %lld (need 1 <= "
                              "subsize, 0 <= start, start + subsize <= size)",
                              d, sizes[d], subsizes[d], starts[d]);
    }
    Shape cur = old->shape;
    MPI_Aint unit = old->extent;  // bytes of one index step in the current dimension
    MPI_Aint disp = 0;
    size_t mult = 1;
    for (int k = 0; k < ndims; ++k) {
        const int d = dim_at(k, ndims, order);
        Shape next;
        bool ok = k == 0 ? shape_blocks({{0, static_cast<size_t>(subsizes[d]), &cur}}, &next)
                         : shape_vector(static_cast<size_t>(subsizes[d]), 1, unit, cur, &next);
        if (!ok) return too_large();
        cur = std::move(next);
        MPI_Aint start;
        if (!mul(starts[d], unit, &start) || !add(disp, start, &disp) ||
            !mul(unit, sizes[d], &unit))
            return too_large();
        mult *= static_cast<size_t>(subsizes[d]);
    }
    Shape placed;
    if (!shape_blocks({{disp, 1, &cur}}, &placed)) return too_large();
    std::vector<MPI_Count> counts(sizes, sizes + ndims);
    counts.insert(counts.end(), subsizes, subsizes + ndims);
    counts.insert(counts.end(), starts, starts + ndims);
    std::vector<int> ints{ndims};
    if (!large) ints.insert(ints.end(), counts.begin(), counts.end());
    ints.push_back(order);
    if (!large) counts.clear();
    return make(MPI_COMBINER_SUBARRAY, std::move(ints), std::move(counts),
                shape_resized(placed, 0, unit), old, mult, out);
}

int darray(int size, int rank, int ndims, const MPI_Count* gsizes, const int* distribs,
           const int* dargs, const int* psizes, int order, Datatype* old, bool large,
           Datatype** out) {
    if (!old) return make_error(MPI_ERR_TYPE, "invalid oldtype");
    if (size <= 0) return make_error(MPI_ERR_ARG, "size is %d, must be positive", size);
    if (rank < 0 || rank >= size)
        return make_error(MPI_ERR_ARG, "rank %d is outside [0, %d)", rank, size);
    if (ndims <= 0) return make_error(MPI_ERR_ARG, "ndims is %d, must be positive", ndims);
    if (!gsizes || !distribs || !dargs || !psizes)
        return make_error(MPI_ERR_ARG, "an array argument is NULL");
    if (int e = check_order(order)) return e;
    long grid = 1;
    std::vector<size_t> block(static_cast<size_t>(ndims));
    for (int d = 0; d < ndims; ++d) {
        const MPI_Count g = gsizes[d];
        const int p = psizes[d], darg = dargs[d];
        if (g <= 0 || p <= 0)
            return make_error(MPI_ERR_ARG, "dimension %d: gsize %lld and psize %d must be positive",
                              d, g, p);
        if (__builtin_mul_overflow(grid, p, &grid))
            return make_error(MPI_ERR_ARG, "the process grid has more than 2^63 processes");
        if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0 && distribs[d] != MPI_DISTRIBUTE_NONE)
            return make_error(MPI_ERR_ARG, "dimension %d: invalid distribution argument %d", d,
                              darg);
        size_t b;
        switch (distribs[d]) {
            case MPI_DISTRIBUTE_BLOCK:
                b = darg == MPI_DISTRIBUTE_DFLT_DARG ? static_cast<size_t>((g - 1L + p) / p)
                                                     : static_cast<size_t>(darg);
                if (static_cast<long>(b) * p < g)
                    return make_error(MPI_ERR_ARG,
                                      "dimension %d: block size %zu times %d processes does not "
                                      "cover %lld elements",
                                      d, b, p, g);
                break;
            case MPI_DISTRIBUTE_CYCLIC:
                b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : static_cast<size_t>(darg);
                break;
            case MPI_DISTRIBUTE_NONE:
                if (p != 1)
                    return make_error(MPI_ERR_ARG,
                                      "dimension %d is not distributed but has %d processes", d, p);
                b = static_cast<size_t>(g);
                break;
            default:
                return make_error(MPI_ERR_ARG, "dimension %d: invalid distribution %d", d,
                                  distribs[d]);
        }
        block[static_cast<size_t>(d)] = b;
    }
    if (grid != size)
        return make_error(MPI_ERR_ARG, "the process grid has %ld processes, size is %d", grid,
                          size);
    // The process grid is in row-major order whatever the array order.
    std::vector<size_t> coord(static_cast<size_t>(ndims));
    for (int d = ndims - 1, r = rank; d >= 0; --d) {
        coord[static_cast<size_t>(d)] = static_cast<size_t>(r % psizes[d]);
        r /= psizes[d];
    }
    Shape cur = old->shape;
    MPI_Aint unit = old->extent;
    size_t mult = 1;
    for (int k = 0; k < ndims; ++k) {
        const int d = dim_at(k, ndims, order);
        const size_t g = static_cast<size_t>(gsizes[d]), p = static_cast<size_t>(psizes[d]);
        const size_t b = block[static_cast<size_t>(d)];
        LocalBlocks l = local_blocks(g, p, coord[static_cast<size_t>(d)], b);
        Shape vec;
        MPI_Aint stride = 0, first, partial_at;  // (the stride matters from two blocks)
        if ((l.full > 1 && !mul(static_cast<MPI_Aint>(b * p), unit, &stride)) ||
            !shape_vector(l.full, b, stride, cur, &vec))
            return too_large();
        std::vector<BlockSpec> parts;
        if (l.full) {
            if (!mul(static_cast<MPI_Aint>(l.first), unit, &first)) return too_large();
            parts.push_back({first, 1, &vec});
        }
        if (l.partial) {
            if (!mul(static_cast<MPI_Aint>(l.partial_at), unit, &partial_at)) return too_large();
            parts.push_back({partial_at, l.partial, &cur});
        }
        Shape level;
        if (!shape_blocks(parts, &level) || !mul(unit, static_cast<MPI_Aint>(g), &unit))
            return too_large();
        cur = shape_resized(level, 0, unit);
        mult *= l.elements;
    }
    std::vector<int> ints{size, rank, ndims};
    std::vector<MPI_Count> counts;
    if (large)
        counts.assign(gsizes, gsizes + ndims);
    else
        ints.insert(ints.end(), gsizes, gsizes + ndims);
    ints.insert(ints.end(), distribs, distribs + ndims);
    ints.insert(ints.end(), dargs, dargs + ndims);
    ints.insert(ints.end(), psizes, psizes + ndims);
    ints.push_back(order);
    return make(MPI_COMBINER_DARRAY, std::move(ints), std::move(counts), std::move(cur), old, mult,
                out);
}

}  // namespace

int type_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                  Datatype* old, Datatype** out) {
    if (ndims <= 0 || !sizes || !subsizes || !starts)
        return subarray(ndims, nullptr, nullptr, nullptr, order, old, false, out);  // the error
    const std::vector<MPI_Count> a(sizes, sizes + ndims), b(subsizes, subsizes + ndims),
        c(starts, starts + ndims);
    return subarray(ndims, a.data(), b.data(), c.data(), order, old, false, out);
}

int type_subarray_c(int ndims, const MPI_Count* sizes, const MPI_Count* subsizes,
                    const MPI_Count* starts, int order, Datatype* old, Datatype** out) {
    return subarray(ndims, sizes, subsizes, starts, order, old, true, out);
}

int type_darray(int size, int rank, int ndims, const int* gsizes, const int* distribs,
                const int* dargs, const int* psizes, int order, Datatype* old, Datatype** out) {
    std::vector<MPI_Count> g;
    if (ndims > 0 && gsizes) g.assign(gsizes, gsizes + ndims);
    return darray(size, rank, ndims, gsizes ? g.data() : nullptr, distribs, dargs, psizes, order,
                  old, false, out);
}

int type_darray_c(int size, int rank, int ndims, const MPI_Count* gsizes, const int* distribs,
                  const int* dargs, const int* psizes, int order, Datatype* old, Datatype** out) {
    return darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, true, out);
}

}  // namespace mpc::mpi
