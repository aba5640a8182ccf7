// File manipulation (MPI 3.1 section 13.2): open, close, delete, sizes,
// group, access mode, hints, atomicity and sync.
//
// Open is collective. Communicator rank 0 opens first (and creates the file,
// with O_EXCL when asked), then the group agrees on the amode, the file name
// and rank 0's outcome before the others open: a file is either open on every
// rank or on none, and every rank returns the same error class. Each rank has
// its own descriptor (its own open file description: atomic mode locks
// per rank with open file description locks). MPI_MODE_APPEND puts the file
// pointers at the end (O_APPEND would make pwrite ignore its offset).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mpi_api/alloc_kinds.hpp"
#include "mpi_api/comm_ops.hpp"
#include "mpi_api/errors.hpp"
#include "node.hpp"
#include "shared_fp.hpp"
#include "util.hpp"

namespace mpc::io {
namespace {

constexpr int kAllModes = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
                          MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL |
                          MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;

int check_amode(int amode) {
    const int rw = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0) +
                   (amode & MPI_MODE_RDWR ? 1 : 0);
    if (amode & ~kAllModes)
        return mpi::make_error(MPI_ERR_AMODE, "amode 0x%x has unknown bits", amode);
    if (rw != 1)
        return mpi::make_error(MPI_ERR_AMODE,
                               "amode needs exactly one of MPI_MODE_RDONLY, "
                               "MPI_MODE_WRONLY and MPI_MODE_RDWR");
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return mpi::make_error(MPI_ERR_AMODE,
                               "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL");
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return mpi::make_error(MPI_ERR_AMODE, "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL");
    return MPI_SUCCESS;
}

int open_flags(int amode, bool first) {
    int flags = O_CLOEXEC;
    if (amode & MPI_MODE_RDONLY)
        flags |= O_RDONLY;
    else if (amode & MPI_MODE_WRONLY)
        flags |= O_WRONLY;
    else
        flags |= O_RDWR;
    if (first && (amode & MPI_MODE_CREATE)) flags |= O_CREAT;
    if (first && (amode & MPI_MODE_EXCL)) flags |= O_EXCL;
    return flags;
}

int64_t hash_text(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return static_cast<int64_t>(h >> 1);
}

// The name's directory resolved (the file itself may not exist yet): ranks
// may name the same file differently ("a", "./a", an absolute path).
int64_t hash_name(const char* name) {
    std::string n = name;
    const size_t slash = n.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : n.substr(0, slash);
    const std::string base = slash == std::string::npos ? n : n.substr(slash + 1);
    char* real = realpath(dir.c_str(), nullptr);
    if (real) {
        n = std::string(real) + "/" + base;
        free(real);
    }
    return hash_text(n);
}

// The file an open descriptor refers to, as one number.
int64_t file_identity(int fd) {
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return 0;
    return hash_text(std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino));
}

int os_open(const char* name, int amode, bool first, int perm, int* fd) {
    do {
        *fd = ::open(name, open_flags(amode, first), perm);
    } while (*fd < 0 && errno == EINTR);
    if (*fd < 0) return io_error(errno, "opening", name);
    struct stat st;
    if (fstat(*fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(*fd);
        *fd = -1;
        return mpi::make_error(MPI_ERR_BAD_FILE, "'%s' is a directory", name);
    }
    return MPI_SUCCESS;
}

// File systems of one machine that serialise the writers of a file on its
// inode's lock (ext2-4, XFS, Btrfs, F2FS, tmpfs): writers take turns there.
bool local_file_system(int fd) {
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0) return false;
    switch (static_cast<unsigned long>(fs.f_type)) {
        case 0xEF53:      // ext2, ext3, ext4
        case 0x58465342:  // XFS
        case 0x9123683E:  // Btrfs
        case 0xF2F52010:  // F2FS
        case 0x01021994:  // tmpfs
            return true;
        default:
            return false;
    }
}

// Every rank learns the worst class among the ranks' errors (v: MIN of -class).
int group_error(Comm* c, int local_err, const char* what) {
    int64_t v = -static_cast<int64_t>(mpi::error_class_of(local_err));
    if (int e = allreduce_min(c, &v, 1)) return e;
    if (local_err) return local_err;
    if (v) return mpi::make_error(static_cast<int>(-v), "%s failed on another rank", what);
    return MPI_SUCCESS;
}

}  // namespace

int open(Comm* comm, const char* filename, int amode, const mpi::Info* info, File** out) {
    Hints hints;
    if (info) apply_hints(&hints, *info, true);
    int err = check_amode(amode);
    int fd = -1;
    if (!err && comm->rank == 0) err = os_open(filename, amode, true, hints.file_perm, &fd);
    // The group agrees on amode and name, and learns rank 0's outcome.
    const int64_t name = hash_name(filename);
    int64_t v[] = {amode, -amode, name, -name, -static_cast<int64_t>(mpi::error_class_of(err))};
    if (int e = allreduce_min(comm, v, 5)) return e;
    if (!err && (v[0] != -v[1] || v[2] != -v[3]))
        err = mpi::make_error(MPI_ERR_NOT_SAME,
                              "the ranks passed different access modes or file names");
    if (!err && v[4])
        err = mpi::make_error(static_cast<int>(-v[4]), "opening '%s' failed on rank 0", filename);
    if (err) {
        if (fd >= 0) ::close(fd);
        return err;
    }
    if (comm->rank != 0) err = os_open(filename, amode, false, hints.file_perm, &fd);
    // The private communicator and the node's record are made before the
    // last agreement, which is then also the barrier after which every member
    // has joined its node (a collective access may follow at once): three
    // synchronisations of the group per open instead of four, each a wake-up
    // of a parked rank on a busy host. Ranks whose open failed take part too,
    // and everyone undoes it when any failed.
    Comm* priv = nullptr;
    if (int e = mpi::comm_create(comm, comm->group, &priv)) {
        if (fd >= 0) ::close(fd);
        return e;
    }
    hints.serialize_writes = fd >= 0 && local_file_system(fd);
    if (info) apply_hints(&hints, *info, true);  // an explicit hint wins
    File* f = file_allocate(comm->owner);
    f->comm = priv;
    f->fd = fd;
    f->amode = amode;
    f->filename = filename;
    f->hints = hints;
    f->view = default_view();
    priv->errhandler = null_file_comm(comm->owner)->errhandler;
    priv->error_object = f->handle;
    priv->name = "file '" + f->filename + "'";
    node_join(f);
    if (!err && (amode & MPI_MODE_APPEND)) {
        struct stat st;
        const int64_t size = fstat(fd, &st) == 0 ? st.st_size : 0;
        f->fp.store(size);
        if (f->node->hosts_shared_fp()) sfp_store(f, size);
    }
    // Every rank opened, and the same file.
    const int64_t id = file_identity(fd);
    int64_t w[] = {id, -id, -static_cast<int64_t>(mpi::error_class_of(err))};
    if (int e = allreduce_min(comm, w, 3)) err = err ? err : e;
    if (!err && w[2])
        err = mpi::make_error(static_cast<int>(-w[2]), "opening the file failed on another rank");
    if (!err && w[0] != -w[1])
        err = mpi::make_error(MPI_ERR_NOT_SAME, "the ranks' file names name different files");
    if (err) {
        node_leave(f);
        mpi::comm_free(priv);
        if (fd >= 0) ::close(fd);
        file_release(f);
        return err;
    }
    sfp_server_start(f);
    *out = f;
    return MPI_SUCCESS;
}

int close(File* f) {
    // Nobody uses the node's state, nor asks for the shared pointer, after this.
    int err = barrier(f);
    sfp_server_stop(f);
    if (::close(f->fd) != 0 && !err) err = io_error(errno, "closing", f->filename);
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE) {
        // Gone for every rank once any returns.
        int e = MPI_SUCCESS;
        if (f->comm->rank == 0 && unlink(f->filename.c_str()) != 0)
            e = io_error(errno, "deleting", f->filename);
        e = group_error(f->comm, e, "deleting the file");
        if (!err) err = e;
    }
    node_leave(f);
    mpi::comm_free(f->comm);
    file_release(f);
    return err;
}

int remove(const char* filename) {
    struct stat st;
    if (stat(filename, &st) == 0 && S_ISDIR(st.st_mode))
        return mpi::make_error(MPI_ERR_BAD_FILE, "'%s' is a directory", filename);
    if (stat(filename, &st) == 0 && file_open_here(st.st_dev, st.st_ino))
        return mpi::make_error(MPI_ERR_FILE_IN_USE, "'%s' is open (MPI_File_close it first)",
                               filename);
    if (unlink(filename) != 0) return io_error(errno, "deleting", filename);
    return MPI_SUCCESS;
}

// Changing the size of a file opened read-only is refused before anything
// happens to it.
int check_resize(File* f, MPI_Offset size) {
    if (size < 0) return mpi::make_error(MPI_ERR_ARG, "negative size %lld", (long long)size);
    if (!f->writable())
        return mpi::make_error(MPI_ERR_READ_ONLY, "resizing '%s', opened MPI_MODE_RDONLY",
                               f->filename.c_str());
    return MPI_SUCCESS;
}

int set_size(File* f, MPI_Offset size) {
    int err = check_resize(f, size);
    if (int e = agree(f, size, err, "MPI_File_set_size")) return e;
    if (f->comm->rank == 0 && ftruncate(f->fd, size) != 0)
        err = io_error(errno, "resizing", f->filename);
    return group_error(f->comm, err, "resizing the file");
}

int preallocate(File* f, MPI_Offset size) {
    int err = check_resize(f, size);
    if (int e = agree(f, size, err, "MPI_File_preallocate")) return e;
    if (f->comm->rank == 0 && size > 0) {
        int r = posix_fallocate(f->fd, 0, size);
        if (r == EOPNOTSUPP || r == EINVAL) {
            // No block allocation here: at least make the file that large.
            struct stat st;
            r = fstat(f->fd, &st) == 0 && st.st_size < size && ftruncate(f->fd, size) != 0 ? errno
                                                                                           : 0;
        }
        if (r) err = io_error(r, "preallocating", f->filename);
    }
    return group_error(f->comm, err, "preallocating the file");
}

int get_size(File* f, MPI_Offset* size) {
    struct stat st;
    if (fstat(f->fd, &st) != 0) return io_error(errno, "reading the size of", f->filename);
    *size = st.st_size;
    return MPI_SUCCESS;
}

MPI_Group group(File* f) {
    return mpi::group_create(f->comm->group);
}

int amode(const File* f) {
    return f->amode;
}

int set_info(File* f, const mpi::Info* info) {
    if (info) apply_hints(&f->hints, *info, false);
    return MPI_SUCCESS;
}

MPI_Info info_used(File* f) {
    mpi::Info used = hints_info(f->hints, f->filename);
    used.set(mpi::kAllocKindsKey, mpi::alloc_kinds_of(f->comm));
    return mpi::info_create(std::move(used));
}

int set_atomicity(File* f, bool on) {
    if (int e = agree(f, on ? 1 : 0, MPI_SUCCESS, "MPI_File_set_atomicity")) return e;
    f->atomic = on;
    return MPI_SUCCESS;
}

bool atomicity(const File* f) {
    return f->atomic;
}

int sync(File* f) {
    int err = MPI_SUCCESS;
    if (f->writable() && fsync(f->fd) != 0) err = io_error(errno, "syncing", f->filename);
    return err;
}

}  // namespace mpc::io
