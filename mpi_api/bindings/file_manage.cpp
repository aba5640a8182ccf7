// File manipulation, views, file pointers, consistency and data
// representations (MPI 3.1 sections 13.2, 13.3, 13.4.3-4, 13.5.3, 13.6):
// argument checks, then the I/O engine (mpi_api/io). Errors go to the file's
// error handler, or to MPI_FILE_NULL's for MPI_File_open, MPI_File_delete and
// invalid file handles.
#include <cstring>

#include "io/io.hpp"
#include "object_checks.hpp"

using namespace mpc::mpi;
namespace io = mpc::io;

namespace {

// Looks up fh; on failure raises on MPI_FILE_NULL's handler and returns false.
#define MPC_FILE(fh, f) \
    io::File* f;        \
    if (int e_ = io::check_file(me, fh, &f)) return io::raise(me, nullptr, e_)

int check_name(const char* name) {
    if (!name) return make_error(MPI_ERR_BAD_FILE, "the file name is NULL");
    if (!*name) return make_error(MPI_ERR_BAD_FILE, "the file name is empty");
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
    MPC_ENTER_ACTIVE(File_open);
    Comm* c;
    if (int e = check_comm(comm, &c)) return io::raise(me, nullptr, e);
    if (int e = check_intra(c)) return io::raise(me, nullptr, e);
    Info* i;
    if (int e = check_info_arg(info, &i)) return io::raise(me, nullptr, e);
    if (int e = check_not_null(fh, "fh")) return io::raise(me, nullptr, e);
    if (int e = check_name(filename)) return io::raise(me, nullptr, e);
    *fh = MPI_FILE_NULL;
    io::File* f = nullptr;
    if (int e = io::open(c, filename, amode, i, &f)) return io::raise(me, nullptr, e);
    *fh = io::handle_of(f);
    return MPI_SUCCESS;
}

int PMPI_File_close(MPI_File* fh) {
    MPC_ENTER_ACTIVE(File_close);
    if (!fh) return io::raise(me, nullptr, make_error(MPI_ERR_ARG, "fh is NULL"));
    MPC_FILE(*fh, f);
    // The file is gone whatever happens: errors go to MPI_FILE_NULL's handler.
    const int e = io::close(f);
    *fh = MPI_FILE_NULL;
    return io::raise(me, nullptr, e);
}

int PMPI_File_delete(const char* filename, MPI_Info info) {
    MPC_ENTER_ACTIVE(File_delete);
    Info* i;
    if (int e = check_info_arg(info, &i)) return io::raise(me, nullptr, e);
    if (int e = check_name(filename)) return io::raise(me, nullptr, e);
    return io::raise(me, nullptr, io::remove(filename));
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
    MPC_ENTER_ACTIVE(File_set_size);
    MPC_FILE(fh, f);
    return io::raise(me, f, io::set_size(f, size));
}

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
    MPC_ENTER_ACTIVE(File_preallocate);
    MPC_FILE(fh, f);
    return io::raise(me, f, io::preallocate(f, size));
}

int PMPI_File_get_size(MPI_File fh, MPI_Offset* size) {
    MPC_ENTER_ACTIVE(File_get_size);
    MPC_FILE(fh, f);
    if (int e = check_not_null(size, "size")) return io::raise(me, f, e);
    return io::raise(me, f, io::get_size(f, size));
}

int PMPI_File_get_group(MPI_File fh, MPI_Group* group) {
    MPC_ENTER_ACTIVE(File_get_group);
    MPC_FILE(fh, f);
    if (int e = check_not_null(group, "group")) return io::raise(me, f, e);
    *group = io::group(f);
    return MPI_SUCCESS;
}

int PMPI_File_get_amode(MPI_File fh, int* amode) {
    MPC_ENTER_ACTIVE(File_get_amode);
    MPC_FILE(fh, f);
    if (int e = check_not_null(amode, "amode")) return io::raise(me, f, e);
    *amode = io::amode(f);
    return MPI_SUCCESS;
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
    MPC_ENTER_ACTIVE(File_set_info);
    MPC_FILE(fh, f);
    Info* i;
    if (int e = check_info_arg(info, &i)) return io::raise(me, f, e);
    return io::raise(me, f, io::set_info(f, i));
}

int PMPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
    MPC_ENTER_ACTIVE(File_get_info);
    MPC_FILE(fh, f);
    if (int e = check_not_null(info_used, "info_used")) return io::raise(me, f, e);
    *info_used = io::info_used(f);
    return MPI_SUCCESS;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char* datarep, MPI_Info info) {
    MPC_ENTER_ACTIVE(File_set_view);
    MPC_FILE(fh, f);
    Datatype *et, *ft;
    if (int e = check_type(etype, &et)) return io::raise(me, f, e);
    if (int e = check_type(filetype, &ft)) return io::raise(me, f, e);
    if (!datarep)
        return io::raise(me, f, make_error(MPI_ERR_UNSUPPORTED_DATAREP, "datarep is NULL"));
    Info* i;
    if (int e = check_info_arg(info, &i)) return io::raise(me, f, e);
    return io::raise(me, f, io::set_view(f, disp, et, ft, datarep, i));
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
                       char* datarep) {
    MPC_ENTER_ACTIVE(File_get_view);
    MPC_FILE(fh, f);
    if (!disp || !etype || !filetype || !datarep)
        return io::raise(me, f, make_error(MPI_ERR_ARG, "an output argument is NULL"));
    io::get_view(f, disp, etype, filetype, datarep);
    return MPI_SUCCESS;
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
    MPC_ENTER_ACTIVE(File_get_type_extent);
    MPC_FILE(fh, f);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return io::raise(me, f, e);
    if (int e = check_not_null(extent, "extent")) return io::raise(me, f, e);
    return io::raise(me, f, io::type_extent(f, t, extent));
}

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count* extent) {
    MPC_ENTER_ACTIVE(File_get_type_extent_c);
    MPC_FILE(fh, f);
    Datatype* t;
    if (int e = check_type(datatype, &t, false)) return io::raise(me, f, e);
    if (int e = check_not_null(extent, "extent")) return io::raise(me, f, e);
    MPI_Aint x = 0;
    int e = io::type_extent(f, t, &x);
    if (!e) *extent = x;
    return io::raise(me, f, e);
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
    MPC_ENTER_ACTIVE(File_seek);
    MPC_FILE(fh, f);
    return io::raise(me, f, io::seek(f, offset, whence));
}

int PMPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
    MPC_ENTER_ACTIVE(File_get_position);
    MPC_FILE(fh, f);
    if (int e = check_not_null(offset, "offset")) return io::raise(me, f, e);
    return io::raise(me, f, io::position(f, offset));
}

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
    MPC_ENTER_ACTIVE(File_get_byte_offset);
    MPC_FILE(fh, f);
    if (int e = check_not_null(disp, "disp")) return io::raise(me, f, e);
    return io::raise(me, f, io::byte_offset(f, offset, disp));
}

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
    MPC_ENTER_ACTIVE(File_seek_shared);
    MPC_FILE(fh, f);
    return io::raise(me, f, io::seek_shared(f, offset, whence));
}

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
    MPC_ENTER_ACTIVE(File_get_position_shared);
    MPC_FILE(fh, f);
    if (int e = check_not_null(offset, "offset")) return io::raise(me, f, e);
    return io::raise(me, f, io::position_shared(f, offset));
}

int PMPI_File_set_atomicity(MPI_File fh, int flag) {
    MPC_ENTER_ACTIVE(File_set_atomicity);
    MPC_FILE(fh, f);
    return io::raise(me, f, io::set_atomicity(f, flag != 0));
}

int PMPI_File_get_atomicity(MPI_File fh, int* flag) {
    MPC_ENTER_ACTIVE(File_get_atomicity);
    MPC_FILE(fh, f);
    if (int e = check_not_null(flag, "flag")) return io::raise(me, f, e);
    *flag = io::atomicity(f);
    return MPI_SUCCESS;
}

int PMPI_File_sync(MPI_File fh) {
    MPC_ENTER_ACTIVE(File_sync);
    MPC_FILE(fh, f);
    return io::raise(me, f, io::sync(f));
}

int PMPI_Register_datarep(const char* datarep, MPI_Datarep_conversion_function* read_conversion_fn,
                          MPI_Datarep_conversion_function* write_conversion_fn,
                          MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {
    MPC_ENTER_ACTIVE(Register_datarep);
    return io::raise(me, nullptr,
                     io::register_datarep(me, datarep, read_conversion_fn, write_conversion_fn,
                                          dtype_file_extent_fn, extra_state));
}

// ---- Error handlers (MPI 3.1 section 8.3.3) ---------------------------------------------

int PMPI_File_create_errhandler(MPI_File_errhandler_function* file_errhandler_fn,
                                MPI_Errhandler* errhandler) {
    MPC_ENTER_ACTIVE(File_create_errhandler);
    if (!file_errhandler_fn || !errhandler)
        return io::raise(me, nullptr, make_error(MPI_ERR_ARG, "function or errhandler is NULL"));
    // A file handler is called as a communicator's is: (handle*, code*, ...).
    return errhandler_create(reinterpret_cast<MPI_Comm_errhandler_function*>(file_errhandler_fn),
                             errhandler);
}

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
    MPC_ENTER_ACTIVE(File_set_errhandler);
    io::File* f = nullptr;
    if (file != MPI_FILE_NULL)
        if (int e = io::check_file(me, file, &f)) return io::raise(me, nullptr, e);
    if (!errhandler_lookup(errhandler))
        return io::raise(me, f,
                         make_error(MPI_ERR_ARG, "0x%x is not a valid error handler", errhandler));
    io::set_errhandler(me, f, errhandler);
    return MPI_SUCCESS;
}

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
    MPC_ENTER_ACTIVE(File_get_errhandler);
    io::File* f = nullptr;
    if (file != MPI_FILE_NULL)
        if (int e = io::check_file(me, file, &f)) return io::raise(me, nullptr, e);
    if (!errhandler) return io::raise(me, f, make_error(MPI_ERR_ARG, "errhandler is NULL"));
    *errhandler = io::get_errhandler(me, f);
    return MPI_SUCCESS;
}

int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
    MPC_ENTER_ACTIVE(File_call_errhandler);
    io::File* f = nullptr;
    if (fh != MPI_FILE_NULL)
        if (int e = io::check_file(me, fh, &f)) return io::raise(me, nullptr, e);
    io::raise(me, f, errorcode);
    return MPI_SUCCESS;
}

}  // extern "C"

MPC_WEAK(MPI_File_open)
MPC_WEAK(MPI_File_close)
MPC_WEAK(MPI_File_delete)
MPC_WEAK(MPI_File_set_size)
MPC_WEAK(MPI_File_preallocate)
MPC_WEAK(MPI_File_get_size)
MPC_WEAK(MPI_File_get_group)
MPC_WEAK(MPI_File_get_amode)
MPC_WEAK(MPI_File_set_info)
MPC_WEAK(MPI_File_get_info)
MPC_WEAK(MPI_File_set_view)
MPC_WEAK(MPI_File_get_view)
MPC_WEAK(MPI_File_get_type_extent)
MPC_WEAK(MPI_File_get_type_extent_c)
MPC_WEAK(MPI_File_seek)
MPC_WEAK(MPI_File_get_position)
MPC_WEAK(MPI_File_get_byte_offset)
MPC_WEAK(MPI_File_seek_shared)
MPC_WEAK(MPI_File_get_position_shared)
MPC_WEAK(MPI_File_set_atomicity)
MPC_WEAK(MPI_File_get_atomicity)
MPC_WEAK(MPI_File_sync)
MPC_WEAK(MPI_Register_datarep)
MPC_WEAK(MPI_File_create_errhandler)
MPC_WEAK(MPI_File_set_errhandler)
MPC_WEAK(MPI_File_get_errhandler)
MPC_WEAK(MPI_File_call_errhandler)
