// Datatype constructors and their large-count forms: handle checks, then the
// core constructors (mpi_api/datatype.hpp), which check the other arguments.
#include <vector>

#include "mpi_api/api.hpp"

using namespace mpc::mpi;

namespace {

// Looks up oldtype (committed or not) and checks the output pointer.
int inputs(MPI_Datatype oldtype, MPI_Datatype* newtype, Datatype** old) {
    if (int e = check_type(oldtype, old, false)) return e;
    if (!newtype) return make_error(MPI_ERR_ARG, "newtype is NULL");
    return MPI_SUCCESS;
}

// Returns the new type's handle, or raises the constructor's error. t is taken
// by reference: it is read after the constructor call (an argument of this
// call) has filled it.
int deliver(int err, Datatype* const& t, MPI_Datatype* newtype) {
    if (err) return raise(nullptr, err);
    *newtype = t->handle;
    return MPI_SUCCESS;
}

// MPI_Type_create_struct and _c: the component types' handles.
int struct_types(MPI_Count count, const MPI_Datatype* array_of_types, MPI_Datatype* newtype,
                 std::vector<Datatype*>& types) {
    if (!newtype) return make_error(MPI_ERR_ARG, "newtype is NULL");
    if (count > 0 && !array_of_types) return make_error(MPI_ERR_ARG, "array_of_types is NULL");
    types.resize(count > 0 ? static_cast<size_t>(count) : 0);
    for (size_t i = 0; i < types.size(); ++i)
        if (int e = check_type(array_of_types[i], &types[i], false)) return e;
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_contiguous);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_contiguous(count, old, &t), t, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_vector);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_vector(count, blocklength, stride, old, &t), t, newtype);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_hvector);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_hvector(count, blocklength, stride, old, &t), t, newtype);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_indexed);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_indexed(count, array_of_blocklengths, array_of_displacements, old, &t), t,
                   newtype);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_hindexed);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_hindexed(count, array_of_blocklengths, array_of_displacements, old, &t), t,
                   newtype);
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_indexed_block);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_indexed_block(count, blocklength, array_of_displacements, old, &t), t,
                   newtype);
}

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_hindexed_block);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_hindexed_block(count, blocklength, array_of_displacements, old, &t), t,
                   newtype);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_struct);
    std::vector<Datatype*> types;
    if (int e = struct_types(count, array_of_types, newtype, types)) return raise(nullptr, e);
    Datatype* t = nullptr;
    return deliver(
        type_struct(count, array_of_blocklengths, array_of_displacements, types.data(), &t), t,
        newtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_resized);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_resized(old, lb, extent, &t), t, newtype);
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_subarray);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(
        type_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, old, &t), t,
        newtype);
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_darray);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_darray(size, rank, ndims, array_of_gsizes, array_of_distribs,
                               array_of_dargs, array_of_psizes, order, old, &t),
                   t, newtype);
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_dup);
    Datatype *old, *t = nullptr;
    if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e);
    return deliver(type_dup(old, &t), t, newtype);
}

// The parameterized Fortran types (MPI 3.1 section 17.1.9), callable from C too.
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_f90_real);
    if (!newtype) return raise(nullptr, make_error(MPI_ERR_ARG, "newtype is NULL"));
    Datatype* t = nullptr;
    return deliver(type_create_f90(MPI_COMBINER_F90_REAL, p, r, &t), t, newtype);
}

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_f90_complex);
    if (!newtype) return raise(nullptr, make_error(MPI_ERR_ARG, "newtype is NULL"));
    Datatype* t = nullptr;
    return deliver(type_create_f90(MPI_COMBINER_F90_COMPLEX, p, r, &t), t, newtype);
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_f90_integer);
    if (!newtype) return raise(nullptr, make_error(MPI_ERR_ARG, "newtype is NULL"));
    Datatype* t = nullptr;
    return deliver(type_create_f90(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, &t), t, newtype);
}

// ---- Large-count forms (MPI 4.0) -------------------------------------------

// Name(params) -> core call, for the constructors built on one oldtype.
#define MPC_TYPE_C(Name, Params, Call)                                        \
    int PMPI_##Name Params {                                                  \
        MPC_ENTER_ACTIVE(Name);                                               \
        Datatype *old, *t = nullptr;                                          \
        if (int e = inputs(oldtype, newtype, &old)) return raise(nullptr, e); \
        return deliver(Call, t, newtype);                                     \
    }
MPC_TYPE_C(Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype),
           type_contiguous_c(count, old, &t))
MPC_TYPE_C(Type_vector_c,
           (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
            MPI_Datatype* newtype),
           type_vector_c(count, blocklength, stride, old, &t))
MPC_TYPE_C(Type_create_hvector_c,
           (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
            MPI_Datatype* newtype),
           type_hvector_c(count, blocklength, stride, old, &t))
MPC_TYPE_C(Type_indexed_c,
           (MPI_Count count, const MPI_Count array_of_blocklengths[],
            const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype),
           type_indexed_c(count, array_of_blocklengths, array_of_displacements, old, &t))
MPC_TYPE_C(Type_create_hindexed_c,
           (MPI_Count count, const MPI_Count array_of_blocklengths[],
            const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype),
           type_hindexed_c(count, array_of_blocklengths, array_of_displacements, old, &t))
MPC_TYPE_C(Type_create_indexed_block_c,
           (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
            MPI_Datatype oldtype, MPI_Datatype* newtype),
           type_indexed_block_c(count, blocklength, array_of_displacements, old, &t))
MPC_TYPE_C(Type_create_hindexed_block_c,
           (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
            MPI_Datatype oldtype, MPI_Datatype* newtype),
           type_hindexed_block_c(count, blocklength, array_of_displacements, old, &t))
MPC_TYPE_C(Type_create_resized_c,
           (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype* newtype),
           type_resized_c(old, lb, extent, &t))
MPC_TYPE_C(Type_create_subarray_c,
           (int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
            const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
            MPI_Datatype* newtype),
           type_subarray_c(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, old,
                           &t))
MPC_TYPE_C(Type_create_darray_c,
           (int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
            const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
            int order, MPI_Datatype oldtype, MPI_Datatype* newtype),
           type_darray_c(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                         array_of_psizes, order, old, &t))
#undef MPC_TYPE_C

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
    MPC_ENTER_ACTIVE(Type_create_struct_c);
    std::vector<Datatype*> types;
    if (int e = struct_types(count, array_of_types, newtype, types)) return raise(nullptr, e);
    Datatype* t = nullptr;
    return deliver(
        type_struct_c(count, array_of_blocklengths, array_of_displacements, types.data(), &t), t,
        newtype);
}

}  // extern "C"

MPC_WEAK(MPI_Type_create_f90_real)
MPC_WEAK(MPI_Type_create_f90_complex)
MPC_WEAK(MPI_Type_create_f90_integer)
MPC_WEAK(MPI_Type_contiguous)
MPC_WEAK(MPI_Type_vector)
MPC_WEAK(MPI_Type_create_hvector)
MPC_WEAK(MPI_Type_indexed)
MPC_WEAK(MPI_Type_create_hindexed)
MPC_WEAK(MPI_Type_create_indexed_block)
MPC_WEAK(MPI_Type_create_hindexed_block)
MPC_WEAK(MPI_Type_create_struct)
MPC_WEAK(MPI_Type_create_resized)
MPC_WEAK(MPI_Type_create_subarray)
MPC_WEAK(MPI_Type_create_darray)
MPC_WEAK(MPI_Type_dup)
MPC_WEAK(MPI_Type_contiguous_c)
MPC_WEAK(MPI_Type_vector_c)
MPC_WEAK(MPI_Type_create_hvector_c)
MPC_WEAK(MPI_Type_indexed_c)
MPC_WEAK(MPI_Type_create_hindexed_c)
MPC_WEAK(MPI_Type_create_indexed_block_c)
MPC_WEAK(MPI_Type_create_hindexed_block_c)
MPC_WEAK(MPI_Type_create_struct_c)
MPC_WEAK(MPI_Type_create_resized_c)
MPC_WEAK(MPI_Type_create_subarray_c)
MPC_WEAK(MPI_Type_create_darray_c)
