/* Every positioning and every blocking form of MPI-IO data access (MPI 3.1
 * section 13.4): explicit offsets, individual file pointers (with an
 * interleaving view), shared file pointers (every record written exactly
 * once, each rank's in its program order) and ordered access (rank order);
 * blocking, nonblocking, collective and split collective. Then seek,
 * positions and byte offsets, reading past the end of the file, append mode
 * and delete-on-close, sizes and preallocation, views, hints, atomic mode
 * (overlapping strided writes never mix) and sync. */
#include "io_common.h"

enum { B = 1000, K = 6, S = 5 };
static int rank, size;

static void rw_at(MPI_File fh, int mode, MPI_Offset off, void* buf, int n, int write) {
    MPI_Status st;
    MPI_Request r;
    int count = -1;
    switch (mode) {
        case 0:
            MPI_OK(write ? MPI_File_write_at(fh, off, buf, n, MPI_BYTE, &st)
                         : MPI_File_read_at(fh, off, buf, n, MPI_BYTE, &st));
            break;
        case 1:
            MPI_OK(write ? MPI_File_iwrite_at(fh, off, buf, n, MPI_BYTE, &r)
                         : MPI_File_iread_at(fh, off, buf, n, MPI_BYTE, &r));
            MPI_OK(MPI_Wait(&r, &st));
            break;
        case 2:
            MPI_OK(write ? MPI_File_write_at_all(fh, off, buf, n, MPI_BYTE, &st)
                         : MPI_File_read_at_all(fh, off, buf, n, MPI_BYTE, &st));
            break;
        case 3:
            MPI_OK(write ? MPI_File_iwrite_at_all(fh, off, buf, n, MPI_BYTE, &r)
                         : MPI_File_iread_at_all(fh, off, buf, n, MPI_BYTE, &r));
            MPI_OK(MPI_Wait(&r, &st));
            break;
        default:
            if (write) {
                MPI_OK(MPI_File_write_at_all_begin(fh, off, buf, n, MPI_BYTE));
                MPI_OK(MPI_File_write_at_all_end(fh, buf, &st));
            } else {
                MPI_OK(MPI_File_read_at_all_begin(fh, off, buf, n, MPI_BYTE));
                MPI_OK(MPI_File_read_at_all_end(fh, buf, &st));
            }
    }
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == n, "mode %d moved %d bytes, expected %d", mode, count, n);
}

static void rw_ind(MPI_File fh, int mode, int* buf, int n, int write) {
    MPI_Status st;
    MPI_Request r;
    int count = -1;
    switch (mode) {
        case 0:
            MPI_OK(write ? MPI_File_write(fh, buf, n, MPI_INT, &st)
                         : MPI_File_read(fh, buf, n, MPI_INT, &st));
            break;
        case 1:
            MPI_OK(write ? MPI_File_iwrite(fh, buf, n, MPI_INT, &r)
                         : MPI_File_iread(fh, buf, n, MPI_INT, &r));
            MPI_OK(MPI_Wait(&r, &st));
            break;
        case 2:
            MPI_OK(write ? MPI_File_write_all(fh, buf, n, MPI_INT, &st)
                         : MPI_File_read_all(fh, buf, n, MPI_INT, &st));
            break;
        case 3:
            MPI_OK(write ? MPI_File_iwrite_all(fh, buf, n, MPI_INT, &r)
                         : MPI_File_iread_all(fh, buf, n, MPI_INT, &r));
            MPI_OK(MPI_Wait(&r, &st));
            break;
        default:
            if (write) {
                MPI_OK(MPI_File_write_all_begin(fh, buf, n, MPI_INT));
                MPI_OK(MPI_File_write_all_end(fh, buf, &st));
            } else {
                MPI_OK(MPI_File_read_all_begin(fh, buf, n, MPI_INT));
                MPI_OK(MPI_File_read_all_end(fh, buf, &st));
            }
    }
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == n, "mode %d moved %d ints, expected %d", mode, count, n);
}

/* Explicit offsets: block (mode, rank) written in that mode, read back by
 * the next rank in the same mode. */
static void explicit_offsets(const char* path) {
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    unsigned char* buf = (unsigned char*)xmalloc(B);
    for (int m = 0; m < 5; ++m) {
        fill_pattern(buf, B, (uint32_t)(m * size + rank));
        rw_at(fh, m, (MPI_Offset)(m * size + rank) * B, buf, B, 1);
    }
    MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_File_sync(fh));
    const int peer = (rank + 1) % size;
    for (int m = 0; m < 5; ++m) {
        memset(buf, 0, B);
        rw_at(fh, m, (MPI_Offset)(m * size + peer) * B, buf, B, 0);
        CHECK_PATTERN(buf, B, (uint32_t)(m * size + peer), "explicit-offset block");
    }
    /* Every rank reads the same strided bytes collectively (pieces of all
     * ranks overlap in the aggregators' windows). */
    {
        const int blocks = 5 * size * B / 200;
        MPI_Datatype strided;
        MPI_Type_vector(blocks, 100, 200, MPI_BYTE, &strided);
        MPI_Type_commit(&strided);
        MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, strided, "native", MPI_INFO_NULL));
        unsigned char* all = (unsigned char*)xmalloc((size_t)blocks * 100);
        MPI_OK(MPI_File_read_at_all(fh, 0, all, blocks * 100, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int k = 0; k < blocks; ++k)
            for (int b = 0; b < 100; ++b) {
                const long off = (long)k * 200 + b;
                const unsigned char want = pattern_byte((uint32_t)(off / B), (size_t)(off % B));
                CHECK(all[k * 100 + b] == want, "shared strided read: byte %ld", off);
            }
        free(all);
        MPI_Type_free(&strided);
        MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    }
    /* Two collective accesses in flight at once, completed out of order. */
    unsigned char* second = (unsigned char*)xmalloc(B);
    fill_pattern(buf, B, (uint32_t)(1000 + rank));
    fill_pattern(second, B, (uint32_t)(2000 + rank));
    MPI_Request two[2];
    const MPI_Offset base = (MPI_Offset)5 * size * B;
    MPI_OK(MPI_File_iwrite_at_all(fh, base + (MPI_Offset)rank * B, buf, B, MPI_BYTE, &two[0]));
    MPI_OK(MPI_File_iwrite_at_all(fh, base + (MPI_Offset)(size + rank) * B, second, B, MPI_BYTE,
                                  &two[1]));
    MPI_OK(MPI_Wait(&two[1], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&two[0], MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_iread_at_all(fh, base + (MPI_Offset)(size + rank) * B, buf, B, MPI_BYTE,
                                 &two[0]));
    MPI_OK(MPI_File_iread_at_all(fh, base + (MPI_Offset)rank * B, second, B, MPI_BYTE, &two[1]));
    MPI_OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
    CHECK_PATTERN(buf, B, (uint32_t)(2000 + rank), "second of two nonblocking collectives");
    CHECK_PATTERN(second, B, (uint32_t)(1000 + rank), "first of two nonblocking collectives");
    free(second);
    MPI_OK(MPI_File_close(&fh));
    free(buf);
}

/* Individual pointers: each rank's view holds every size-th chunk of K ints,
 * so the ranks' sequential writes interleave in the file. */
static void individual_pointers(const char* path) {
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    MPI_Datatype chunk, filetype;
    MPI_Type_contiguous(K, MPI_INT, &chunk);
    MPI_Type_create_resized(chunk, 0, (MPI_Aint)size * K * 4, &filetype);
    MPI_Type_commit(&filetype);
    const MPI_Offset disp = 64 + (MPI_Offset)rank * K * 4;
    MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, filetype, "native", MPI_INFO_NULL));
    int buf[K];
    for (int m = 0; m < 5; ++m) {
        for (int i = 0; i < K; ++i) buf[i] = (m * size + rank) * 100 + i;
        rw_ind(fh, m, buf, K, 1);
        MPI_Offset pos, byte;
        MPI_OK(MPI_File_get_position(fh, &pos));
        CHECK(pos == (MPI_Offset)(m + 1) * K, "position %lld after %d writes", (long long)pos,
              m + 1);
        MPI_OK(MPI_File_get_byte_offset(fh, pos, &byte));
        CHECK(byte == disp + (MPI_Offset)(m + 1) * size * K * 4, "byte offset %lld", (long long)byte);
    }
    MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* The interleaving as the default view sees it. */
    if (rank == 0) {
        int n = 5 * size * K;
        int* all = (int*)xmalloc((size_t)n * sizeof(int));
        MPI_File self;
        MPI_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &self));
        MPI_OK(MPI_File_read_at(self, 64, all, n, MPI_INT, MPI_STATUS_IGNORE));
        for (int m = 0; m < 5; ++m)
            for (int r = 0; r < size; ++r)
                for (int i = 0; i < K; ++i) {
                    int got = all[(m * size + r) * K + i];
                    CHECK(got == (m * size + r) * 100 + i, "chunk %d of rank %d holds %d", m, r,
                          got);
                }
        MPI_OK(MPI_File_close(&self));
        free(all);
    }
    /* Seeks, then read back in every mode. */
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 5 * K, "MPI_SEEK_END put the pointer at %lld", (long long)pos);
    MPI_OK(MPI_File_seek(fh, 2 * K, MPI_SEEK_SET));
    MPI_OK(MPI_File_seek(fh, -2 * K, MPI_SEEK_CUR));
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 0, "position %lld after seeking back", (long long)pos);
    CHECK_CLASS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    for (int m = 0; m < 5; ++m) {
        memset(buf, 0, sizeof buf);
        rw_ind(fh, m, buf, K, 0);
        for (int i = 0; i < K; ++i)
            CHECK(buf[i] == (m * size + rank) * 100 + i, "read %d, expected %d", buf[i],
                  (m * size + rank) * 100 + i);
    }
    MPI_OK(MPI_File_close(&fh));
    MPI_Type_free(&chunk);
    MPI_Type_free(&filetype);
}

/* Shared pointers: every record once; a rank's records in its order. */
static void shared_pointer(const char* path) {
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int i = 0; i < S; ++i) {
        int rec[4] = {rank, i, rank * 7 + i, -1};
        if (i % 2) {
            MPI_Request r;
            MPI_OK(MPI_File_iwrite_shared(fh, rec, 4, MPI_INT, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_File_write_shared(fh, rec, 4, MPI_INT, MPI_STATUS_IGNORE));
        }
    }
    MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * S * 4, "shared pointer at %lld, expected %d", (long long)pos,
          size * S * 4);
    if (rank == 0) {
        int n = size * S;
        int* all = (int*)xmalloc((size_t)n * 16);
        int* seen = ints((size_t)n, 0);
        int* last = ints((size_t)size, -1);
        MPI_OK(MPI_File_read_at(fh, 0, all, 4 * n, MPI_INT, MPI_STATUS_IGNORE));
        for (int k = 0; k < n; ++k) {
            int r = all[4 * k], i = all[4 * k + 1];
            CHECK(r >= 0 && r < size && i >= 0 && i < S && all[4 * k + 2] == r * 7 + i,
                  "record %d is garbage (%d %d %d)", k, r, i, all[4 * k + 2]);
            CHECK(!seen[r * S + i]++, "record (%d,%d) written twice", r, i);
            CHECK(i > last[r], "rank %d's record %d comes after its record %d", r, i, last[r]);
            last[r] = i;
        }
        free(all);
        free(seen);
        free(last);
    }
    /* Read the records back through the shared pointer: each read once. */
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int mine = 0, rec[4];
    for (;;) {
        MPI_Status st;
        int count;
        if (mine % 2) {
            MPI_Request r;
            MPI_OK(MPI_File_iread_shared(fh, rec, 4, MPI_INT, &r));
            MPI_OK(MPI_Wait(&r, &st));
        } else {
            MPI_OK(MPI_File_read_shared(fh, rec, 4, MPI_INT, &st));
        }
        MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
        if (count == 0) break;
        CHECK(count == 4 && rec[2] == rec[0] * 7 + rec[1], "read_shared gave a torn record");
        ++mine;
    }
    int total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == size * S, "read_shared read %d records, %d were written", total, size * S);
    MPI_OK(MPI_File_close(&fh));
}

/* Ordered access: rank r's r + 1 ints come after those of ranks < r. */
static void ordered(const char* path) {
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_set_view(fh, 8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    const int n = rank + 1, total = size * (size + 1) / 2;
    int* buf = ints((size_t)n, rank);
    MPI_OK(MPI_File_write_ordered(fh, buf, n, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i) buf[i] = 1000 + rank;
    MPI_OK(MPI_File_write_ordered_begin(fh, buf, n, MPI_INT));
    MPI_OK(MPI_File_write_ordered_end(fh, buf, MPI_STATUS_IGNORE));
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 2 * total, "shared pointer at %lld after two ordered writes", (long long)pos);
    MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int* all = (int*)xmalloc((size_t)total * 2 * sizeof(int));
        MPI_OK(MPI_File_read_at(fh, 0, all, 2 * total, MPI_INT, MPI_STATUS_IGNORE));
        for (int pass = 0, k = 0; pass < 2; ++pass)
            for (int r = 0; r < size; ++r)
                for (int i = 0; i <= r; ++i, ++k)
                    CHECK(all[k] == pass * 1000 + r, "ordered int %d is %d, expected %d", k,
                          all[k], pass * 1000 + r);
        free(all);
    }
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(buf, 0xff, (size_t)n * sizeof(int));
    MPI_OK(MPI_File_read_ordered(fh, buf, n, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i) CHECK(buf[i] == rank, "read_ordered gave %d", buf[i]);
    MPI_OK(MPI_File_read_ordered_begin(fh, buf, n, MPI_INT));
    MPI_OK(MPI_File_read_ordered_end(fh, buf, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i) CHECK(buf[i] == 1000 + rank, "read_ordered_begin gave %d", buf[i]);
    MPI_OK(MPI_File_close(&fh));
    free(buf);
}

/* Reads that meet the end of the file stop there. */
static void end_of_file(const char* path) {
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_set_size(fh, 0));
    char data[10] = "abcdefghi", buf[40];
    if (rank == 0) MPI_OK(MPI_File_write_at(fh, 0, data, 10, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Status st;
    int count;
    MPI_OK(MPI_File_read_at(fh, 4, buf, 20, MPI_BYTE, &st));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == 6 && !memcmp(buf, data + 4, 6), "read across the end gave %d bytes", count);
    MPI_OK(MPI_File_read_at_all(fh, rank % 2 ? 100 : 0, buf, 40, MPI_BYTE, &st));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == (rank % 2 ? 0 : 10), "collective read at the end gave %d bytes", count);
    MPI_OK(MPI_File_close(&fh));
}

static void append_and_delete(const char* path, const char* gone) {
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_set_size(fh, 100));
    MPI_OK(MPI_File_close(&fh));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL,
                         &fh));
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 100, "MPI_MODE_APPEND: individual pointer at %lld", (long long)pos);
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 100, "MPI_MODE_APPEND: shared pointer at %lld", (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);  /* everyone read the pointer before it moves */
    char rec[8];
    fill_pattern(rec, 8, (uint32_t)rank);
    MPI_OK(MPI_File_write_shared(fh, rec, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_close(&fh));
    if (rank == 0)
        CHECK(io_file_size(path) == 100 + 8 * size, "appended file has %lld bytes",
              io_file_size(path));
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, gone,
                         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                         &fh));
    MPI_OK(MPI_File_write_at(fh, rank, rec, 1, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_close(&fh));
    CHECK(io_file_size(gone) == -1, "MPI_MODE_DELETE_ON_CLOSE left the file");
}

static void manage(const char* path) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "65536");
    MPI_Info_set(info, "access_style", "write_once");
    MPI_Info_set(info, "no_such_hint", "ignored");
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    int amode;
    MPI_OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode 0x%x", amode);
    MPI_Group g, world;
    int cmp;
    MPI_OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_compare(g, world, &cmp);
    CHECK(cmp == MPI_IDENT, "the file's group is not MPI_COMM_WORLD's");
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    MPI_Info used;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_OK(MPI_File_get_info(fh, &used));
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && !strcmp(value, "65536"), "cb_buffer_size hint reads '%s'", flag ? value : "");
    MPI_Info_get(used, "no_such_hint", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(!flag, "an unknown hint was kept");
    MPI_Info_free(&used);
    MPI_Info_set(info, "cb_buffer_size", "131072");
    MPI_OK(MPI_File_set_info(fh, info));
    MPI_OK(MPI_File_get_info(fh, &used));
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && !strcmp(value, "131072"), "MPI_File_set_info: cb_buffer_size reads '%s'", value);
    MPI_Info_free(&used);
    MPI_Info_free(&info);
    MPI_Offset sz;
    MPI_OK(MPI_File_set_size(fh, 12345));
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 12345, "size %lld after set_size", (long long)sz);
    MPI_OK(MPI_File_preallocate(fh, 20000));
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK(sz >= 20000, "size %lld after preallocate", (long long)sz);
    MPI_OK(MPI_File_set_size(fh, 10));
    MPI_OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 10, "size %lld after shrinking", (long long)sz);
    /* The view as set. */
    MPI_Datatype vec, et, ft;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_OK(MPI_File_set_view(fh, 40, MPI_INT, vec, "native", MPI_INFO_NULL));
    MPI_Offset disp;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    int ni, na, nd, comb;
    MPI_Type_get_envelope(ft, &ni, &na, &nd, &comb);
    CHECK(disp == 40 && et == MPI_INT && comb == MPI_COMBINER_VECTOR && !strcmp(rep, "native"),
          "get_view: disp %lld, combiner %d, datarep %s", (long long)disp, comb, rep);
    MPI_Type_free(&ft);
    MPI_Type_free(&vec);
    MPI_Aint ext;
    MPI_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK(ext == 8, "native extent of MPI_DOUBLE: %ld", (long)ext);
    /* Atomic mode: overlapping strided writes never mix. */
    MPI_OK(MPI_File_set_atomicity(fh, 1));
    MPI_OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag, "atomicity is off after turning it on");
    MPI_Datatype strided;
    MPI_Type_vector(64, 16, 32, MPI_BYTE, &strided);
    MPI_Type_commit(&strided);
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, strided, "native", MPI_INFO_NULL));
    unsigned char* mine = (unsigned char*)xmalloc(64 * 16);
    for (int round = 0; round < 20; ++round) {
        memset(mine, rank + 1, 64 * 16);
        MPI_OK(MPI_File_write_at(fh, 0, mine, 64 * 16, MPI_BYTE, MPI_STATUS_IGNORE));
        MPI_OK(MPI_File_read_at(fh, 0, mine, 64 * 16, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 1; i < 64 * 16; ++i)
            CHECK(mine[i] == mine[0], "atomic mode: byte %d is %d, byte 0 %d", i, mine[i],
                  mine[0]);
    }
    MPI_OK(MPI_File_set_atomicity(fh, 0));
    MPI_Type_free(&strided);
    free(mine);
    MPI_OK(MPI_File_sync(fh));
    MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup("modes");
    char p[512], q[512];
    explicit_offsets(io_path("explicit", p, sizeof p));
    individual_pointers(io_path("individual", p, sizeof p));
    shared_pointer(io_path("shared", p, sizeof p));
    ordered(io_path("ordered", p, sizeof p));
    end_of_file(io_path("eof", p, sizeof p));
    append_and_delete(io_path("append", p, sizeof p), io_path("gone", q, sizeof q));
    manage(io_path("manage", p, sizeof p));
    io_cleanup();
    MPI_Finalize();
    return 0;
}
