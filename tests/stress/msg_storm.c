/* A seeded, randomized storm of point-to-point messages, every delivery checked
 * against a model of MPI's matching rules.
 *
 * Rounds. In each round every rank derives the same plan from (seed, round):
 * for each sender a list of messages (destination, communicator, tag, size
 * from 0 B to --max-size, send mode). Every rank starts all its sends first
 * (Isend, Issend, Bsend, persistent Send_init/Start, blocking Send for tiny
 * ones), then receives what the plan says it gets, choosing at random among
 * Irecv with specific or wildcard (ANY_SOURCE / ANY_TAG) patterns, blocking
 * Recv, Probe / Iprobe + Recv, Mprobe / Improbe + Mrecv / Imrecv, cancels,
 * Test / Testany / Testsome / Waitany / Waitsome. An Allreduce ends the round.
 * Sizes straddle every protocol: intra-node cells and rendezvous, network
 * eager, fragments and RDMA rendezvous.
 *
 * The model. A message carries (src, dest, seq, tag, size, comm, round) and a
 * checksum of its payload in a header when it is large enough; smaller ones
 * are identified through the rule below. Per (sender, receiver, communicator),
 * MPI's non-overtaking rule implies: if messages m1 before m2 are received by
 * receives R1 and R2, and R2's pattern also accepts m1, then R1 was posted
 * before R2 (R2 would otherwise have taken m1, or m1 would have taken R2).
 * In particular the messages of one (sender, tag) go to receives in posting
 * order. Also checked: every message arrives exactly once, intact, with a
 * status that matches it; nothing arrives that was not sent; a receive no
 * remaining message can match is always cancellable.
 *
 * The receiver never blocks where a correct MPI could leave it waiting: a
 * blocking receive or probe only when no receive is pending (its pattern
 * accepts a message not received yet), Waitany / Waitsome only when some
 * pending receive accepts a message not received yet.
 *
 * usage: msg_storm [--seed N] [--seconds S] [--rounds R] [--max-size BYTES]
 *                  [--msgs K]
 * Without --seed the seed comes from the clock; it is printed first, and on a
 * failure with the command line that replays the plan.
 */
#include <stdint.h>
#include <time.h>

#include "common.h"

#define NCOMMS 2
#define NTAGS 4
#define MAX_PENDING 12
#define HDR_MAGIC 0x53544f524dULL /* "STORM" */

/* ---- Random numbers (splitmix64): the plan must be the same on every rank. */

typedef struct {
    uint64_t s;
} Rng;

static uint64_t rng_next(Rng* r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t rng_below(Rng* r, uint32_t n) {
    return n ? (uint32_t)(rng_next(r) % n) : 0;
}

static Rng rng_for(uint64_t seed, uint64_t a, uint64_t b) {
    Rng r = {seed ^ (a + 1) * 0xD1B54A32D192ED03ull ^ (b + 1) * 0xC2B2AE3D27D4EB4Full};
    rng_next(&r);
    return r;
}

/* ---- The plan -------------------------------------------------------------- */

enum { MODE_ISEND, MODE_ISSEND, MODE_BSEND, MODE_SEND, MODE_PERSISTENT };
static const char* const kModeNames[] = {"Isend", "Issend", "Bsend", "Send", "Send_init"};

typedef struct {
    int src, dest, comm, tag, mode;
    uint32_t seq; /* order among src's messages to dest (all communicators) */
    size_t size;
} Msg;

typedef struct {
    uint64_t magic;
    uint32_t src, dest, seq, tag, comm, round;
    uint64_t size;
    uint64_t checksum; /* of the payload after the header */
} Header;

#define HDR_SIZE sizeof(Header)

typedef struct {
    uint64_t seed;
    double seconds;
    long max_rounds;
    size_t max_size;
    int max_msgs;
    int rank, nranks;
    MPI_Comm comms[NCOMMS];
    int round;
    const char* argv0;
} Storm;

static Storm S;

static void storm_fail(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void storm_fail(const char* fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    fprintf(stderr,
            "msg_storm FAILED: rank %d, round %d, seed %llu: %s\n"
            "  replay: mpcrun -n %d ... %s --seed %llu --rounds %d --max-size %zu --msgs %d\n",
            S.rank, S.round, (unsigned long long)S.seed, text, S.nranks, S.argv0,
            (unsigned long long)S.seed, S.round + 1, S.max_size, S.max_msgs);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define EXPECT(cond, ...)                     \
    do {                                      \
        if (!(cond)) storm_fail(__VA_ARGS__); \
    } while (0)

static size_t random_size(Rng* r) {
    const uint32_t u = rng_below(r, 100);
    size_t lo, hi;
    if (u < 10) return 0;
    if (u < 30)
        lo = 1, hi = 63;
    else if (u < 55)
        lo = 64, hi = 16 * 1024;
    else if (u < 75)
        lo = 16 * 1024, hi = 128 * 1024;
    else if (u < 90)
        lo = 128 * 1024, hi = 512 * 1024;
    else
        lo = 512 * 1024, hi = S.max_size;
    if (hi > S.max_size) hi = S.max_size;
    if (lo > hi) lo = hi;
    return lo + rng_below(r, (uint32_t)(hi - lo + 1));
}

/* Every message of the round, in each sender's sending order. */
static Msg* make_plan(int round, int* count) {
    Rng r = rng_for(S.seed, (uint64_t)round, 0xfeed);
    const int n = S.nranks;
    int cap = n * S.max_msgs, used = 0;
    Msg* plan = (Msg*)xmalloc((size_t)cap * sizeof(Msg));
    uint32_t* next_seq = (uint32_t*)calloc((size_t)n * (size_t)n, sizeof(uint32_t));
    for (int src = 0; src < n; ++src) {
        const int k = (int)rng_below(&r, (uint32_t)S.max_msgs + 1);
        for (int i = 0; i < k; ++i) {
            Msg* m = &plan[used++];
            m->src = src;
            m->dest = (int)rng_below(&r, (uint32_t)n);
            m->comm = (int)rng_below(&r, NCOMMS);
            m->tag = (int)rng_below(&r, NTAGS);
            m->size = random_size(&r);
            const uint32_t u = rng_below(&r, 100);
            m->mode = u < 55   ? MODE_ISEND
                      : u < 70 ? MODE_ISSEND
                      : u < 80 ? MODE_BSEND
                      : u < 90 ? MODE_SEND
                               : MODE_PERSISTENT;
            if (m->mode == MODE_BSEND && m->size > 64 * 1024) m->mode = MODE_ISEND;
            if (m->mode == MODE_SEND && m->size > 256) m->mode = MODE_ISSEND;
            m->seq = next_seq[(size_t)src * (size_t)n + (size_t)m->dest]++;
        }
    }
    free(next_seq);
    *count = used;
    return plan;
}

/* Rank numbers in communicator c: comm 1 numbers the ranks backwards. */
static int to_comm(int c, int world_rank) {
    return c == 0 ? world_rank : S.nranks - 1 - world_rank;
}
static int to_world(int c, int comm_rank) {
    return c == 0 ? comm_rank : S.nranks - 1 - comm_rank;
}

static uint32_t payload_seed(const Msg* m) {
    return (uint32_t)(S.round * 7919 + m->src * 104729 + m->dest * 1299709 + (int)m->seq * 31);
}

static uint64_t checksum(const unsigned char* p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void fill_message(unsigned char* buf, const Msg* m) {
    if (m->size < HDR_SIZE) {
        fill_pattern(buf, m->size, payload_seed(m));
        return;
    }
    fill_pattern(buf + HDR_SIZE, m->size - HDR_SIZE, payload_seed(m));
    Header h = {HDR_MAGIC,
                (uint32_t)m->src,
                (uint32_t)m->dest,
                m->seq,
                (uint32_t)m->tag,
                (uint32_t)m->comm,
                (uint32_t)S.round,
                m->size,
                checksum(buf + HDR_SIZE, m->size - HDR_SIZE)};
    memcpy(buf, &h, HDR_SIZE);
}

/* ---- Sending ------------------------------------------------------------------ */

typedef struct {
    MPI_Request* reqs;
    int nreqs;
    unsigned char** bufs;
    int nbufs;
    long bytes;
} Sends;

static void start_sends(const Msg* plan, int nplan, Sends* out) {
    memset(out, 0, sizeof(*out));
    out->reqs = (MPI_Request*)xmalloc((size_t)nplan * sizeof(MPI_Request));
    out->bufs = (unsigned char**)xmalloc((size_t)nplan * sizeof(unsigned char*));
    for (int i = 0; i < nplan; ++i) {
        const Msg* m = &plan[i];
        if (m->src != S.rank) continue;
        unsigned char* buf = (unsigned char*)xmalloc(m->size);
        out->bufs[out->nbufs++] = buf;
        fill_message(buf, m);
        out->bytes += (long)m->size;
        const MPI_Comm comm = S.comms[m->comm];
        const int dest = to_comm(m->comm, m->dest), count = (int)m->size;
        MPI_Request* req = &out->reqs[out->nreqs];
        switch (m->mode) {
            case MODE_ISEND:
                MPI_OK(MPI_Isend(buf, count, MPI_BYTE, dest, m->tag, comm, req));
                ++out->nreqs;
                break;
            case MODE_ISSEND:
                MPI_OK(MPI_Issend(buf, count, MPI_BYTE, dest, m->tag, comm, req));
                ++out->nreqs;
                break;
            case MODE_BSEND:
                MPI_OK(MPI_Bsend(buf, count, MPI_BYTE, dest, m->tag, comm));
                break;
            case MODE_SEND: /* tiny: every MPI buffers those, this one in a cell or eager */
                MPI_OK(MPI_Send(buf, count, MPI_BYTE, dest, m->tag, comm));
                break;
            case MODE_PERSISTENT:
                MPI_OK(MPI_Send_init(buf, count, MPI_BYTE, dest, m->tag, comm, req));
                MPI_OK(MPI_Start(req));
                ++out->nreqs;
                break;
        }
    }
}

static void finish_sends(const Msg* plan, int nplan, Sends* s) {
    MPI_Status* st = (MPI_Status*)xmalloc((size_t)(s->nreqs ? s->nreqs : 1) * sizeof(MPI_Status));
    MPI_OK(MPI_Waitall(s->nreqs, s->reqs, st));
    /* Persistent requests stay allocated after completion. */
    int k = 0;
    for (int i = 0; i < nplan; ++i) {
        const Msg* m = &plan[i];
        if (m->src != S.rank || m->mode == MODE_BSEND || m->mode == MODE_SEND) continue;
        if (m->mode == MODE_PERSISTENT) {
            EXPECT(s->reqs[k] != MPI_REQUEST_NULL, "persistent send request was freed by Waitall");
            MPI_OK(MPI_Request_free(&s->reqs[k]));
        } else {
            EXPECT(s->reqs[k] == MPI_REQUEST_NULL, "%s request not freed by Waitall",
                   kModeNames[m->mode]);
        }
        ++k;
    }
    for (int i = 0; i < s->nbufs; ++i) free(s->bufs[i]);
    free(s->bufs);
    free(s->reqs);
    free(st);
}

/* ---- Receiving ---------------------------------------------------------------- */

typedef struct {
    const Msg* msg;
    int observed; /* received (the receive completed and was seen) */
    int record;   /* index of the record that received it, after identification */
} Expected;

/* A completed receive. */
typedef struct {
    int post;                   /* posting order among this rank's receives in the round */
    int comm, src_pat, tag_pat; /* src_pat: world rank or MPI_ANY_SOURCE */
    int src, tag;               /* from the status; src as a world rank */
    size_t count;
    int exp; /* the Expected it was identified as */
    int by_header;
    unsigned char small[HDR_SIZE];
    const char* how;
} Record;

typedef struct {
    MPI_Request req;
    int post, comm, src_pat, tag_pat;
    unsigned char* buf;
    size_t cap;
    int cancel_requested;
    const char* how;
} Pending;

typedef struct {
    Expected* exp;
    int nexp, unobserved;
    Record* rec;
    int nrec;
    Pending pend[MAX_PENDING];
    int npend;
    int next_post;
    Rng rng;
    long completed_cancels, waits, probes;
} Receiver;

static int accepts(int comm, int src_pat, int tag_pat, const Msg* m) {
    return m->comm == comm && (src_pat == MPI_ANY_SOURCE || src_pat == m->src) &&
           (tag_pat == MPI_ANY_TAG || tag_pat == m->tag);
}

/* Largest message not received yet that the pattern accepts; -1 when none. */
static long largest_acceptable(const Receiver* rv, int comm, int src_pat, int tag_pat) {
    long best = -1;
    for (int i = 0; i < rv->nexp; ++i) {
        const Expected* e = &rv->exp[i];
        if (!e->observed && accepts(comm, src_pat, tag_pat, e->msg) && (long)e->msg->size > best)
            best = (long)e->msg->size;
    }
    return best;
}

/* A pattern accepting the (random) message target, with random wildcards. */
static void choose_pattern(Receiver* rv, int* comm, int* src_pat, int* tag_pat) {
    int k = (int)rng_below(&rv->rng, (uint32_t)rv->unobserved);
    const Msg* target = NULL;
    for (int i = 0; i < rv->nexp; ++i)
        if (!rv->exp[i].observed && k-- == 0) target = rv->exp[i].msg;
    *comm = target->comm;
    *src_pat = rng_below(&rv->rng, 100) < 35 ? MPI_ANY_SOURCE : target->src;
    *tag_pat = rng_below(&rv->rng, 100) < 35 ? MPI_ANY_TAG : target->tag;
}

static void describe_pattern(char* out, size_t n, int comm, int src_pat, int tag_pat) {
    char s[16], t[16];
    if (src_pat == MPI_ANY_SOURCE)
        snprintf(s, sizeof(s), "ANY");
    else
        snprintf(s, sizeof(s), "%d", src_pat);
    if (tag_pat == MPI_ANY_TAG)
        snprintf(t, sizeof(t), "ANY");
    else
        snprintf(t, sizeof(t), "%d", tag_pat);
    snprintf(out, n, "(comm %d, source %s, tag %s)", comm, s, t);
}

/* Identifies what a completed receive got, checks it, and records it. */
static void record_receive(Receiver* rv, int post, int comm, int src_pat, int tag_pat,
                           const unsigned char* buf, const MPI_Status* st, const char* how) {
    char pat[96];
    describe_pattern(pat, sizeof(pat), comm, src_pat, tag_pat);
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    EXPECT(count >= 0, "%s %s: MPI_Get_count gave %d", how, pat, count);
    EXPECT(st->MPI_SOURCE >= 0 && st->MPI_SOURCE < S.nranks, "%s %s: status source %d", how, pat,
           st->MPI_SOURCE);
    const int src = to_world(comm, st->MPI_SOURCE), tag = st->MPI_TAG;
    EXPECT(src_pat == MPI_ANY_SOURCE || src == src_pat,
           "%s %s received a message from world rank %d", how, pat, src);
    EXPECT(tag_pat == MPI_ANY_TAG || tag == tag_pat, "%s %s received a message with tag %d", how,
           pat, tag);
    Record* r = &rv->rec[rv->nrec];
    memset(r, 0, sizeof(*r));
    r->post = post;
    r->comm = comm;
    r->src_pat = src_pat;
    r->tag_pat = tag_pat;
    r->src = src;
    r->tag = tag;
    r->count = (size_t)count;
    r->how = how;
    r->exp = -1;
    if ((size_t)count >= HDR_SIZE) {
        Header h;
        memcpy(&h, buf, HDR_SIZE);
        EXPECT(h.magic == HDR_MAGIC, "%s %s: %d bytes from rank %d tag %d without a valid header",
               how, pat, count, src, tag);
        EXPECT(h.src == (uint32_t)src && h.dest == (uint32_t)S.rank && h.tag == (uint32_t)tag &&
                   h.comm == (uint32_t)comm && h.size == (uint64_t)count &&
                   h.round == (uint32_t)S.round,
               "%s %s: status (rank %d, tag %d, %d bytes, comm %d, round %d) but the message is "
               "(rank %u -> %u, tag %u, %llu bytes, comm %u, round %u, seq %u)",
               how, pat, src, tag, count, comm, S.round, h.src, h.dest, h.tag,
               (unsigned long long)h.size, h.comm, h.round, h.seq);
        EXPECT(checksum(buf + HDR_SIZE, (size_t)count - HDR_SIZE) == h.checksum,
               "%s %s: payload of message seq %u from rank %d (%d bytes) is corrupt", how, pat,
               h.seq, src, count);
        for (int i = 0; i < rv->nexp; ++i) {
            const Msg* m = rv->exp[i].msg;
            if (m->src == src && m->seq == h.seq) {
                EXPECT(!rv->exp[i].observed, "%s %s: message seq %u from rank %d received twice",
                       how, pat, h.seq, src);
                EXPECT(m->tag == tag && m->comm == comm && m->size == (size_t)count,
                       "%s %s: message seq %u from rank %d does not match the plan", how, pat,
                       h.seq, src);
                r->exp = i;
                break;
            }
        }
        EXPECT(r->exp >= 0, "%s %s: message seq %u from rank %d was never sent", how, pat, h.seq,
               src);
        r->by_header = 1;
    } else {
        /* Small: any not yet received message of the same envelope and size
         * stands for it until the end of the round (same sizes, so the same
         * receive capacities), when the posting order decides which it is. */
        memcpy(r->small, buf, (size_t)count);
        for (int i = 0; i < rv->nexp && r->exp < 0; ++i) {
            const Msg* m = rv->exp[i].msg;
            if (!rv->exp[i].observed && m->src == src && m->tag == tag && m->comm == comm &&
                m->size == (size_t)count)
                r->exp = i;
        }
        EXPECT(r->exp >= 0,
               "%s %s: got %d bytes from rank %d tag %d comm %d, but no such message remains", how,
               pat, count, src, tag, comm);
    }
    rv->exp[r->exp].observed = 1;
    --rv->unobserved;
    ++rv->nrec;
}

static void post_irecv(Receiver* rv, int cancel_now) {
    Pending* p = &rv->pend[rv->npend];
    choose_pattern(rv, &p->comm, &p->src_pat, &p->tag_pat);
    long cap = largest_acceptable(rv, p->comm, p->src_pat, p->tag_pat);
    p->cap = (size_t)cap;
    p->buf = (unsigned char*)xmalloc(p->cap);
    p->post = rv->next_post++;
    p->cancel_requested = 0;
    p->how = "Irecv";
    const int src = p->src_pat == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : to_comm(p->comm, p->src_pat);
    MPI_OK(MPI_Irecv(p->buf, (int)p->cap, MPI_BYTE, src, p->tag_pat, S.comms[p->comm], &p->req));
    ++rv->npend;
    if (cancel_now) {
        MPI_OK(MPI_Cancel(&p->req));
        p->cancel_requested = 1;
    }
}

/* Pending receive i completed with st: record it (unless it was cancelled). */
static void retire(Receiver* rv, int i, const MPI_Status* st) {
    Pending p = rv->pend[i];
    rv->pend[i] = rv->pend[--rv->npend];
    int cancelled = 0;
    MPI_OK(MPI_Test_cancelled(st, &cancelled));
    if (cancelled) {
        EXPECT(p.cancel_requested, "a receive nobody cancelled reports itself cancelled");
        ++rv->completed_cancels;
    } else {
        record_receive(rv, p.post, p.comm, p.src_pat, p.tag_pat, p.buf, st,
                       p.cancel_requested ? "Irecv (cancel failed)" : p.how);
    }
    free(p.buf);
}

/* True when a pending receive accepts a message not received yet: then some
 * pending receive must complete, and Waitany cannot hang. */
static int some_pending_can_complete(const Receiver* rv) {
    for (int i = 0; i < rv->npend; ++i) {
        const Pending* p = &rv->pend[i];
        if (p->cancel_requested) return 1;
        if (largest_acceptable(rv, p->comm, p->src_pat, p->tag_pat) >= 0) return 1;
    }
    return 0;
}

static void complete_some(Receiver* rv, int blocking) {
    MPI_Request reqs[MAX_PENDING];
    MPI_Status st[MAX_PENDING];
    int idx[MAX_PENDING];
    const int n = rv->npend;
    for (int i = 0; i < n; ++i) reqs[i] = rv->pend[i].req;
    const uint32_t how = rng_below(&rv->rng, 3);
    int outcount = 0;
    if (how == 0) {
        int k = MPI_UNDEFINED, flag = 0;
        if (blocking) {
            MPI_OK(MPI_Waitany(n, reqs, &k, &st[0]));
            flag = 1;
        } else {
            MPI_OK(MPI_Testany(n, reqs, &k, &flag, &st[0]));
        }
        if (flag && k != MPI_UNDEFINED) {
            idx[0] = k;
            outcount = 1;
        }
    } else if (how == 1) {
        if (blocking)
            MPI_OK(MPI_Waitsome(n, reqs, &outcount, idx, st));
        else
            MPI_OK(MPI_Testsome(n, reqs, &outcount, idx, st));
        if (outcount == MPI_UNDEFINED) outcount = 0;
    } else {
        /* One request at a time with MPI_Test; Wait only on a cancelled one. */
        int k = (int)rng_below(&rv->rng, (uint32_t)n), flag = 0;
        if (rv->pend[k].cancel_requested && blocking) {
            MPI_OK(MPI_Wait(&reqs[k], &st[0]));
            flag = 1;
        } else {
            MPI_OK(MPI_Test(&reqs[k], &flag, &st[0]));
        }
        if (flag) {
            idx[0] = k;
            outcount = 1;
        }
    }
    if (blocking) ++rv->waits;
    /* Retire from the highest index down: retire() moves the last entry. */
    for (int a = 0; a < outcount; ++a)
        for (int b = a + 1; b < outcount; ++b)
            if (idx[b] > idx[a]) {
                int t = idx[a];
                idx[a] = idx[b];
                idx[b] = t;
                MPI_Status ts = st[a];
                st[a] = st[b];
                st[b] = ts;
            }
    for (int a = 0; a < outcount; ++a) {
        EXPECT(reqs[idx[a]] == MPI_REQUEST_NULL, "a completed receive request was not freed");
        retire(rv, idx[a], &st[a]);
    }
}

/* No pending receive can match anything any more: each must cancel. */
static void cancel_stranded(Receiver* rv) {
    while (rv->npend > 0) {
        Pending* p = &rv->pend[rv->npend - 1];
        char pat[96];
        describe_pattern(pat, sizeof(pat), p->comm, p->src_pat, p->tag_pat);
        MPI_Status st;
        MPI_OK(MPI_Cancel(&p->req));
        p->cancel_requested = 1;
        MPI_OK(MPI_Wait(&p->req, &st));
        int cancelled = 0;
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        EXPECT(cancelled, "receive %s matched a message although none that it accepts remains",
               pat);
        retire(rv, rv->npend - 1, &st);
    }
}

/* A blocking receive (no receive pending, so it cannot be stranded). */
static void blocking_receive(Receiver* rv) {
    int comm, src_pat, tag_pat;
    choose_pattern(rv, &comm, &src_pat, &tag_pat);
    const MPI_Comm c = S.comms[comm];
    const int src = src_pat == MPI_ANY_SOURCE ? MPI_ANY_SOURCE : to_comm(comm, src_pat);
    size_t cap = (size_t)largest_acceptable(rv, comm, src_pat, tag_pat);
    MPI_Status st, probed;
    const uint32_t kind = rng_below(&rv->rng, 5);
    if (kind == 0) {
        unsigned char* buf = (unsigned char*)xmalloc(cap);
        MPI_OK(MPI_Recv(buf, (int)cap, MPI_BYTE, src, tag_pat, c, &st));
        record_receive(rv, rv->next_post++, comm, src_pat, tag_pat, buf, &st, "Recv");
        free(buf);
        return;
    }
    int size = -1;
    if (kind == 1 || kind == 2) {
        /* Probe, then receive exactly what it reported. */
        if (kind == 1) {
            MPI_OK(MPI_Probe(src, tag_pat, c, &probed));
        } else {
            int flag = 0;
            while (!flag) MPI_OK(MPI_Iprobe(src, tag_pat, c, &flag, &probed));
        }
        ++rv->probes;
        MPI_OK(MPI_Get_count(&probed, MPI_BYTE, &size));
        EXPECT(size >= 0 && (size_t)size <= cap, "%s reported %d bytes (largest possible %zu)",
               kind == 1 ? "Probe" : "Iprobe", size, cap);
        unsigned char* buf = (unsigned char*)xmalloc((size_t)size);
        MPI_OK(MPI_Recv(buf, size, MPI_BYTE, probed.MPI_SOURCE, probed.MPI_TAG, c, &st));
        int got = -1;
        MPI_OK(MPI_Get_count(&st, MPI_BYTE, &got));
        EXPECT(got == size && st.MPI_SOURCE == probed.MPI_SOURCE && st.MPI_TAG == probed.MPI_TAG,
               "the Recv after a Probe of (%d, tag %d, %d bytes) got (%d, tag %d, %d bytes)",
               probed.MPI_SOURCE, probed.MPI_TAG, size, st.MPI_SOURCE, st.MPI_TAG, got);
        /* Matching happened at the Recv: its pattern is the probed envelope,
         * so record the wildcard pattern of the probe (accepted the same). */
        record_receive(rv, rv->next_post++, comm, src_pat, tag_pat, buf, &st,
                       kind == 1 ? "Probe+Recv" : "Iprobe+Recv");
        free(buf);
        return;
    }
    /* Matched probes: the message leaves matching at the probe. */
    MPI_Message msg = MPI_MESSAGE_NULL;
    if (kind == 3) {
        MPI_OK(MPI_Mprobe(src, tag_pat, c, &msg, &probed));
    } else {
        int flag = 0;
        while (!flag) MPI_OK(MPI_Improbe(src, tag_pat, c, &flag, &msg, &probed));
    }
    ++rv->probes;
    const int post = rv->next_post++;
    MPI_OK(MPI_Get_count(&probed, MPI_BYTE, &size));
    EXPECT(size >= 0 && (size_t)size <= cap, "%s reported %d bytes (largest possible %zu)",
           kind == 3 ? "Mprobe" : "Improbe", size, cap);
    unsigned char* buf = (unsigned char*)xmalloc((size_t)size);
    if (kind == 3) {
        MPI_OK(MPI_Mrecv(buf, size, MPI_BYTE, &msg, &st));
    } else {
        MPI_Request req;
        MPI_OK(MPI_Imrecv(buf, size, MPI_BYTE, &msg, &req));
        MPI_OK(MPI_Wait(&req, &st));
    }
    EXPECT(msg == MPI_MESSAGE_NULL, "the message handle was not reset by the matched receive");
    record_receive(rv, post, comm, src_pat, tag_pat, buf, &st,
                   kind == 3 ? "Mprobe+Mrecv" : "Improbe+Imrecv");
    free(buf);
}

/* ---- The model check at the end of a round -------------------------------------- */

static int by_post(const void* a, const void* b) {
    const Record* x = *(const Record* const*)a;
    const Record* y = *(const Record* const*)b;
    return (x->post > y->post) - (x->post < y->post);
}

static void check_round(Receiver* rv) {
    const int n = S.nranks;
    EXPECT(rv->nrec == rv->nexp, "%d receives completed for %d messages", rv->nrec, rv->nexp);
    /* 1. Per (comm, source, tag): receives in posting order take the messages
     *    in sending order. This fixes which message each small receive got. */
    Record** group = (Record**)xmalloc((size_t)(rv->nrec ? rv->nrec : 1) * sizeof(Record*));
    int* members = (int*)xmalloc((size_t)(rv->nexp ? rv->nexp : 1) * sizeof(int));
    for (int c = 0; c < NCOMMS; ++c)
        for (int s = 0; s < n; ++s)
            for (int t = 0; t < NTAGS; ++t) {
                int ng = 0, nm = 0;
                for (int i = 0; i < rv->nrec; ++i)
                    if (rv->rec[i].comm == c && rv->rec[i].src == s && rv->rec[i].tag == t)
                        group[ng++] = &rv->rec[i];
                for (int i = 0; i < rv->nexp; ++i) {
                    const Msg* m = rv->exp[i].msg;
                    if (m->comm == c && m->src == s && m->tag == t) members[nm++] = i;
                }
                EXPECT(ng == nm, "%d messages from rank %d tag %d comm %d, %d received", nm, s, t,
                       c, ng);
                qsort(group, (size_t)ng, sizeof(Record*), by_post);
                for (int k = 0; k < ng; ++k) {
                    Record* r = group[k];
                    const Msg* m = rv->exp[members[k]].msg; /* members are in seq order */
                    if (r->by_header) {
                        EXPECT(r->exp == members[k],
                               "messages from rank %d tag %d comm %d overtook each other: receive "
                               "#%d (%s) got seq %u, but seq %u was sent before it and went to a "
                               "later receive",
                               s, t, c, r->post, r->how, rv->exp[r->exp].msg->seq, m->seq);
                    } else {
                        EXPECT(r->count == m->size,
                               "messages from rank %d tag %d comm %d overtook each other: receive "
                               "#%d (%s) got %zu bytes where seq %u (%zu bytes) was due",
                               s, t, c, r->post, r->how, r->count, m->seq, m->size);
                        CHECK_PATTERN(r->small, r->count, payload_seed(m), "small message payload");
                        r->exp = members[k];
                    }
                    rv->exp[members[k]].record = (int)(r - rv->rec);
                }
            }
    /* 2. Across tags (wildcard receives): m1 sent before m2 on one comm, and
     *    m2's receive also accepts m1: m1's receive was posted first. */
    for (int i = 0; i < rv->nexp; ++i) {
        const Msg* m1 = rv->exp[i].msg;
        const Record* r1 = &rv->rec[rv->exp[i].record];
        for (int j = 0; j < rv->nexp; ++j) {
            const Msg* m2 = rv->exp[j].msg;
            if (m2->src != m1->src || m2->comm != m1->comm || m2->seq <= m1->seq) continue;
            const Record* r2 = &rv->rec[rv->exp[j].record];
            if (!accepts(r2->comm, r2->src_pat, r2->tag_pat, m1)) continue;
            char pat[96];
            describe_pattern(pat, sizeof(pat), r2->comm, r2->src_pat, r2->tag_pat);
            EXPECT(r1->post < r2->post,
                   "non-overtaking violated: rank %d sent seq %u (tag %d, %zu B) before seq %u "
                   "(tag %d, %zu B) on comm %d; receive #%d %s %s took the later one while the "
                   "earlier went to receive #%d (%s), posted after it",
                   m1->src, m1->seq, m1->tag, m1->size, m2->seq, m2->tag, m2->size, m1->comm,
                   r2->post, r2->how, pat, r1->post, r1->how);
        }
    }
    free(group);
    free(members);
}

static void receive_all(const Msg* plan, int nplan, Receiver* rv, long* stats_cancels) {
    memset(rv, 0, sizeof(*rv));
    rv->rng = rng_for(S.seed, (uint64_t)S.round, (uint64_t)S.rank + 1000);
    rv->exp = (Expected*)xmalloc((size_t)(nplan ? nplan : 1) * sizeof(Expected));
    for (int i = 0; i < nplan; ++i)
        if (plan[i].dest == S.rank) {
            Expected* e = &rv->exp[rv->nexp++];
            e->msg = &plan[i];
            e->observed = 0;
            e->record = -1;
        }
    rv->unobserved = rv->nexp;
    rv->rec = (Record*)xmalloc((size_t)(rv->nexp ? rv->nexp : 1) * sizeof(Record));
    while (rv->unobserved > 0 || rv->npend > 0) {
        if (rv->npend > 0 && !some_pending_can_complete(rv)) {
            cancel_stranded(rv);
            continue;
        }
        const uint32_t u = rng_below(&rv->rng, 100);
        const int may_post = rv->npend < MAX_PENDING && rv->npend < rv->unobserved;
        if (u < 40 && may_post) {
            post_irecv(rv, rng_below(&rv->rng, 100) < 8);
        } else if (u < 60 && rv->npend == 0 && rv->unobserved > 0) {
            blocking_receive(rv);
        } else if (u < 65 && rv->npend > 0) {
            /* Cancel a random pending receive: it may have matched already. */
            Pending* p = &rv->pend[rng_below(&rv->rng, (uint32_t)rv->npend)];
            if (!p->cancel_requested) {
                MPI_OK(MPI_Cancel(&p->req));
                p->cancel_requested = 1;
            }
        } else if (rv->npend > 0) {
            complete_some(rv, u >= 85 || !may_post);
        } else if (rv->unobserved > 0) {
            blocking_receive(rv);
        }
    }
    *stats_cancels += rv->completed_cancels;
    check_round(rv);
    free(rv->exp);
    free(rv->rec);
}

/* ---- Main ------------------------------------------------------------------- */

static void parse_args(int argc, char** argv) {
    S.seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    S.seconds = 3;
    S.max_rounds = -1;
    S.max_size = 1 << 20;
    S.max_msgs = 16;
    S.argv0 = argv[0];
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) test_fail(__FILE__, __LINE__, "option %s needs a value", a);
        if (!strcmp(a, "--seed"))
            S.seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--seconds"))
            S.seconds = atof(v);
        else if (!strcmp(a, "--rounds"))
            S.max_rounds = atol(v);
        else if (!strcmp(a, "--max-size"))
            S.max_size = (size_t)strtoull(v, NULL, 0);
        else if (!strcmp(a, "--msgs"))
            S.max_msgs = atoi(v);
        else
            test_fail(__FILE__, __LINE__, "unknown option %s", a);
        ++i;
    }
    if (S.max_msgs < 1) S.max_msgs = 1;
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &S.rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &S.nranks));
    parse_args(argc, argv);
    /* Everyone uses rank 0's seed (the clock may differ by a tick). */
    unsigned long long seed = S.seed;
    MPI_OK(MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
    S.seed = seed;
    if (S.rank == 0) {
        printf("msg_storm: %d ranks, seed %llu (replay: --seed %llu)\n", S.nranks, seed, seed);
        fflush(stdout);
    }
    S.comms[0] = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, S.nranks - S.rank, &S.comms[1]));
    int r1 = -1;
    MPI_OK(MPI_Comm_rank(S.comms[1], &r1));
    CHECK(r1 == to_comm(1, S.rank), "split numbered rank %d as %d", S.rank, r1);

    /* Bsends are at most 64 KiB, at most max_msgs of them per round. */
    const size_t bsize = (size_t)S.max_msgs * (64 * 1024 + MPI_BSEND_OVERHEAD) + 4096;
    void* bbuf = xmalloc(bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, (int)bsize));

    const double start = MPI_Wtime();
    long messages = 0, bytes = 0, cancels = 0;
    int stop = 0;
    for (S.round = 0; !stop; ++S.round) {
        int nplan = 0;
        Msg* plan = make_plan(S.round, &nplan);
        Sends sends;
        Receiver rv;
        start_sends(plan, nplan, &sends);
        receive_all(plan, nplan, &rv, &cancels);
        finish_sends(plan, nplan, &sends);
        messages += rv.nexp;
        bytes += sends.bytes;
        free(plan);
        int over = (MPI_Wtime() - start >= S.seconds) ||
                   (S.max_rounds >= 0 && S.round + 1 >= S.max_rounds);
        MPI_OK(MPI_Allreduce(&over, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    }
    int bsize_out = 0;
    void* detached = NULL;
    MPI_OK(MPI_Buffer_detach(&detached, &bsize_out));
    free(bbuf);
    long totals[3] = {messages, bytes, cancels}, sums[3];
    MPI_OK(MPI_Reduce(totals, sums, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (S.rank == 0)
        printf(
            "msg_storm: OK: %d rounds, %ld messages, %ld bytes, %ld receives cancelled, seed "
            "%llu\n",
            S.round, sums[0], sums[1], sums[2], seed);
    MPI_OK(MPI_Comm_free(&S.comms[1]));
    MPI_OK(MPI_Finalize());
    return 0;
}
