// Datatype life cycle and queries: commit, free, extents, envelope and
// contents (with their large-count forms), names, MPI_Type_match_size,
// MPI_Type_get_value_index, and
// address arithmetic.
#include <algorithm>
#include <cstring>

#include "mpi_api/api.hpp"

using namespace mpc::mpi;

namespace {

int check_out(const void* p, const char* what) {
    return p ? MPI_SUCCESS : make_error(MPI_ERR_ARG, "%s is NULL", what);
}

// The int envelope and contents cannot describe a type whose constructor
// recorded large counts (MPI 4.0 section 5.1.13).
int check_no_large_counts(const Datatype* t) {
    if (t->large_counts.empty()) return MPI_SUCCESS;
    return make_error(MPI_ERR_TYPE,
                      "the datatype was made by a large-count constructor: its envelope and "
                      "contents need MPI_Type_get_envelope_c and MPI_Type_get_contents_c");
}

// MPI_Type_get_contents and _c. large_counts is null for the int form.
int get_contents(Datatype* t, MPI_Count max_integers, MPI_Count max_addresses,
                 MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                 MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                 MPI_Datatype array_of_datatypes[]) {
    if (t->combiner == MPI_COMBINER_NAMED)
        return make_error(MPI_ERR_TYPE, "%s is a named datatype: it has no contents",
                          t->name.c_str());
    const size_t ni = t->ints.size(), na = t->aints.size(), nd = t->children.size(),
                 nc = t->large_counts.size();
    if (max_integers < static_cast<MPI_Count>(ni) || max_addresses < static_cast<MPI_Count>(na) ||
        max_datatypes < static_cast<MPI_Count>(nd) || max_large_counts < static_cast<MPI_Count>(nc))
        return make_error(MPI_ERR_ARG,
                          "the arrays are too small: need %zu integers, %zu addresses, %zu large "
                          "counts and %zu datatypes",
                          ni, na, nc, nd);
    if ((ni && !array_of_integers) || (na && !array_of_addresses) || (nd && !array_of_datatypes) ||
        (nc && !array_of_large_counts))
        return make_error(MPI_ERR_ARG, "an output array is NULL");
    std::copy(t->ints.begin(), t->ints.end(), array_of_integers);
    std::copy(t->aints.begin(), t->aints.end(), array_of_addresses);
    std::copy(t->large_counts.begin(), t->large_counts.end(), array_of_large_counts);
    for (size_t i = 0; i < nd; ++i)
        array_of_datatypes[i] = type_contents_copy(t->children[i])->handle;
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Type_commit(MPI_Datatype* datatype) {
    MPC_ENTER_ACTIVE(Type_commit);
    if (int e = check_out(datatype, "datatype")) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_type(*datatype, &t, false)) return raise(nullptr, e);
    t->committed = true;
    return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype* datatype) {
    MPC_ENTER_ACTIVE(Type_free);
    if (int e = check_out(datatype, "datatype")) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_type(*datatype, &t, false)) return raise(nullptr, e);
    if (int e = type_free(t)) return raise(nullptr, e);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
    MPC_ENTER_ACTIVE(Type_get_extent);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!lb || !extent) return raise(nullptr, make_error(MPI_ERR_ARG, "lb or extent is NULL"));
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
    MPC_ENTER_ACTIVE(Type_get_extent_x);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!lb || !extent) return raise(nullptr, make_error(MPI_ERR_ARG, "lb or extent is NULL"));
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
    MPC_ENTER_ACTIVE(Type_get_true_extent);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!true_lb || !true_extent)
        return raise(nullptr, make_error(MPI_ERR_ARG, "true_lb or true_extent is NULL"));
    *true_lb = t->true_lb;
    *true_extent = t->true_extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
    MPC_ENTER_ACTIVE(Type_get_true_extent_x);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!true_lb || !true_extent)
        return raise(nullptr, make_error(MPI_ERR_ARG, "true_lb or true_extent is NULL"));
    *true_lb = t->true_lb;
    *true_extent = t->true_extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses,
                           int* num_datatypes, int* combiner) {
    MPC_ENTER_ACTIVE(Type_get_envelope);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return raise(nullptr, make_error(MPI_ERR_ARG, "an output argument is NULL"));
    if (int e = check_no_large_counts(t)) return raise(nullptr, e);
    *num_integers = static_cast<int>(t->ints.size());
    *num_addresses = static_cast<int>(t->aints.size());
    *num_datatypes = static_cast<int>(t->children.size());
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
    MPC_ENTER_ACTIVE(Type_get_contents);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (int e = check_no_large_counts(t)) return raise(nullptr, e);
    return raise(nullptr,
                 get_contents(t, max_integers, max_addresses, 0, max_datatypes, array_of_integers,
                              array_of_addresses, nullptr, array_of_datatypes));
}

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers,
                             MPI_Count* num_addresses, MPI_Count* num_large_counts,
                             MPI_Count* num_datatypes, int* combiner) {
    MPC_ENTER_ACTIVE(Type_get_envelope_c);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
        return raise(nullptr, make_error(MPI_ERR_ARG, "an output argument is NULL"));
    *num_integers = static_cast<MPI_Count>(t->ints.size());
    *num_addresses = static_cast<MPI_Count>(t->aints.size());
    *num_large_counts = static_cast<MPI_Count>(t->large_counts.size());
    *num_datatypes = static_cast<MPI_Count>(t->children.size());
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes,
                             int array_of_integers[], MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]) {
    MPC_ENTER_ACTIVE(Type_get_contents_c);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    return raise(nullptr, get_contents(t, max_integers, max_addresses, max_large_counts,
                                       max_datatypes, array_of_integers, array_of_addresses,
                                       array_of_large_counts, array_of_datatypes));
}

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
    MPC_ENTER_ACTIVE(Type_get_extent_c);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!lb || !extent) return raise(nullptr, make_error(MPI_ERR_ARG, "lb or extent is NULL"));
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
    MPC_ENTER_ACTIVE(Type_get_true_extent_c);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!true_lb || !true_extent)
        return raise(nullptr, make_error(MPI_ERR_ARG, "true_lb or true_extent is NULL"));
    *true_lb = t->true_lb;
    *true_extent = t->true_extent;
    return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
    MPC_ENTER_ACTIVE(Type_set_name);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (int e = check_out(type_name, "type_name")) return raise(nullptr, e);
    t->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
    return MPI_SUCCESS;
}

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
    MPC_ENTER_ACTIVE(Type_match_size);
    if (int e = check_out(datatype, "datatype")) return raise(nullptr, e);
    // Fortran types of the requested class and size, by size.
    static const struct {
        int typeclass, size;
        MPI_Datatype type;
    } kMatches[] = {
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},       {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8}, {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},     {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16},
        {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    if (typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_INTEGER &&
        typeclass != MPI_TYPECLASS_COMPLEX)
        return raise(nullptr, make_error(MPI_ERR_ARG, "invalid type class %d", typeclass));
    for (const auto& m : kMatches) {
        if (m.typeclass == typeclass && m.size == size) {
            *datatype = m.type;
            return MPI_SUCCESS;
        }
    }
    return raise(nullptr, make_error(MPI_ERR_ARG, "no predefined type of class %d has size %d",
                                     typeclass, size));
}

int PMPI_Get_address(const void* location, MPI_Aint* address) {
    MPC_ENTER_ACTIVE(Get_address);
    if (int e = check_out(address, "address")) return raise(nullptr, e);
    *address = static_cast<MPI_Aint>(reinterpret_cast<uintptr_t>(location));
    return MPI_SUCCESS;
}

// Address arithmetic cannot fail and has no error to report: no checks.
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
    MPC_ENTER(Aint_add);
    return static_cast<MPI_Aint>(static_cast<uintptr_t>(base) + static_cast<uintptr_t>(disp));
}

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
    MPC_ENTER(Aint_diff);
    return static_cast<MPI_Aint>(static_cast<uintptr_t>(addr1) - static_cast<uintptr_t>(addr2));
}

// MPI 4.1 section 6.9.4: the predefined value-index pair type of MINLOC and
// MAXLOC for (value, index), or MPI_DATATYPE_NULL when there is none. The
// C pairs take an MPI_INT index; the Fortran ones are two of a kind.
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype* pair_type) {
    MPC_ENTER_ACTIVE(Type_get_value_index);
    Datatype* t;
    if (int e = check_type(value_type, &t, false)) return raise(nullptr, e);
    if (int e = check_type(index_type, &t, false)) return raise(nullptr, e);
    if (int e = check_out(pair_type, "pair_type")) return raise(nullptr, e);
    struct Pair {
        MPI_Datatype value, index, pair;
    };
    static const Pair pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    *pair_type = MPI_DATATYPE_NULL;
    for (const Pair& p : pairs)
        if (p.value == value_type && p.index == index_type) *pair_type = p.pair;
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Type_commit)
MPC_WEAK(MPI_Type_free)
MPC_WEAK(MPI_Type_get_extent)
MPC_WEAK(MPI_Type_get_extent_x)
MPC_WEAK(MPI_Type_get_true_extent)
MPC_WEAK(MPI_Type_get_true_extent_x)
MPC_WEAK(MPI_Type_get_envelope)
MPC_WEAK(MPI_Type_get_contents)
MPC_WEAK(MPI_Type_set_name)
MPC_WEAK(MPI_Type_match_size)
MPC_WEAK(MPI_Get_address)
MPC_WEAK(MPI_Aint_add)
MPC_WEAK(MPI_Aint_diff)
MPC_WEAK(MPI_Type_get_envelope_c)
MPC_WEAK(MPI_Type_get_contents_c)
MPC_WEAK(MPI_Type_get_extent_c)
MPC_WEAK(MPI_Type_get_true_extent_c)
MPC_WEAK(MPI_Type_get_value_index)
