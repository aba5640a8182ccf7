/* The large-count (_c) MPI-IO calls of MPI 4.0 with small counts: every read
 * and write (explicit offsets, individual and shared pointers, ordered;
 * blocking, nonblocking, collective, split collective) moves what its int form
 * moves: each rank writes its block with one form and reads it back with the
 * other, and the read's status counts the elements (MPI_Get_count_c).
 */
#include "common.h"
#include "io_common.h"

#define N 24

static int rank, size;
static int out[N], in[N];

static void fill(int seed) {
    for (int i = 0; i < N; ++i) out[i] = seed * 100000 + rank * 100 + i;
    memset(in, 0, sizeof in);
}

static void expect(int seed, MPI_Status* st, const char* what) {
    for (int i = 0; i < N; ++i)
        CHECK(in[i] == seed * 100000 + rank * 100 + i, "%s: element %d is %d", what, i, in[i]);
    if (st) {
        MPI_Count c = -1;
        MPI_OK(MPI_Get_count_c(st, MPI_INT, &c));
        CHECK(c == N, "%s: MPI_Get_count_c gave %lld", what, (long long)c);
    }
}

static void explicit_offsets(MPI_File fh) {
    const MPI_Offset at = (MPI_Offset)rank * N * sizeof(int);
    MPI_Status st;
    MPI_Request rq;
    fill(1);
    MPI_OK(MPI_File_write_at_c(fh, at, out, N, MPI_INT, &st));
    MPI_OK(MPI_File_read_at(fh, at, in, N, MPI_INT, &st));
    expect(1, &st, "write_at_c");
    fill(2);
    MPI_OK(MPI_File_write_at(fh, at, out, N, MPI_INT, &st));
    MPI_OK(MPI_File_read_at_c(fh, at, in, N, MPI_INT, &st));
    expect(2, &st, "read_at_c");
    fill(3);
    MPI_OK(MPI_File_write_at_all_c(fh, at, out, N, MPI_INT, &st));
    MPI_OK(MPI_File_read_at_all_c(fh, at, in, N, MPI_INT, &st));
    expect(3, &st, "write_at_all_c / read_at_all_c");
    fill(4);
    MPI_OK(MPI_File_iwrite_at_c(fh, at, out, N, MPI_INT, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_iread_at_c(fh, at, in, N, MPI_INT, &rq));
    MPI_OK(MPI_Wait(&rq, &st));
    expect(4, &st, "iwrite_at_c / iread_at_c");
    fill(5);
    MPI_OK(MPI_File_iwrite_at_all_c(fh, at, out, N, MPI_INT, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_iread_at_all_c(fh, at, in, N, MPI_INT, &rq));
    MPI_OK(MPI_Wait(&rq, &st));
    expect(5, &st, "iwrite_at_all_c / iread_at_all_c");
    fill(6);
    MPI_OK(MPI_File_write_at_all_begin_c(fh, at, out, N, MPI_INT));
    MPI_OK(MPI_File_write_at_all_end(fh, out, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_read_at_all_begin_c(fh, at, in, N, MPI_INT));
    MPI_OK(MPI_File_read_at_all_end(fh, in, &st));
    expect(6, &st, "*_at_all_begin_c");
}

static void individual(MPI_File fh) {
    const MPI_Offset at = (MPI_Offset)rank * N * sizeof(int);
    MPI_Status st;
    MPI_Request rq;
#define SEEK() MPI_OK(MPI_File_seek(fh, at, MPI_SEEK_SET))
    fill(7);
    SEEK();
    MPI_OK(MPI_File_write_c(fh, out, N, MPI_INT, &st));
    SEEK();
    MPI_OK(MPI_File_read_c(fh, in, N, MPI_INT, &st));
    expect(7, &st, "write_c / read_c");
    MPI_Offset pos = 0;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == at + N * (MPI_Offset)sizeof(int), "the pointer moved to %lld", (long long)pos);
    fill(8);
    SEEK();
    MPI_OK(MPI_File_write_all_c(fh, out, N, MPI_INT, &st));
    SEEK();
    MPI_OK(MPI_File_read_all_c(fh, in, N, MPI_INT, &st));
    expect(8, &st, "write_all_c / read_all_c");
    fill(9);
    SEEK();
    MPI_OK(MPI_File_iwrite_c(fh, out, N, MPI_INT, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    SEEK();
    MPI_OK(MPI_File_iread_c(fh, in, N, MPI_INT, &rq));
    MPI_OK(MPI_Wait(&rq, &st));
    expect(9, &st, "iwrite_c / iread_c");
    fill(10);
    SEEK();
    MPI_OK(MPI_File_iwrite_all_c(fh, out, N, MPI_INT, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    SEEK();
    MPI_OK(MPI_File_iread_all_c(fh, in, N, MPI_INT, &rq));
    MPI_OK(MPI_Wait(&rq, &st));
    expect(10, &st, "iwrite_all_c / iread_all_c");
    fill(11);
    SEEK();
    MPI_OK(MPI_File_write_all_begin_c(fh, out, N, MPI_INT));
    MPI_OK(MPI_File_write_all_end(fh, out, MPI_STATUS_IGNORE));
    SEEK();
    MPI_OK(MPI_File_read_all_begin_c(fh, in, N, MPI_INT));
    MPI_OK(MPI_File_read_all_end(fh, in, &st));
    expect(11, &st, "*_all_begin_c");
#undef SEEK
}

static void shared(MPI_File fh) {
    MPI_Status st;
    MPI_Request rq;
    /* Ordered: rank order, so each rank reads back its own block. */
    fill(12);
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_write_ordered_c(fh, out, N, MPI_INT, &st));
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_read_ordered_c(fh, in, N, MPI_INT, &st));
    expect(12, &st, "write_ordered_c / read_ordered_c");
    fill(13);
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_write_ordered_begin_c(fh, out, N, MPI_INT));
    MPI_OK(MPI_File_write_ordered_end(fh, out, MPI_STATUS_IGNORE));
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_read_ordered_begin_c(fh, in, N, MPI_INT));
    MPI_OK(MPI_File_read_ordered_end(fh, in, &st));
    expect(13, &st, "*_ordered_begin_c");
    /* The shared pointer without order: the last rank alone. */
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    if (rank == size - 1) {
        fill(14);
        MPI_OK(MPI_File_write_shared_c(fh, out, N, MPI_INT, &st));
        MPI_OK(MPI_File_iwrite_shared_c(fh, out, N, MPI_INT, &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_File_read_at(fh, 0, in, N, MPI_INT, &st));
        expect(14, &st, "write_shared_c");
        memset(in, 0, sizeof in);
        MPI_OK(MPI_File_read_at(fh, N * sizeof(int), in, N, MPI_INT, &st));
        expect(14, &st, "iwrite_shared_c");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    if (rank == size - 1) {
        memset(in, 0, sizeof in);
        MPI_OK(MPI_File_read_shared_c(fh, in, N, MPI_INT, &st));
        expect(14, &st, "read_shared_c");
        memset(in, 0, sizeof in);
        MPI_OK(MPI_File_iread_shared_c(fh, in, N, MPI_INT, &rq));
        MPI_OK(MPI_Wait(&rq, &st));
        expect(14, &st, "iread_shared_c");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    io_setup("bigcount");
    char p[512];
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, io_path("c", p, sizeof p),
                         MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    explicit_offsets(fh);
    individual(fh);
    shared(fh);
    MPI_Aint ext;
    MPI_Count ext_c;
    MPI_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    MPI_OK(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &ext_c));
    CHECK(ext == ext_c && ext_c == 8, "get_type_extent_c gave %lld", (long long)ext_c);
    MPI_OK(MPI_File_close(&fh));
    io_cleanup();
    MPI_Finalize();
    return 0;
}
