// How accumulates change target memory, the same way for origins of this node
// process (at the call) and of others (in the message handler), so that they
// are atomic with each other element by element (MPI 3.1 section 11.7.1).
//
// Elements of integer, logical, byte, float and double types (1 to 8 bytes)
// at aligned addresses are updated with CPU atomics: a fetch-and-op, or a
// compare-and-swap loop for the operations the CPU has none for. Other
// elements (long double, complex, pair types, misaligned ones) are updated
// under the target's accumulate lock. Which way depends only on the element
// type and its address, never on the operation, so two origins touching the
// same element with the same type always agree.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mpi_api/datatype.hpp"
#include "mpi_api/op.hpp"

namespace mpc::rma {

struct TargetState;

// One accumulate: combines a packed stream of origin elements into runs of
// target memory, in stream order, storing the old contents in `result`
// (packed) when not null. op must be predefined and valid on basic.
class Accumulator {
  public:
    Accumulator(TargetState& target, const mpi::Op& op, const mpi::Datatype& basic, const char* in,
                char* result);
    ~Accumulator();  // releases the accumulate lock if taken
    Accumulator(const Accumulator&) = delete;
    Accumulator& operator=(const Accumulator&) = delete;

    // The next len bytes of the stream go to [addr, addr+len) (whole elements).
    void run(uintptr_t addr, size_t len);

  private:
    void locked_run(char* dst, size_t len);
    TargetState& target_;
    int op_;    // index of the predefined op
    int kind_;  // atomic element kind, or 0
    size_t esize_;
    mpi::Kernel kernel_ = nullptr;
    const char* in_;
    char* result_;
    bool locked_ = false;
};

// MPI_SUCCESS, or MPI_ERR_OP when op cannot be used in an accumulate on
// elements of basic (user-defined operations cannot; MPI_REPLACE and
// MPI_NO_OP can on any type).
int check_accumulate_op(const mpi::Op& op, const mpi::Datatype& basic);
// Whether MPI_Compare_and_swap accepts the type (integer, logical, byte).
bool compare_and_swap_type(const mpi::Datatype& type);
// Compare-and-swap of one element of basic at addr (the same atomicity
// rules as accumulates); the old value goes to result.
void compare_and_swap_element(TargetState& target, uintptr_t addr, const mpi::Datatype& basic,
                              const void* origin, const void* compare, void* result);

}  // namespace mpc::rma
