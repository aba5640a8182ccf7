// MPI_Pack / MPI_Unpack (the native packed stream, as messages carry it) and
// their "external32" counterparts.
#include <climits>
#include <cstring>

#include "mpi_api/api.hpp"

using namespace mpc::mpi;

namespace {

// Common checks of a pack or unpack of count elements of datatype.
int check_data(const void* buf, int count, MPI_Datatype datatype, Datatype** t) {
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

}  // namespace

extern "C" {

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
              int* position, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Pack);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_data(inbuf, incount, datatype, &t)) return raise(c, e);
    const MPI_Count bytes = static_cast<MPI_Count>(incount) * static_cast<MPI_Count>(t->size);
    if (int e = check_room(outsize, position, bytes, "output")) return raise(c, e);
    if (bytes && !outbuf) return raise(c, make_error(MPI_ERR_BUFFER, "outbuf is NULL"));
    pack(inbuf, static_cast<size_t>(incount), *t, 0, static_cast<char*>(outbuf) + *position,
         static_cast<size_t>(bytes));
    *position += static_cast<int>(bytes);
    return MPI_SUCCESS;
}

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm) {
    MPC_ENTER_ACTIVE(Unpack);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_data(outbuf, outcount, datatype, &t)) return raise(c, e);
    const MPI_Count bytes = static_cast<MPI_Count>(outcount) * static_cast<MPI_Count>(t->size);
    if (int e = check_room(insize, position, bytes, "input")) return raise(c, e);
    if (bytes && !inbuf) return raise(c, make_error(MPI_ERR_BUFFER, "inbuf is NULL"));
    unpack(outbuf, static_cast<size_t>(outcount), *t, 0,
           static_cast<const char*>(inbuf) + *position, static_cast<size_t>(bytes));
    *position += static_cast<int>(bytes);
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
    MPC_ENTER_ACTIVE(Pack_size);
    Comm* c;
    if (int e = check_comm(comm, &c)) return raise(nullptr, e);
    if (int e = check_count(incount)) return raise(c, e);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(c, e);
    if (!size) return raise(c, make_error(MPI_ERR_ARG, "size is NULL"));
    MPI_Count bytes = 0;
    if (__builtin_mul_overflow(static_cast<MPI_Count>(incount), static_cast<MPI_Count>(t->size),
                               &bytes) ||
        bytes > INT_MAX)
        return raise(c, make_error(MPI_ERR_COUNT, "%d elements of %zu bytes do not fit an int",
                                   incount, t->size));
    *size = static_cast<int>(bytes);
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                       void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
    MPC_ENTER_ACTIVE(Pack_external);
    if (int e = check_datarep(datarep)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_data(inbuf, incount, datatype, &t)) return raise(nullptr, e);
    const MPI_Count bytes =
        static_cast<MPI_Count>(incount) * static_cast<MPI_Count>(t->external_size);
    if (int e = check_room(outsize, position, bytes, "output")) return raise(nullptr, e);
    if (bytes && !outbuf) return raise(nullptr, make_error(MPI_ERR_BUFFER, "outbuf is NULL"));
    int err = pack_external32(inbuf, static_cast<size_t>(incount), *t,
                              static_cast<char*>(outbuf) + *position);
    *position += static_cast<MPI_Aint>(bytes);
    return raise(nullptr, err);
}

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                         MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype) {
    MPC_ENTER_ACTIVE(Unpack_external);
    if (int e = check_datarep(datarep)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_data(outbuf, outcount, datatype, &t)) return raise(nullptr, e);
    const MPI_Count bytes =
        static_cast<MPI_Count>(outcount) * static_cast<MPI_Count>(t->external_size);
    if (int e = check_room(insize, position, bytes, "input")) return raise(nullptr, e);
    if (bytes && !inbuf) return raise(nullptr, make_error(MPI_ERR_BUFFER, "inbuf is NULL"));
    int err = unpack_external32(static_cast<const char*>(inbuf) + *position, outbuf,
                                static_cast<size_t>(outcount), *t);
    *position += static_cast<MPI_Aint>(bytes);
    return raise(nullptr, err);
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint* size) {
    MPC_ENTER_ACTIVE(Pack_external_size);
    if (int e = check_datarep(datarep)) return raise(nullptr, e);
    if (int e = check_count(incount)) return raise(nullptr, e);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return raise(nullptr, e);
    if (!size) return raise(nullptr, make_error(MPI_ERR_ARG, "size is NULL"));
    if (__builtin_mul_overflow(static_cast<MPI_Aint>(incount),
                               static_cast<MPI_Aint>(t->external_size), size))
        return raise(nullptr,
                     make_error(MPI_ERR_COUNT, "%d elements of %zu bytes overflow MPI_Aint",
                                incount, t->external_size));
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_Pack)
MPC_WEAK(MPI_Unpack)
MPC_WEAK(MPI_Pack_size)
MPC_WEAK(MPI_Pack_external)
MPC_WEAK(MPI_Unpack_external)
MPC_WEAK(MPI_Pack_external_size)
