/* Errors of MPI-IO (MPI 3.1 sections 13.7 and 8.3.3): files return errors by
 * default (MPI_ERRORS_RETURN on MPI_FILE_NULL and on new files), each failure
 * gets its class on every rank that takes part, and nothing is written by a
 * call that fails: a missing file, no permission, writing a read-only file,
 * bad access modes, disagreeing collective arguments, an existing file with
 * MPI_MODE_EXCL, deleting an open file, a directory, unknown and duplicate
 * data representations, sequential files, invalid handles, a full device
 * (also through MPI_Wait and a collective), and user error handlers on files
 * and on MPI_FILE_NULL (which new files inherit). */
#include <errno.h>

#include "io_common.h"

static int rank, size;

static int calls;
static MPI_File last_file;
static int last_code;

static void handler(MPI_File* fh, int* code, ...) {
    ++calls;
    last_file = *fh;
    last_code = *code;
}

static void defaults_and_missing(void) {
    MPI_Errhandler eh;
    MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    char p[512];
    MPI_File fh = (MPI_File)12345;
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path("missing", p, sizeof p), MPI_MODE_RDONLY,
                              MPI_INFO_NULL, &fh),
                MPI_ERR_NO_SUCH_FILE);
    CHECK(fh == MPI_FILE_NULL, "a failed open left a handle");
    CHECK_CLASS(MPI_File_delete(p, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_dir, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_BAD_FILE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, "", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_BAD_FILE);
    CHECK_CLASS(MPI_File_write(MPI_FILE_NULL, p, 1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_FILE);
    CHECK_CLASS(MPI_File_close(&fh), MPI_ERR_FILE);
}

/* Permission denied. Root passes permission bits, so as root the file is one
 * no process may write: a read-only sysctl. */
static void no_permission(void) {
    char p[512];
    const char* path = io_path("secret", p, sizeof p);
    int amode = MPI_MODE_RDONLY;
    if (geteuid() == 0) {
        path = "/proc/sys/kernel/osrelease";
        amode = MPI_MODE_WRONLY;
        int fd = open(path, O_WRONLY);
        if (fd >= 0 || errno != EACCES) {
            if (fd >= 0) close(fd);
            if (rank == 0)
                printf("io_errors: no-permission check skipped: running as root and %s is "
                       "writable here\n",
                       path);
            return;
        }
    } else if (rank == 0) {
        int fd = open(p, O_CREAT | O_WRONLY, 0);
        CHECK(fd >= 0, "cannot create %s", p);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), MPI_ERR_ACCESS);
}

static void modes(void) {
    char p[512];
    io_path("modes", p, sizeof p);
    MPI_File fh;
    const int bad[] = {MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_MODE_RDONLY | MPI_MODE_CREATE,
                       MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_MODE_CREATE, 1 << 20 | MPI_MODE_RDWR,
                       MPI_MODE_RDONLY | MPI_MODE_EXCL};
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); ++i)
        CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, bad[i], MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(io_file_size(p) == -1, "a bad amode created the file");
    MPI_Barrier(MPI_COMM_WORLD);
    /* A file with content; read-only access must leave it alone. */
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    unsigned char data[64];
    fill_pattern(data, sizeof data, (uint32_t)rank);
    MPI_OK(MPI_File_write_at_all(fh, rank * 64, data, 64, MPI_BYTE, MPI_STATUS_IGNORE));
    unsigned char back[64];
    CHECK_CLASS(MPI_File_read_at(fh, 0, back, 64, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    MPI_OK(MPI_File_close(&fh));
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                              MPI_INFO_NULL, &fh),
                MPI_ERR_FILE_EXISTS);
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    unsigned char junk[64];
    memset(junk, 0x5a, sizeof junk);
    CHECK_CLASS(MPI_File_write_at(fh, rank * 64, junk, 64, MPI_BYTE, MPI_STATUS_IGNORE),
                MPI_ERR_READ_ONLY);
    CHECK_CLASS(MPI_File_write_at_all(fh, rank * 64, junk, 64, MPI_BYTE, MPI_STATUS_IGNORE),
                MPI_ERR_READ_ONLY);
    MPI_Request r;
    CHECK_CLASS(MPI_File_iwrite_at(fh, 0, junk, 64, MPI_BYTE, &r), MPI_ERR_READ_ONLY);
    CHECK_CLASS(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    MPI_OK(MPI_File_read_at_all(fh, rank * 64, back, 64, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_PATTERN(back, 64, (uint32_t)rank, "data after failed writes");
    /* A file cannot be deleted while open (here), and can once closed. */
    CHECK_CLASS(MPI_File_delete(p, MPI_INFO_NULL), MPI_ERR_FILE_IN_USE);
    MPI_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(io_file_size(p) == -1, "MPI_File_delete left the file");
}

static void disagreements(void) {
    char p[512], q[512];
    io_path("agree", p, sizeof p);
    io_path(rank ? "agree-other" : "agree", q, sizeof q);
    MPI_File fh;
    int amode = MPI_MODE_CREATE | (rank ? MPI_MODE_WRONLY : MPI_MODE_RDWR);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, p, amode, MPI_INFO_NULL, &fh),
                size > 1 ? MPI_ERR_NOT_SAME : MPI_SUCCESS);
    if (size == 1) MPI_OK(MPI_File_close(&fh));
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                              &fh),
                size > 1 ? MPI_ERR_NOT_SAME : MPI_SUCCESS);
    if (size == 1) MPI_OK(MPI_File_close(&fh));
    /* One file under two spellings is the same file. */
    char spelled[600];
    snprintf(spelled, sizeof spelled, rank % 2 ? "%s/./agree" : "%s/agree", io_dir);
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, spelled, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    const int want = size > 1 ? MPI_ERR_NOT_SAME : MPI_SUCCESS;
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rank ? "external32" : "native",
                                  MPI_INFO_NULL),
                want);
    CHECK_CLASS(MPI_File_set_view(fh, 0, rank ? MPI_INT : MPI_DOUBLE, rank ? MPI_INT : MPI_DOUBLE,
                                  "native", MPI_INFO_NULL),
                want);
    CHECK_CLASS(MPI_File_set_size(fh, 100 + rank), want);
    CHECK_CLASS(MPI_File_preallocate(fh, 100 + rank), want);
    CHECK_CLASS(MPI_File_seek_shared(fh, rank, MPI_SEEK_SET), want);
    CHECK_CLASS(MPI_File_set_atomicity(fh, rank % 2), want);
    /* One rank's bad argument fails everyone's call. */
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rank ? "native" : "no-such-datarep",
                                  MPI_INFO_NULL),
                rank ? (size > 1 ? MPI_ERR_UNSUPPORTED_DATAREP : MPI_SUCCESS)
                     : MPI_ERR_UNSUPPORTED_DATAREP);
    CHECK_CLASS(MPI_File_set_view(fh, -5, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    /* A filetype must be made of etypes. */
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_SHORT, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    MPI_OK(MPI_File_close(&fh));
}

static void sequential_and_datareps(void) {
    char p[512];
    io_path("seq", p, sizeof p);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p,
                         MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                         &fh));
    char c = 'a' + (char)rank;
    CHECK_CLASS(MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE),
                MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_CLASS(MPI_File_write(fh, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE),
                MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_CHAR, MPI_CHAR, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    MPI_OK(MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_CHAR, MPI_CHAR, "native",
                             MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == size, "MPI_DISPLACEMENT_CURRENT gave %lld, expected %d", (long long)disp, size);
    MPI_OK(MPI_File_write_shared(fh, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_close(&fh));
    if (rank == 0) CHECK(io_file_size(p) == 2 * size, "sequential file of %lld bytes", io_file_size(p));
    CHECK_CLASS(MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                     (MPI_Datarep_extent_function*)NULL, NULL),
                MPI_ERR_ARG);
}

static int extent_fn(MPI_Datatype t, MPI_Aint* e, void* x) {
    (void)x;
    return MPI_Type_get_extent(t, &(MPI_Aint){0}, e);
}

static void duplicate_datarep(void) {
    MPI_OK(MPI_Register_datarep("io-errors-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                extent_fn, NULL));
    CHECK_CLASS(MPI_Register_datarep("io-errors-rep", MPI_CONVERSION_FN_NULL,
                                     MPI_CONVERSION_FN_NULL, extent_fn, NULL),
                MPI_ERR_DUP_DATAREP);
    CHECK_CLASS(MPI_Register_datarep("native", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                     extent_fn, NULL),
                MPI_ERR_DUP_DATAREP);
}

/* Other failures of the system: reading the calling process's memory at
 * address 0 through /proc fails with EIO. */
static void other_io_error(void) {
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_SELF, "/proc/self/mem", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) {
        if (rank == 0) printf("io_errors: MPI_ERR_IO check skipped: cannot open /proc/self/mem\n");
        return;
    }
    char c;
    CHECK_CLASS(MPI_File_read_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE), MPI_ERR_IO);
    MPI_OK(MPI_File_close(&fh));
}

/* A device that is always full: errors found while moving data. */
static void full_device(void) {
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh)) {
        if (rank == 0) printf("io_errors: /dev/full checks skipped: cannot open it\n");
        return;
    }
    char buf[256];
    memset(buf, 1, sizeof buf);
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, 256, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_NO_SPACE);
    MPI_Request r;
    MPI_OK(MPI_File_iwrite_at(fh, 0, buf, 256, MPI_BYTE, &r));
    CHECK_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_NO_SPACE);
    CHECK(r == MPI_REQUEST_NULL, "a failed request was not freed");
    /* Interleaved pieces: two-phase, the error agreed by every rank. */
    MPI_Datatype ft;
    MPI_Type_vector(4, 8, 8 * size, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    MPI_OK(MPI_File_set_view(fh, 8 * rank, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    CHECK_CLASS(MPI_File_write_all(fh, buf, 32, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_NO_SPACE);
    /* Through the file's own handler. */
    MPI_Errhandler eh;
    MPI_OK(MPI_File_create_errhandler(handler, &eh));
    MPI_OK(MPI_File_set_errhandler(fh, eh));
    calls = 0;
    MPI_OK(MPI_File_iwrite_all(fh, buf, 32, MPI_BYTE, &r));
    CHECK_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_NO_SPACE);
    CHECK(calls == 1 && last_file == fh && error_class(last_code) == MPI_ERR_NO_SPACE,
          "the file's handler saw %d calls (file 0x%x, class %d)", calls, last_file,
          error_class(last_code));
    MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);
    MPI_Type_free(&ft);
    MPI_OK(MPI_File_close(&fh));
}

static void handlers(void) {
    char p[512];
    io_path("handlers", p, sizeof p);
    MPI_Errhandler eh, got;
    MPI_OK(MPI_File_create_errhandler(handler, &eh));
    /* MPI_FILE_NULL's handler: open errors, and what new files start with. */
    MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    calls = 0;
    MPI_File fh;
    char missing[512];
    int rc = MPI_File_open(MPI_COMM_WORLD, io_path("nowhere", missing, sizeof missing),
                           MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(error_class(rc) == MPI_ERR_NO_SUCH_FILE && calls == 1 && last_file == MPI_FILE_NULL,
          "MPI_FILE_NULL's handler: %d calls, file 0x%x", calls, last_file);
    calls = 0;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_OK(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh, "a new file did not inherit MPI_FILE_NULL's handler");
    MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    rc = MPI_File_seek(fh, -1, MPI_SEEK_SET);
    CHECK(error_class(rc) == MPI_ERR_ARG && calls == 1 && last_file == fh,
          "the file's handler: %d calls, file 0x%x, expected 0x%x", calls, last_file, fh);
    MPI_OK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    CHECK(calls == 2 && last_code == MPI_ERR_OTHER, "MPI_File_call_errhandler: %d calls", calls);
    MPI_OK(MPI_File_close(&fh));
    MPI_Errhandler_free(&eh);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup("errors");
    defaults_and_missing();
    no_permission();
    modes();
    disagreements();
    sequential_and_datareps();
    duplicate_datarep();
    full_device();
    other_io_error();
    handlers();
    io_cleanup();
    MPI_Finalize();
    return 0;
}
