/* Message rate and multithreaded latency, in the style of the usual
 * micro-benchmark suites. A standard MPI program: build it with any mpicc to
 * compare (mpirun.openmpi -n 2 ./msgrate, mpcrun -n 2 ./msgrate).
 *
 *   msgrate [-mode uni|bi|mt] [-window W] [-min B] [-max B] [-time S] [-reps R]
 *           [-threads T]
 *
 * uni (default): ranks pair up (2i with 2i+1; every pair at once). For each
 *   window, the sender posts W MPI_Isend, the receiver W pre-posted MPI_Irecv,
 *   both complete them with MPI_Waitall, and the receiver answers with a
 *   4-byte message before the next window (as osu_bw and osu_mbw_mr do).
 *   Reported: bytes moved per second over all pairs, and messages per second.
 * bi: both ranks of a pair send a window to each other at once (osu_bibw).
 * mt: multithreaded latency (MPI_THREAD_MULTIPLE): rank 0 has one thread, rank
 *   1 has T threads; rank 0 sends to thread t (tag t) and waits for its reply,
 *   for every t in turn. Reported: half the mean round trip.
 *
 * Each size runs for about -time seconds (default 0.2), -reps times (default
 * 3); the best repetition is reported. The last window's data are checked.
 * Output, one line per size:
 *   msgrate mode=<m> pairs=<p> window=<w> bytes=<b> MBps=<x> msgs_per_s=<y>
 *   latency_mt threads=<t> bytes=<b> latency_us=<x>
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_WINDOW = 1024, MAX_THREADS = 64, ACK_TAG = 999, DATA_TAG = 100 };

static int rank, size;
static int window = 64, reps = 3, nthreads = 4;
static double target = 0.2;

static void fill(char* buf, size_t bytes, int seed) {
    for (size_t i = 0; i < bytes; ++i) buf[i] = (char)(seed + i * 7);
}
static int check(const char* buf, size_t bytes, int seed) {
    for (size_t i = 0; i < bytes; ++i)
        if (buf[i] != (char)(seed + i * 7)) return 0;
    return 1;
}

/* One window of a pair, then the receiver's answer. */
static void one_window(int bi, int sender, int peer, char** sbuf, char** rbuf, size_t bytes,
                      MPI_Request* reqs) {
    int n = 0, ack = 0;
    if (bi || !sender)
        for (int i = 0; i < window; ++i)
            MPI_Irecv(rbuf[i], (int)bytes, MPI_CHAR, peer, DATA_TAG + i, MPI_COMM_WORLD, &reqs[n++]);
    if (bi || sender)
        for (int i = 0; i < window; ++i)
            MPI_Isend(sbuf[i], (int)bytes, MPI_CHAR, peer, DATA_TAG + i, MPI_COMM_WORLD, &reqs[n++]);
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    if (sender)
        MPI_Recv(&ack, 1, MPI_INT, peer, ACK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Send(&ack, 1, MPI_INT, peer, ACK_TAG, MPI_COMM_WORLD);
}

static void rate(int bi, size_t min, size_t max) {
    const int pairs = size / 2;
    const int in_pair = rank < 2 * pairs;
    const int sender = rank % 2 == 0, peer = sender ? rank + 1 : rank - 1;
    char** sbuf = malloc(sizeof(char*) * (size_t)window);
    char** rbuf = malloc(sizeof(char*) * (size_t)window);
    MPI_Request* reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)window);
    for (size_t bytes = min; bytes <= max; bytes = bytes ? bytes * 2 : 1) {
        for (int i = 0; i < window; ++i) {
            sbuf[i] = malloc(bytes ? bytes : 1);
            rbuf[i] = malloc(bytes ? bytes : 1);
            fill(sbuf[i], bytes, rank * 31 + i);
            memset(rbuf[i], 0, bytes ? bytes : 1);
        }
        /* Calibrate: windows per repetition from a short run, rank 0's count. */
        int windows = 4;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int w = 0; w < windows && in_pair; ++w) one_window(bi, sender, peer, sbuf, rbuf, bytes, reqs);
        double per = (MPI_Wtime() - t0) / windows;
        int count = per > 0 ? (int)(target / per) : 1000;
        if (count < 4) count = 4;
        if (count > 1000000) count = 1000000;
        MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
        double best = 0;
        for (int r = 0; r < reps; ++r) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            for (int w = 0; w < count && in_pair; ++w)
                one_window(bi, sender, peer, sbuf, rbuf, bytes, reqs);
            double mine = MPI_Wtime() - start, slowest = 0;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (best == 0 || slowest < best) best = slowest;
        }
        int ok = 1;
        if (in_pair && (bi || !sender))
            for (int i = 0; i < window && ok; ++i) ok = check(rbuf[i], bytes, peer * 31 + i);
        int all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        const double msgs = (double)count * window * pairs * (bi ? 2 : 1);
        if (rank == 0)
            printf("msgrate mode=%s pairs=%d window=%d bytes=%zu MBps=%.2f msgs_per_s=%.0f%s\n",
                   bi ? "bi" : "uni", pairs, window, bytes, msgs * (double)bytes / best / 1e6,
                   msgs / best, all_ok ? "" : " WRONG");
        fflush(stdout);
        for (int i = 0; i < window; ++i) {
            free(sbuf[i]);
            free(rbuf[i]);
        }
        if (bytes == 0) break;
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
}

struct MtArgs {
    int thread;
    long iters;
    size_t bytes;
};

static void* mt_receiver(void* p) {
    struct MtArgs* a = p;
    char* buf = malloc(a->bytes ? a->bytes : 1);
    for (long i = 0; i < a->iters; ++i) {
        MPI_Recv(buf, (int)a->bytes, MPI_CHAR, 0, a->thread, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)a->bytes, MPI_CHAR, 0, a->thread, MPI_COMM_WORLD);
    }
    free(buf);
    return NULL;
}

/* Rank 0 sends iters messages to each thread of rank 1 in turn. */
static double mt_round(size_t bytes, long iters) {
    char* buf = malloc(bytes ? bytes : 1);
    fill(buf, bytes, 5);
    pthread_t th[MAX_THREADS];
    struct MtArgs args[MAX_THREADS];
    if (rank == 1)
        for (int t = 0; t < nthreads; ++t) {
            args[t] = (struct MtArgs){t, iters, bytes};
            pthread_create(&th[t], NULL, mt_receiver, &args[t]);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    if (rank == 0)
        for (long i = 0; i < iters; ++i)
            for (int t = 0; t < nthreads; ++t) {
                MPI_Send(buf, (int)bytes, MPI_CHAR, 1, t, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_CHAR, 1, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
    double elapsed = MPI_Wtime() - start;
    if (rank == 1)
        for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
    if (rank == 0 && !check(buf, bytes, 5)) {
        printf("msgrate: latency_mt data WRONG\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(buf);
    MPI_Bcast(&elapsed, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return elapsed / ((double)iters * nthreads) / 2 * 1e6;
}

static void latency_mt(size_t min, size_t max) {
    for (size_t bytes = min; bytes <= max; bytes = bytes ? bytes * 2 : 1) {
        double per = mt_round(bytes, 20); /* calibration */
        long iters = per > 0 ? (long)(target * 1e6 / (2 * per * nthreads)) : 1000;
        if (iters < 10) iters = 10;
        MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        double best = 0;
        for (int r = 0; r < reps; ++r) {
            double us = mt_round(bytes, iters);
            if (best == 0 || us < best) best = us;
        }
        if (rank == 0) printf("latency_mt threads=%d bytes=%zu latency_us=%.3f\n", nthreads, bytes, best);
        fflush(stdout);
        if (bytes == 0) break;
    }
}

int main(int argc, char** argv) {
    const char* mode = "uni";
    size_t min = 8, max = 8;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-mode") == 0) mode = argv[i + 1];
        else if (strcmp(argv[i], "-window") == 0) window = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-min") == 0) min = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "-max") == 0) max = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "-time") == 0) target = atof(argv[i + 1]);
        else if (strcmp(argv[i], "-reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-threads") == 0) nthreads = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "msgrate: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    const int mt = strcmp(mode, "mt") == 0;
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, mt ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (max < min) max = min;
    if (window < 1 || window > MAX_WINDOW || reps < 1 || nthreads < 1 || nthreads > MAX_THREADS ||
        size < 2 || (mt && provided < MPI_THREAD_MULTIPLE) ||
        (!mt && strcmp(mode, "uni") != 0 && strcmp(mode, "bi") != 0)) {
        if (rank == 0) fprintf(stderr, "msgrate: bad options, too few ranks or no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 2;
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    if (rank == 0) printf("# msgrate %s, %d ranks, %.60s\n", mode, size, version);
    if (mt) latency_mt(min, max);
    else rate(strcmp(mode, "bi") == 0, min, max);
    MPI_Finalize();
    return 0;
}
