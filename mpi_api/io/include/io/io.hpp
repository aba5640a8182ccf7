// mpi_api/io: the MPI-IO engine (MPI 3.1 chapter 13), what the C bindings call.
//
// A file is opened collectively over a communicator; each rank gets its own
// File (its view, its individual file pointer, its descriptor), the ranks of a
// node process share one NodeFile (the node's part of the file: its members,
// the shared file pointer when the node hosts it, the collective operations
// in flight). Independent access goes straight to the file (pread/pwrite, and
// their vector forms over a view's runs). Collective access is two-phase with
// the node process as the aggregator: the ranks of a node hand their pieces
// to the node by address (no copy, no message), node processes exchange what
// belongs to each other's file domains over the network, and the node writes
// or reads its domain in large vector system calls split among its ranks.
// docs/io.md tells the design in full.
//
// Functions return MPI_SUCCESS or a detailed MPI error code; the bindings
// raise it through the file's error handler (raise()). Arguments the bindings
// check (handles, counts, committed types, buffers) are not checked again.
// This room never calls the bindings and never blocks a rank except where the
// MPI function it serves blocks.
#pragma once

#include <cstdint>

#include "mpi.h"
#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/info.hpp"
#include "mpi_api/rank.hpp"

namespace mpc::io {

struct File;

// ---- Handles and errors ---------------------------------------------------------

// The calling rank's live file behind handle, or an MPI_ERR_FILE code.
int check_file(mpi::RankState* me, MPI_File handle, File** out);
MPI_File handle_of(const File* f);
// Raises code through f's error handler (f null: the caller's MPI_FILE_NULL
// handler, which errors of MPI_File_open and MPI_File_delete and of invalid
// file handles go to). Returns code.
int raise(mpi::RankState* me, File* f, int code);
// MPI_File_set_errhandler / get_errhandler (f null: MPI_FILE_NULL).
void set_errhandler(mpi::RankState* me, File* f, MPI_Errhandler h);
MPI_Errhandler get_errhandler(mpi::RankState* me, File* f);

// ---- File manipulation (13.2) -----------------------------------------------------

// comm: an intracommunicator. info may be null.
int open(mpi::Comm* comm, const char* filename, int amode, const mpi::Info* info, File** out);
// Frees f (collective).
int close(File* f);
int remove(const char* filename);  // MPI_File_delete
int set_size(File* f, MPI_Offset size);
int preallocate(File* f, MPI_Offset size);
int get_size(File* f, MPI_Offset* size);
MPI_Group group(File* f);
int amode(const File* f);
int set_info(File* f, const mpi::Info* info);
MPI_Info info_used(File* f);

// ---- Views (13.3) -----------------------------------------------------------------

int set_view(File* f, MPI_Offset disp, mpi::Datatype* etype, mpi::Datatype* filetype,
             const char* datarep, const mpi::Info* info);
// New handles for derived etype and filetype (the caller frees them).
void get_view(File* f, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
              char* datarep);
int type_extent(File* f, mpi::Datatype* type, MPI_Aint* extent);

// ---- Data access (13.4) -------------------------------------------------------------

enum class Dir : uint8_t { Read, Write };
// Explicit offsets, the individual file pointer, the shared file pointer
// (noncollective), the shared file pointer in rank order (collective).
enum class Pos : uint8_t { Explicit, Individual, Shared, Ordered };

struct Access {
    Dir dir = Dir::Read;
    Pos pos = Pos::Explicit;
    bool collective = false;
    MPI_Offset offset = 0;  // Pos::Explicit, in etypes of the view
    void* buf = nullptr;
    int count = 0;
    mpi::Datatype* type = nullptr;
};

// Blocking access; fills status (may be MPI_STATUS_IGNORE).
int access(File* f, const Access& a, MPI_Status* status);
// Nonblocking access behind a new request.
int access_start(File* f, const Access& a, MPI_Request* request);
// Split collectives: begin starts, end waits (one at a time per file).
int split_begin(File* f, const Access& a);
int split_end(File* f, const void* buf, Dir dir, Pos pos, bool explicit_offset, MPI_Status* status);

// ---- File pointers -------------------------------------------------------------------

int seek(File* f, MPI_Offset offset, int whence);
int position(File* f, MPI_Offset* offset);
int byte_offset(File* f, MPI_Offset offset, MPI_Offset* disp);
int seek_shared(File* f, MPI_Offset offset, int whence);
int position_shared(File* f, MPI_Offset* offset);

// ---- Consistency (13.6) -----------------------------------------------------------

int set_atomicity(File* f, bool on);
bool atomicity(const File* f);
int sync(File* f);

// ---- Data representations (13.5.3) --------------------------------------------------

int register_datarep(mpi::RankState* me, const char* name, MPI_Datarep_conversion_function* read,
                     MPI_Datarep_conversion_function* write, MPI_Datarep_extent_function* extent,
                     void* extra_state);

}  // namespace mpc::io
