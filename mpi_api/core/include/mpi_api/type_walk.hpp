// mpi_api/type_walk: the contiguous runs of a typed region, in type-map order,
// for rooms above the datatype engine that must see where bytes lie rather
// than move them (the file views of mpi_api/io: a filetype's runs are file
// offsets, a buffer's runs are memory addresses).
//
// A walk covers the packed stream of (base, count, type) from a packed offset
// on: each step is the longest contiguous run the type map holds there (runs
// of neighbouring blocks are not merged: callers that want maximal runs merge
// them). Positioning costs O(depth * log(blocks)), stepping a few branches per
// run; nothing is flattened. Addresses are integers (base may be a file
// offset or MPI_BOTTOM), computed without ever dereferencing them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "mpi_api/datatype.hpp"

namespace mpc::mpi {

class Cursor;

class TypeWalk {
  public:
    TypeWalk(uintptr_t base, size_t count, const Datatype& type, size_t offset);
    ~TypeWalk();
    TypeWalk(const TypeWalk&) = delete;
    TypeWalk& operator=(const TypeWalk&) = delete;

    // Where the current run starts and how many bytes it still holds (0 at
    // the end of the stream).
    uintptr_t addr() const;
    size_t avail() const;
    // Moves n bytes on (n <= avail()); the next run follows when this one ends.
    void consume(size_t n);

  private:
    std::unique_ptr<Cursor> cursor_;
};

}  // namespace mpc::mpi
