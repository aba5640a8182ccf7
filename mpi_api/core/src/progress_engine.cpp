#include "mpi_api/progress_engine.hpp"

#include <algorithm>

#include "intranode.hpp"
#include "mpi_api/hang_watch.hpp"
#include "mpi_api/net.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "mpi_api/tool_events.hpp"
#include "runtime/tools.hpp"

namespace mpc::mpi {
namespace {

std::atomic<PollMode> g_mode{PollMode::Collaborative};

}  // namespace

void count_steal(RankState* victim) {
    victim->transport.stolen.fetch_add(1, std::memory_order_relaxed);
}

void set_poll_mode(PollMode mode) {
    g_mode.store(mode);
}

PollMode poll_mode() {
    return g_mode.load(std::memory_order_relaxed);
}

void progress_add(RankState* owner, Progressable* p, bool now) {
    owner->progress_lock.lock();
    owner->in_progress.push_back(p);
    owner->progress_lock.unlock();
    owner->progress_pending.store(true, std::memory_order_release);
    if (now) progress_rank(owner);
}

void progress_notify(RankState* owner) {
    owner->progress_pending.store(true, std::memory_order_seq_cst);
    // The owner may be the only one allowed to progress (wait mode): wake it.
    owner->doorbell.ring();
}

bool progress_rank(RankState* owner) {
    if (!owner->progress_pending.load(std::memory_order_acquire)) return false;
    if (!owner->progress_lock.try_lock()) return false;
    Request* finished[16];
    int nfinished = 0;
    // Completions during a round flag the owner again: a few rounds catch them.
    for (int round = 0; round < 4 && owner->progress_pending.exchange(false); ++round) {
        auto& list = owner->in_progress;
        for (size_t i = 0; i < list.size() && nfinished < 16;) {
            if (list[i]->progress()) {
                finished[nfinished++] = list[i]->request;
                list.erase(list.begin() + static_cast<long>(i));
            } else {
                ++i;
            }
        }
        if (nfinished == 16) {
            owner->progress_pending.store(true);
            break;
        }
    }
    owner->progress_lock.unlock();
    // After unlocking: completing a request may free its operation.
    for (int i = 0; i < nfinished; ++i) complete(finished[i]);
    return true;
}

bool poll(int caller, bool steal, int thief_numa) {
    bool did = false;
    if (ib::Network* net = network()) did |= net->poll(caller, steal, thief_numa);
    const PollMode mode = g_mode.load(std::memory_order_relaxed);
    const auto& locals = world().locals;
    // Others' messages and operations: any rank in collaborative mode; the
    // progress thread (or an idle VP) in thread mode. In wait mode a rank only
    // serves itself (a sender rings the doorbell of a parked receiver).
    const bool serve_others =
        (steal && mode == PollMode::Collaborative) || (caller < 0 && mode == PollMode::Thread);
    if (caller >= 0) {
        RankState* me = locals[static_cast<size_t>(caller)];
        did |= intranode::drain(me, true);
        did |= progress_rank(me);
        did |= intranode::help_copy(me, serve_others);
    } else if (serve_others) {
        did |= intranode::help_copy(nullptr, true);
    }
    if (serve_others) {
        for (size_t i = 0; i < locals.size(); ++i) {
            if (static_cast<int>(i) == caller) continue;
            if (intranode::drain(locals[i], false)) {
                did = true;
                if (runtime::tools::g_transport.on()) count_steal(locals[i]);
                runtime::tools::raise(events::g_steal, static_cast<int>(i),
                                      events::Steal{static_cast<int>(i), caller});
            }
            // A rank polling for itself does its operations' share on its
            // own core; taking their lock would only keep it waiting.
            RankState* other = locals[i];
            if (other->progress_pending.load(std::memory_order_relaxed) &&
                !other->self_polling.load(std::memory_order_relaxed))
                did |= progress_rank(other);
        }
    }
    return did;
}

int64_t WaitRecord::started() {
    return runtime::now_ns();
}

void WaitRecord::finish() {
    RankState* me = current_rank();
    if (!me) return;
    me->transport.waits.fetch_add(1, std::memory_order_relaxed);
    me->transport.wait_ns.fetch_add(static_cast<uint64_t>(runtime::now_ns() - start_),
                                    std::memory_order_relaxed);
}

bool poll_current() {
    return poll_rank(current_rank(), true);
}

}  // namespace mpc::mpi
