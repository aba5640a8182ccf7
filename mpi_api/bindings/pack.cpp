// MPI_Pack / MPI_Unpack (the native packed stream, as messages carry it) and
// their "external32" counterparts, in int and large-count (_c) forms: one
// implementation each, templated on the position type (int, MPI_Aint or
// MPI_Count), with MPI_Count element counts.
#include <climits>
#include <cstdint>
#include <cstring>

#include "mpi_api/api.hpp"

using namespace mpc::mpi;

namespace {

// Common checks of a pack or unpack of count elements of datatype.
int check_data(const void* buf, MPI_Count count, MPI_Datatype datatype, Datatype** t) {
    if (int e = check_count(count)) return e;
    if (int e = check_type(datatype, t)) return e;
    return check_buffer(buf, count, *t);
}

// Room for `need` bytes at *position in a buffer of `size` bytes.
template <class Pos>
int check_room(Pos size, const Pos* position, MPI_Count need, const char* what) {
    if (!position) return make_error(MPI_ERR_ARG, "position is NULL");
    if (size < 0 || *position < 0 || *position > size)
        return make_error(MPI_ERR_ARG, "position %lld outside a %s buffer of %lld bytes",
                          static_cast<long long>(*position), what, static_cast<long long>(size));
    if (need > static_cast<MPI_Count>(size - *position))
        return make_error(MPI_ERR_TRUNCATE,
                          "%lld bytes do not fit the %s buffer (%lld bytes at position %lld)",
                          static_cast<long long>(need), what, static_cast<long long>(size),
                          static_cast<long long>(*position));
    return MPI_SUCCESS;
}

int check_datarep(const char* datarep) {
    if (!datarep || strcmp(datarep, "external32") != 0)
        return make_error(MPI_ERR_ARG, "unsupported data representation \"%s\" (only external32)",
                          datarep ? datarep : "(null)");
    return MPI_SUCCESS;
}

template <class Pos>
int pack_native(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
                Pos outsize, Pos* position, MPI_Comm comm) {
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_data(inbuf, incount, datatype, &t)) return raise(c, e);
    const MPI_Count bytes = incount * static_cast<MPI_Count>(t->size);
    if (int e = check_room(outsize, position, bytes, "output")) return raise(c, e);
    if (bytes && !outbuf) return raise(c, make_error(MPI_ERR_BUFFER, "outbuf is NULL"));
    pack(inbuf, static_cast<size_t>(incount), *t, 0, static_cast<char*>(outbuf) + *position,
         static_cast<size_t>(bytes));
    *position += static_cast<Pos>(bytes);  // fits: check_room bounded it by outsize
    return MPI_SUCCESS;
}

template <class Pos>
int unpack_native(const void* inbuf, Pos insize, Pos* position, void* outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm) {
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_data(outbuf, outcount, datatype, &t)) return raise(c, e);
    const MPI_Count bytes = outcount * static_cast<MPI_Count>(t->size);
    if (int e = check_room(insize, position, bytes, "input")) return raise(c, e);
    if (bytes && !inbuf) return raise(c, make_error(MPI_ERR_BUFFER, "inbuf is NULL"));
    unpack(outbuf, static_cast<size_t>(outcount), *t, 0,
           static_cast<const char*>(inbuf) + *position, static_cast<size_t>(bytes));
    *position += static_cast<Pos>(bytes);
    return MPI_SUCCESS;
}

// The packed size of incount elements, when it fits `limit`.
int packed_size(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count limit,
                MPI_Count* size) {
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (int e = check_count(incount)) return raise(c, e);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(c, e);
    if (!size) return raise(c, make_error(MPI_ERR_ARG, "size is NULL"));
    MPI_Count bytes = 0;
    if (__builtin_mul_overflow(incount, static_cast<MPI_Count>(t->size), &bytes) || bytes > limit)
        return raise(
            c,
            make_error(MPI_ERR_COUNT, "%lld elements of %zu bytes do not fit the size argument%s",
                       incount, t->size,
                       limit == INT_MAX ? " (an int: MPI_Pack_size_c takes more)" : ""));
    *size = bytes;
    return MPI_SUCCESS;
}

template <class Pos>
int pack_ext(const char datarep[], const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
             void* outbuf, Pos outsize, Pos* position) {
    if (int e = check_datarep(datarep)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_data(inbuf, incount, datatype, &t)) return raise(nullptr, e);
    const MPI_Count bytes = incount * static_cast<MPI_Count>(t->external_size);
    if (int e = check_room(outsize, position, bytes, "output")) return raise(nullptr, e);
    if (bytes && !outbuf) return raise(nullptr, make_error(MPI_ERR_BUFFER, "outbuf is NULL"));
    int err = pack_external32(inbuf, static_cast<size_t>(incount), *t,
                              static_cast<char*>(outbuf) + *position);
    *position += static_cast<Pos>(bytes);
    return raise(nullptr, err);
}

template <class Pos>
int unpack_ext(const char datarep[], const void* inbuf, Pos insize, Pos* position, void* outbuf,
               MPI_Count outcount, MPI_Datatype datatype) {
    if (int e = check_datarep(datarep)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_data(outbuf, outcount, datatype, &t)) return raise(nullptr, e);
    const MPI_Count bytes = outcount * static_cast<MPI_Count>(t->external_size);
    if (int e = check_room(insize, position, bytes, "input")) return raise(nullptr, e);
    if (bytes && !inbuf) return raise(nullptr, make_error(MPI_ERR_BUFFER, "inbuf is NULL"));
    int err = unpack_external32(static_cast<const char*>(inbuf) + *position, outbuf,
                                static_cast<size_t>(outcount), *t);
    *position += static_cast<Pos>(bytes);
    return raise(nullptr, err);
}

template <class Size>
int external_size(const char datarep[], MPI_Count incount, MPI_Datatype datatype, Size* size) {
    if (int e = check_datarep(datarep)) return raise(nullptr, e);
    if (int e = check_count(incount)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!size) return raise(nullptr, make_error(MPI_ERR_ARG, "size is NULL"));
    if (__builtin_mul_overflow(incount, static_cast<MPI_Count>(t->external_size), size))
        return raise(nullptr, make_error(MPI_ERR_COUNT, "%lld elements of %zu bytes overflow",
                                         incount, t->external_size));
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
              int* position, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Pack);
    return pack_native(inbuf, incount, datatype, outbuf, outsize, position, comm);
}

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Unpack);
    return unpack_native(inbuf, insize, position, outbuf, outcount, datatype, comm);
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
    MPC_ENTER_ACTIVE(Pack_size);
    MPI_Count n = 0;
    int e = packed_size(incount, datatype, comm, INT_MAX, size ? &n : nullptr);
    if (!e) *size = static_cast<int>(n);
    return e;
}

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                       void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
    MPC_ENTER_ACTIVE(Pack_external);
    return pack_ext(datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                         MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype) {
    MPC_ENTER_ACTIVE(Unpack_external);
    return unpack_ext(datarep, inbuf, insize, position, outbuf, outcount, datatype);
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint* size) {
    MPC_ENTER_ACTIVE(Pack_external_size);
    return external_size(datarep, incount, datatype, size);
}

int PMPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
                MPI_Count outsize, MPI_Count* position, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Pack_c);
    return pack_native(inbuf, incount, datatype, outbuf, outsize, position, comm);
}

int PMPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Unpack_c);
    return unpack_native(inbuf, insize, position, outbuf, outcount, datatype, comm);
}

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size) {
    MPC_ENTER_ACTIVE(Pack_size_c);
    return packed_size(incount, datatype, comm, PTRDIFF_MAX, size);
}

int PMPI_Pack_external_c(const char datarep[], const void* inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                         MPI_Count* position) {
    MPC_ENTER_ACTIVE(Pack_external_c);
    return pack_ext(datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int PMPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize,
                           MPI_Count* position, void* outbuf, MPI_Count outcount,
                           MPI_Datatype datatype) {
    MPC_ENTER_ACTIVE(Unpack_external_c);
    return unpack_ext(datarep, inbuf, insize, position, outbuf, outcount, datatype);
}

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count* size) {
    MPC_ENTER_ACTIVE(Pack_external_size_c);
    return external_size(datarep, incount, datatype, size);
}

}  // extern "C"

MPC_WEAK(MPI_Pack)
MPC_WEAK(MPI_Unpack)
MPC_WEAK(MPI_Pack_size)
MPC_WEAK(MPI_Pack_external)
MPC_WEAK(MPI_Unpack_external)
MPC_WEAK(MPI_Pack_external_size)
MPC_WEAK(MPI_Pack_c)
MPC_WEAK(MPI_Unpack_c)
MPC_WEAK(MPI_Pack_size_c)
MPC_WEAK(MPI_Pack_external_c)
MPC_WEAK(MPI_Unpack_external_c)
MPC_WEAK(MPI_Pack_external_size_c)
