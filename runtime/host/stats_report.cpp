// The statistics report printed at the end of a run with MPC_STATS=1 (mpcrun
// --stats): per rank, the network work requests it processed for itself and
// those processed for it by other ranks (same NUMA node or not), rendezvous
// timers, messages sent per path, polls, inbox drains by others and waits;
// per MPI function the calls and time summed over the node's ranks. The same
// counters are performance variables of the tools interface (MPI_T).
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "host.hpp"
#include "ib/network.hpp"
#include "mpi_api/api.hpp"
#include "mpi_api/rank.hpp"

namespace mpc::host {
namespace {

void line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void line(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    n = std::min(n, static_cast<int>(sizeof(buf)) - 2);
    buf[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, buf, static_cast<size_t>(n));
    (void)ignored;
}

double avg_us(uint64_t sum_ns, uint64_t count) { return count ? sum_ns / 1e3 / count : 0.0; }

}  // namespace

void report_statistics(ib::Network* net) {
    if (!mpi::g_stats_enabled) return;
    const mpi::World& w = mpi::world();
    line("mpcx stats: node process %d (%zu ranks)%s%s", w.node_id, w.locals.size(),
         net ? ", network " : "", net ? net->driver_name() : "");
    if (net) {
        line("mpcx stats: %6s %10s %12s %13s %6s %13s %13s %13s", "rank", "self", "stolen-numa",
             "stolen-other", "rndv", "req->ack(us)", "matching(us)", "reception(us)");
        for (const mpi::RankState* r : w.locals) {
            ib::RankNetStats s = net->stats(r->local_index);
            line("mpcx stats: %6d %10llu %12llu %13llu %6llu %13.2f %13.2f %13.2f", r->world_rank,
                 static_cast<unsigned long long>(s.processed_self),
                 static_cast<unsigned long long>(s.stolen_same_numa),
                 static_cast<unsigned long long>(s.stolen_other_numa),
                 static_cast<unsigned long long>(s.rndv_count),
                 avg_us(s.rndv_req_to_ack_ns, s.rndv_count),
                 avg_us(s.rndv_matching_ns, s.rndv_matched), avg_us(s.wr_reception_ns, s.wr_timed));
        }
    }
    // Messages per path (sent), polls, inbox drains by others and waits.
    line("mpcx stats: %6s %9s %9s %9s %9s %9s %9s %12s %12s %10s %8s %9s %10s", "rank", "slot",
         "cell", "intra-rdv", "eager", "frag", "net-rdv", "intra-bytes", "net-bytes", "polls",
         "stolen", "waits", "wait(ms)");
    for (const mpi::RankState* r : w.locals) {
        const mpi::TransportCounters& t = r->transport;
        auto get = [](const std::atomic<uint64_t>& a) {
            return static_cast<unsigned long long>(a.load(std::memory_order_relaxed));
        };
        ib::RankNetStats s;
        if (net) s = net->stats(r->local_index);
        unsigned long long intra_bytes = 0, net_bytes = 0;
        for (const auto& b : t.bytes) intra_bytes += get(b);
        for (uint64_t b : s.sent_bytes) net_bytes += b;
        line(
            "mpcx stats: %6d %9llu %9llu %9llu %9llu %9llu %9llu %12llu %12llu %10llu %8llu %9llu "
            "%10.3f",
            r->world_rank, get(t.msgs[mpi::TransportCounters::IntraSlot]),
            get(t.msgs[mpi::TransportCounters::IntraCell]),
            get(t.msgs[mpi::TransportCounters::IntraRendezvous]),
            static_cast<unsigned long long>(s.sent_msgs[ib::RankNetStats::Eager]),
            static_cast<unsigned long long>(s.sent_msgs[ib::RankNetStats::Fragments]),
            static_cast<unsigned long long>(s.sent_msgs[ib::RankNetStats::Rendezvous]), intra_bytes,
            net_bytes, get(r->polls), get(t.stolen), get(t.waits),
            static_cast<double>(get(t.wait_ns)) / 1e6);
    }
    // Per function, summed over this node's ranks.
    const size_t nfn = static_cast<size_t>(mpi::gen::Fn::kCount);
    std::vector<mpi::FnStats> sum(nfn);
    for (mpi::RankState* r : w.locals) {
        mpi::FnStats* fs = r->fn_stats.load(std::memory_order_acquire);
        if (!fs) continue;
        for (size_t f = 0; f < nfn; ++f) {
            sum[f].calls += fs[f].calls;
            sum[f].ns += fs[f].ns;
        }
    }
    line("mpcx stats: %-28s %12s %14s %12s", "function", "calls", "time(ms)", "per call(us)");
    for (size_t f = 0; f < nfn; ++f) {
        if (!sum[f].calls) continue;
        line("mpcx stats: %-28s %12llu %14.3f %12.3f", mpi::gen::kFnNames[f],
             static_cast<unsigned long long>(sum[f].calls), sum[f].ns / 1e6,
             sum[f].ns / 1e3 / static_cast<double>(sum[f].calls));
    }
}

}  // namespace mpc::host
