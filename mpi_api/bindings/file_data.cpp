// Data access on files (MPI 3.1 section 13.4): every read and write, in all
// positionings (explicit offset, individual and shared file pointers, ordered),
// blocking, nonblocking, collective and split collective, with their
// large-count (_c) forms (MPI 4.0): more elements than an int counts are one
// element of a contiguous_c type for the engine (coll_large.hpp). Argument
// checks, then the I/O engine (mpi_api/io); errors go to the file's handler.
#include "coll_large.hpp"
#include "io/io.hpp"
#include "mpi_api/api.hpp"

using namespace mpc::mpi;
namespace io = mpc::io;

namespace {

enum class Mode { Blocking, Nonblocking, Begin };

int data_args(const void* buf, int count, MPI_Datatype datatype, Datatype** t) {
    if (int e = check_count(count)) return e;
    if (int e = check_type(datatype, t)) return e;
    return check_buffer(buf, count, *t);
}

int data(RankState* me, MPI_File fh, io::Dir dir, io::Pos pos, bool collective, MPI_Offset offset,
         const void* buf, MPI_Count count_c, MPI_Datatype datatype_c, Mode mode, MPI_Status* status,
         MPI_Request* request) {
    io::File* f;
    if (int e = io::check_file(me, fh, &f)) return io::raise(me, nullptr, e);
    // An int count as it is, or one element of a type of count_c elements.
    const large::Described d(count_c, datatype_c);
    if (d.error) return io::raise(me, f, d.error);
    const int count = d.count;
    const MPI_Datatype datatype = d.type;
    io::Access a;
    a.dir = dir;
    a.pos = pos;
    a.collective = collective;
    a.offset = offset;
    a.buf = const_cast<void*>(buf);
    a.count = count;
    if (int e = data_args(buf, count, datatype, &a.type)) return io::raise(me, f, e);
    switch (mode) {
        case Mode::Blocking:
            return io::raise(me, f, io::access(f, a, status));
        case Mode::Nonblocking:
            if (!request) return io::raise(me, f, make_error(MPI_ERR_REQUEST, "request is NULL"));
            return io::raise(me, f, io::access_start(f, a, request));
        default:
            return io::raise(me, f, io::split_begin(f, a));
    }
}

int end(RankState* me, MPI_File fh, const void* buf, io::Dir dir, io::Pos pos, bool explicit_offset,
        MPI_Status* status) {
    io::File* f;
    if (int e = io::check_file(me, fh, &f)) return io::raise(me, nullptr, e);
    return io::raise(me, f, io::split_end(f, buf, dir, pos, explicit_offset, status));
}

constexpr io::Dir R = io::Dir::Read, W = io::Dir::Write;
constexpr io::Pos At = io::Pos::Explicit, Ind = io::Pos::Individual, Sh = io::Pos::Shared,
                  Ord = io::Pos::Ordered;
constexpr Mode B = Mode::Blocking, NB = Mode::Nonblocking, Begin = Mode::Begin;

}  // namespace

// One entry point per line: Name, then the engine's description of it.
#define MPC_FILE_AT(Name, dir, coll, mode, ...)                                                \
    int PMPI_File_##Name(MPI_File fh, MPI_Offset offset, __VA_ARGS__) {                        \
        MPC_ENTER_ACTIVE(File_##Name);                                                         \
        return data(me, fh, dir, At, coll, offset, buf, count, datatype, mode, MPC_STATUS_ARG, \
                    MPC_REQUEST_ARG);                                                          \
    }
#define MPC_FILE_PTR(Name, dir, pos, coll, mode, ...)                                      \
    int PMPI_File_##Name(MPI_File fh, __VA_ARGS__) {                                       \
        MPC_ENTER_ACTIVE(File_##Name);                                                     \
        return data(me, fh, dir, pos, coll, 0, buf, count, datatype, mode, MPC_STATUS_ARG, \
                    MPC_REQUEST_ARG);                                                      \
    }
#define MPC_FILE_END(Name, dir, pos, explicit_offset, ...)               \
    int PMPI_File_##Name(MPI_File fh, __VA_ARGS__, MPI_Status* status) { \
        MPC_ENTER_ACTIVE(File_##Name);                                   \
        return end(me, fh, buf, dir, pos, explicit_offset, status);      \
    }

extern "C" {

#define MPC_STATUS_ARG status
#define MPC_REQUEST_ARG nullptr
MPC_FILE_AT(read_at, R, false, B, void* buf, int count, MPI_Datatype datatype, MPI_Status* status)
MPC_FILE_AT(read_at_all, R, true, B, void* buf, int count, MPI_Datatype datatype,
            MPI_Status* status)
MPC_FILE_AT(write_at, W, false, B, const void* buf, int count, MPI_Datatype datatype,
            MPI_Status* status)
MPC_FILE_AT(write_at_all, W, true, B, const void* buf, int count, MPI_Datatype datatype,
            MPI_Status* status)
MPC_FILE_PTR(read, R, Ind, false, B, void* buf, int count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(read_all, R, Ind, true, B, void* buf, int count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(write, W, Ind, false, B, const void* buf, int count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(write_all, W, Ind, true, B, const void* buf, int count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(read_shared, R, Sh, false, B, void* buf, int count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(write_shared, W, Sh, false, B, const void* buf, int count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(read_ordered, R, Ord, true, B, void* buf, int count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(write_ordered, W, Ord, true, B, const void* buf, int count, MPI_Datatype datatype,
             MPI_Status* status)
// The large-count forms.
MPC_FILE_AT(read_at_c, R, false, B, void* buf, MPI_Count count, MPI_Datatype datatype,
            MPI_Status* status)
MPC_FILE_AT(read_at_all_c, R, true, B, void* buf, MPI_Count count, MPI_Datatype datatype,
            MPI_Status* status)
MPC_FILE_AT(write_at_c, W, false, B, const void* buf, MPI_Count count, MPI_Datatype datatype,
            MPI_Status* status)
MPC_FILE_AT(write_at_all_c, W, true, B, const void* buf, MPI_Count count, MPI_Datatype datatype,
            MPI_Status* status)
MPC_FILE_PTR(read_c, R, Ind, false, B, void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(read_all_c, R, Ind, true, B, void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(write_c, W, Ind, false, B, const void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(write_all_c, W, Ind, true, B, const void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(read_shared_c, R, Sh, false, B, void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(write_shared_c, W, Sh, false, B, const void* buf, MPI_Count count,
             MPI_Datatype datatype, MPI_Status* status)
MPC_FILE_PTR(read_ordered_c, R, Ord, true, B, void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Status* status)
MPC_FILE_PTR(write_ordered_c, W, Ord, true, B, const void* buf, MPI_Count count,
             MPI_Datatype datatype, MPI_Status* status)
#undef MPC_STATUS_ARG
#undef MPC_REQUEST_ARG

#define MPC_STATUS_ARG nullptr
#define MPC_REQUEST_ARG request
MPC_FILE_AT(iread_at, R, false, NB, void* buf, int count, MPI_Datatype datatype,
            MPI_Request* request)
MPC_FILE_AT(iwrite_at, W, false, NB, const void* buf, int count, MPI_Datatype datatype,
            MPI_Request* request)
MPC_FILE_AT(iread_at_all, R, true, NB, void* buf, int count, MPI_Datatype datatype,
            MPI_Request* request)
MPC_FILE_AT(iwrite_at_all, W, true, NB, const void* buf, int count, MPI_Datatype datatype,
            MPI_Request* request)
MPC_FILE_PTR(iread, R, Ind, false, NB, void* buf, int count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iwrite, W, Ind, false, NB, const void* buf, int count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iread_all, R, Ind, true, NB, void* buf, int count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iwrite_all, W, Ind, true, NB, const void* buf, int count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iread_shared, R, Sh, false, NB, void* buf, int count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iwrite_shared, W, Sh, false, NB, const void* buf, int count, MPI_Datatype datatype,
             MPI_Request* request)
// The large-count forms.
MPC_FILE_AT(iread_at_c, R, false, NB, void* buf, MPI_Count count, MPI_Datatype datatype,
            MPI_Request* request)
MPC_FILE_AT(iwrite_at_c, W, false, NB, const void* buf, MPI_Count count, MPI_Datatype datatype,
            MPI_Request* request)
MPC_FILE_AT(iread_at_all_c, R, true, NB, void* buf, MPI_Count count, MPI_Datatype datatype,
            MPI_Request* request)
MPC_FILE_AT(iwrite_at_all_c, W, true, NB, const void* buf, MPI_Count count, MPI_Datatype datatype,
            MPI_Request* request)
MPC_FILE_PTR(iread_c, R, Ind, false, NB, void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iwrite_c, W, Ind, false, NB, const void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iread_all_c, R, Ind, true, NB, void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iwrite_all_c, W, Ind, true, NB, const void* buf, MPI_Count count,
             MPI_Datatype datatype, MPI_Request* request)
MPC_FILE_PTR(iread_shared_c, R, Sh, false, NB, void* buf, MPI_Count count, MPI_Datatype datatype,
             MPI_Request* request)
MPC_FILE_PTR(iwrite_shared_c, W, Sh, false, NB, const void* buf, MPI_Count count,
             MPI_Datatype datatype, MPI_Request* request)
#undef MPC_STATUS_ARG
#undef MPC_REQUEST_ARG

#define MPC_STATUS_ARG nullptr
#define MPC_REQUEST_ARG nullptr
MPC_FILE_AT(read_at_all_begin, R, true, Begin, void* buf, int count, MPI_Datatype datatype)
MPC_FILE_AT(write_at_all_begin, W, true, Begin, const void* buf, int count, MPI_Datatype datatype)
MPC_FILE_PTR(read_all_begin, R, Ind, true, Begin, void* buf, int count, MPI_Datatype datatype)
MPC_FILE_PTR(write_all_begin, W, Ind, true, Begin, const void* buf, int count,
             MPI_Datatype datatype)
MPC_FILE_PTR(read_ordered_begin, R, Ord, true, Begin, void* buf, int count, MPI_Datatype datatype)
MPC_FILE_PTR(write_ordered_begin, W, Ord, true, Begin, const void* buf, int count,
             MPI_Datatype datatype)
// The large-count forms.
MPC_FILE_AT(read_at_all_begin_c, R, true, Begin, void* buf, MPI_Count count, MPI_Datatype datatype)
MPC_FILE_AT(write_at_all_begin_c, W, true, Begin, const void* buf, MPI_Count count,
            MPI_Datatype datatype)
MPC_FILE_PTR(read_all_begin_c, R, Ind, true, Begin, void* buf, MPI_Count count,
             MPI_Datatype datatype)
MPC_FILE_PTR(write_all_begin_c, W, Ind, true, Begin, const void* buf, MPI_Count count,
             MPI_Datatype datatype)
MPC_FILE_PTR(read_ordered_begin_c, R, Ord, true, Begin, void* buf, MPI_Count count,
             MPI_Datatype datatype)
MPC_FILE_PTR(write_ordered_begin_c, W, Ord, true, Begin, const void* buf, MPI_Count count,
             MPI_Datatype datatype)
#undef MPC_STATUS_ARG
#undef MPC_REQUEST_ARG

MPC_FILE_END(read_at_all_end, R, At, true, void* buf)
MPC_FILE_END(write_at_all_end, W, At, true, const void* buf)
MPC_FILE_END(read_all_end, R, Ind, false, void* buf)
MPC_FILE_END(write_all_end, W, Ind, false, const void* buf)
MPC_FILE_END(read_ordered_end, R, Ord, false, void* buf)
MPC_FILE_END(write_ordered_end, W, Ord, false, const void* buf)

}  // extern "C"

MPC_WEAK(MPI_File_read_at)
MPC_WEAK(MPI_File_read_at_all)
MPC_WEAK(MPI_File_write_at)
MPC_WEAK(MPI_File_write_at_all)
MPC_WEAK(MPI_File_iread_at)
MPC_WEAK(MPI_File_iwrite_at)
MPC_WEAK(MPI_File_iread_at_all)
MPC_WEAK(MPI_File_iwrite_at_all)
MPC_WEAK(MPI_File_read)
MPC_WEAK(MPI_File_read_all)
MPC_WEAK(MPI_File_write)
MPC_WEAK(MPI_File_write_all)
MPC_WEAK(MPI_File_iread)
MPC_WEAK(MPI_File_iwrite)
MPC_WEAK(MPI_File_iread_all)
MPC_WEAK(MPI_File_iwrite_all)
MPC_WEAK(MPI_File_read_shared)
MPC_WEAK(MPI_File_write_shared)
MPC_WEAK(MPI_File_iread_shared)
MPC_WEAK(MPI_File_iwrite_shared)
MPC_WEAK(MPI_File_read_ordered)
MPC_WEAK(MPI_File_write_ordered)
MPC_WEAK(MPI_File_read_at_all_begin)
MPC_WEAK(MPI_File_read_at_all_end)
MPC_WEAK(MPI_File_write_at_all_begin)
MPC_WEAK(MPI_File_write_at_all_end)
MPC_WEAK(MPI_File_read_all_begin)
MPC_WEAK(MPI_File_read_all_end)
MPC_WEAK(MPI_File_write_all_begin)
MPC_WEAK(MPI_File_write_all_end)
MPC_WEAK(MPI_File_read_ordered_begin)
MPC_WEAK(MPI_File_read_ordered_end)
MPC_WEAK(MPI_File_write_ordered_begin)
MPC_WEAK(MPI_File_write_ordered_end)
MPC_WEAK(MPI_File_read_at_c)
MPC_WEAK(MPI_File_read_at_all_c)
MPC_WEAK(MPI_File_write_at_c)
MPC_WEAK(MPI_File_write_at_all_c)
MPC_WEAK(MPI_File_read_c)
MPC_WEAK(MPI_File_read_all_c)
MPC_WEAK(MPI_File_write_c)
MPC_WEAK(MPI_File_write_all_c)
MPC_WEAK(MPI_File_read_shared_c)
MPC_WEAK(MPI_File_write_shared_c)
MPC_WEAK(MPI_File_read_ordered_c)
MPC_WEAK(MPI_File_write_ordered_c)
MPC_WEAK(MPI_File_iread_at_c)
MPC_WEAK(MPI_File_iwrite_at_c)
MPC_WEAK(MPI_File_iread_at_all_c)
MPC_WEAK(MPI_File_iwrite_at_all_c)
MPC_WEAK(MPI_File_iread_c)
MPC_WEAK(MPI_File_iwrite_c)
MPC_WEAK(MPI_File_iread_all_c)
MPC_WEAK(MPI_File_iwrite_all_c)
MPC_WEAK(MPI_File_iread_shared_c)
MPC_WEAK(MPI_File_iwrite_shared_c)
MPC_WEAK(MPI_File_read_at_all_begin_c)
MPC_WEAK(MPI_File_write_at_all_begin_c)
MPC_WEAK(MPI_File_read_all_begin_c)
MPC_WEAK(MPI_File_write_all_begin_c)
MPC_WEAK(MPI_File_read_ordered_begin_c)
MPC_WEAK(MPI_File_write_ordered_begin_c)
