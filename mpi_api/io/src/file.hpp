// The objects of the I/O engine: a rank's open file (File), its view (View),
// the hints it honours (Hints). Private to mpi_api/io; io.hpp is the room's face.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "io/io.hpp"
#include "mpi_api/request.hpp"

namespace mpc::io {

using mpi::Comm;
using mpi::Datatype;
using mpi::RankState;
using mpi::Request;

struct Datarep;   // datarep.hpp
struct NodeFile;  // node.hpp

// The hints of MPI 3.1 section 13.2.8 the engine acts on (others are
// accepted and ignored; info_used() reports these).
struct Hints {
    enum class Cb : uint8_t { Automatic, Enable, Disable };
    // Bytes of its file domain a node process moves per round of a two-phase
    // collective (its staging memory for other nodes' data is about this).
    uint64_t cb_buffer_size = 16u << 20;
    // File domains start on multiples of this (large aligned system calls).
    uint64_t cb_block_size = 1u << 20;
    int cb_nodes = 0;  // node processes that aggregate (0: all of them)
    Cb cb_read = Cb::Automatic, cb_write = Cb::Automatic;
    // Independent reads also read holes of up to this size between the
    // pieces they want, into a discard buffer, to save system calls.
    uint64_t ind_rd_buffer_size = 64u << 10;
    int file_perm = 0666;  // of a created file, before the umask
    // Writers take turns on the file (mover.hpp): on local file systems,
    // found at open; hint mpc_serialize_writes.
    bool serialize_writes = false;
    std::string access_style;
};

// Parses the hints of info over h (unknown keys and bad values are ignored,
// as the standard asks); at_open: also those only meaningful at creation.
void apply_hints(Hints* h, const mpi::Info& info, bool at_open);
// The hints in use, as MPI_File_get_info reports them.
mpi::Info hints_info(const Hints& h, const std::string& filename);

// A file view (MPI 3.1 section 13.3): displacement, etype and filetype in the
// file's data representation. Immutable once built; operations keep a
// reference on the view they started with.
struct View {
    MPI_Offset disp = 0;
    Datatype* etype = nullptr;  // as the user gave them (a reference each)
    Datatype* filetype = nullptr;
    // In the file representation: the user's types with their displacements
    // scaled to the representation's sizes (portable types, 13.5.1), or the
    // same types (a reference each either way).
    Datatype* file_etype = nullptr;
    Datatype* file_filetype = nullptr;
    std::string datarep = "native";
    const Datarep* rep = nullptr;
    uint64_t esize = 1;      // bytes of an etype in the file
    uint64_t tsize = 1;      // data bytes of one filetype instance in the file
    MPI_Aint textent = 1;    // extent of the filetype in the file
    bool contiguous = true;  // instances tile: stream byte s is at disp + true_lb + s
    MPI_Aint true_lb = 0;

    View() = default;
    View(const View&) = delete;
    View& operator=(const View&) = delete;
    ~View();

    // Absolute file offset of stream byte s.
    uint64_t file_offset(uint64_t s) const;
    // Stream bytes whose file offset is below off (a prefix of the stream).
    uint64_t stream_before(uint64_t off) const;
};
using ViewRef = std::shared_ptr<const View>;

// The view every file starts with: displacement 0, etype and filetype
// MPI_BYTE, "native".
ViewRef default_view();

struct File {
    int handle = MPI_FILE_NULL;
    RankState* owner = nullptr;
    // A private communicator over the file's group: its traffic never meets
    // the user's, and it carries the file's error handler (Comm::error_object).
    Comm* comm = nullptr;
    std::shared_ptr<NodeFile> node;
    int member = 0;  // this rank's index among the node's members
    int fd = -1;
    int amode = 0;
    std::string filename;
    Hints hints;
    ViewRef view;
    std::atomic<int64_t> fp{0};  // individual file pointer, in etypes of the view
    bool atomic = false;
    uint64_t coll_seq = 0;             // collective data accesses started
    std::atomic<uint32_t> sfp_tag{0};  // shared pointer requests sent
    // The split collective in progress, if any (MPI allows one per file).
    Request* split = nullptr;
    Dir split_dir = Dir::Read;
    Pos split_pos = Pos::Explicit;
    bool split_explicit = false;
    const void* split_buf = nullptr;

    bool readable() const { return (amode & MPI_MODE_WRONLY) == 0; }
    bool writable() const { return (amode & MPI_MODE_RDONLY) == 0; }
    bool sequential() const { return (amode & MPI_MODE_SEQUENTIAL) != 0; }
};

// Allocates a file handle and object for owner.
File* file_allocate(RankState* owner);
void file_release(File* f);
File* file_lookup(MPI_File handle);
// Whether a rank of this node process has the file (device, inode) open.
bool file_open_here(dev_t dev, ino_t ino);

// ---- Errors (errors.cpp) -----------------------------------------------------------

// The error class of a failed system call's errno.
int errno_class(int err);
// A detailed code for a failed system call: "<what> <file>: <strerror>".
int io_error(int err, const char* what, const std::string& filename);
// The pseudo communicator that carries the caller's MPI_FILE_NULL handler.
Comm* null_file_comm(RankState* me);

}  // namespace mpc::io
