#include "intranode.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "mpi_api/datatype.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "runtime/log.hpp"
#include "runtime/sync.hpp"

namespace mpc::mpi::intranode {
namespace {

// ---- Messages ------------------------------------------------------------------

struct Cell : Incoming {
    uint8_t size_class;
    unsigned char* data() { return reinterpret_cast<unsigned char*>(this + 1); }
};
// Cells start on a cache line, and a header with up to 8 bytes of payload
// fills exactly one: the receiver of a small message fetches one line.
static_assert(sizeof(Cell) <= 56, "header and 8 bytes in one line");

struct Rendezvous : Incoming {
    Request* send;
};

// ---- Cell memory: per-thread caches by size class ------------------------------
//
// Cells are allocated by senders and freed by receivers; in steady exchanges
// each thread frees about as many as it allocates, so the thread caches stay
// balanced and the shared pool is rarely touched. A cache is an array, not a
// list threaded through the cells: freeing a cell the sender wrote moments ago
// must not write to it (that would take its line back from the sender's core
// while the receiver still has a request to complete).

constexpr size_t kClassPayload[] = {64, 1024, 4096, 16384, 65536};
constexpr int kClasses = sizeof(kClassPayload) / sizeof(kClassPayload[0]);
constexpr int kBig = kClasses;  // allocated for the message, not cached
constexpr size_t kCacheMax = 64;

struct SharedPool {
    std::mutex mutex;
    std::vector<void*> free[kClasses];
};
SharedPool& shared_pool() {
    static SharedPool* p = new SharedPool();  // lives as long as the process
    return *p;
}

struct ThreadCache {
    void* cells[kClasses][kCacheMax];
    size_t count[kClasses] = {};
    // At thread exit the cells go to the shared pool, and the cache is left
    // empty and full: code that still sends or frees cells on this thread
    // afterwards (other thread-locals' destructors, key destructors) uses
    // the shared pool instead of handing out cells it no longer owns.
    ~ThreadCache() {
        SharedPool& p = shared_pool();
        std::lock_guard<std::mutex> g(p.mutex);
        for (int c = 0; c < kClasses; ++c) {
            if (count[c] <= kCacheMax)
                p.free[c].insert(p.free[c].end(), cells[c], cells[c] + count[c]);
            count[c] = kCacheMax + 1;
        }
    }
};
thread_local ThreadCache tl_cache;

int class_of(size_t bytes) {
    for (int c = 0; c < kClasses; ++c)
        if (bytes <= kClassPayload[c]) return c;
    return kBig;
}

void* new_cell_memory(size_t payload) {
    const size_t bytes = (sizeof(Cell) + payload + 63) / 64 * 64;
    void* m = aligned_alloc(64, bytes);
    if (!m) runtime::fatal("out of memory for an intra-node message of %zu bytes", payload);
    return m;
}

void* cell_memory(int cls, size_t bytes) {
    if (cls == kBig) return new_cell_memory(bytes);
    ThreadCache& tc = tl_cache;
    const size_t n = tc.count[cls];  // kCacheMax + 1 once the thread is exiting
    if (n > 0 && n <= kCacheMax) return tc.cells[cls][--tc.count[cls]];
    SharedPool& p = shared_pool();
    {
        std::lock_guard<std::mutex> g(p.mutex);
        if (!p.free[cls].empty()) {
            void* m = p.free[cls].back();
            p.free[cls].pop_back();
            return m;
        }
    }
    return new_cell_memory(kClassPayload[cls]);
}

void release_cell_memory(void* m, int cls) {
    if (cls == kBig) {
        free(m);
        return;
    }
    ThreadCache& tc = tl_cache;
    if (tc.count[cls] < kCacheMax) {
        tc.cells[cls][tc.count[cls]++] = m;
        return;
    }
    SharedPool& p = shared_pool();
    std::lock_guard<std::mutex> g(p.mutex);
    p.free[cls].push_back(m);
}

void free_cell(Cell* c) {
    int cls = c->size_class;
    c->~Cell();
    release_cell_memory(c, cls);
}

// ---- Delivery (a receive matched the message) ----------------------------------

void deliver_cell(Incoming* m, Request* r) {
    auto* c = static_cast<Cell*>(m);
    size_t n = std::min(c->bytes, receive_capacity(r));
    unpack(r->buf, static_cast<size_t>(r->count), *r->type, 0, c->data(), n);
    const Envelope e = c->env;
    const size_t bytes = c->bytes;
    free_cell(c);
    finish_receive(r, e.source, e.tag, bytes, n);
}

// ---- Shared copies: waiting ranks help move a large message ------------------
//
// Whoever delivers a large message (the receiver, or a rank polling for it)
// publishes the copy in a node-wide slot and copies it chunk by chunk; any
// rank that polls meanwhile (the sender, waiting for it, first of all) takes
// chunks too, so two cores move it where one would. Helpers enter a slot by
// counting themselves in its `users` before they look at its job again; the
// deliverer, once every chunk is copied, empties the slot and waits until
// its users left before the job (on its stack) goes away.

// Copies from 64 KiB on are shared, in at least 4 chunks of 32 to 64 KiB
// (ping-pong on 2 cores: 64 KiB 8.6 -> 5.5 us, 128 KiB 11.4 -> 7.3 us; smaller
// chunks cost more in atomic counts above 256 KiB than they gain in balance).
constexpr size_t kSharedCopyMin = 64 * 1024;
constexpr size_t kMinChunk = 32 * 1024, kMaxChunk = 64 * 1024;
constexpr int kCopySlots = 8;

struct CopyJob {
    const unsigned char* src;
    unsigned char* dst;
    size_t bytes;
    size_t chunk;
    const RankState* sender;        // helps even when it only serves itself
    std::atomic<size_t> next{0};    // first byte no one took yet
    std::atomic<size_t> copied{0};  // bytes copied
};

struct CopySlots {
    // Jobs in the slots: every poll looks here first, and copies are rare.
    alignas(64) std::atomic<int> live{0};
    alignas(64) std::atomic<CopyJob*> job[kCopySlots] = {};
    alignas(64) std::atomic<int> users[kCopySlots] = {};
};
CopySlots g_copies;

// Copies chunks of j until none is left; returns whether it copied any.
bool copy_chunks(CopyJob& j) {
    bool did = false;
    for (;;) {
        const size_t at = j.next.fetch_add(j.chunk, std::memory_order_relaxed);
        if (at >= j.bytes) return did;
        const size_t len = std::min(j.chunk, j.bytes - at);
        memcpy(j.dst + at, j.src + at, len);
        j.copied.fetch_add(len, std::memory_order_release);
        did = true;
    }
}

void shared_copy(const void* src, void* dst, size_t bytes, const RankState* sender) {
    CopyJob j{static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes,
              std::clamp(bytes / 4, kMinChunk, kMaxChunk), sender};
    int slot = -1;
    for (int i = 0; i < kCopySlots && slot < 0; ++i) {
        CopyJob* none = nullptr;
        if (g_copies.job[i].compare_exchange_strong(none, &j, std::memory_order_seq_cst)) slot = i;
    }
    if (slot >= 0) g_copies.live.fetch_add(1, std::memory_order_relaxed);
    copy_chunks(j);
    if (slot < 0) return;  // every slot busy: copied alone
    // Helpers finish their last chunk within microseconds.
    runtime::spin_until([&] { return j.copied.load(std::memory_order_acquire) == bytes; });
    g_copies.job[slot].store(nullptr, std::memory_order_seq_cst);
    g_copies.live.fetch_sub(1, std::memory_order_relaxed);
    runtime::spin_until([&] { return g_copies.users[slot].load(std::memory_order_seq_cst) == 0; });
}

void deliver_rendezvous(Incoming* m, Request* r) {
    auto* rv = static_cast<Rendezvous*>(m);
    Request* s = rv->send;
    size_t n = std::min(rv->bytes, receive_capacity(r));
    if (n >= kSharedCopyMin && s->type->contiguous && r->type->contiguous)
        shared_copy(contiguous_data(s->buf, *s->type), contiguous_data(r->buf, *r->type), n,
                    s->rank);
    else
        typed_copy(s->buf, static_cast<size_t>(s->count), *s->type, r->buf,
                   static_cast<size_t>(r->count), *r->type, n);
    const Envelope e = rv->env;
    const size_t bytes = rv->bytes;
    delete rv;
    finish_receive(r, e.source, e.tag, bytes, n);
    complete(s);
}

const IncomingOps kCellOps{deliver_cell, "intra-node cell"};
const IncomingOps kRendezvousOps{deliver_rendezvous, "intra-node rendezvous"};

void push(RankState* dest, Incoming* m) {
    // Guess an empty inbox (the usual case) rather than read it first: a load
    // before the exchange would fetch the line, shared with the polling
    // receiver, and the exchange then take it over in a second transfer.
    Incoming* head = nullptr;
    do {
        m->next = head;
    } while (!dest->inbox.compare_exchange_weak(head, m, std::memory_order_seq_cst,
                                                std::memory_order_relaxed));
    // A parked receiver (or one that only it may serve, in wait mode) wakes up.
    dest->doorbell.ring();
}

}  // namespace

void send_eager(RankState* dest, const Envelope& e, const void* buf, size_t count,
                const Datatype& type, size_t bytes) {
    int cls = class_of(bytes);
    auto* c = new (cell_memory(cls, bytes)) Cell();
    c->env = e;
    c->bytes = bytes;
    c->ops = &kCellOps;
    c->size_class = static_cast<uint8_t>(cls);
    pack(buf, count, type, 0, c->data(), bytes);
    push(dest, c);
}

void send(Request* s, RankState* dest) {
    const Envelope e{s->context, s->comm->rank, s->tag};
    const size_t bytes = static_cast<size_t>(s->count) * s->type->size;
    if (bytes <= g_intra_eager_limit && s->mode != SendMode::Synchronous) {
        send_eager(dest, e, s->buf, static_cast<size_t>(s->count), *s->type, bytes);
        complete(s);
        return;
    }
    auto* rv = new Rendezvous();
    rv->env = e;
    rv->bytes = bytes;
    rv->ops = &kRendezvousOps;
    rv->send = s;
    push(dest, rv);
}

void Deliveries::deliver_all() {
    for (int i = 0; i < n_; ++i) pairs_[i].m->ops->deliver(pairs_[i].m, pairs_[i].r);
    n_ = 0;
}

bool drain_locked(RankState* r, Deliveries& out) {
    // The backlog in locals, written back only if it changed: in the common
    // case (backlog empty, everything taken) the rank writes nothing to the
    // line senders read (doorbell, prober count) and it stays in both caches.
    Incoming* const old_head = r->backlog_head.load(std::memory_order_relaxed);
    Incoming* head = old_head;
    Incoming* tail = r->backlog_tail;
    // Take everything pushed so far: a stack, newest first; append it to the
    // backlog in arrival order.
    // (An exchange only when there is something: a new receive drains an
    // empty inbox most of the time, and a locked instruction costs even on a
    // line the rank owns.)
    // The newest message's line is fetched while the exchange takes the
    // inbox's line back from its sender: the two transfers overlap.
    Incoming* seen = r->inbox.load(std::memory_order_relaxed);
    if (seen) __builtin_prefetch(seen);
    Incoming* stack = seen ? r->inbox.exchange(nullptr, std::memory_order_acquire) : nullptr;
    if (stack) {
        Incoming* fifo = nullptr;
        Incoming* last = stack;
        while (stack) {
            Incoming* next = stack->next;
            stack->next = fifo;
            fifo = stack;
            stack = next;
        }
        // The oldest may be a message received in place: done with now.
        if (Incoming* done = r->delivered_in_inbox.load(std::memory_order_relaxed)) {
            MPC_CHECK(fifo == done);
            fifo = done->next;
            if (!fifo) last = nullptr;
            free_cell(static_cast<Cell*>(done));
            r->delivered_in_inbox.store(nullptr, std::memory_order_relaxed);
        }
        if (fifo) {
            if (tail)
                tail->next = fifo;
            else
                head = fifo;
            tail = last;
        }
    }
    bool unexpected = false;
    for (Incoming* m; (m = head) && !out.full();) {
        head = m->next;
        if (!head) tail = nullptr;
        m->next = nullptr;
        if (Request* q = r->match.take_posted(m->env)) {
            out.add(m, q);
        } else {
            r->match.add_unexpected(m);
            unexpected = true;
        }
    }
    if (head != old_head) r->backlog_head.store(head, std::memory_order_relaxed);
    if (tail != r->backlog_tail) r->backlog_tail = tail;
    return unexpected;
}

void release_inbox(RankState* r) {
    for (Incoming* m = r->inbox.exchange(nullptr, std::memory_order_acquire); m;) {
        Incoming* next = m->next;
        if (m->ops == &kCellOps)
            free_cell(static_cast<Cell*>(m));
        else
            delete static_cast<Rendezvous*>(m);
        m = next;
    }
    r->delivered_in_inbox.store(nullptr, std::memory_order_relaxed);
}

bool help_copy(const RankState* me, bool others) {
    // A hint: a job counted late is only found by the next poll.
    if (g_copies.live.load(std::memory_order_relaxed) == 0) return false;
    bool did = false;
    for (int i = 0; i < kCopySlots; ++i) {
        // A job may only be looked into once counted in (its deliverer may
        // be gone, and the job with its stack frame, an instant later).
        if (!g_copies.job[i].load(std::memory_order_relaxed)) continue;
        g_copies.users[i].fetch_add(1, std::memory_order_seq_cst);
        // Still there (or another job, as good): its deliverer waits for us.
        CopyJob* j = g_copies.job[i].load(std::memory_order_seq_cst);
        if (j && (others || j->sender == me)) did |= copy_chunks(*j);
        g_copies.users[i].fetch_sub(1, std::memory_order_release);
    }
    return did;
}

namespace {

// The owner's poll, lock held. When its inbox holds one message, nothing older
// is pending, and the message is a small cell that a posted receive takes:
// copies it into that receive without taking the inbox, and returns the
// receive, to complete once unlocked (nullptr otherwise: drain as usual).
// Taking the inbox is an exchange on a line its sender has just written: it
// waits for the line to come back before the data can move. Left in place,
// the cell is freed by the next drain (most often the rank's next receive
// posting, while its peer works on the reply), off the message's path.
Request* receive_in_place(RankState* r) {
    if (r->delivered_in_inbox.load(std::memory_order_relaxed) ||
        r->backlog_head.load(std::memory_order_relaxed))
        return nullptr;
    Incoming* m = r->inbox.load(std::memory_order_acquire);
    if (!m || m->next || m->ops != &kCellOps) return nullptr;
    auto* c = static_cast<Cell*>(m);
    if (c->size_class != 0) return nullptr;  // copies under the lock stay short
    Request* q = r->match.take_posted(c->env);
    if (!q) return nullptr;
    const size_t n = std::min(c->bytes, receive_capacity(q));
    unpack(q->buf, static_cast<size_t>(q->count), *q->type, 0, c->data(), n);
    set_receive_status(q, c->env.source, c->env.tag, c->bytes, n);
    r->delivered_in_inbox.store(m, std::memory_order_relaxed);
    return q;
}

}  // namespace

bool drain(RankState* r, bool owner) {
    Incoming* const newest = r->inbox.load(std::memory_order_relaxed);
    if ((!newest || newest == r->delivered_in_inbox.load(std::memory_order_relaxed)) &&
        !r->backlog_head.load(std::memory_order_relaxed))
        return false;
    if (newest) __builtin_prefetch(newest);  // overlaps the lock
    if (owner) {
        r->match.lock.lock();
        if (Request* q = receive_in_place(r)) {
            r->match.lock.unlock();
            complete(q);
            return true;
        }
    } else if (!r->match.lock.try_lock()) {
        return false;
    }
    Deliveries out;
    bool unexpected = false;
    do {
        unexpected |= drain_locked(r, out);
        if (!out.full()) break;
        r->match.lock.unlock();
        out.deliver_all();
        r->match.lock.lock();
    } while (true);
    r->match.lock.unlock();
    out.deliver_all();
    if (unexpected) wake_prober(r);
    return true;
}

}  // namespace mpc::mpi::intranode
