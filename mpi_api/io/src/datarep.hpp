// Data representations (MPI 3.1 section 13.5): "native" and "internal" (the
// same bytes as memory), "external32" (big-endian, the standard's sizes:
// converted by the datatype engine's external32 codec) and the ones a rank
// registers with MPI_Register_datarep (converted by its functions).
//
// The bytes a view gives to an access are always a "file stream": the data in
// the file's representation, in type-map order. Memory holds the native
// stream; a conversion moves between the two through a buffer. Etypes and
// filetypes built only from portable constructors get their displacements
// scaled to the representation's sizes (13.5.1); others are taken as is.
#pragma once

#include <cstdint>
#include <string>

#include "file.hpp"

namespace mpc::io {

struct Datarep {
    enum class Kind : uint8_t { Native, External32, User };
    std::string name;
    Kind kind = Kind::Native;
    MPI_Datarep_conversion_function* read = nullptr;
    MPI_Datarep_conversion_function* write = nullptr;
    MPI_Datarep_extent_function* extent = nullptr;
    void* extra_state = nullptr;

    // Whether the file holds memory's bytes in this direction.
    bool native_for(Dir d) const {
        return kind == Kind::Native || (kind == Kind::User && (d == Dir::Read ? !read : !write));
    }
};

// The representation called name for the calling rank, or nullptr.
const Datarep* find_datarep(RankState* me, const std::string& name);

// Bytes in the file of count elements of t (MPI_ERR_CONVERSION when a
// user's extent function fails).
int file_size_of(const Datarep& rep, const Datatype& t, uint64_t count, uint64_t* out);
// The same for an access in direction d (a user representation without a
// conversion function for d moves native bytes).
int stream_size(const Datarep& rep, Dir d, const Datatype& t, uint64_t count, uint64_t* out);
// t as the file lays it out under rep (a new reference: release it).
int file_type_of(const Datarep& rep, Datatype* t, Datatype** out);

// Converts count elements of (buf, t) into the file stream at out, and back.
int to_file(const Datarep& rep, const void* buf, int count, Datatype* t, void* out);
int from_file(const Datarep& rep, const void* in, void* buf, int count, Datatype* t);

}  // namespace mpc::io
