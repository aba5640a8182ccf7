// Parameterized Fortran types (MPI 3.1 section 17.1.9): MPI_Type_create_f90_real,
// _complex and _integer name the type of a Fortran KIND chosen by precision
// and range. The kinds are gfortran's (SELECTED_REAL_KIND picks the smallest
// of REAL(4), (8), (10), (16) with the precision and range asked; likewise
// SELECTED_INT_KIND among INTEGER(1) to (16)), so that a type made from C
// matches the variable a gfortran program declares with that kind.
//
// The types returned are predefined (they cannot be freed), with the F90
// combiner and (p, r) as contents; the same arguments give the same handle,
// so a program that asks in every iteration does not fill the handle table.
#include <map>
#include <mutex>
#include <tuple>

#include "datatype_layout.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"

namespace mpc::mpi {
namespace {

struct Kind {
    int precision, range;  // gfortran's PRECISION() and RANGE() of the kind
    MPI_Datatype real, complex;
};
// REAL(10) is x87 extended precision, C's long double on x86-64.
constexpr Kind kRealKinds[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX8},
    {15, 307, MPI_REAL8, MPI_COMPLEX16},
    {18, 4931, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
};

struct IntKind {
    int range;
    MPI_Datatype type;
};
constexpr IntKind kIntKinds[] = {
    {2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8},
    {38, MPI_INTEGER16},
};

// The predefined type behind the call, or MPI_DATATYPE_NULL.
MPI_Datatype base_type(int combiner, int p, int r) {
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        for (const IntKind& k : kIntKinds)
            if (r <= k.range) return k.type;
        return MPI_DATATYPE_NULL;
    }
    const int want_p = p == MPI_UNDEFINED ? 0 : p, want_r = r == MPI_UNDEFINED ? 0 : r;
    for (const Kind& k : kRealKinds)
        if (want_p <= k.precision && want_r <= k.range)
            return combiner == MPI_COMBINER_F90_REAL ? k.real : k.complex;
    return MPI_DATATYPE_NULL;
}

std::mutex g_mutex;
// (combiner, p, r) -> the type made for it; lives as long as the process.
std::map<std::tuple<int, int, int>, Datatype*>& made() {
    static auto* m = new std::map<std::tuple<int, int, int>, Datatype*>();
    return *m;
}

}  // namespace

int type_create_f90(int combiner, int p, int r, Datatype** out) {
    const bool integer = combiner == MPI_COMBINER_F90_INTEGER;
    const char* what = integer ? "MPI_Type_create_f90_integer"
                               : combiner == MPI_COMBINER_F90_REAL ? "MPI_Type_create_f90_real"
                                                                   : "MPI_Type_create_f90_complex";
    if (integer ? r == MPI_UNDEFINED : p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return make_error(MPI_ERR_ARG, "%s: %s MPI_UNDEFINED", what,
                          integer ? "r is" : "p and r are both");
    const MPI_Datatype base = base_type(combiner, p, r);
    if (base == MPI_DATATYPE_NULL)
        return integer ? make_error(MPI_ERR_ARG, "%s: no Fortran INTEGER kind has a range of %d",
                                    what, r)
                       : make_error(MPI_ERR_ARG,
                                    "%s: no Fortran REAL kind has a precision of %d and a range "
                                    "of %d",
                                    what, p, r);
    std::lock_guard<std::mutex> g(g_mutex);
    Datatype*& t = made()[{combiner, integer ? 0 : p, r}];
    if (!t) {
        Datatype* b = datatype_lookup(base);
        t = datatype_create(combiner);
        t->ints = integer ? std::vector<int>{r} : std::vector<int>{p, r};
        datatype_complete(t, b->shape, {SigPart{b, 1}});
        t->committed = true;
        t->predefined = true;  // not freed, not counted
    }
    *out = t;
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
