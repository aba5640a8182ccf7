// File handles, the I/O error classes of failed system calls, and file error
// handlers (MPI 3.1 sections 8.3.3 and 13.7).
//
// A file's handler lives on its private communicator, which hands the file
// handle to a user handler (Comm::error_object): raising on the file is
// raising on that communicator, and MPI_Wait on the file's requests reaches
// the same handler. Errors that belong to no file (MPI_File_open,
// MPI_File_delete, invalid handles) go to MPI_FILE_NULL's handler, which is
// per rank (a rank is a process), MPI_ERRORS_RETURN until changed, and is
// what newly opened files start with.
#include "mpi_api/errors.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "file.hpp"
#include "mpi_api/handles.hpp"

namespace mpc::io {
namespace {

mpi::HandlePool<File, mpi::HandleKind::File>& pool() {
    static auto* p = new mpi::HandlePool<File, mpi::HandleKind::File>(1);  // lives forever
    return *p;
}

struct NullFiles {
    std::mutex mutex;
    std::map<const RankState*, std::unique_ptr<Comm>> by_rank;
};
NullFiles& null_files() {
    static auto* n = new NullFiles();
    return *n;
}

}  // namespace

File* file_allocate(RankState* owner) {
    int h;
    File* f = pool().allocate(&h);
    f->handle = h;
    f->owner = owner;
    return f;
}

void file_release(File* f) {
    const int h = f->handle;
    f->comm = nullptr;
    f->node.reset();
    f->view.reset();
    f->fd = -1;
    f->amode = 0;
    f->filename.clear();
    f->hints = Hints{};
    f->fp.store(0);
    f->atomic = false;
    f->coll_seq = 0;
    f->split = nullptr;
    f->handle = MPI_FILE_NULL;
    pool().release(h);
}

File* file_lookup(MPI_File handle) {
    return pool().lookup(handle);
}

bool file_open_here(dev_t dev, ino_t ino) {
    bool found = false;
    pool().for_each_live([&](File* f) {
        struct stat st;
        if (f->fd >= 0 && fstat(f->fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
            found = true;
    });
    return found;
}

int check_file(RankState* me, MPI_File handle, File** out) {
    File* f = file_lookup(handle);
    if (!f) {
        if (handle == MPI_FILE_NULL) return mpi::make_error(MPI_ERR_FILE, "MPI_FILE_NULL passed");
        return mpi::make_error(MPI_ERR_FILE, "0x%x is not a valid file handle", handle);
    }
    if (f->owner != me)
        return mpi::make_error(MPI_ERR_FILE,
                               "file handle 0x%x belongs to MPI_COMM_WORLD rank %d, not to the "
                               "calling rank (keep file handles per rank)",
                               handle, f->owner ? f->owner->world_rank : -1);
    *out = f;
    return MPI_SUCCESS;
}

MPI_File handle_of(const File* f) {
    return f ? f->handle : MPI_FILE_NULL;
}

Comm* null_file_comm(RankState* me) {
    NullFiles& n = null_files();
    std::lock_guard<std::mutex> g(n.mutex);
    std::unique_ptr<Comm>& c = n.by_rank[me];
    if (!c) {
        c = std::make_unique<Comm>();
        c->owner = me;
        c->errhandler = MPI_ERRORS_RETURN;
        c->error_object = MPI_FILE_NULL;
        c->name = "MPI_FILE_NULL";
    }
    return c.get();
}

int raise(RankState* me, File* f, int code) {
    if (code == MPI_SUCCESS) return code;
    return mpi::raise(f ? f->comm : null_file_comm(me), code);
}

void set_errhandler(RankState* me, File* f, MPI_Errhandler h) {
    (f ? f->comm : null_file_comm(me))->errhandler = h;
}

MPI_Errhandler get_errhandler(RankState* me, File* f) {
    return (f ? f->comm : null_file_comm(me))->errhandler;
}

int errno_class(int err) {
    switch (err) {
        case ENOENT:
            return MPI_ERR_NO_SUCH_FILE;
        case EACCES:
        case EPERM:
            return MPI_ERR_ACCESS;
        case EEXIST:
            return MPI_ERR_FILE_EXISTS;
        case EROFS:
            return MPI_ERR_READ_ONLY;
        case ENOSPC:
        case EFBIG:
            return MPI_ERR_NO_SPACE;
        case EDQUOT:
            return MPI_ERR_QUOTA;
        case ENAMETOOLONG:
        case ENOTDIR:
        case EISDIR:
        case ELOOP:
        case ENXIO:
            return MPI_ERR_BAD_FILE;
        case ETXTBSY:
        case EBUSY:
            return MPI_ERR_FILE_IN_USE;
        default:
            return MPI_ERR_IO;
    }
}

int io_error(int err, const char* what, const std::string& filename) {
    return mpi::make_error(errno_class(err), "%s '%s': %s", what, filename.c_str(), strerror(err));
}

}  // namespace mpc::io
