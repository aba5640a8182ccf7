// Counting basic elements in a packed stream (MPI_Get_elements) and the
// reverse (MPI_Status_set_elements), by walking type signatures: a type's
// signature is a list of parts "count copies of a component type", so a
// partial element costs O(depth * parts), never a walk over the data.
#include "datatype_layout.hpp"

namespace mpc::mpi {
namespace {

// Basic elements in the first `bytes` packed bytes of one element of t
// (0 <= bytes < t.size); -1 if bytes ends inside a basic element.
int64_t partial_elements(const Datatype& t, uint64_t bytes) {
    if (bytes == 0) return 0;
    if (t.signature.empty()) return -1;  // inside a primitive
    int64_t n = 0;
    for (const SigPart& p : t.signature) {
        const uint64_t size = p.type->size, part = p.count * size;
        if (bytes >= part) {
            n += static_cast<int64_t>(p.count * p.type->elements);
            bytes -= part;
            if (bytes == 0) return n;
            continue;
        }
        const uint64_t k = bytes / size;
        n += static_cast<int64_t>(k * p.type->elements);
        int64_t rest = partial_elements(*p.type, bytes - k * size);
        return rest < 0 ? -1 : n + rest;
    }
    return -1;  // more bytes than one element: not reached
}

// Packed bytes of the first `elements` basic elements of one element of t
// (0 <= elements < t.elements).
uint64_t partial_bytes(const Datatype& t, uint64_t elements) {
    uint64_t bytes = 0;
    for (const SigPart& p : t.signature) {
        if (elements == 0) break;
        const uint64_t per = p.type->elements, part = p.count * per;
        if (elements >= part) {
            bytes += p.count * p.type->size;
            elements -= part;
            continue;
        }
        const uint64_t k = elements / per;
        bytes += k * p.type->size + partial_bytes(*p.type, elements - k * per);
        break;
    }
    return bytes;
}

}  // namespace

MPI_Count type_elements_in(const Datatype& t, MPI_Count bytes) {
    if (bytes <= 0) return 0;
    if (t.size == 0) return MPI_UNDEFINED;
    const uint64_t b = static_cast<uint64_t>(bytes);
    const uint64_t whole = b / t.size;
    const int64_t rest = partial_elements(t, b % t.size);
    if (rest < 0) return MPI_UNDEFINED;
    return static_cast<MPI_Count>(whole * t.elements) + rest;
}

MPI_Count type_bytes_for_elements(const Datatype& t, MPI_Count elements) {
    if (elements <= 0) return elements == 0 ? 0 : -1;
    if (t.elements == 0) return -1;
    const uint64_t e = static_cast<uint64_t>(elements);
    return static_cast<MPI_Count>((e / t.elements) * t.size + partial_bytes(t, e % t.elements));
}

}  // namespace mpc::mpi
