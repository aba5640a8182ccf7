// mpi_api/op: reduction operations, predefined and user-defined.
#pragma once

#include <cstddef>

#include "mpi.h"
#include "mpi_api/datatype.hpp"

namespace mpc::mpi {

struct Op {
    int handle = MPI_OP_NULL;
    int builtin = -1;                 // index in spec.OPS for predefined ops
    MPI_User_function* user = nullptr;
    MPI_User_function_c* user_c = nullptr;  // MPI_Op_create_c: takes an MPI_Count length
    bool commutative = true;
    bool predefined = false;
    // A user-defined operation (either form).
    bool is_user() const { return user || user_c; }
};

void op_init_predefined();
Op* op_lookup(MPI_Op handle);
MPI_Op op_create(MPI_User_function* fn, bool commutative);
MPI_Op op_create_c(MPI_User_function_c* fn, bool commutative);
void op_free(MPI_Op handle);

// MPI_SUCCESS, or a detailed MPI_ERR_OP when op is not defined on type.
int op_check(const Op& op, const Datatype& type);
// inout[i] = in[i] op inout[i] for count elements of type. Predefined ops take
// packed streams (datatype.hpp: the data of the type map, no holes); user ops
// get the buffers as they are. op_check must have passed.
void op_apply(const Op& op, const void* in, void* inout, size_t count, const Datatype& type);

// A predefined op's function on type's basic elements: k(in, inout, n)
// combines n of them (count elements of type are count * type.basic_count).
// For callers that apply the same op many times; op_check must have passed.
using Kernel = void (*)(const void* in, void* inout, size_t n);
Kernel op_kernel(const Op& op, const Datatype& type);

}  // namespace mpc::mpi
