// TypeWalk: the pack cursor, seen from outside the datatype engine.
#include "mpi_api/type_walk.hpp"

#include "datatype_layout.hpp"

namespace mpc::mpi {

TypeWalk::TypeWalk(uintptr_t base, size_t count, const Datatype& type, size_t offset)
    : cursor_(new Cursor(reinterpret_cast<const void*>(base), count, type, offset)) {}

TypeWalk::~TypeWalk() = default;

uintptr_t TypeWalk::addr() const {
    return reinterpret_cast<uintptr_t>(cursor_->ptr());
}

size_t TypeWalk::avail() const {
    return cursor_->avail();
}

void TypeWalk::consume(size_t n) {
    cursor_->consume(n);
}

}  // namespace mpc::mpi
