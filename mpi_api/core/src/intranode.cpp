#include "intranode.hpp"
#include "intranode_rings.hpp"

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
#include "mpi_api/tool_events.hpp"
#include "runtime/log.hpp"
#include "runtime/stash.hpp"
#include "runtime/sync.hpp"
#include "runtime/tools.hpp"

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

// ---- Cell memory: per-thread stashes by size class ------------------------------
//
// Cells are allocated by senders and freed by receivers; in steady exchanges
// each thread frees about as many as it allocates, so the thread stashes stay
// balanced and the shared overflow is rarely touched (runtime/stash.hpp).

constexpr size_t kClassPayload[] = {64, 1024, 4096, 16384, 65536};
constexpr int kClasses = sizeof(kClassPayload) / sizeof(kClassPayload[0]);
constexpr int kBig = kClasses;  // allocated for the message, not cached
constexpr uint32_t kCacheMax = 64;

using CellOverflow = runtime::Overflow<void*>;
CellOverflow& shared_cells(int cls) {
    static CellOverflow* p = new CellOverflow[kClasses];  // lives as long as the process
    return p[cls];
}

struct ThreadCells {
    runtime::Stash<void*, kCacheMax> cls[kClasses];
    ~ThreadCells() {
        for (int c = 0; c < kClasses; ++c) cls[c].close(shared_cells(c));
    }
};
thread_local ThreadCells tl_cells;

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

// Lines of the next cell asked for ahead (2 KiB): the small messages whose
// rate this sets (measured at 256 B and 1 KiB; larger ones were not).
constexpr size_t kPrefetchLines = 32;

void* cell_memory(int cls, size_t bytes) {
    if (cls == kBig) return new_cell_memory(bytes);
    void* m;
    if (!tl_cells.cls[cls].take_or_refill(&m, shared_cells(cls)))
        return new_cell_memory(kClassPayload[cls]);
    // Cells come back to the stash after their receivers read them, so their
    // lines sit in another core's cache: ask now for those of the cell the
    // next send takes, and they move while this one is written and published
    // (whose full fence would otherwise wait for them: 1 KiB rate 1.9 -> 3.4
    // M msgs/s). Sizes of consecutive messages tend to be alike.
    if (void* const* next = tl_cells.cls[cls].next()) {
        const size_t lines = std::min((sizeof(Cell) + bytes + 63) / 64, kPrefetchLines);
        for (size_t i = 0; i < lines; ++i)
            runtime::prefetch_for_write(static_cast<const char*>(*next) + 64 * i);
    }
    return m;
}

void release_cell_memory(void* m, int cls) {
    if (cls == kBig) {
        free(m);
        return;
    }
    tl_cells.cls[cls].keep_or_spill(m, shared_cells(cls));
}

void deliver_cell(Incoming* m, Request* r);
const IncomingOps kCellOps{deliver_cell, "intra-node cell"};

// A cell for a message of `bytes` from envelope e, its data to be written.
Cell* new_cell(const Envelope& e, size_t bytes) {
    const int cls = class_of(bytes);
    auto* c = new (cell_memory(cls, bytes)) Cell();
    c->env = e;
    c->bytes = bytes;
    c->ops = &kCellOps;
    c->size_class = static_cast<uint8_t>(cls);
    return c;
}

void free_cell(Cell* c) {
    int cls = c->size_class;
    c->~Cell();
    release_cell_memory(c, cls);
}

}  // namespace

// ---- Delivery (a receive matched the message) ----------------------------------

void place(Request* q, const Envelope& e, const unsigned char* data, size_t bytes) {
    const size_t n = std::min(bytes, receive_capacity(q));
    unpack(q->buf, static_cast<size_t>(q->count), *q->type, 0, data, n);
    set_receive_status(q, e.source, e.tag, bytes, n);
}

Incoming* cell_with(const Envelope& e, const unsigned char* data, size_t bytes) {
    Cell* c = new_cell(e, bytes);
    memcpy(c->data(), data, bytes);
    return c;
}

namespace {

void deliver_cell(Incoming* m, Request* r) {
    auto* c = static_cast<Cell*>(m);
    place(r, c->env, c->data(), c->bytes);
    free_cell(c);
    complete(r);
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

void copy_shared(const void* src, void* dst, size_t bytes, const RankState* sender) {
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
        copy_shared(contiguous_data(s->buf, *s->type), contiguous_data(r->buf, *r->type), n,
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

const IncomingOps kRendezvousOps{deliver_rendezvous, "intra-node rendezvous"};

}  // namespace

void free_incoming(Incoming* m) {
    if (m->ops == &kCellOps)
        free_cell(static_cast<Cell*>(m));
    else
        delete static_cast<Rendezvous*>(m);
}

namespace {

// ---- The inbox ---------------------------------------------------------------
//
// Senders push messages onto a lock-free stack (Inbox::word), newest first;
// the receiver takes the whole stack with one compare-and-swap and matches it
// in arrival order. A message of at most kSlotPayload bytes goes into the
// inbox line's own slot instead when the inbox is empty: the sender claims
// the slot by swapping the empty word for kSlotBusy, writes the message into
// the line it now holds, and publishes it with slot_filled. Messages pushed
// later go on top, so the slot is always the oldest message, and per-sender
// order holds. The receiver copies the slot out, or receives it in place,
// and frees it when it takes the inbox (the same compare-and-swap).

Incoming* top_of(uintptr_t word) {
    return reinterpret_cast<Incoming*>(word & ~Inbox::kSlotBusy);
}

// Pushes m onto dest's inbox, guessing the word is `guess` (an empty inbox
// usually: a load before the swap would fetch the line, shared with the
// polling receiver, and the swap then take it over in a second transfer).
void push(RankState* dest, Incoming* m, uintptr_t guess) {
    uintptr_t word = guess;
    do {
        m->next = top_of(word);
    } while (!dest->inbox.word.compare_exchange_weak(
        word, reinterpret_cast<uintptr_t>(m) | (word & Inbox::kSlotBusy),
        std::memory_order_seq_cst, std::memory_order_relaxed));
    // A parked receiver (or one that only it may serve, in wait mode) wakes up.
    dest->doorbell.ring();
}

// Claims dest's slot when its inbox is empty; otherwise leaves the word seen
// in `word`. The claim pairs with the receiver's release of the slot: its
// reads of the previous message come before our writes.
bool claim_slot(Inbox& in, uintptr_t& word) {
    word = 0;
    return in.word.compare_exchange_strong(word, Inbox::kSlotBusy, std::memory_order_seq_cst,
                                           std::memory_order_relaxed);
}

// The slot's message size, once its sender has written it (a claimed slot is
// filled within a few stores; its sender does nothing else meanwhile).
size_t slot_bytes(const Inbox& in) {
    uint32_t filled = 0;
    runtime::spin_until(
        [&] { return (filled = in.slot_filled.load(std::memory_order_acquire)) != 0; });
    return filled - 1;
}

}  // namespace

bool send_eager(RankState* from, RankState* dest, const Envelope& e, const void* buf,
                size_t count, const Datatype& type, size_t bytes) {
    if (Ring* g = ring_for(from, dest)) {
        if (bytes <= kRingInline) {
            ring_send_inline(g, dest, e, buf, count, type, bytes);
            return true;
        }
        Cell* c = new_cell(e, bytes);
        pack(buf, count, type, 0, c->data(), bytes);
        ring_send(g, dest, c);
        return false;
    }
    Inbox& in = dest->inbox;
    uintptr_t word = 0;
    if (bytes <= Inbox::kSlotPayload && claim_slot(in, word)) {
        in.slot_env = e;
        pack(buf, count, type, 0, in.slot_data, bytes);
        in.slot_filled.store(static_cast<uint32_t>(bytes) + 1, std::memory_order_release);
        dest->doorbell.ring();
        return true;
    }
    Cell* c = new_cell(e, bytes);
    pack(buf, count, type, 0, c->data(), bytes);
    push(dest, c, word);
    return false;
}

void send(Request* s, RankState* dest) {
    const Envelope e{s->context, s->comm->rank, s->tag};
    const size_t bytes = static_cast<size_t>(s->count) * s->type->size;
    const bool counting = runtime::tools::g_transport.on();
    if (bytes <= g_intra_eager_limit.load(std::memory_order_relaxed) &&
        s->mode != SendMode::Synchronous) {
        const bool slot =
            send_eager(s->rank, dest, e, s->buf, static_cast<size_t>(s->count), *s->type, bytes);
        if (counting)
            s->rank->transport.count(
                slot ? TransportCounters::IntraSlot : TransportCounters::IntraCell, bytes);
        complete(s);
        return;
    }
    if (counting) s->rank->transport.count(TransportCounters::IntraRendezvous, bytes);
    runtime::tools::raise(events::g_rendezvous, s->rank->local_index,
                          events::Rendezvous{s->peer, s->tag, bytes});
    auto* rv = new Rendezvous();
    rv->env = e;
    rv->bytes = bytes;
    rv->ops = &kRendezvousOps;
    rv->send = s;
    if (Ring* g = ring_for(s->rank, dest))
        ring_send(g, dest, rv);
    else
        push(dest, rv, 0);
}

void Deliveries::deliver_all() {
    for (int i = 0; i < n_; ++i) {
        if (Incoming* m = pairs_[i].m)
            m->ops->deliver(m, pairs_[i].r);
        else
            complete(pairs_[i].r);  // placed from a ring entry under the lock
    }
    n_ = 0;
}

namespace {

// The slot's message, copied into a cell of the receiver's.
Cell* copy_slot(const Inbox& in) {
    const size_t bytes = slot_bytes(in);
    Cell* c = new_cell(in.slot_env, bytes);
    memcpy(c->data(), in.slot_data, bytes);
    return c;
}

// With r->match.lock held: takes everything in r's inbox, oldest first, into
// [first, last], and frees the slot and what was received in place. Returns
// false when the inbox is empty.
bool take_inbox(RankState* r, Incoming*& first, Incoming*& last) {
    // (A swap only when there is something: a new receive drains an empty
    // inbox most of the time, and a locked instruction costs even on a line
    // the rank owns.)
    Inbox& in = r->inbox;
    uintptr_t word = in.word.load(std::memory_order_acquire);
    if (word == 0) return false;
    // The newest message's line is fetched while the swap takes the inbox's
    // line back from its sender: the two transfers overlap.
    if (Incoming* top = top_of(word)) __builtin_prefetch(top);
    const uintptr_t received = r->received_in_place.load(std::memory_order_relaxed);
    Cell* from_slot = nullptr;
    if (word & Inbox::kSlotBusy) {
        if (received != Inbox::kSlotBusy) from_slot = copy_slot(in);
        in.slot_filled.store(0, std::memory_order_relaxed);  // published by the swap
    }
    // Only pushes change the word meanwhile (the slot stays busy until this).
    while (!in.word.compare_exchange_weak(word, 0, std::memory_order_acq_rel,
                                          std::memory_order_relaxed)) {
    }
    // A stack, newest first: reverse it.
    Incoming* fifo = nullptr;
    last = top_of(word);
    for (Incoming* m = last; m;) {
        Incoming* next = m->next;
        m->next = fifo;
        fifo = m;
        m = next;
    }
    if (received) {
        // The oldest pushed message may be one received in place: done with now.
        if (received != Inbox::kSlotBusy) {
            MPC_CHECK(fifo == top_of(received));
            fifo = fifo->next;
            if (!fifo) last = nullptr;
            free_cell(static_cast<Cell*>(top_of(received)));
        }
        r->received_in_place.store(0, std::memory_order_relaxed);
    }
    if (from_slot) {
        from_slot->next = fifo;
        if (!fifo) last = from_slot;
        fifo = from_slot;
    }
    first = fifo;
    return true;
}

// Moves the inbox into matching until `out` is full (the rest waits in the
// backlog).
bool drain_inbox_locked(RankState* r, Deliveries& out) {
    // The backlog in locals, written back only if it changed: in the common
    // case (backlog empty, everything taken) the rank writes nothing to the
    // line senders read (doorbell, prober count) and it stays in both caches.
    Incoming* const old_head = r->backlog_head.load(std::memory_order_relaxed);
    Incoming* head = old_head;
    Incoming* tail = r->backlog_tail;
    // Append what arrived to the backlog.
    Incoming *first = nullptr, *last = nullptr;
    if (take_inbox(r, first, last) && first) {
        if (tail)
            tail->next = first;
        else
            head = first;
        tail = last;
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
            runtime::tools::raise(events::g_unexpected, r->local_index,
                                  events::Unexpected{m->env.source, m->env.tag, m->bytes});
            unexpected = true;
        }
    }
    if (head != old_head) r->backlog_head.store(head, std::memory_order_relaxed);
    if (tail != r->backlog_tail) r->backlog_tail = tail;
    return unexpected;
}

bool inbox_clear(const RankState* r) {
    const uintptr_t word = r->inbox.word.load(std::memory_order_seq_cst);
    return (word == 0 || word == r->received_in_place.load(std::memory_order_relaxed)) &&
           !r->backlog_head.load(std::memory_order_relaxed);
}

// drain_locked until `out` is full: the inbox, then the rings (whose
// messages may send us back to the inbox).
bool drain_some_locked(RankState* r, Deliveries& out, Request** posting) {
    bool unexpected = false;
    do {
        unexpected |= drain_inbox_locked(r, out);
    } while (!out.full() && rings_drain_locked(r, out, unexpected, inbox_clear, posting) ==
                                RingDrain::InboxFirst);
    return unexpected;
}

}  // namespace

bool drain_locked(RankState* r, Deliveries& out, Request** posting) {
    Request* none = nullptr;
    if (!posting) posting = &none;
    bool unexpected = false;
    for (;;) {
        unexpected |= drain_some_locked(r, out, posting);
        if (!out.full()) return unexpected;
        r->match.lock.unlock();
        out.deliver_all();
        r->match.lock.lock();
    }
}

void release_inbox(RankState* r) {
    const uintptr_t word = r->inbox.word.exchange(0, std::memory_order_acquire);
    for (Incoming* m = top_of(word); m;) {
        Incoming* next = m->next;
        free_incoming(m);
        m = next;
    }
    r->inbox.slot_filled.store(0, std::memory_order_relaxed);
    r->received_in_place.store(0, std::memory_order_relaxed);
    rings_release(r);
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

Request* receive_in_place(RankState* r, Request* posting) {
    if (r->received_in_place.load(std::memory_order_relaxed) ||
        r->backlog_head.load(std::memory_order_relaxed))
        return nullptr;
    const Inbox& in = r->inbox;
    const uintptr_t word = in.word.load(std::memory_order_acquire);
    const Envelope* e;
    const unsigned char* data;
    size_t bytes;
    if (word == Inbox::kSlotBusy) {
        bytes = slot_bytes(in);
        e = &in.slot_env;
        data = in.slot_data;
    } else {
        // Not under a busy slot: the slot's message would be older.
        auto* c = static_cast<Cell*>(reinterpret_cast<Incoming*>(word));
        // (Class 0 only: copies under the lock stay short.)
        if (!c || (word & Inbox::kSlotBusy) || c->next || c->ops != &kCellOps ||
            c->size_class != 0)
            return nullptr;
        bytes = c->bytes;
        e = &c->env;
        data = c->data();
    }
    // The oldest posted receive it matches has it; else the one being posted,
    // unless an older unexpected message matches that one.
    Request* q = r->match.take_posted(*e);
    if (!q && posting && posting->context == e->context &&
        envelope_matches(posting->peer, posting->tag, *e) &&
        !r->match.find_unexpected(posting->context, posting->peer, posting->tag))
        q = posting;
    if (!q) return nullptr;
    place(q, *e, data, bytes);
    r->received_in_place.store(word, std::memory_order_relaxed);
    return q;
}

bool drain(RankState* r, bool owner) {
    const uintptr_t word = r->inbox.word.load(std::memory_order_relaxed);
    if ((word == 0 || word == r->received_in_place.load(std::memory_order_relaxed)) &&
        !r->backlog_head.load(std::memory_order_relaxed) &&
        !(owner ? rings_ready(r) : rings_to_steal(r)))
        return false;
    if (Incoming* top = top_of(word)) __builtin_prefetch(top);  // overlaps the lock
    if (owner)
        r->match.lock.lock();
    else if (!r->match.lock.try_lock())
        return false;
    if (Request* q = receive_in_place(r, nullptr)) {
        r->match.lock.unlock();
        complete(q);
        return true;
    }
    Deliveries out;
    const bool unexpected = drain_locked(r, out);
    r->match.lock.unlock();
    out.deliver_all();
    if (unexpected) wake_prober(r);
    return true;
}

}  // namespace mpc::mpi::intranode

namespace mpc::mpi {

void shared_copy(const void* src, void* dst, size_t bytes, const RankState* owner) {
    if (bytes >= intranode::kSharedCopyMin)
        intranode::copy_shared(src, dst, bytes, owner);
    else
        memcpy(dst, src, bytes);
}

}  // namespace mpc::mpi
