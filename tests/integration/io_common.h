/* Helpers of the MPI-IO integration programs: a temporary directory the
 * program creates (rank 0, name broadcast) and removes at the end, file paths
 * in it, and byte-for-byte comparison of two files. */
#ifndef FIBERMPI_TESTS_IO_COMMON_H
#define FIBERMPI_TESTS_IO_COMMON_H

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static char io_dir[256];

/* Creates the directory (collective over MPI_COMM_WORLD). */
static inline void io_setup(const char* tag) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        snprintf(io_dir, sizeof io_dir, "/tmp/fibermpi-%s-XXXXXX", tag);
        CHECK(mkdtemp(io_dir) != NULL, "mkdtemp failed");
    }
    MPI_Bcast(io_dir, sizeof io_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* The path of name in the directory (a static buffer per call site is enough:
 * callers copy it when they keep several). */
static inline const char* io_path(const char* name, char* out, size_t n) {
    snprintf(out, n, "%s/%s", io_dir, name);
    return out;
}

/* Removes the directory and what is left in it (collective). */
static inline void io_cleanup(void) {
    int rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        DIR* d = opendir(io_dir);
        if (d) {
            struct dirent* e;
            char p[512];
            while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                    snprintf(p, sizeof p, "%s/%s", io_dir, e->d_name);
                    unlink(p);
                }
            closedir(d);
        }
        rmdir(io_dir);
    }
}

/* The size of a file (-1 if it does not exist). */
static inline long long io_file_size(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Fails unless files a and b hold the same bytes. */
static inline void io_same_files(const char* a, const char* b) {
    long long na = io_file_size(a), nb = io_file_size(b);
    CHECK(na == nb, "%s has %lld bytes, %s %lld", a, na, b, nb);
    int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
    CHECK(fa >= 0 && fb >= 0, "cannot open %s or %s", a, b);
    static char ba[1 << 16], bb[1 << 16];
    long long at = 0;
    for (;;) {
        ssize_t ra = read(fa, ba, sizeof ba), rb = read(fb, bb, sizeof bb);
        CHECK(ra == rb, "short read comparing %s and %s", a, b);
        if (ra <= 0) break;
        for (ssize_t i = 0; i < ra; ++i)
            if (ba[i] != bb[i])
                test_fail(__FILE__, __LINE__, "%s and %s differ at byte %lld (0x%02x, 0x%02x)", a,
                          b, at + i, (unsigned char)ba[i], (unsigned char)bb[i]);
        at += ra;
    }
    close(fa);
    close(fb);
}

/* MPI_OK for calls whose error class is checked: the class of rc must be cls. */
#define CHECK_CLASS(call, cls)                                                            \
    do {                                                                                  \
        int cc_rc_ = (call);                                                              \
        CHECK(error_class(cc_rc_) == (cls), "%s returned class %d, expected %s (%d)", #call, \
              error_class(cc_rc_), #cls, (cls));                                          \
    } while (0)

#endif /* FIBERMPI_TESTS_IO_COMMON_H */
