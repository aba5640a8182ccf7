/* Overlap benchmarks of the collaborative-polling papers, as a plain MPI
 * program (it builds with any MPI's mpicc).
 *
 *   overlap [-p2p | -nbc] [-nbc-sizes LIST] [-nbc-idle | -nbc-waiters] [-iters N]
 *           [-factor F] [sizes...]
 *
 * Sizes take K and M suffixes; LIST is comma-separated (8,32K,1M). Without
 * -p2p or -nbc both parts run (the point-to-point one only at 4 ranks).
 *
 * Point-to-point part (-p2p; default sizes 32K 1M 32M): 4 ranks over 2
 * nodes, ranks 0 and 1 on the first node, 2 and 3 on the second (block
 * distribution). Rank 0 talks to rank 2; ranks 1 and 3 stay idle inside MPI
 * (a barrier), which is what lets a thread-based MPI progress the busy ranks'
 * messages.
 * (a) Total time of Isend/Recv, Irecv/Send and Isend/Irecv against the work
 *     time: without overlap t = t_comm + t_work, with full overlap max of both.
 * (b) Overlap ratio T_work / T_total with the work on the sender, on the
 *     receiver, on both.
 * (c) Receiver's MPI_Wait time after computing well past the transfer time.
 *
 * Nonblocking-collective part (-nbc; any rank count; default sizes 8 32K 1M,
 * or -nbc-sizes, or the positional sizes with -nbc): the overhead of
 * MPI_Iallreduce (doubles, MPI_SUM) and MPI_Ibcast (bytes, root 0) when every
 * rank computes between the post and the wait (with -nbc-idle: the even
 * ranks run them and compute, the odd ones wait in MPI; with -nbc-waiters:
 * every rank runs them, the odd ones wait for them at once instead of
 * computing, and the figures are the computing ranks'), by the two methods of the
 * NBC benchmarks:
 * - time-based: post, compute for a fixed time T, wait: overhead = total - T;
 * - work-based: post, compute a fixed number of work units calibrated to T
 *   when alone, wait: overhead = total - (time of those units alone), so a
 *   progress engine that slows the computation down shows as overhead too.
 * T is F times the blocking collective's time (-factor, default 2). Each
 * value is the median over N iterations (-iters, default 20) of the slowest
 * rank's.
 *
 * Besides the human-readable tables, every result is one machine-readable line:
 *   OVERLAP part=curve pattern=.. size=.. work_us=.. total_us=.. nooverlap_us=.. full_us=..
 *   OVERLAP part=ratio side=.. size=.. work_us=.. total_us=.. ratio=..
 *   OVERLAP part=receiver-wait size=.. median_us=.. min_us=.. max_us=.. tcomm_us=..
 *   NBC op=.. size=.. method=time|work ranks=.. blocking_us=.. total_us=.. work_us=..
 *       overhead_us=.. work_measured_us=..       (one line)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* Busy work for about `seconds`, with no MPI call. */
static void work(double seconds) {
    double t0 = MPI_Wtime(), x = 1.0;
    while (MPI_Wtime() - t0 < seconds)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* A fixed amount of busy work: `units` times the inner loop of work(). */
static void work_units(long units) {
    double x = 1.0;
    for (long u = 0; u < units; ++u)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
}

static size_t parse_size(const char* s) {
    char* end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k') v *= 1024;
    if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
    return (size_t)v;
}

static int parse_size_list(char* list, size_t* sizes, int max) {
    int n = 0;
    for (char* tok = strtok(list, ","); tok && n < max; tok = strtok(NULL, ","))
        sizes[n++] = parse_size(tok);
    return n;
}

static void sort(double* v, int n) {
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            if (v[j] < v[i]) {
                double x = v[i];
                v[i] = v[j];
                v[j] = x;
            }
}

static double median(double* v, int n) {
    sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- point-to-point overlap ---------------------------------------------- */

enum Pattern { ISEND_RECV, IRECV_SEND, ISEND_IRECV };
static const char* pattern_name[] = {"Isend/Recv", "Irecv/Send", "Isend/Irecv"};

/* One exchange rank 0 -> rank 2 with `w` seconds of work on the chosen sides;
 * returns the time measured on the side that does the nonblocking call. */
static double exchange(int rank, char* buf, size_t n, enum Pattern p, double w_send,
                       double w_recv) {
    MPI_Request req;
    double t0, t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        t0 = MPI_Wtime();
        if (p == IRECV_SEND) {
            work(w_send);
            MPI_Send(buf, (int)n, MPI_BYTE, 2, 0, MPI_COMM_WORLD);
        } else {
            MPI_Isend(buf, (int)n, MPI_BYTE, 2, 0, MPI_COMM_WORLD, &req);
            work(w_send);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t = MPI_Wtime() - t0;
    } else if (rank == 2) {
        t0 = MPI_Wtime();
        if (p == ISEND_RECV) {
            work(w_recv);
            MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req);
            work(w_recv);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t = MPI_Wtime() - t0;
    }
    /* The slowest of the two is the exchange's time. */
    double all;
    MPI_Allreduce(&t, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

static void p2p_part(int rank, const size_t* sizes, int nsizes) {
    size_t max = 0;
    for (int i = 0; i < nsizes; ++i) max = sizes[i] > max ? sizes[i] : max;
    char* buf = malloc(max ? max : 1);
    memset(buf, rank, max ? max : 1);

    for (int s = 0; s < nsizes; ++s) {
        size_t n = sizes[s];
        /* Communication time alone (median of 5). */
        double tc[5];
        for (int i = 0; i < 5; ++i) tc[i] = exchange(rank, buf, n, ISEND_IRECV, 0, 0);
        double t_comm = median(tc, 5);
        if (rank == 0) {
            printf("# size %zu bytes: t_comm %.1f us\n", n, t_comm * 1e6);
            printf("# (a) total time vs work time (work on both sides)\n");
            printf("%-12s %12s %12s %12s %12s\n", "pattern", "work(us)", "total(us)", "no-ovl(us)",
                   "full(us)");
        }
        for (int p = 0; p < 3; ++p) {
            for (int k = 0; k <= 4; ++k) {
                double w = t_comm * k / 2.0;
                double t = exchange(rank, buf, n, (enum Pattern)p, w, w);
                double full = t_comm > w ? t_comm : w;
                if (rank == 0) {
                    printf("%-12s %12.1f %12.1f %12.1f %12.1f\n", pattern_name[p], w * 1e6, t * 1e6,
                           (t_comm + w) * 1e6, full * 1e6);
                    printf(
                        "OVERLAP part=curve pattern=%s size=%zu work_us=%.1f total_us=%.1f "
                        "nooverlap_us=%.1f full_us=%.1f\n",
                        pattern_name[p], n, w * 1e6, t * 1e6, (t_comm + w) * 1e6, full * 1e6);
                }
            }
        }
        if (rank == 0) printf("# (b) overlap ratio T_work/T_total, work = 2 x t_comm\n");
        const char* side_name[] = {"sender", "receiver", "both"};
        for (int side = 0; side < 3; ++side) {
            double w = 2 * t_comm;
            double t = exchange(rank, buf, n, ISEND_IRECV, side != 1 ? w : 0, side != 0 ? w : 0);
            if (rank == 0) {
                printf("overlap-ratio %-9s %6.3f\n", side_name[side], w / t);
                printf(
                    "OVERLAP part=ratio side=%s size=%zu work_us=%.1f total_us=%.1f ratio=%.3f\n",
                    side_name[side], n, w * 1e6, t * 1e6, w / t);
            }
        }
        /* (c) receiver's Wait after computing past the transfer. */
        double waits[5];
        for (int i = 0; i < 5; ++i) {
            MPI_Request req;
            double t_wait = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                /* Send once the receiver is computing: its request to send
                 * arrives while no call of the receiver is inside MPI. */
                work(0.002);
                MPI_Send(buf, (int)n, MPI_BYTE, 2, 1, MPI_COMM_WORLD);
            } else if (rank == 2) {
                MPI_Irecv(buf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req);
                work(3 * t_comm + 0.004);
                double t0 = MPI_Wtime();
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                t_wait = MPI_Wtime() - t0;
            }
            MPI_Allreduce(&t_wait, &waits[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        sort(waits, 5);
        if (rank == 0) {
            printf("receiver-wait %zu median %.1f us (min %.1f, max %.1f; t_comm %.1f us)\n\n", n,
                   waits[2] * 1e6, waits[0] * 1e6, waits[4] * 1e6, t_comm * 1e6);
            printf(
                "OVERLAP part=receiver-wait size=%zu median_us=%.1f min_us=%.1f max_us=%.1f "
                "tcomm_us=%.1f\n",
                n, waits[2] * 1e6, waits[0] * 1e6, waits[4] * 1e6, t_comm * 1e6);
        }
        fflush(stdout);
    }
    free(buf);
}

/* ---- nonblocking-collective overhead ------------------------------------- */

enum NbcOp { IALLREDUCE, IBCAST };

/* The ranks that run the nonblocking collectives: all, or with -nbc-idle the
 * even ranks only, while the odd ones wait inside MPI (a barrier) and may
 * progress the others' collectives (one idle rank per node process with the
 * block distribution of 4 ranks over 2 nodes). */
static MPI_Comm nbc_comm;
static const char* nbc_name[] = {"Iallreduce", "Ibcast"};

struct NbcBuffers {
    double* in;
    double* out;
    char* bytes;
};

static void nbc_post(enum NbcOp op, size_t n, struct NbcBuffers* b, MPI_Request* req) {
    if (op == IALLREDUCE)
        MPI_Iallreduce(b->in, b->out, (int)(n / sizeof(double)), MPI_DOUBLE, MPI_SUM,
                       nbc_comm, req);
    else
        MPI_Ibcast(b->bytes, (int)n, MPI_BYTE, 0, nbc_comm, req);
}

static void nbc_blocking(enum NbcOp op, size_t n, struct NbcBuffers* b) {
    if (op == IALLREDUCE)
        MPI_Allreduce(b->in, b->out, (int)(n / sizeof(double)), MPI_DOUBLE, MPI_SUM,
                      nbc_comm);
    else
        MPI_Bcast(b->bytes, (int)n, MPI_BYTE, 0, nbc_comm);
}

/* Seconds per work unit for this rank: the best of 5 runs of about 10 ms
 * (other load on the machine only ever adds time). */
static double calibrate_unit(void) {
    long units = 64;
    double t;
    for (;;) {
        double t0 = MPI_Wtime();
        work_units(units);
        t = MPI_Wtime() - t0;
        if (t > 0.002 || units > (1L << 30)) break;
        units *= 2;
    }
    units = (long)(units * 0.01 / t) + 1;
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
        MPI_Barrier(nbc_comm);
        double t0 = MPI_Wtime();
        work_units(units);
        t = MPI_Wtime() - t0;
        if (t < best) best = t;
    }
    return best / (double)units;
}

/* Median over `iters` of the slowest rank's value of each of the three. */
static void slowest_medians(double (*per_iter)[3], int iters, double out[3]) {
    double* col = malloc(sizeof(double) * (size_t)iters);
    for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < iters; ++i) col[i] = per_iter[i][k];
        out[k] = median(col, iters);
    }
    free(col);
}

static void nbc_part(int rank, int size, const size_t* sizes, int nsizes, int iters, double factor,
                     int waiter) {
    size_t max = sizeof(double);
    for (int i = 0; i < nsizes; ++i) max = sizes[i] > max ? sizes[i] : max;
    struct NbcBuffers b;
    b.in = malloc(max);
    b.out = malloc(max);
    b.bytes = malloc(max);
    for (size_t i = 0; i < max / sizeof(double); ++i) b.in[i] = rank + 1;
    memset(b.bytes, rank, max);
    double(*rows)[3] = malloc(sizeof(double[3]) * (size_t)iters);
    double* col = malloc(sizeof(double) * (size_t)iters);

    const double unit = calibrate_unit();
    double slowest_unit, fastest_unit;
    MPI_Reduce(&unit, &slowest_unit, 1, MPI_DOUBLE, MPI_MAX, 0, nbc_comm);
    MPI_Allreduce(&unit, &fastest_unit, 1, MPI_DOUBLE, MPI_MIN, nbc_comm);
    if (rank == 0) {
        printf(
            "# nonblocking collectives: %d ranks, compute = %.1f x blocking time, "
            "work unit %.3f us, median of %d\n",
            size, factor, slowest_unit * 1e6, iters);
        printf("%-11s %10s %6s %12s %12s %12s %12s\n", "op", "bytes", "method", "blocking(us)",
               "total(us)", "work(us)", "overhead(us)");
    }
    for (int op = IALLREDUCE; op <= IBCAST; ++op) {
        for (int s = 0; s < nsizes; ++s) {
            size_t n = sizes[s];
            if (op == IALLREDUCE && n < sizeof(double)) n = sizeof(double);
            for (int i = 0; i < 2; ++i) nbc_blocking((enum NbcOp)op, n, &b); /* warm-up */
            for (int i = 0; i < iters; ++i) {
                MPI_Barrier(nbc_comm);
                double t0 = MPI_Wtime();
                nbc_blocking((enum NbcOp)op, n, &b);
                double t = MPI_Wtime() - t0;
                MPI_Allreduce(&t, &col[i], 1, MPI_DOUBLE, MPI_MAX, nbc_comm);
            }
            const double blocking = median(col, iters);
            double compute = factor * blocking;
            if (compute < 10e-6) compute = 10e-6; /* above the timer's and loop's grain */
            /* The same number of units on every rank, T long on the fastest. */
            const long units =
                (long)(compute / fastest_unit + 0.5) > 0 ? (long)(compute / fastest_unit + 0.5) : 1;
            const double units_alone = (double)units * unit;

            for (int method = 0; method < 2; ++method) {
                double measured_work[2] = {0, 0}; /* sum, for the work-based mean */
                for (int i = 0; i < iters; ++i) {
                    MPI_Request req;
                    MPI_Barrier(nbc_comm);
                    double t0 = MPI_Wtime();
                    nbc_post((enum NbcOp)op, n, &b, &req);
                    double w0 = MPI_Wtime();
                    if (waiter)
                        ; /* idle: straight into MPI_Wait */
                    else if (method == 0)
                        work(compute);
                    else
                        work_units(units);
                    double w = MPI_Wtime() - w0;
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    double total = MPI_Wtime() - t0;
                    /* time-based: the work is the time actually spent (T plus
                     * the loop's grain); work-based: the units' time alone. A
                     * waiter reports nothing (the maximum is the others'). */
                    double ref = method == 0 ? w : units_alone;
                    double mine[3] = {total, ref, total - ref};
                    if (waiter) mine[0] = mine[1] = mine[2] = -1e30;
                    MPI_Allreduce(mine, rows[i], 3, MPI_DOUBLE, MPI_MAX, nbc_comm);
                    if (!waiter) measured_work[0] += w;
                }
                double med[3];
                slowest_medians(rows, iters, med);
                double mean_w = measured_work[0] / iters, slowest_w;
                MPI_Allreduce(&mean_w, &slowest_w, 1, MPI_DOUBLE, MPI_MAX, nbc_comm);
                const char* mname = method == 0 ? "time" : "work";
                if (rank == 0) {
                    printf("%-11s %10zu %6s %12.1f %12.1f %12.1f %12.1f\n", nbc_name[op], n, mname,
                           blocking * 1e6, med[0] * 1e6, med[1] * 1e6, med[2] * 1e6);
                    printf(
                        "NBC op=%s size=%zu method=%s ranks=%d blocking_us=%.2f total_us=%.2f "
                        "work_us=%.2f overhead_us=%.2f work_measured_us=%.2f\n",
                        nbc_name[op], n, mname, size, blocking * 1e6, med[0] * 1e6, med[1] * 1e6,
                        med[2] * 1e6, slowest_w * 1e6);
                    fflush(stdout);
                }
            }
        }
    }
    free(col);
    free(rows);
    free(b.in);
    free(b.out);
    free(b.bytes);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int want_p2p = 1, want_nbc = 1, iters = 20, nbc_idle = 0, nbc_waiters = 0;
    double factor = 2.0;
    size_t sizes[16], nbc_sizes[16];
    int nsizes = 0, n_nbc_sizes = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-p2p") == 0)
            want_nbc = 0;
        else if (strcmp(argv[i], "-nbc") == 0)
            want_p2p = 0;
        else if (strcmp(argv[i], "-iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "-factor") == 0 && i + 1 < argc)
            factor = atof(argv[++i]);
        else if (strcmp(argv[i], "-nbc-idle") == 0)
            nbc_idle = 1;
        else if (strcmp(argv[i], "-nbc-waiters") == 0)
            nbc_waiters = 1;
        else if (strcmp(argv[i], "-nbc-sizes") == 0 && i + 1 < argc)
            n_nbc_sizes = parse_size_list(argv[++i], nbc_sizes, 16);
        else if (nsizes < 16)
            sizes[nsizes++] = parse_size(argv[i]);
    }
    if (iters < 1) iters = 1;
    if (factor <= 0) factor = 2.0;

    if (want_p2p && size != 4) {
        if (want_nbc) {
            if (rank == 0) printf("# point-to-point part skipped: it needs 4 ranks on 2 nodes\n");
            want_p2p = 0;
        } else {
            /* Rank 0 says why and ends the job; the others wait for that. */
            if (rank == 0) {
                fprintf(stderr, "overlap: run with 4 ranks on 2 nodes (mpcrun -n 4 -N 2)\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    if (want_p2p) {
        if (nsizes == 0) {
            size_t defaults[] = {32 << 10, 1 << 20, 32 << 20};
            p2p_part(rank, defaults, 3);
        } else {
            p2p_part(rank, sizes, nsizes);
        }
    }
    if (want_nbc) {
        if (n_nbc_sizes == 0 && !want_p2p && nsizes > 0) {
            memcpy(nbc_sizes, sizes, sizeof(size_t) * (size_t)nsizes);
            n_nbc_sizes = nsizes;
        }
        if (n_nbc_sizes == 0) {
            nbc_sizes[0] = 8;
            nbc_sizes[1] = 32 << 10;
            nbc_sizes[2] = 1 << 20;
            n_nbc_sizes = 3;
        }
        nbc_comm = MPI_COMM_WORLD;
        if (nbc_idle && size >= 2) {
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &nbc_comm);
            if (rank % 2 == 0) {
                int n;
                MPI_Comm_size(nbc_comm, &n);
                nbc_part(rank / 2, n, nbc_sizes, n_nbc_sizes, iters, factor, 0);
            }
            MPI_Barrier(MPI_COMM_WORLD); /* the idle ranks wait here */
            MPI_Comm_free(&nbc_comm);
        } else {
            nbc_part(rank, size, nbc_sizes, n_nbc_sizes, iters, factor,
                     nbc_waiters && size >= 2 && rank % 2 == 1);
        }
    }
    MPI_Finalize();
    return 0;
}
