// mpi_api/datatype: MPI datatypes and the pack engine.
//
// A datatype describes where the bytes of one element lie relative to a buffer
// address (its type map) plus its extent, so count elements follow each other at
// extent strides. Data always moves as a stream of "packed" bytes: senders pack,
// receivers unpack, and a copy between two typed buffers walks both type maps at
// once, so non-contiguous data is copied once, never twice. Contiguous types take
// a memcpy fast path everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mpi.h"

namespace mpc::mpi {

// Reduction category of a predefined type (MPI 3.1 section 5.9.2).
enum class TypeCategory : uint8_t { CInt, FInt, Float, Logical, Complex, Byte, Pair, None, Derived };

// One contiguous piece of a type map: `length` bytes at `offset` from the
// element's address.
struct Segment {
    MPI_Aint offset;
    size_t length;
};

struct Datatype {
    int handle = MPI_DATATYPE_NULL;
    size_t size = 0;          // bytes of data in one element
    MPI_Aint lb = 0;          // lower bound
    MPI_Aint extent = 0;      // ub - lb
    MPI_Aint true_lb = 0;     // lowest byte actually touched
    MPI_Aint true_extent = 0; // span of bytes actually touched
    bool contiguous = true;   // count elements are size*count bytes at buf+true_lb
    bool predefined = false;
    bool committed = false;
    TypeCategory category = TypeCategory::None;
    int basic = MPI_DATATYPE_NULL;  // the predefined type all data is made of, or NULL if mixed
    size_t basic_count = 0;         // number of basic elements per element (0 if mixed)
    std::string name;
    // The flattened type map of one element, merged where adjacent. For a
    // contiguous type a single segment. Filled at creation.
    std::vector<Segment> segments;
    std::vector<size_t> segment_start;  // packed offset of each segment (prefix sums)
    // Envelope / contents for MPI_Type_get_envelope / get_contents.
    int combiner = MPI_COMBINER_NAMED;
    std::vector<int> ints;
    std::vector<MPI_Aint> aints;
    std::vector<int> types;
    int refcount = 1;  // handle + users (derived types keep their parts alive)
};

// Recomputes segment_start, size and the contiguity flag from segments.
void finish_layout(Datatype& t);

// Looks up a live datatype (predefined or derived); nullptr if invalid.
Datatype* datatype_lookup(MPI_Datatype handle);
// Sets up the predefined datatypes. Called once per process.
void datatype_init_predefined();

// Packs the byte range [offset, offset+len) of the packed stream of
// (buf, count, type) into out. len must not exceed size*count - offset.
void pack(const void* buf, size_t count, const Datatype& type, size_t offset, void* out,
          size_t len);
// Unpacks len bytes of the packed stream into (buf, count, type) at packed offset.
void unpack(void* buf, size_t count, const Datatype& type, size_t offset, const void* in,
            size_t len);
// Copies the first `bytes` packed bytes of (sbuf, scount, stype) into (rbuf, rcount,
// rtype) with a single copy of each byte.
void typed_copy(const void* sbuf, size_t scount, const Datatype& stype, void* rbuf,
                size_t rcount, const Datatype& rtype, size_t bytes);

}  // namespace mpc::mpi
