// mpi_api/datatype: MPI datatypes and the pack engine.
//
// A datatype describes where the bytes of one element lie relative to a buffer
// address (its type map) plus its extent, so count elements follow each other at
// extent strides. Data always moves as a stream of "packed" bytes (the data of
// the type map in order, native representation): senders pack, receivers
// unpack, and a copy between two typed buffers walks both type maps at once, so
// non-contiguous data is copied once, never twice. Contiguous types take a
// memcpy fast path everywhere. Any byte range of the stream can be packed or
// unpacked on its own (fragments of a message).
//
// Representation. The type map is never flattened into a list of pieces: a
// derived type keeps a compact tree (a Layout, src/core/datatype_layout.hpp)
// whose nodes are "count blocks at a regular stride" (vector), "runs at listed
// displacements" (indexed of contiguous data) or "listed blocks of sub-layouts"
// (struct), with contiguous runs (Bytes) at the leaves. Constructors normalise
// as they build (contiguous children become runs, adjacent blocks merge, evenly
// spaced blocks become vectors) but never expand a regular node. So memory is
// O(number of arguments the user passed), a vector of 1e6 blocks is one node,
// and nesting multiplies nothing. The pack cursor walks the tree lazily with a
// stack of frames (depth = nesting depth) and jumps to any packed offset in
// O(depth * log(blocks)). Uniform runs (a vector of contiguous blocks) are
// copied by a tight strided loop. Costs: an indexed/struct type stores its
// arguments twice (layout arrays, plus the contents record that
// MPI_Type_get_contents must return); walking costs a few branches per run.
//
// Bounds follow MPI 3.1 section 4.1.6 literally: lb/ub come from the data of
// the type map unless explicit markers (MPI_Type_create_resized, sticky
// through later constructors) say otherwise, and without a ub marker the
// extent is padded to the largest alignment of the basic entries (epsilon),
// for every constructor, not only structs.
//
// Lifetime. A datatype is reference counted: its handle holds one reference,
// every derived type built on it one, and a pending nonblocking operation one
// (Request::held_type). MPI_Type_free drops the handle's reference and makes
// the handle invalid at once; the object lives until the last reference goes.
//
// This room must never call the network or block: these are pure functions of
// memory, safe to call from any rank's thread at any time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mpi.h"
#include "mpi_api/handles.hpp"
#include "runtime/copy.hpp"

namespace mpc::mpi {

// Reduction category of a predefined type (MPI 3.1 section 5.9.2).
enum class TypeCategory : uint8_t {
    CInt,
    FInt,
    Float,
    Logical,
    Complex,
    Byte,
    Pair,
    None,
    Derived
};

struct Layout;  // the compact type map tree (src/core/datatype_layout.hpp)

// Bounds bookkeeping of a type map, as MPI 3.1 section 4.1.6 defines them:
// the data bounds, the explicit (sticky) lb/ub markers set by
// MPI_Type_create_resized, and the largest alignment of a basic entry, which
// pads the extent when no ub marker is present (the "epsilon" rule).
struct TypeBounds {
    MPI_Aint data_lb = 0, data_ub = 0;  // valid when the type has data
    MPI_Aint lb_mark = 0, ub_mark = 0;
    bool has_lb_mark = false, has_ub_mark = false;
    MPI_Aint align = 1;
};

// The memory side of a type: what constructors combine and the cursor walks.
struct Shape {
    std::shared_ptr<const Layout> layout;  // null when the type has no data
    MPI_Aint layout_disp = 0;              // layout origin relative to the element's
    size_t size = 0;                       // data bytes of one element
    TypeBounds bounds;
    MPI_Aint lb = 0, extent = 0;  // derived from bounds (markers, epsilon)
};

struct Datatype;

// One part of a type's signature: `count` consecutive copies of `type`.
struct SigPart {
    const Datatype* type;
    size_t count;
};

struct Datatype {
    int handle = MPI_DATATYPE_NULL;
    size_t size = 0;           // bytes of data in one element
    MPI_Aint lb = 0;           // lower bound
    MPI_Aint extent = 0;       // ub - lb
    MPI_Aint true_lb = 0;      // lowest byte actually touched
    MPI_Aint true_extent = 0;  // span of bytes actually touched
    bool contiguous = true;    // count elements are size*count bytes at buf+true_lb
    bool predefined = false;
    bool committed = false;
    TypeCategory category = TypeCategory::None;
    // The predefined type all data is made of (pair types count as one unit),
    // or NULL if mixed; basic_count of them per element. Used by reductions.
    int basic = MPI_DATATYPE_NULL;
    size_t basic_count = 0;
    std::string name;

    Shape shape;
    // Signature: the element's basic entries in type-map order. Primitive
    // predefined types have none; pair types list their two components.
    std::vector<SigPart> signature;
    uint64_t elements = 0;     // basic entries per element (MPI_Get_elements)
    size_t external_size = 0;  // bytes of one element in "external32"

    // Envelope / contents for MPI_Type_get_envelope / get_contents. children
    // are the datatypes passed to the constructor, each holding a reference.
    // A large-count (_c) constructor records its counts and displacements in
    // large_counts (MPI 4.0 section 5.1.13); only MPI_Type_get_contents_c
    // returns those.
    int combiner = MPI_COMBINER_NAMED;
    std::vector<int> ints;
    std::vector<MPI_Aint> aints;
    std::vector<MPI_Count> large_counts;
    std::vector<Datatype*> children;

    std::atomic<int> refs{0};
    std::atomic<bool> freed{false};  // handle released by MPI_Type_free
};

// The predefined datatypes by handle index (set up once, never freed): most
// calls name one, and finding it is then one load.
inline constexpr uint32_t kPredefinedTypeSlots = 128;
extern Datatype* g_predefined_types[kPredefinedTypeSlots];
// Derived types (and invalid handles).
Datatype* datatype_lookup_pool(MPI_Datatype handle);

// Looks up a live datatype (predefined or derived); nullptr if invalid or freed.
inline Datatype* datatype_lookup(MPI_Datatype handle) {
    const uint32_t i =
        static_cast<uint32_t>(handle) - static_cast<uint32_t>(make_handle(HandleKind::Datatype, 0));
    if (i < kPredefinedTypeSlots)
        if (Datatype* t = g_predefined_types[i]) return t;
    return datatype_lookup_pool(handle);
}
// Sets up the predefined datatypes. Called once per process (idempotent).
void datatype_init_predefined();

// References. retain returns t; both are no-ops on predefined types.
Datatype* datatype_retain(Datatype* t);
void datatype_release(Datatype* t);

// ---- Constructors (MPI 3.1 section 4.1) ------------------------------------
// Each validates its arguments (MPI error code on failure), creates an
// uncommitted derived type holding references on its components, and returns
// it in *out with one reference (its handle's).
int type_contiguous(int count, Datatype* old, Datatype** out);
int type_vector(int count, int blocklength, int stride, Datatype* old, Datatype** out);
int type_hvector(int count, int blocklength, MPI_Aint stride, Datatype* old, Datatype** out);
int type_indexed(int count, const int* blocklengths, const int* displs, Datatype* old,
                 Datatype** out);
int type_hindexed(int count, const int* blocklengths, const MPI_Aint* displs, Datatype* old,
                  Datatype** out);
int type_indexed_block(int count, int blocklength, const int* displs, Datatype* old,
                       Datatype** out);
int type_hindexed_block(int count, int blocklength, const MPI_Aint* displs, Datatype* old,
                        Datatype** out);
int type_struct(int count, const int* blocklengths, const MPI_Aint* displs, Datatype* const* types,
                Datatype** out);
int type_resized(Datatype* old, MPI_Aint lb, MPI_Aint extent, Datatype** out);
int type_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                  Datatype* old, Datatype** out);
int type_darray(int size, int rank, int ndims, const int* gsizes, const int* distribs,
                const int* dargs, const int* psizes, int order, Datatype* old, Datatype** out);
int type_dup(Datatype* old, Datatype** out);
// The large-count forms (MPI 4.0, MPI_Type_*_c): the same types, with
// MPI_Count arguments (hvector strides and hindexed/struct displacements in
// bytes), recorded as large counts in the contents.
int type_contiguous_c(MPI_Count count, Datatype* old, Datatype** out);
int type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, Datatype* old,
                  Datatype** out);
int type_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, Datatype* old,
                   Datatype** out);
int type_indexed_c(MPI_Count count, const MPI_Count* blocklengths, const MPI_Count* displs,
                   Datatype* old, Datatype** out);
int type_hindexed_c(MPI_Count count, const MPI_Count* blocklengths, const MPI_Count* displs,
                    Datatype* old, Datatype** out);
int type_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count* displs,
                         Datatype* old, Datatype** out);
int type_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count* displs,
                          Datatype* old, Datatype** out);
int type_struct_c(MPI_Count count, const MPI_Count* blocklengths, const MPI_Count* displs,
                  Datatype* const* types, Datatype** out);
int type_resized_c(Datatype* old, MPI_Count lb, MPI_Count extent, Datatype** out);
int type_subarray_c(int ndims, const MPI_Count* sizes, const MPI_Count* subsizes,
                    const MPI_Count* starts, int order, Datatype* old, Datatype** out);
int type_darray_c(int size, int rank, int ndims, const MPI_Count* gsizes, const int* distribs,
                  const int* dargs, const int* psizes, int order, Datatype* old, Datatype** out);
// MPI_Type_create_f90_real / _complex / _integer (combiner MPI_COMBINER_F90_*):
// the type of gfortran's SELECTED_REAL_KIND(p, r) or SELECTED_INT_KIND(r)
// (MPI_UNDEFINED leaves p or r out). A predefined, unnamed type that cannot
// be freed, one per distinct (combiner, p, r); MPI_ERR_ARG when gfortran has
// no such kind.
int type_create_f90(int combiner, int p, int r, Datatype** out);
// MPI_Type_free: invalidates the handle and drops its reference.
int type_free(Datatype* t);
// A new handle for a component type returned by MPI_Type_get_contents: the
// predefined type itself, or a fresh copy of a derived one (same envelope,
// contents and layout) that the caller owns.
Datatype* type_contents_copy(Datatype* t);

// ---- Signature queries ---------------------------------------------------
// Basic elements in the first `bytes` packed bytes of a stream of this type
// (any number of elements, the last one possibly partial); MPI_UNDEFINED when
// bytes ends inside a basic element.
MPI_Count type_elements_in(const Datatype& t, MPI_Count bytes);
// Packed bytes holding the first `elements` basic elements; -1 if impossible.
MPI_Count type_bytes_for_elements(const Datatype& t, MPI_Count elements);

// ---- Data movement --------------------------------------------------------
// The walks of the type map behind pack and unpack (any type).
void pack_walk(const void* buf, size_t count, const Datatype& type, size_t offset, void* out,
               size_t len);
void unpack_walk(void* buf, size_t count, const Datatype& type, size_t offset, const void* in,
                 size_t len);
// The address of packed byte `offset` of a contiguous type's data at buf
// (integer arithmetic: buf may be MPI_BOTTOM with absolute displacements).
inline uintptr_t contiguous_at(const void* buf, const Datatype& type, size_t offset) {
    return reinterpret_cast<uintptr_t>(buf) + static_cast<uintptr_t>(type.true_lb) + offset;
}
// Where the data of a contiguous type at buf starts.
inline unsigned char* contiguous_data(const void* buf, const Datatype& type) {
    return reinterpret_cast<unsigned char*>(contiguous_at(buf, type, 0));
}
// Packs the byte range [offset, offset+len) of the packed stream of
// (buf, count, type) into out. len must not exceed size*count - offset.
// Contiguous data is one copy here, without a call for a few bytes.
inline void pack(const void* buf, size_t count, const Datatype& type, size_t offset, void* out,
                 size_t len) {
    if (!type.contiguous) return pack_walk(buf, count, type, offset, out, len);
    if (len)
        runtime::copy_bytes(out, reinterpret_cast<const void*>(contiguous_at(buf, type, offset)),
                            len);
}
// Unpacks len bytes of the packed stream into (buf, count, type) at packed offset.
inline void unpack(void* buf, size_t count, const Datatype& type, size_t offset, const void* in,
                   size_t len) {
    if (!type.contiguous) return unpack_walk(buf, count, type, offset, in, len);
    if (len)
        runtime::copy_bytes(reinterpret_cast<void*>(contiguous_at(buf, type, offset)), in, len);
}
// Calls fn(ctx, address, n) for each contiguous run of memory holding the packed
// byte range [offset, offset+len) of (buf, count, type), in packed order (runs
// hold whole basic elements when the range does). buf may be null: the
// addresses are then the displacements (one-sided communication describes
// target memory this way).
void for_each_run(const void* buf, size_t count, const Datatype& type, size_t offset, size_t len,
                  void (*fn)(void* ctx, uintptr_t address, size_t n), void* ctx);
template <class F>
void for_each_run(const void* buf, size_t count, const Datatype& type, size_t offset, size_t len,
                  F&& f) {
    for_each_run(
        buf, count, type, offset, len,
        [](void* ctx, uintptr_t a, size_t n) { (*static_cast<F*>(ctx))(a, n); }, &f);
}
// Copies the first `bytes` packed bytes of (sbuf, scount, stype) into (rbuf, rcount,
// rtype) with a single copy of each byte.
void typed_copy(const void* sbuf, size_t scount, const Datatype& stype, void* rbuf, size_t rcount,
                const Datatype& rtype, size_t bytes);

// "external32" (MPI 3.1 section 13.5.2): big-endian, the standard's sizes.
// Convert count elements; MPI_ERR_CONVERSION when a value does not fit its
// external size (a long beyond 32 bits, a wide character beyond 16 bits).
int pack_external32(const void* buf, size_t count, const Datatype& type, void* out);
int unpack_external32(const void* in, void* buf, size_t count, const Datatype& type);

}  // namespace mpc::mpi
