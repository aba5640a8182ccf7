/* A 3-D array of doubles in a block decomposition, written collectively
 * through a subarray view (MPI 3.1 sections 13.3 and 13.4.5) and read back
 * with another decomposition (a darray: cyclic over one dimension, blocks
 * over another). The file must equal, byte for byte, the one a serial writer
 * makes with plain pwrite; the values read must be the array's.
 *
 * Sizes are primes (uneven blocks, ranks without data in the darray), the
 * memory side has a halo (a noncontiguous memory type), the view starts after
 * a header written independently, and every write and read form is used
 * (blocking, nonblocking, split) under several hint sets: the defaults, tiny
 * collective buffers and blocks (many rounds and file domains), one
 * aggregating node, and collective buffering off (independent access). */
#include "io_common.h"

enum { NZ = 19, NY = 17, NX = 23, HEADER = 100 };

static double cell(int z, int y, int x) { return z * 1000.0 + y * 30.0 + x + 0.25; }

static int rank, size;
static int lo[3], n[3];  /* this rank's block */

static void block_of(int r) {
    int dims[3] = {0, 0, 0}, N[3] = {NZ, NY, NX};
    MPI_Dims_create(size, 3, dims);
    int c[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    for (int d = 0; d < 3; ++d) {
        lo[d] = (int)((long)c[d] * N[d] / dims[d]);
        n[d] = (int)((long)(c[d] + 1) * N[d] / dims[d]) - lo[d];
    }
}

static void serial_reference(const char* path) {
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CHECK(fd >= 0, "cannot create %s", path);
    unsigned char h[HEADER];
    for (int i = 0; i < HEADER; ++i) h[i] = (unsigned char)('H' + i);
    CHECK(pwrite(fd, h, HEADER, 0) == HEADER, "pwrite");
    static double row[NX];
    for (int z = 0; z < NZ; ++z)
        for (int y = 0; y < NY; ++y) {
            for (int x = 0; x < NX; ++x) row[x] = cell(z, y, x);
            off_t at = HEADER + ((off_t)z * NY + y) * NX * 8;
            CHECK(pwrite(fd, row, sizeof row, at) == (ssize_t)sizeof row, "pwrite");
        }
    close(fd);
}

static MPI_Info hints(int h) {
    MPI_Info info = MPI_INFO_NULL;
    if (h == 0) return info;
    MPI_Info_create(&info);
    if (h == 1) {
        MPI_Info_set(info, "cb_buffer_size", "4096");
        MPI_Info_set(info, "cb_block_size", "4096");
    } else if (h == 2) {
        MPI_Info_set(info, "cb_nodes", "1");
        MPI_Info_set(info, "romio_cb_write", "enable");
        MPI_Info_set(info, "romio_cb_read", "enable");
    } else {
        MPI_Info_set(info, "collective_buffering", "false");
    }
    return info;
}

/* Writes the array with hint set h and write form v. */
static void write_array(const char* path, int h, int v) {
    MPI_Info info = hints(h);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
    if (rank == 0) {
        unsigned char hdr[HEADER];
        for (int i = 0; i < HEADER; ++i) hdr[i] = (unsigned char)('H' + i);
        MPI_OK(MPI_File_write_at(fh, 0, hdr, HEADER, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    block_of(rank);
    int gs[3] = {NZ, NY, NX}, ms[3] = {n[0] + 2, n[1] + 2, n[2] + 2}, one[3] = {1, 1, 1};
    MPI_Datatype filetype, memtype;
    MPI_OK(MPI_Type_create_subarray(3, gs, n, lo, MPI_ORDER_C, MPI_DOUBLE, &filetype));
    MPI_OK(MPI_Type_create_subarray(3, ms, n, one, MPI_ORDER_C, MPI_DOUBLE, &memtype));
    MPI_OK(MPI_Type_commit(&filetype));
    MPI_OK(MPI_Type_commit(&memtype));
    size_t cells = (size_t)ms[0] * ms[1] * ms[2];
    double* a = (double*)xmalloc(cells * sizeof(double));
    for (size_t i = 0; i < cells; ++i) a[i] = -1.0;
    for (int z = 0; z < n[0]; ++z)
        for (int y = 0; y < n[1]; ++y)
            for (int x = 0; x < n[2]; ++x)
                a[((size_t)(z + 1) * ms[1] + (y + 1)) * ms[2] + (x + 1)] =
                    cell(lo[0] + z, lo[1] + y, lo[2] + x);
    MPI_OK(MPI_File_set_view(fh, HEADER, MPI_DOUBLE, filetype, "native", info));
    MPI_Status st;
    if (v == 0) {
        MPI_OK(MPI_File_write_all(fh, a, 1, memtype, &st));
    } else if (v == 1) {
        MPI_Request r;
        MPI_OK(MPI_File_iwrite_all(fh, a, 1, memtype, &r));
        MPI_OK(MPI_Wait(&r, &st));
    } else {
        MPI_OK(MPI_File_write_all_begin(fh, a, 1, memtype));
        MPI_OK(MPI_File_write_all_end(fh, a, &st));
    }
    int count = -1;
    MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    CHECK(count == n[0] * n[1] * n[2], "write_all moved %d doubles, expected %d", count,
          n[0] * n[1] * n[2]);
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == n[0] * n[1] * n[2], "the file pointer is at %lld", (long long)pos);
    MPI_OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "MPI_File_close left the handle");
    MPI_Type_free(&filetype);
    MPI_Type_free(&memtype);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    free(a);
}

/* The global index of element i (C order) of this rank's darray piece. */
static void read_array(const char* path, int h, int v) {
    int d2[2] = {0, 0};
    MPI_Dims_create(size, 2, d2);
    int gs[3] = {NZ, NY, NX}, ps[3] = {d2[0], d2[1], 1};
    int distribs[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE};
    int dargs[3] = {2, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    MPI_Datatype darray;
    MPI_OK(MPI_Type_create_darray(size, rank, 3, gs, distribs, dargs, ps, MPI_ORDER_C, MPI_DOUBLE,
                                  &darray));
    MPI_OK(MPI_Type_commit(&darray));
    int bytes;
    MPI_Type_size(darray, &bytes);
    int count = bytes / 8;
    double* b = (double*)xmalloc((size_t)(count + 1) * sizeof(double));
    MPI_Info info = hints(h);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    MPI_OK(MPI_File_set_view(fh, HEADER, MPI_DOUBLE, darray, "native", info));
    MPI_Status st;
    if (v == 0) {
        MPI_OK(MPI_File_read_all(fh, b, count, MPI_DOUBLE, &st));
    } else if (v == 1) {
        MPI_Request r;
        MPI_OK(MPI_File_iread_at_all(fh, 0, b, count, MPI_DOUBLE, &r));
        MPI_OK(MPI_Wait(&r, &st));
    } else {
        MPI_OK(MPI_File_read_at_all_begin(fh, 0, b, count, MPI_DOUBLE));
        MPI_OK(MPI_File_read_at_all_end(fh, b, &st));
    }
    int got = -1;
    MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &got));
    CHECK(got == count, "read_all gave %d doubles, expected %d", got, count);
    /* My coordinates in the 2-D grid, then my indices in each dimension. */
    int cz = rank / d2[1], cy = rank % d2[1];
    int by = (NY + d2[1] - 1) / d2[1];
    int i = 0;
    for (int z = 0; z < NZ; ++z) {
        if ((z / 2) % d2[0] != cz) continue;
        for (int y = cy * by; y < NY && y < (cy + 1) * by; ++y)
            for (int x = 0; x < NX; ++x, ++i)
                CHECK(i < count && b[i] == cell(z, y, x),
                      "element %d (%d,%d,%d) read %g, expected %g", i, z, y, x,
                      i < count ? b[i] : -1.0, cell(z, y, x));
    }
    CHECK(i == count, "the darray holds %d elements, the check expected %d", count, i);
    MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&darray);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    free(b);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup("array");
    char ref[512], path[512];
    io_path("reference", ref, sizeof ref);
    if (rank == 0) serial_reference(ref);
    for (int h = 0; h < 4; ++h) {
        char name[32];
        snprintf(name, sizeof name, "array%d", h);
        io_path(name, path, sizeof path);
        write_array(path, h, h % 3);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) io_same_files(path, ref);
        read_array(path, h, (h + 1) % 3);
    }
    io_cleanup();
    MPI_Finalize();
    return 0;
}
