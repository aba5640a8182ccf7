/* The getopt family per rank (issue 25): every rank parses as a process of its
 * own would, with glibc's own parser as the reference.
 *
 * 1. As third-party benchmarks do: options parsed with getopt_long before
 *    MPI_Init (meson passes the command line), then MPI. Each rank's values,
 *    optind and permuted argv must equal what glibc's getopt_long gives for the
 *    same command line (world rank 0 runs glibc's parser, reached through
 *    libc's handle, after MPI_Init and broadcasts its trace).
 * 2. A command line of its own per rank (numbers that differ by rank, an
 *    unknown option, abbreviations, "--"), parsed one call at a time with an
 *    MPI_Allreduce between calls, so that the ranks of a core interleave in the
 *    middle of their scans; even ranks use getopt_long, odd ranks getopt with a
 *    '+' (stop at the first operand). Rank 0 computes every rank's reference
 *    trace with glibc's parser and scatters them.
 * A trace is every call's return value, optind, optarg, optopt and long index,
 * then the flag variable and the final argv.
 */
#include <dlfcn.h>
#include <getopt.h>
#include <unistd.h>

#include "common.h"

#define TRACE_SIZE 2048

typedef int (*GetoptLongFn)(int, char* const*, const char*, const struct option*, int*);
typedef int (*GetoptFn)(int, char* const*, const char*);

static int verbose_flag;
static const struct option long_options[] = {
    {"size", required_argument, NULL, 's'},     {"iterations", required_argument, NULL, 'n'},
    {"verbose", no_argument, &verbose_flag, 1}, {"name", required_argument, NULL, 'N'},
    {"warmup", optional_argument, NULL, 'w'},   {"check", no_argument, NULL, 'c'},
    {"checkpoint", required_argument, NULL, 'p'}, {NULL, 0, NULL, 0}};
static const char* const kLongOptstring = "s:n:N:w::cp:v";
static const char* const kShortOptstring = "+s:n:c";

static void append(char* trace, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char* trace, const char* fmt, ...) {
    size_t used = strlen(trace);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(trace + used, TRACE_SIZE - used, fmt, ap);
    va_end(ap);
}

/* optopt only where it means something: glibc's carries over from one scan to
 * the next, which a fresh process would not show. */
static void record_step(char* trace, int c, int longindex) {
    append(trace, "%d,%d,%s,%d,%d;", c, optind, optarg ? optarg : "-",
           c == '?' || c == ':' ? optopt : 0, longindex);
}

static void record_end(char* trace, int argc, char** argv) {
    append(trace, "| verbose %d | argv", verbose_flag);
    for (int i = 0; i < argc; ++i) append(trace, " %s", argv[i]);
}

/* A fresh scan of a copy of argv, all at once, with the given parser. */
static void trace_scan(char* trace, int argc, char** argv, GetoptLongFn long_fn, GetoptFn short_fn) {
    char** copy = (char**)xmalloc(sizeof(char*) * (size_t)(argc + 1));
    memcpy(copy, argv, sizeof(char*) * (size_t)(argc + 1));
    trace[0] = '\0';
    optind = 0;
    verbose_flag = 0;
    for (;;) {
        int longindex = -1;
        const int c = long_fn ? long_fn(argc, copy, kLongOptstring, long_options, &longindex)
                              : short_fn(argc, copy, kShortOptstring);
        record_step(trace, c, longindex);
        if (c == -1) break;
    }
    record_end(trace, argc, copy);
    free(copy);
    optind = 0;  /* the next scan starts afresh */
}

/* glibc's own parsers, not the ones the program's calls reach. */
static GetoptLongFn glibc_getopt_long(void) {
    void* libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    CHECK(libc, "libc.so.6 is not loaded");
    GetoptLongFn fn = (GetoptLongFn)dlsym(libc, "getopt_long");
    CHECK(fn, "no getopt_long in libc");
    return fn;
}
static GetoptFn glibc_getopt(void) {
    void* libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    GetoptFn fn = (GetoptFn)dlsym(libc, "getopt");
    CHECK(fn, "no getopt in libc");
    return fn;
}

/* Part 2's command line of rank r (static strings: the traces compare optarg). */
static int rank_command_line(int r, char** argv, char* storage) {
    char* p = storage;
    int argc = 0;
#define ARG(...) (argv[argc++] = p, p += sprintf(p, __VA_ARGS__) + 1)
    ARG("prog%d", r);
    if (r % 2 == 0) {
        ARG("--size=%d", 1000 + r);
        ARG("input%d", r);
        ARG("-n");
        ARG("%d", 3 * r);
        ARG("--verb");
        ARG("--name");
        ARG("rank%d", r);
        ARG("-x");                   /* unknown: '?' with optopt 'x' */
        ARG("--check");              /* exact, although "check" abbreviates checkpoint too */
        ARG("--che");                /* ambiguous */
        if (r % 4)
            ARG("-w");
        else
            ARG("-w%d", r);
        ARG("--");
        ARG("-s");
    } else {
        ARG("-cs%d", r);
        ARG("-n");
        ARG("%d", r * 7);
        ARG("-q");
        ARG("operand%d", r);         /* '+': the scan stops here */
        ARG("-c");
    }
#undef ARG
    argv[argc] = NULL;
    return argc;
}

int main(int argc, char** argv) {
    /* 1. Before MPI_Init, as the benchmarks do. */
    char** original = (char**)xmalloc(sizeof(char*) * (size_t)(argc + 1));
    memcpy(original, argv, sizeof(char*) * (size_t)(argc + 1));
    char* mine = (char*)xmalloc(TRACE_SIZE);
    mine[0] = '\0';
    opterr = 0;
    for (;;) {
        int longindex = -1;
        const int c = getopt_long(argc, argv, kLongOptstring, long_options, &longindex);
        record_step(mine, c, longindex);
        if (c == -1) break;
    }
    record_end(mine, argc, argv);

    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char* want = (char*)xmalloc(TRACE_SIZE);
    if (rank == 0) trace_scan(want, argc, original, glibc_getopt_long(), NULL);
    MPI_OK(MPI_Bcast(want, TRACE_SIZE, MPI_CHAR, 0, MPI_COMM_WORLD));
    CHECK(strcmp(mine, want) == 0, "getopt_long before MPI_Init:\n  got  %s\n  want %s", mine,
          want);
    CHECK(argc > 1, "run this test with options");

    /* 2. Per-rank command lines, interleaved with MPI calls. */
    char* wants = NULL;
    if (rank == 0) {
        wants = (char*)xmalloc((size_t)size * TRACE_SIZE);
        for (int r = 0; r < size; ++r) {
            char* rargv[32];
            char storage[512];
            const int rargc = rank_command_line(r, rargv, storage);
            trace_scan(wants + (size_t)r * TRACE_SIZE, rargc, rargv,
                       r % 2 == 0 ? glibc_getopt_long() : NULL, glibc_getopt());
        }
    }
    MPI_OK(MPI_Scatter(wants, TRACE_SIZE, MPI_CHAR, want, TRACE_SIZE, MPI_CHAR, 0,
                       MPI_COMM_WORLD));
    char* rargv[32];
    char storage[512];
    const int rargc = rank_command_line(rank, rargv, storage);
    mine[0] = '\0';
    optind = 0;
    opterr = 0;
    verbose_flag = 0;
    int done = 0;
    for (;;) {
        if (!done) {
            int longindex = -1;
            const int c = rank % 2 == 0
                              ? getopt_long(rargc, rargv, kLongOptstring, long_options, &longindex)
                              : getopt(rargc, rargv, kShortOptstring);
            record_step(mine, c, longindex);
            done = c == -1;
        }
        int all_done = 0;
        MPI_OK(MPI_Allreduce(&done, &all_done, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        if (all_done) break;
    }
    record_end(mine, rargc, rargv);
    CHECK(strcmp(mine, want) == 0, "rank %d's own command line:\n  got  %s\n  want %s", rank,
          mine, want);

    free(wants);
    free(want);
    free(mine);
    free(original);
    MPI_OK(MPI_Finalize());
    return 0;
}
