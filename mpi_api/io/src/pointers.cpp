// File pointers (MPI 3.1 sections 13.4.3 and 13.4.4): seeking and reading
// the individual and shared pointers, and byte offsets of view positions.
#include <sys/stat.h>

#include <cerrno>

#include "mpi_api/errors.hpp"
#include "node.hpp"
#include "shared_fp.hpp"
#include "util.hpp"

namespace mpc::io {
namespace {

// The view position (etypes) of the end of the file, rounded up.
int end_position(File* f, int64_t* out) {
    struct stat st;
    if (fstat(f->fd, &st) != 0) return io_error(errno, "reading the size of", f->filename);
    const View& v = *f->view;
    const uint64_t s = v.stream_before(static_cast<uint64_t>(st.st_size));
    *out = static_cast<int64_t>((s + v.esize - 1) / v.esize);
    return MPI_SUCCESS;
}

int new_position(File* f, int64_t current, MPI_Offset offset, int whence, int64_t* out) {
    int64_t base = 0;
    switch (whence) {
        case MPI_SEEK_SET:
            break;
        case MPI_SEEK_CUR:
            base = current;
            break;
        case MPI_SEEK_END:
            if (int e = end_position(f, &base)) return e;
            break;
        default:
            return mpi::make_error(MPI_ERR_ARG, "whence %d is not MPI_SEEK_SET, _CUR or _END",
                                   whence);
    }
    if (__builtin_add_overflow(base, offset, out) || *out < 0)
        return mpi::make_error(MPI_ERR_ARG, "seeking to a negative position");
    return MPI_SUCCESS;
}

int check_individual(File* f) {
    if (f->sequential())
        return mpi::make_error(MPI_ERR_UNSUPPORTED_OPERATION,
                               "'%s' was opened MPI_MODE_SEQUENTIAL: it has no individual file "
                               "pointer",
                               f->filename.c_str());
    return MPI_SUCCESS;
}

}  // namespace

int seek(File* f, MPI_Offset offset, int whence) {
    if (int e = check_individual(f)) return e;
    int64_t pos = 0;
    if (int e = new_position(f, f->fp.load(), offset, whence, &pos)) return e;
    f->fp.store(pos);
    return MPI_SUCCESS;
}

int position(File* f, MPI_Offset* offset) {
    if (int e = check_individual(f)) return e;
    *offset = f->fp.load();
    return MPI_SUCCESS;
}

int byte_offset(File* f, MPI_Offset offset, MPI_Offset* disp) {
    if (offset < 0) return mpi::make_error(MPI_ERR_ARG, "negative offset %lld", (long long)offset);
    const View& v = *f->view;
    *disp = static_cast<MPI_Offset>(v.file_offset(static_cast<uint64_t>(offset) * v.esize));
    return MPI_SUCCESS;
}

// Collective: the group agrees on the arguments, rank 0 (which holds the
// pointer, node 0 being its node) moves it, and a second agreement both
// spreads its outcome and keeps everyone from using the pointer before.
int seek_shared(File* f, MPI_Offset offset, int whence) {
    int64_t v[] = {offset, -offset, whence, -whence};
    if (int e = allreduce_min(f, v, 4)) return e;
    if (v[0] != -v[1] || v[2] != -v[3])
        return mpi::make_error(MPI_ERR_NOT_SAME,
                               "MPI_File_seek_shared: the ranks passed different offsets or "
                               "whence values");
    int err = MPI_SUCCESS;
    if (f->comm->rank == 0) {
        int64_t pos = 0;
        err = new_position(f, sfp_load(f), offset, whence, &pos);
        if (!err) sfp_store(f, pos);
    }
    int64_t cls = -static_cast<int64_t>(mpi::error_class_of(err));
    if (int e = allreduce_min(f, &cls, 1)) return e;
    if (err) return err;
    if (cls)
        return mpi::make_error(static_cast<int>(-cls), "MPI_File_seek_shared failed on rank 0");
    return MPI_SUCCESS;
}

int position_shared(File* f, MPI_Offset* offset) {
    *offset = sfp_load(f);
    return MPI_SUCCESS;
}

}  // namespace mpc::io
