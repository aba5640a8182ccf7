/* MPI-IO throughput. A standard MPI program: build it with any mpicc to
 * compare MPI implementations on the same file system.
 *
 *   mpcrun -n 16 -N 2 ./io_bench [-mode coll|indep|posix] [-mib M] [-block B]
 *                                [-iters N] [-dir D] [-fsync]
 *
 * coll   a 3-D array of doubles of M MiB (default 1024; a cube, side rounded
 *        down) in a block decomposition (MPI_Dims_create), written with
 *        MPI_File_set_view(subarray) + MPI_File_write_all, then read back with
 *        MPI_File_read_all and checked;
 * indep  every rank writes B MiB (default 16) at offset rank * B MiB with
 *        MPI_File_write_at (independent, contiguous);
 * posix  rank 0 alone writes the bytes of indep (size * B MiB) with pwrite,
 *        one call per B MiB: the single-process baseline of indep;
 * overlap rank 0 starts MPI_File_iwrite_at of B MiB, computes (no MPI call)
 *        for as long as a blocking write of them took, then waits; the other
 *        ranks wait in MPI_Barrier meanwhile. Prints the time left in
 *        MPI_Wait: what an MPI that progresses I/O while the rank computes
 *        hides.
 *
 * Each iteration deletes the file, then times (slowest rank, between
 * barriers) open + write (+ MPI_File_sync with -fsync) + close, and for coll
 * open + read + close; and, apart, the data calls alone (write_all, read_all,
 * write_at, pwrite: from a barrier after the open to the slowest rank's end).
 * Without -fsync the data go to the page cache only. Prints every iteration
 * and the medians in MB/s (10^6 bytes per second).
 */
#include <fcntl.h>
#include <math.h>
#include <time.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

static double value(long z, long y, long x) { return (double)((z * 7919 + y) * 104729 + x); }

static int cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Seconds the slowest rank spent since start. */
static double slowest(double start) {
    double mine = MPI_Wtime() - start, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Computes (no MPI call) for s seconds. */
static double compute(double s) {
    double x = 1, t0 = now();
    while (now() - t0 < s)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    return x;
}

static void remove_file(const char* path) {
    if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);  /* may not exist: errors return */
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* mode = "coll";
    const char* dir = "/tmp";
    long mib = 1024, block = 16;
    int iters = 5, do_sync = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-mode") && i + 1 < argc) mode = argv[++i];
        else if (!strcmp(argv[i], "-mib") && i + 1 < argc) mib = atol(argv[++i]);
        else if (!strcmp(argv[i], "-block") && i + 1 < argc) block = atol(argv[++i]);
        else if (!strcmp(argv[i], "-iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "-fsync")) do_sync = 1;
    }
    char path[4096] = "";
    if (rank == 0) snprintf(path, sizeof path, "%s/io_bench.%d.dat", dir, (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);

    double* wt = (double*)calloc((size_t)iters, sizeof(double));
    double* rt = (double*)calloc((size_t)iters, sizeof(double));
    double* wc = (double*)calloc((size_t)iters, sizeof(double));  /* data calls only */
    double* rc = (double*)calloc((size_t)iters, sizeof(double));
    double bytes = 0;
    int ok = 1;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    if (!strcmp(mode, "coll")) {
        const long side = (long)floor(cbrt((double)mib * 1048576.0 / 8.0) + 1e-9);
        int gs[3] = {(int)side, (int)side, (int)side}, dims[3] = {0, 0, 0}, lo[3], n[3];
        MPI_Dims_create(size, 3, dims);
        int c[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
        for (int d = 0; d < 3; ++d) {
            lo[d] = (int)((long)c[d] * side / dims[d]);
            n[d] = (int)((long)(c[d] + 1) * side / dims[d]) - lo[d];
        }
        const size_t cells = (size_t)n[0] * n[1] * n[2];
        double* a = (double*)malloc(cells * sizeof(double));
        for (int z = 0; z < n[0]; ++z)
            for (int y = 0; y < n[1]; ++y)
                for (int x = 0; x < n[2]; ++x)
                    a[((size_t)z * n[1] + y) * n[2] + x] = value(lo[0] + z, lo[1] + y, lo[2] + x);
        MPI_Datatype ft;
        MPI_Type_create_subarray(3, gs, n, lo, MPI_ORDER_C, MPI_DOUBLE, &ft);
        MPI_Type_commit(&ft);
        bytes = (double)side * side * side * 8;
        for (int it = 0; it < iters; ++it) {
            remove_file(path);
            MPI_File fh;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                          &fh);
            MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
            MPI_Barrier(MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            MPI_File_write_all(fh, a, (int)cells, MPI_DOUBLE, MPI_STATUS_IGNORE);
            wc[it] = slowest(t1);
            if (do_sync) MPI_File_sync(fh);
            MPI_File_close(&fh);
            wt[it] = slowest(t0);
            memset(a, 0, cells * sizeof(double));
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
            MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
            MPI_Barrier(MPI_COMM_WORLD);
            t1 = MPI_Wtime();
            MPI_File_read_all(fh, a, (int)cells, MPI_DOUBLE, MPI_STATUS_IGNORE);
            rc[it] = slowest(t1);
            MPI_File_close(&fh);
            rt[it] = slowest(t0);
            for (int z = 0; z < n[0]; ++z)
                for (int y = 0; y < n[1]; ++y)
                    for (int x = 0; x < n[2]; ++x)
                        ok &= a[((size_t)z * n[1] + y) * n[2] + x] ==
                              value(lo[0] + z, lo[1] + y, lo[2] + x);
        }
        MPI_Type_free(&ft);
        free(a);
    } else if (!strcmp(mode, "overlap")) {
        const size_t len = (size_t)block << 20;
        char* buf = (char*)malloc(len);
        memset(buf, 7, len);
        bytes = (double)len;
        double sink = 0;
        for (int it = 0; it < iters; ++it) {
            remove_file(path);
            MPI_File fh;
            MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                          &fh);
            double t0 = MPI_Wtime();
            if (rank == 0) MPI_File_write_at(fh, 0, buf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
            double blocking = MPI_Wtime() - t0;
            MPI_Bcast(&blocking, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                MPI_Request r;
                MPI_File_iwrite_at(fh, (MPI_Offset)len, buf, (int)len, MPI_BYTE, &r);
                sink += compute(blocking);
                t0 = MPI_Wtime();
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                rt[it] = MPI_Wtime() - t0;
            }
            wt[it] = blocking;
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_File_close(&fh);
        }
        if (sink == 42) printf("%g\n", sink);
        free(buf);
    } else {
        const size_t len = (size_t)block << 20;
        const int posix = !strcmp(mode, "posix");
        char* buf = (char*)malloc(posix && rank == 0 ? len * (size_t)size : len);
        for (size_t i = 0; i < (posix && rank == 0 ? len * (size_t)size : len); ++i)
            buf[i] = (char)(i * 131 + (size_t)rank);
        bytes = (double)len * size;
        for (int it = 0; it < iters; ++it) {
            remove_file(path);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (posix) {
                int fd = rank == 0 ? open(path, O_CREAT | O_WRONLY, 0644) : -1;
                MPI_Barrier(MPI_COMM_WORLD);
                double t1 = MPI_Wtime();
                if (rank == 0)
                    for (int r = 0; r < size; ++r)
                        ok &= pwrite(fd, buf + len * (size_t)r, len, (off_t)len * r) == (ssize_t)len;
                wc[it] = slowest(t1);
                if (rank == 0) {
                    if (do_sync) fsync(fd);
                    close(fd);
                }
            } else {
                MPI_File fh;
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                              MPI_INFO_NULL, &fh);
                MPI_Status st;
                int count = 0;
                MPI_Barrier(MPI_COMM_WORLD);
                double t1 = MPI_Wtime();
                MPI_File_write_at(fh, (MPI_Offset)len * rank, buf, (int)len, MPI_BYTE, &st);
                wc[it] = slowest(t1);
                MPI_Get_count(&st, MPI_BYTE, &count);
                ok &= count == (int)len;
                if (do_sync) MPI_File_sync(fh);
                MPI_File_close(&fh);
            }
            wt[it] = slowest(t0);
        }
        free(buf);
    }
    remove_file(path);
    int all_ok = 0;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0 && !strcmp(mode, "overlap")) {
        for (int it = 0; it < iters; ++it)
            printf("iteration %d: blocking write %.3f s, MPI_Wait after computing as long %.3f s\n",
                   it, wt[it], rt[it]);
        const double b = median(wt, iters), w = median(rt, iters);
        printf("io_bench overlap: %d ranks, %.0f MiB: blocking write %.3f s, left in MPI_Wait "
               "%.3f s: %.0f%% hidden (medians of %d)\n",
               size, bytes / 1048576, b, w, 100 * (1 - w / b), iters);
    } else if (rank == 0) {
        for (int it = 0; it < iters; ++it)
            printf("iteration %d: write %.3f s%s%.3f s\n", it, wt[it],
                   strcmp(mode, "coll") ? "" : ", read ", strcmp(mode, "coll") ? 0.0 : rt[it]);
        const double w = bytes / median(wt, iters) / 1e6, wcall = bytes / median(wc, iters) / 1e6;
        printf("io_bench %s: %d ranks, %.0f MiB%s: write %.0f MB/s (calls only %.0f)", mode, size,
               bytes / 1048576, do_sync ? ", fsync" : "", w, wcall);
        if (!strcmp(mode, "coll"))
            printf(", read %.0f MB/s (calls only %.0f)", bytes / median(rt, iters) / 1e6,
                   bytes / median(rc, iters) / 1e6);
        printf(" (medians of %d)%s\n", iters, all_ok ? "" : " WRONG DATA");
    }
    free(wt);
    free(rt);
    free(wc);
    free(rc);
    MPI_Finalize();
    return rank == 0 && !all_ok;
}
