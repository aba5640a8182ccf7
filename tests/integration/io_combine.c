/* Large blocking independent writes of many ranks at once (MPI 3.1 sections
 * 13.4.2-13.4.3): every rank writes blocks of 1 MiB and more (writes the
 * ranks of a node process hand to one writer among them, docs/io.md) to
 * disjoint places of one file, all at the same time, through an explicit
 * offset, its individual file pointer and a strided view. Each call returns
 * its own count, the file holds every byte where it belongs (every rank reads
 * the whole file back), and with a file size limit (RLIMIT_FSIZE) that half
 * the ranks' writes start beyond, exactly those get MPI_ERR_NO_SPACE while the
 * others' data arrive whole.
 */
#include <signal.h>
#include <sys/resource.h>

#include "io_common.h"

static int rank, size;

/* The byte that belongs at file offset pos. */
static unsigned char pattern(long long pos) {
    return (unsigned char)(pos * 131 + (pos >> 12) * 7 + 29);
}

static void fill(unsigned char* buf, long long pos, long long n) {
    for (long long i = 0; i < n; ++i) buf[i] = pattern(pos + i);
}

/* Rank r's block in a phase of blocks of lengths len(0..size-1), packed. */
static long long len_of(int r) {
    return (1LL << 20) + 512LL * r + 24;
}
static long long offset_of(long long base, int r) {
    long long o = base;
    for (int q = 0; q < r; ++q) o += len_of(q);
    return o;
}

/* Reads [0, n) of the file and checks every byte of the given ranges. */
static void check_file(MPI_File fh, long long n, const long long* lo, const long long* hi,
                       int ranges, const char* what) {
    unsigned char* buf = malloc((size_t)n);
    MPI_Status st;
    int count = 0;
    CHECK(MPI_File_read_at(fh, 0, buf, (int)n, MPI_BYTE, &st) == MPI_SUCCESS, "%s: read", what);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == n, "%s: read %d bytes of %lld", what, count, n);
    for (int k = 0; k < ranges; ++k)
        for (long long p = lo[k]; p < hi[k]; ++p)
            CHECK(buf[p] == pattern(p), "%s: byte %lld is %d, not %d", what, p, buf[p], pattern(p));
    free(buf);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup("combine");
    char path[512];
    io_path("combined.dat", path, sizeof path);
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh) == MPI_SUCCESS,
          "open");
    const long long phase = offset_of(0, size);                     // bytes of one phase of blocks
    unsigned char* buf = malloc((size_t)len_of(size) + (2u << 20)); /* any phase's data */
    MPI_Status st;
    int count = 0;

    /* Phase 1: explicit offsets. */
    long long at = offset_of(0, rank);
    fill(buf, at, len_of(rank));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_write_at(fh, at, buf, (int)len_of(rank), MPI_BYTE, &st) == MPI_SUCCESS,
          "write_at");
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == len_of(rank), "write_at wrote %d of %lld", count, len_of(rank));

    /* Phase 2: the individual file pointer. */
    at = offset_of(phase, rank);
    fill(buf, at, len_of(rank));
    CHECK(MPI_File_seek(fh, at, MPI_SEEK_SET) == MPI_SUCCESS, "seek");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_write(fh, buf, (int)len_of(rank), MPI_BYTE, &st) == MPI_SUCCESS, "write");
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == len_of(rank), "write wrote %d of %lld", count, len_of(rank));
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == at + len_of(rank), "the pointer is at %lld, not %lld", (long long)pos,
          at + len_of(rank));

    /* Phase 3: a strided view, chunks of the ranks interleaved. */
    const int chunk = 256 << 10, chunks = 5;
    const long long base3 = 2 * phase;
    MPI_Datatype contig, ftype;
    MPI_Type_contiguous(chunk, MPI_BYTE, &contig);
    MPI_Type_create_resized(contig, 0, (MPI_Aint)chunk * size, &ftype);
    MPI_Type_commit(&ftype);
    for (int k = 0; k < chunks; ++k)
        fill(buf + (long long)k * chunk, base3 + ((long long)k * size + rank) * chunk, chunk);
    CHECK(MPI_File_set_view(fh, base3 + (long long)rank * chunk, MPI_BYTE, ftype, "native",
                            MPI_INFO_NULL) == MPI_SUCCESS,
          "set_view");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_write(fh, buf, chunks * chunk, MPI_BYTE, &st) == MPI_SUCCESS, "strided write");
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == chunks * chunk, "strided write wrote %d of %d", count, chunks * chunk);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Type_free(&ftype);
    MPI_Type_free(&contig);

    const long long end3 = base3 + (long long)chunks * size * chunk;
    MPI_Barrier(MPI_COMM_WORLD);
    {
        const long long lo[] = {0}, hi[] = {end3};
        check_file(fh, end3, lo, hi, 1, "after three phases");
    }

    /* Phase 4: beyond a file size limit (every node process sets it: a limit
     * is a process's). Even ranks write below it, odd ranks start past it. */
    MPI_Barrier(MPI_COMM_WORLD);
    const long long blk = 1LL << 20, evens = (size + 1) / 2;
    const long long limit = end3 + evens * blk;
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
    lim = old;
    lim.rlim_cur = (rlim_t)limit;
    signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
    MPI_Barrier(MPI_COMM_WORLD);
    at = rank % 2 ? limit + rank * blk : end3 + (rank / 2) * blk;
    fill(buf, at, blk);
    const int err = MPI_File_write_at(fh, at, buf, (int)blk, MPI_BYTE, &st);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "restoring the limit");
    if (rank % 2) {
        int cls = MPI_SUCCESS;
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_NO_SPACE, "a write beyond the size limit gave class %d", cls);
    } else {
        CHECK(err == MPI_SUCCESS, "a write below the size limit failed");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == blk, "a write below the limit wrote %d of %lld", count, blk);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        MPI_Offset fsize = 0;
        MPI_File_get_size(fh, &fsize);
        CHECK(fsize == limit, "the file is %lld bytes, not %lld", (long long)fsize, limit);
        const long long lo[] = {0}, hi[] = {limit};
        check_file(fh, limit, lo, hi, 1, "after the limited writes");
    }

    CHECK(MPI_File_close(&fh) == MPI_SUCCESS, "close");
    free(buf);
    io_cleanup();
    if (rank == 0) printf("io_combine: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
