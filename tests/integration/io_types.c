/* Views of derived datatypes, data representations and large files (MPI 3.1
 * sections 13.3 and 13.5):
 * - filetypes built by indexed, struct and hvector constructors, resized to
 *   interleave the ranks' instances, written collectively: every byte of the
 *   file checked against the type maps;
 * - "external32": the file holds what MPI_Pack_external makes (MPI_LONG as 4
 *   bytes, portable filetypes scaled), the values read back are the values
 *   written, MPI_File_get_type_extent gives file extents, values that do not
 *   fit give MPI_ERR_CONVERSION;
 * - a data representation registered with MPI_Register_datarep (big-endian
 *   by the user's conversion functions), round trip and file bytes;
 * - displacements and offsets beyond 2 and 4 GiB in a sparse file. */
#include <stdint.h>

#include "io_common.h"

static int rank, size;

/* ---- Derived filetypes -------------------------------------------------------- */

struct run {
    int off, len;
};

static void check_layout(const char* path, MPI_Datatype base, const struct run* runs, int nruns,
                         int instances) {
    MPI_Aint lb, ext;
    int tsize;
    MPI_Type_get_extent(base, &lb, &ext);
    MPI_Type_size(base, &tsize);
    MPI_Datatype filetype;
    MPI_OK(MPI_Type_create_resized(base, 0, ext * size, &filetype));
    MPI_OK(MPI_Type_commit(&filetype));
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_set_view(fh, 7 + ext * rank, MPI_BYTE, filetype, "native", MPI_INFO_NULL));
    const int n = tsize * instances;
    unsigned char* data = (unsigned char*)xmalloc((size_t)n);
    fill_pattern(data, (size_t)n, (uint32_t)rank + 10);
    MPI_OK(MPI_File_write_all(fh, data, n, MPI_BYTE, MPI_STATUS_IGNORE));
    memset(data, 0, (size_t)n);
    MPI_OK(MPI_File_read_at_all(fh, 0, data, n, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_PATTERN(data, (size_t)n, (uint32_t)rank + 10, "read back through the view");
    MPI_OK(MPI_File_close(&fh));
    if (rank == 0) {
        long long fsize = io_file_size(path);
        unsigned char* file = (unsigned char*)xmalloc((size_t)fsize);
        int fd = open(path, O_RDONLY);
        CHECK(read(fd, file, (size_t)fsize) == fsize, "short read of %s", path);
        close(fd);
        for (int r = 0; r < size; ++r) {
            long at = 0;
            for (int k = 0; k < instances; ++k)
                for (int j = 0; j < nruns; ++j)
                    for (int b = 0; b < runs[j].len; ++b, ++at) {
                        long long off = 7 + ext * r + (long long)ext * size * k + runs[j].off + b;
                        CHECK(off < fsize && file[off] == pattern_byte((uint32_t)r + 10, (size_t)at),
                              "file byte %lld: rank %d's stream byte %ld misplaced", off, r, at);
                    }
        }
        free(file);
    }
    MPI_Type_free(&filetype);
    free(data);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void derived_filetypes(void) {
    char p[512];
    MPI_Datatype t;
    int bl[3] = {2, 1, 3}, di[3] = {0, 4, 7};
    MPI_Type_indexed(3, bl, di, MPI_INT, &t);
    struct run r1[] = {{0, 8}, {16, 4}, {28, 12}};
    check_layout(io_path("indexed", p, sizeof p), t, r1, 3, 5);
    MPI_Type_free(&t);
    int sbl[3] = {2, 1, 3};
    MPI_Aint sdi[3] = {0, 16, 30};
    MPI_Datatype sty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(3, sbl, sdi, sty, &t);
    struct run r2[] = {{0, 8}, {16, 8}, {30, 3}};
    check_layout(io_path("struct", p, sizeof p), t, r2, 3, 4);
    MPI_Type_free(&t);
    MPI_Datatype hv;
    MPI_Type_create_hvector(3, 5, 11, MPI_BYTE, &hv);
    MPI_Type_create_resized(hv, 0, 32, &t);
    struct run r3[] = {{0, 5}, {11, 5}, {22, 5}};
    check_layout(io_path("hvector", p, sizeof p), t, r3, 3, 6);
    MPI_Type_free(&t);
    MPI_Type_free(&hv);
}

/* ---- external32 ------------------------------------------------------------------ */

static void external32(void) {
    char path[512];
    io_path("external32", path, sizeof path);
    enum { N = 40 };
    int iv[N];
    long lv[N];
    double dv[N];
    for (int i = 0; i < N; ++i) {
        iv[i] = (rank + 1) * 100000 + i * 3 - 7;
        lv[i] = -(long)(rank + 1) * 1000 - i;
        dv[i] = (rank + 1) * 0.5 + i * 1.25;
    }
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    /* Each rank's ints, then its longs (4 bytes each in the file), then doubles. */
    const MPI_Offset base = (MPI_Offset)rank * N * 16;
    MPI_OK(MPI_File_set_view(fh, base, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    MPI_OK(MPI_File_write_at_all(fh, 0, iv, N, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_set_view(fh, base + N * 4, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_Aint ext;
    MPI_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4, "external32 extent of MPI_LONG: %ld", (long)ext);
    MPI_OK(MPI_File_write_at_all(fh, 0, lv, N, MPI_LONG, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_set_view(fh, base + N * 8, MPI_DOUBLE, MPI_DOUBLE, "external32",
                             MPI_INFO_NULL));
    MPI_Status st;
    int count;
    MPI_OK(MPI_File_write_at(fh, 0, dv, N, MPI_DOUBLE, &st));
    MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    CHECK(count == N, "wrote %d doubles", count);
    MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* The bytes are MPI_Pack_external's. */
    unsigned char packed[N * 16], file[N * 16];
    MPI_Aint pos = 0;
    MPI_Pack_external("external32", iv, N, MPI_INT, packed, sizeof packed, &pos);
    MPI_Pack_external("external32", lv, N, MPI_LONG, packed, sizeof packed, &pos);
    MPI_Pack_external("external32", dv, N, MPI_DOUBLE, packed, sizeof packed, &pos);
    CHECK(pos == N * 16, "MPI_Pack_external made %ld bytes", (long)pos);
    int fd = open(path, O_RDONLY);
    CHECK(pread(fd, file, N * 16, base) == N * 16, "short pread");
    close(fd);
    for (int i = 0; i < N * 16; ++i)
        CHECK(file[i] == packed[i], "external32 file byte %d is 0x%02x, MPI_Pack_external's 0x%02x",
              i, file[i], packed[i]);
    /* And the values come back. */
    int iv2[N];
    long lv2[N];
    double dv2[N];
    MPI_OK(MPI_File_read_at_all(fh, 0, dv2, N, MPI_DOUBLE, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_set_view(fh, base + N * 4, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_OK(MPI_File_read_at(fh, 0, lv2, N, MPI_LONG, &st));
    MPI_OK(MPI_Get_count(&st, MPI_LONG, &count));
    CHECK(count == N, "read %d longs", count);
    MPI_OK(MPI_File_set_view(fh, base, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    MPI_Request r;
    MPI_OK(MPI_File_iread_at(fh, 0, iv2, N, MPI_INT, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i)
        CHECK(iv2[i] == iv[i] && lv2[i] == lv[i] && dv2[i] == dv[i], "value %d changed", i);
    /* A portable filetype is scaled: every other MPI_LONG, 4 bytes apart in the file. */
    MPI_Datatype ft;
    MPI_Type_vector(N / 2, 1, 2, MPI_LONG, &ft);
    MPI_Type_commit(&ft);
    MPI_OK(MPI_File_set_view(fh, base + N * 4, MPI_LONG, ft, "external32", MPI_INFO_NULL));
    MPI_OK(MPI_File_get_type_extent(fh, ft, &ext));
    CHECK(ext == (N - 1) * 4, "external32 extent of the vector: %ld", (long)ext);
    long half[N / 2];
    MPI_OK(MPI_File_read_at(fh, 0, half, N / 2, MPI_LONG, MPI_STATUS_IGNORE));
    for (int i = 0; i < N / 2; ++i)
        CHECK(half[i] == lv[2 * i], "scaled filetype: long %d is %ld, expected %ld", i, half[i],
              lv[2 * i]);
    MPI_Type_free(&ft);
    /* A long beyond 32 bits does not fit external32. */
    MPI_OK(MPI_File_set_view(fh, base, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    long big = 1L << 40;
    CHECK_CLASS(MPI_File_write_at(fh, 0, &big, 1, MPI_LONG, MPI_STATUS_IGNORE), MPI_ERR_CONVERSION);
    MPI_OK(MPI_File_close(&fh));
}

/* ---- A user data representation: big-endian ints by the user's functions ---------- */

static int conversions;

static uint32_t swap32(uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

static int big_read(void* userbuf, MPI_Datatype type, int count, void* filebuf,
                    MPI_Offset position, void* extra) {
    CHECK(type == MPI_INT && extra == &conversions, "read conversion got another type or state");
    uint32_t* u = (uint32_t*)userbuf + position;
    const uint32_t* f = (const uint32_t*)filebuf;
    for (int i = 0; i < count; ++i) u[i] = swap32(f[i]);
    ++conversions;
    return MPI_SUCCESS;
}

static int big_write(void* userbuf, MPI_Datatype type, int count, void* filebuf,
                     MPI_Offset position, void* extra) {
    CHECK(type == MPI_INT && extra == &conversions, "write conversion got another type or state");
    const uint32_t* u = (const uint32_t*)userbuf + position;
    uint32_t* f = (uint32_t*)filebuf;
    for (int i = 0; i < count; ++i) f[i] = swap32(u[i]);
    ++conversions;
    return MPI_SUCCESS;
}

static int big_extent(MPI_Datatype type, MPI_Aint* extent, void* extra) {
    (void)extra;
    int s;
    MPI_Type_size(type, &s);
    *extent = s;
    return MPI_SUCCESS;
}

static void user_datarep(void) {
    char path[512];
    io_path("userrep", path, sizeof path);
    MPI_OK(MPI_Register_datarep("fibermpi-big", big_read, big_write, big_extent, &conversions));
    enum { N = 33 };
    int v[N], back[N];
    for (int i = 0; i < N; ++i) v[i] = rank * 1000 + i - 500;
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_set_view(fh, (MPI_Offset)rank * N * 4, MPI_INT, MPI_INT, "fibermpi-big",
                             MPI_INFO_NULL));
    MPI_OK(MPI_File_write_all(fh, v, N, MPI_INT, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_read_at_all(fh, 0, back, N, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) CHECK(back[i] == v[i], "user datarep: int %d is %d", i, back[i]);
    CHECK(conversions >= 2, "the conversion functions ran %d times", conversions);
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(!strcmp(rep, "fibermpi-big"), "get_view datarep '%s'", rep);
    MPI_OK(MPI_File_close(&fh));
    int fd = open(path, O_RDONLY);
    unsigned char raw[N * 4], ext[N * 4];
    CHECK(pread(fd, raw, sizeof raw, (off_t)rank * N * 4) == (ssize_t)sizeof raw, "short pread");
    close(fd);
    MPI_Aint pos = 0;
    MPI_Pack_external("external32", v, N, MPI_INT, ext, sizeof ext, &pos);
    CHECK(!memcmp(raw, ext, sizeof raw), "the user representation's bytes are not big-endian");
}

/* ---- Beyond 2 and 4 GiB, sparse --------------------------------------------------- */

static void large_offsets(void) {
    char path[512];
    io_path("sparse", path, sizeof path);
    const MPI_Offset GiB = 1024LL * 1024 * 1024;
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    unsigned char buf[4096], back[4096];
    fill_pattern(buf, sizeof buf, (uint32_t)rank + 77);
    const MPI_Offset at = 3 * GiB + 5 + (MPI_Offset)rank * 4096;
    MPI_OK(MPI_File_write_at(fh, at, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE));
    /* Straddling 4 GiB, collective. */
    const MPI_Offset across = 4 * GiB - 2048 + (MPI_Offset)rank * 4096;
    MPI_OK(MPI_File_write_at_all(fh, across, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE));
    /* A view whose displacement is beyond 5 GiB. */
    const MPI_Offset disp = 5 * GiB + 3;
    MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int iv[100];
    for (int i = 0; i < 100; ++i) iv[i] = rank * 100 + i;
    MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * 100, iv, 100, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Offset byte;
    MPI_OK(MPI_File_get_byte_offset(fh, 10, &byte));
    CHECK(byte == disp + 40, "byte offset %lld beyond 5 GiB", (long long)byte);
    MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset fsize;
    MPI_OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == disp + (MPI_Offset)size * 400, "size %lld", (long long)fsize);
    int iv2[100];
    MPI_OK(MPI_File_read_at_all(fh, (MPI_Offset)((rank + 1) % size) * 100, iv2, 100, MPI_INT,
                                MPI_STATUS_IGNORE));
    for (int i = 0; i < 100; ++i)
        CHECK(iv2[i] == ((rank + 1) % size) * 100 + i, "int %d beyond 5 GiB is %d", i, iv2[i]);
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_read_at(fh, at, back, 4096, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_PATTERN(back, 4096, (uint32_t)rank + 77, "data beyond 3 GiB");
    MPI_Request r;
    MPI_OK(MPI_File_iread_at(fh, across, back, 4096, MPI_BYTE, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_PATTERN(back, 4096, (uint32_t)rank + 77, "data across 4 GiB");
    MPI_OK(MPI_File_close(&fh));
    if (rank == 0) {
        struct stat st;
        stat(path, &st);
        CHECK(st.st_size > 5 * GiB && (long long)st.st_blocks * 512 < 64LL << 20,
              "the file is not sparse (%lld bytes, %lld allocated)", (long long)st.st_size,
              (long long)st.st_blocks * 512);
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup("types");
    derived_filetypes();
    external32();
    user_datarep();
    large_offsets();
    io_cleanup();
    MPI_Finalize();
    return 0;
}
