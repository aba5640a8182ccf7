// The hang watchdog: see hang_watch.hpp.
#include "mpi_api/hang_watch.hpp"

#include "intranode_rings.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "ib/network.hpp"
#include "mpi_api/api.hpp"
#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/net.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/partitioned.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/sync.hpp"
#include "runtime/tools.hpp"

namespace mpc::mpi {

std::atomic<bool> g_hang_watch{false};

namespace {

constexpr int kMaxListed = 8;  // entries per list in a report

// ---- The report ------------------------------------------------------------------
//
// Reading another rank's requests races with that rank by nature: the report
// describes a process in which nothing moves any more (or that is being
// killed), and a field read mid-update only blurs one line. Requests never
// go away (pool chunks and task stacks stay mapped), so the reads are safe;
// ThreadSanitizer is told not to instrument them.
#define MPC_DIAGNOSTIC_READS __attribute__((no_sanitize("thread")))

void append(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void append(std::string& out, const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    out += buf;
}

// As runtime/log writes it: "mpcx: node N rank R: ".
std::string line_prefix(const RankState* rank) {
    std::string p;
    if (world().num_nodes > 1) append(p, " node %d", world().node_id);
    if (rank) append(p, " rank %d", rank->world_rank);
    return p.empty() ? "mpcx: " : "mpcx:" + p + ": ";
}

MPC_DIAGNOSTIC_READS std::string comm_text(const Comm* c, uint32_t context) {
    std::string s;
    if (!c) return "unknown communicator";
    if (!c->name.empty())
        s = c->name;
    else
        append(s, "communicator (context %u)", c->context);
    if (context == c->context + 1) s += ", collective traffic";
    return s;
}

MPC_DIAGNOSTIC_READS std::string peer_text(const Comm* c, int peer) {
    if (peer == MPI_ANY_SOURCE) return "any rank";
    if (peer == MPI_PROC_NULL) return "MPI_PROC_NULL";
    std::string s;
    if (!c || peer < 0 || peer >= c->remote_size()) {
        append(s, "rank %d", peer);
        return s;
    }
    const int w = c->peer_world_rank(peer);
    if (w == peer && c->context == kWorldContext)
        append(s, "rank %d", w);
    else
        append(s, "rank %d (world rank %d)", peer, w);
    return s;
}

std::string tag_text(int tag) {
    if (tag == MPI_ANY_TAG) return "any tag";
    return "tag " + std::to_string(tag);
}

size_t request_bytes(const Request* r) {
    return r->type ? static_cast<size_t>(r->count) * r->type->size : 0;
}

// How a send to world rank `dest` of `bytes` travels (the protocol the size selects).
std::string send_path(const Request* r, int dest, size_t bytes) {
    const bool sync = r->mode == SendMode::Synchronous;
    if (world().local(dest)) {
        if (bytes <= g_intra_eager_limit.load(std::memory_order_relaxed) && !sync)
            return "intra-node cell (complete once queued)";
        return "intra-node rendezvous, waits until the receiver matches and copies";
    }
    ib::Network* net = network();
    if (!net) return "network";
    std::string s = "network, ";
    if (bytes <= net->eager_limit() && !sync)
        s += "eager";
    else if (bytes <= net->rendezvous_threshold() && !sync)
        s += "fragments";
    else
        s += "rendezvous: REQ sent, RDMA write after the receiver matches";
    if (sync) s += ", synchronous: completes when matched";
    return s;
}

const char* mode_text(SendMode m) {
    switch (m) {
        case SendMode::Synchronous:
            return "synchronous send";
        case SendMode::Ready:
            return "ready send";
        case SendMode::Buffered:
            return "buffered send";
        default:
            return "send";
    }
}

MPC_DIAGNOSTIC_READS std::string describe_request(const Request* r, bool posted) {
    std::string s;
    switch (r->kind) {
        case Request::Kind::Send: {
            const int dest = r->comm && r->peer >= 0 && r->peer < r->comm->remote_size()
                                 ? r->comm->peer_world_rank(r->peer)
                                 : -1;
            const size_t bytes = request_bytes(r);
            append(s, "%s to %s, %s, %zu bytes, %s; %s", mode_text(r->mode),
                   peer_text(r->comm, r->peer).c_str(), tag_text(r->tag).c_str(), bytes,
                   comm_text(r->comm, r->context).c_str(),
                   dest >= 0 ? send_path(r, dest, bytes).c_str() : "?");
            break;
        }
        case Request::Kind::Recv:
            append(s, "receive from %s, %s, up to %zu bytes, %s; %s",
                   peer_text(r->comm, r->peer).c_str(), tag_text(r->tag).c_str(), request_bytes(r),
                   comm_text(r->comm, r->context).c_str(),
                   posted ? "posted, no message matched yet"
                   : r->state.load(std::memory_order_relaxed) == Request::kComplete
                       ? "complete, the rank has not resumed since"
                       : "matched, data arriving");
            break;
        case Request::Kind::Collective:
            append(s, "collective operation on %s, in progress",
                   comm_text(r->comm, r->context).c_str());
            break;
        case Request::Kind::Generalized:
            s = "generalized request, not completed by the program";
            break;
        case Request::Kind::Rma:
            s = "one-sided operation (MPI_Rput, MPI_Rget, ...), waiting for its target";
            break;
        case Request::Kind::File:
            append(s, "file access on %s, in progress", comm_text(r->comm, r->context).c_str());
            break;
        case Request::Kind::Partitioned:
            append(s, "partitioned %s %s, %s, %s; not every partition %s yet",
                   partitioned_is_send(r) ? "send to" : "receive from",
                   peer_text(r->comm, r->peer).c_str(), tag_text(r->tag).c_str(),
                   comm_text(r->comm, r->context).c_str(),
                   partitioned_is_send(r) ? "ready and moved" : "arrived");
            break;
    }
    if (r->persistent) s += " (persistent)";
    if (r->cancel_requested) s += " (cancel requested)";
    return s;
}

struct RankReport {
    RankState* rank;
    const Request* blocked_on;  // said already
    std::string* out;
    std::vector<const Request*> posted;
    int listed = 0, more = 0;
};

MPC_DIAGNOSTIC_READS void list_pool_request(Request* r, void* ctx) {
    auto* rep = static_cast<RankReport*>(ctx);
    if (r->rank != rep->rank || r->state.load(std::memory_order_relaxed) == Request::kComplete)
        return;
    if ((r->persistent && !r->active) || r == rep->blocked_on) return;
    if (rep->listed == kMaxListed) {
        ++rep->more;
        return;
    }
    bool posted = false;
    for (const Request* p : rep->posted) posted |= p == r;
    *rep->out += line_prefix(rep->rank) + "  pending: " + describe_request(r, posted) + "\n";
    ++rep->listed;
}

MPC_DIAGNOSTIC_READS void report_rank(RankState* rank, double stalled_s, std::string& out) {
    const std::string pre = line_prefix(rank);
    const int fn = rank->current_fn.load(std::memory_order_relaxed);
    if (rank->ended.load(std::memory_order_relaxed)) {
        out += pre + "ended\n";
        return;
    }
    if (fn < 0) {
        out += pre + "not in MPI (computing, or blocked outside MPI)\n";
    } else if (stalled_s > 0) {
        append(out, "%sin %s, no progress for %.1f s\n", pre.c_str(), gen::kFnNames[fn], stalled_s);
    } else {
        append(out, "%sin %s\n", pre.c_str(), gen::kFnNames[fn]);
    }

    const Request* blocked_on = rank->blocked_on.load(std::memory_order_relaxed);
    RankReport rep{rank, blocked_on, &out, {}, 0, 0};
    std::vector<std::string> unexpected;
    size_t more_unexpected = 0;
    // Posted receives and unexpected messages, under the rank's matching lock
    // (held only for moments by its users; give up rather than wait long).
    bool locked = false;
    for (int i = 0; i < 100000 && !(locked = rank->match.lock.try_lock()); ++i)
        runtime::cpu_relax();
    if (locked) {
        rank->match.for_each([&](const Request* r) { rep.posted.push_back(r); },
                             [&](const Incoming* m) {
                                 if (unexpected.size() == kMaxListed) {
                                     ++more_unexpected;
                                     return;
                                 }
                                 std::string s;
                                 append(s, "from rank %d", m->env.source);
                                 if (m->env.context > kWorldContext + 1)
                                     append(s, " (of the communicator with context %u)",
                                            m->env.context & ~1u);
                                 append(s, ", %s, %zu bytes%s (%s)", tag_text(m->env.tag).c_str(),
                                        m->bytes, m->env.context & 1u ? ", collective traffic" : "",
                                        m->ops ? m->ops->name : "?");
                                 unexpected.push_back(s);
                             });
        rank->match.lock.unlock();
    }

    if (blocked_on) {
        bool posted = false;
        for (const Request* p : rep.posted) posted |= p == blocked_on;
        out += pre + "  waits for: " + describe_request(blocked_on, posted) + "\n";
    }
    // Posted receives: blocking ones (on the rank's stack) and nonblocking ones.
    int n = 0;
    for (const Request* r : rep.posted) {
        if (r == blocked_on || r->handle != MPI_REQUEST_NULL)
            continue;  // said above, or listed with the pool requests
        if (n++ < kMaxListed) out += pre + "  posted: " + describe_request(r, true) + "\n";
    }
    if (n > kMaxListed)
        append(out, "%s  ... and %d more posted receives\n", pre.c_str(), n - kMaxListed);
    request_for_each_live(list_pool_request, &rep);
    if (rep.more) append(out, "%s  ... and %d more pending requests\n", pre.c_str(), rep.more);
    if (const size_t queued = intranode::rings_queued(rank))
        append(out, "%s  %zu messages from ranks of this node process not matched yet (in their "
               "rings)\n", pre.c_str(), queued);
    if (!locked) {
        out += pre + "  (matching queues busy: not listed)\n";
    } else if (unexpected.empty()) {
        out += pre + "  no unexpected message\n";
    } else {
        for (const std::string& u : unexpected) out += pre + "  arrived, unmatched: " + u + "\n";
        if (more_unexpected)
            append(out, "%s  ... and %zu more unexpected messages\n", pre.c_str(), more_unexpected);
    }
}

void write_all_stderr(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = write(STDERR_FILENO, text.data() + done, text.size() - done);
        if (n > 0)
            done += static_cast<size_t>(n);
        else if (n < 0 && errno != EINTR)
            break;
    }
}

// ---- The watchdog thread -----------------------------------------------------

struct Sample {
    uint64_t polls = 0;
    uint64_t completions = 0;
    int64_t stalled_since = 0;
};

int g_pipe[2] = {-1, -1};  // SIGTERM handler and stop() -> watchdog thread
std::thread g_thread;

void on_sigterm(int) {
    const int saved = errno;
    const char c = 'T';
    ssize_t ignored = write(g_pipe[1], &c, 1);
    (void)ignored;
    errno = saved;
}

std::string report_all(const char* headline, const std::vector<Sample>& samples, int64_t now) {
    std::string out = line_prefix(nullptr) + headline + "\n";
    const auto& locals = world().locals;
    for (size_t i = 0; i < locals.size(); ++i)
        report_rank(locals[i], static_cast<double>(now - samples[i].stalled_since) * 1e-9, out);
    if (ib::Network* net = network())
        for (const std::string& line : net->describe_state()) out += line_prefix(nullptr) + line + "\n";
    return out;
}

void watch(double timeout_s) {
    const auto& locals = world().locals;
    std::vector<Sample> samples(locals.size());
    const int64_t timeout_ns = static_cast<int64_t>(timeout_s * 1e9);
    const int period_ms = static_cast<int>(std::max(10.0, std::min(100.0, timeout_s * 100.0)));
    int64_t now = runtime::now_ns();
    for (Sample& s : samples) s.stalled_since = now;
    for (;;) {
        pollfd p{g_pipe[0], POLLIN, 0};
        if (poll(&p, 1, period_ms) > 0) {
            char c = 0;
            if (read(g_pipe[0], &c, 1) == 1 && c == 'T') {
                write_all_stderr(report_all(
                    "terminated (SIGTERM): what each rank of this node process was doing:", samples,
                    runtime::now_ns()));
                signal(SIGTERM, SIG_DFL);
                kill(getpid(), SIGTERM);
            }
            return;  // 'S': stop
        }
        now = runtime::now_ns();
        int live = 0;
        int64_t newest = 0;  // the most recent time a rank was not stalled
        for (size_t i = 0; i < locals.size(); ++i) {
            RankState* r = locals[i];
            Sample& s = samples[i];
            if (r->ended.load(std::memory_order_relaxed)) continue;
            ++live;
            const uint64_t polls = r->polls.load(std::memory_order_relaxed);
            const uint64_t done = r->completions.load(std::memory_order_relaxed);
            const bool in_mpi = r->current_fn.load(std::memory_order_relaxed) >= 0;
            // Progress: a request completed. Not waiting: outside MPI and not
            // polling it either (computing; an MPI_Test loop polls).
            if (done != s.completions || (!in_mpi && polls == s.polls)) s.stalled_since = now;
            s.polls = polls;
            s.completions = done;
            newest = std::max(newest, s.stalled_since);
        }
        if (live == 0 || now - newest < timeout_ns) continue;
        char headline[256];
        snprintf(headline, sizeof(headline),
                 "hang: no rank of this node process made progress for %.1f s "
                 "(MPC_HANG_TIMEOUT=%g); what each rank waits for:",
                 static_cast<double>(now - newest) * 1e-9, timeout_s);
        write_all_stderr(report_all(headline, samples, now));
        runtime::fatal_status(124, "hang: ending the job (MPC_HANG_TIMEOUT=%g)", timeout_s);
    }
}

}  // namespace

void hang_watch_start() {
    const double timeout_s = runtime::env::get_seconds("MPC_HANG_TIMEOUT", 0);
    if (timeout_s <= 0 || g_thread.joinable()) return;
    if (pipe2(g_pipe, O_CLOEXEC) != 0) runtime::fatal("MPC_HANG_TIMEOUT: cannot create a pipe");
    g_hang_watch.store(true);
    // Polls are counted while the transport gate is open (one test on the
    // fast paths for both): the watchdog holds it open.
    runtime::tools::g_transport.open();
    struct sigaction sa {};
    sa.sa_handler = on_sigterm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    g_thread = std::thread(watch, timeout_s);
}

void hang_watch_stop() {
    if (!g_thread.joinable()) return;
    signal(SIGTERM, SIG_DFL);
    const char c = 'S';
    ssize_t ignored = write(g_pipe[1], &c, 1);
    (void)ignored;
    g_thread.join();
    close(g_pipe[0]);
    close(g_pipe[1]);
    g_pipe[0] = g_pipe[1] = -1;
    g_hang_watch.store(false);
    runtime::tools::g_transport.close();
}

}  // namespace mpc::mpi
