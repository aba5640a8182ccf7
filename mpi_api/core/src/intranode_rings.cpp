#include "intranode_rings.hpp"

#include <atomic>
#include <cstring>
#include <memory>

#include "intranode.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/tool_events.hpp"
#include "runtime/sync.hpp"
#include "runtime/tools.hpp"

namespace mpc::mpi::intranode {
namespace {

// Slots of half a line: a message of up to 12 bytes (or a pointer) takes
// one, up to 40 bytes two, which start a line and fill it. A window of small
// messages then moves two per line: each line a sender writes is a transfer
// to its reader's core, and that transfer is what an 8-byte message costs
// (issue 33).
//
// A slot's first word is its stamp: its position + 1 once written, so that a
// reader knows a stale slot (from the last lap) without any word the sender
// and reader share. In a two-slot entry the second slot's first word is
// payload (the payload is contiguous, as one-line entries had it). It cannot
// pass for a stamp: a reader only looks at a second-half slot once the first
// half is written in the same lap, and a sender that starts a line with a
// one-slot entry clears the second half's stamp in the same line first. (A
// payload word that happens to equal its position + 1 only makes a scan go
// on to the next line, whose own stamp decides.)
constexpr uint32_t kSlots = kRingSlots;
constexpr uint32_t kScanAhead = 16;  // slots a drain looks at in one go
constexpr size_t kHeadInline = 12;   // payload bytes of a one-slot entry

struct alignas(32) Slot {
    std::atomic<uint32_t> stamp{0};
    uint32_t bytes = 0;  // inline payload size, kPointer or kSkip
    Envelope env{};
    unsigned char data[kHeadInline] = {};  // the payload (or pointer), or its start
    static constexpr uint32_t kPointer = ~uint32_t{0};
    // A slot left empty so that the two-slot entry after it starts a line.
    static constexpr uint32_t kSkip = kPointer - 1;
};
static_assert(sizeof(Slot) == 32, "two slots per cache line");
static_assert(kSlots % 2 == 0, "even positions start lines");
static_assert(offsetof(Slot, data) + kRingInline == 2 * sizeof(Slot) - 4,
              "a two-slot entry's payload ends 4 bytes before its line");

uint32_t slots_for(uint32_t bytes) {
    return bytes > kHeadInline && bytes <= kRingInline ? 2 : 1;
}

// An entry's payload: from its first slot's data on, through the second slot
// of a two-slot entry (the ring's slots are one array, and such an entry
// starts a line: it never ends the array).
const unsigned char* payload(const Slot& s) {
    return reinterpret_cast<const unsigned char*>(&s) + offsetof(Slot, data);
}

Incoming* pointer_in(const Slot& s) {
    Incoming* m;
    memcpy(&m, s.data, sizeof m);
    return m;
}

}  // namespace

struct Ring {
    // The senders' line: the threads of a rank (or ranks progressing its
    // operations) send at once.
    alignas(64) runtime::SpinLock lock;
    uint32_t tail = 0;       // next position to write
    uint32_t head_seen = 0;  // the reader's head when last looked at
    // The reader's line (under the receiver's matching lock).
    alignas(64) std::atomic<uint32_t> head{0};  // in slots, as tail
    alignas(64) Slot slot[kSlots];              // even slots start lines
};

struct Rings {
    explicit Rings(size_t n) : nlocal(n) {
        if (n <= kMaxRingRanks) from = std::make_unique<From[]>(n);
    }
    ~Rings() {
        for (auto& g : in) delete g.load(std::memory_order_relaxed);
    }
    // As receiver: a flag that senders raise after writing (the hint of ranks
    // polling for this one; a Dekker pair with them, see rings_to_steal), on
    // a line of its own: the receiver never reads it.
    alignas(64) std::atomic<bool> pending{false};
    // The rings, in the order they were made.
    alignas(64) std::atomic<uint32_t> count{0};
    std::atomic<Ring*> in[kMaxRings] = {};
    // By sender (local index): its ring, or how many messages it sent
    // through the inbox. Read by the senders, with lines they only read once
    // the ring is made: a sender must not read a line of the receiver's that
    // the receiver writes per message (its RankState's first line holds the
    // matching lock).
    struct From {
        std::atomic<Ring*> ring{nullptr};
        std::atomic<uint32_t> sent{0};  // approximate (relaxed)
    };
    size_t nlocal;
    std::unique_ptr<From[]> from;  // null: too many ranks for rings
};

void rings_init(RankState* r, size_t nlocal) {
    delete r->rings;
    r->rings = new Rings(nlocal);
}

void rings_release(RankState* r) {
    Rings* rs = r->rings;
    if (!rs) return;
    const uint32_t n = rs->count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < n; ++i) {
        Ring* g = rs->in[i].load(std::memory_order_acquire);
        if (!g) continue;
        for (uint32_t h = g->head.load(std::memory_order_relaxed);
             g->slot[h % kSlots].stamp.load(std::memory_order_acquire) == h + 1;
             h += slots_for(g->slot[h % kSlots].bytes)) {
            const Slot& e = g->slot[h % kSlots];
            if (e.bytes == Slot::kPointer) free_incoming(pointer_in(e));
        }
    }
    delete rs;
    r->rings = nullptr;
}

namespace {

// Gives the pair a ring, unless dest has all it may have. Threads of the
// sender racing here may both register one: the loser's stays empty.
Ring* promote(Rings::From& o, Rings& to) {
    uint32_t n = to.count.load(std::memory_order_relaxed);
    do {
        if (n >= kMaxRings) return nullptr;
    } while (!to.count.compare_exchange_weak(n, n + 1, std::memory_order_seq_cst));
    auto* g = new Ring();
    // Listed before any entry is written; seq_cst, like the stamps: a reader
    // that clears `pending` and misses a stamp's flag must see the ring.
    to.in[n].store(g, std::memory_order_seq_cst);
    Ring* none = nullptr;
    if (o.ring.compare_exchange_strong(none, g, std::memory_order_acq_rel)) return g;
    return none;
}

// The first of n free slots for the sender to write (g->lock held); when the
// ring is full, the sender moves dest's messages into its matching itself.
// A two-slot entry starts a line (after a skipped slot if need be): across
// two lines it would cost two transfers (32-byte ping-pong: 0.13 against
// 0.115 us). An entry that starts a line has the whole line free: its
// writer clears the second half's stamp (see Slot).
Slot& claim(Ring* g, RankState* dest, uint32_t n) {
    auto room = [g, n] {
        const uint32_t need = g->tail % 2 == 0 ? 2 : n == 2 ? 3 : 1;
        return g->tail + need - g->head_seen <= kSlots;
    };
    while (!room()) {
        g->head_seen = g->head.load(std::memory_order_acquire);
        if (room()) break;
        g->lock.unlock();
        dest->match.lock.lock();
        Deliveries out;
        const bool unexpected = drain_locked(dest, out);
        dest->match.lock.unlock();
        out.deliver_all();
        if (unexpected) wake_prober(dest);
        g->lock.lock();
    }
    if (n == 2 && g->tail % 2) {
        Slot& skip = g->slot[g->tail % kSlots];
        skip.bytes = Slot::kSkip;
        skip.stamp.store(g->tail + 1, std::memory_order_release);
        ++g->tail;
    }
    return g->slot[g->tail % kSlots];
}

// Publishes the entry of n slots at the tail.
void publish(Ring* g, uint32_t n, RankState* dest) {
    const uint32_t t = g->tail;
    if (n == 1 && t % 2 == 0) g->slot[(t + 1) % kSlots].stamp.store(0, std::memory_order_relaxed);
    // seq_cst: the stamp store and the load of `pending` below must not be
    // reordered (the reader clears `pending`, then reads the stamps).
    g->slot[t % kSlots].stamp.store(t + 1, std::memory_order_seq_cst);
    g->tail = t + n;
    // Ask now for the line after the one the next entry goes into, so that
    // its stamp store (a full fence) finds it here instead of waiting for
    // the reader's core to give it up (8-byte window message rate: +20%).
    // Not the next entry's line: a caught-up reader polls it, and taking it
    // from under it slowed ping-pong.
    runtime::prefetch_for_write(&g->slot[(g->tail + 2) % kSlots]);
    g->lock.unlock();
    std::atomic<bool>& pending = dest->rings->pending;
    if (!pending.load(std::memory_order_seq_cst)) pending.store(true, std::memory_order_seq_cst);
    dest->doorbell.ring();
}

}  // namespace

Ring* ring_for(RankState* from, RankState* dest) {
    // (No rings: ranks made outside a world, in unit tests.)
    Rings* to = dest->rings;
    if (!to || !to->from) [[unlikely]]
        return nullptr;
    Rings::From& o = to->from[static_cast<size_t>(from->local_index)];
    if (Ring* g = o.ring.load(std::memory_order_acquire)) [[likely]]
        return g;
    if (o.sent.fetch_add(1, std::memory_order_relaxed) < kPromoteAfter) return nullptr;
    return promote(o, *to);
}

void ring_send_inline(Ring* g, RankState* dest, const Envelope& env, const void* buf,
                      size_t count, const Datatype& type, size_t bytes) {
    const uint32_t n = slots_for(static_cast<uint32_t>(bytes));
    // A two-slot message is packed aside: its word in the second slot's stamp
    // is stored as an atomic, since a poller may look at that stamp without
    // the lock (rings_ready, with a head it read a moment before).
    unsigned char packed[kRingInline] = {};
    if (n == 2) pack(buf, count, type, 0, packed, bytes);
    g->lock.lock();
    Slot& e = claim(g, dest, n);
    e.bytes = static_cast<uint32_t>(bytes);
    e.env = env;
    if (n == 1) {
        pack(buf, count, type, 0, e.data, bytes);
    } else {
        Slot& second = g->slot[(g->tail + 1) % kSlots];
        uint32_t word;
        memcpy(e.data, packed, kHeadInline);
        memcpy(&word, packed + kHeadInline, sizeof word);
        second.stamp.store(word, std::memory_order_relaxed);
        memcpy(reinterpret_cast<unsigned char*>(&second) + sizeof word,
               packed + kHeadInline + sizeof word, kRingInline - kHeadInline - sizeof word);
    }
    publish(g, n, dest);
}

void ring_send(Ring* g, RankState* dest, Incoming* m) {
    g->lock.lock();
    Slot& e = claim(g, dest, 1);
    e.bytes = Slot::kPointer;
    memcpy(e.data, &m, sizeof m);
    publish(g, 1, dest);
}


namespace {

// The receive for envelope e: the oldest posted one it matches, else the one
// being posted (see rings_drain_locked), else none.
Request* receiver_of(RankState* r, const Envelope& e, Request** posting) {
    if (Request* q = r->match.take_posted(e)) return q;
    Request* p = *posting;
    if (!p || p->context != e.context || !envelope_matches(p->peer, p->tag, e) ||
        r->match.find_unexpected(p->context, p->peer, p->tag))
        return nullptr;
    *posting = nullptr;
    return p;
}

// The first slot from h on that is not written yet, looking at up to
// kScanAhead of them. The loads do not wait for each other (nor for an
// entry's size), so the lines the sender wrote come over together rather than
// one per message as each is matched. The slot returned may be inside an
// entry (see Slot).
uint32_t written_from(const Ring& g, uint32_t h) {
    const uint32_t limit = h + kScanAhead;
    while (h != limit && g.slot[h % kSlots].stamp.load(std::memory_order_seq_cst) == h + 1) ++h;
    return h;
}

// Matches the entry at h of r's ring g: into `out` (to deliver once
// unlocked) or the unexpected queue.
void take(RankState* r, const Ring& g, uint32_t h, Deliveries& out, bool& unexpected,
          Request** posting) {
    const Slot& e = g.slot[h % kSlots];
    if (e.bytes == Slot::kSkip) return;
    Incoming* m = nullptr;
    if (e.bytes == Slot::kPointer) {
        m = pointer_in(e);
        if (Request* q = receiver_of(r, m->env, posting)) {
            out.add(m, q);
            return;
        }
    } else {
        if (Request* q = receiver_of(r, e.env, posting)) {
            place(q, e.env, payload(e), e.bytes);  // at most 40 bytes: under the lock
            out.add(nullptr, q);
            return;
        }
        m = cell_with(e.env, payload(e), e.bytes);
    }
    r->match.add_unexpected(m);
    runtime::tools::raise(events::g_unexpected, r->local_index,
                          events::Unexpected{m->env.source, m->env.tag, m->bytes});
    unexpected = true;
}

}  // namespace

RingDrain rings_drain_locked(RankState* r, Deliveries& out, bool& unexpected,
                             bool (*inbox_clear)(const RankState*), Request** posting) {
    if (!r->rings) return RingDrain::Done;
    Rings& rs = *r->rings;
    const uint32_t n = rs.count.load(std::memory_order_seq_cst);
    for (uint32_t i = 0; i < n; ++i) {
        Ring* g = rs.in[i].load(std::memory_order_seq_cst);
        if (!g) continue;  // being listed: seen at the next look
        const uint32_t h0 = g->head.load(std::memory_order_relaxed);
        uint32_t h = h0, written = h0;
        RingDrain stop = RingDrain::Done;
        for (;; h += slots_for(g->slot[h % kSlots].bytes)) {
            // (Past `written` too: it may be the second slot of the entry before.)
            if (static_cast<int32_t>(written - h) <= 0 && (written = written_from(*g, h)) == h)
                break;
            if (out.full()) {
                stop = RingDrain::Full;
                break;
            }
            // Inbox messages its sending thread pushed before writing it (the
            // pair's first ones, or a thread that looked before the ring was
            // made) are in the inbox or the backlog now, or matched: they go
            // first. (A load of lines only inbox senders write: cheap.)
            if (!inbox_clear(r)) {
                stop = RingDrain::InboxFirst;
                break;
            }
            take(r, *g, h, out, unexpected, posting);
        }
        if (h != h0) g->head.store(h, std::memory_order_release);
        if (stop != RingDrain::Done) return stop;
    }
    return RingDrain::Done;
}

bool rings_ready(const RankState* r) {
    // (seq_cst loads, plain ones on x86: rings_to_steal's second look.)
    if (!r->rings) return false;
    const Rings& rs = *r->rings;
    const uint32_t n = rs.count.load(std::memory_order_seq_cst);
    for (uint32_t i = 0; i < n; ++i) {
        const Ring* g = rs.in[i].load(std::memory_order_seq_cst);
        if (!g) continue;
        const uint32_t h = g->head.load(std::memory_order_seq_cst);
        if (g->slot[h % kSlots].stamp.load(std::memory_order_seq_cst) == h + 1) return true;
    }
    return false;
}

bool rings_to_steal(RankState* r) {
    // `pending` stays raised while messages flow (senders find it so in
    // their cache); the receiver itself never reads it. A poller that finds
    // it raised but the rings empty lowers it, then looks again: a sender
    // that saw it still raised had written its entry before.
    if (!r->rings) return false;
    std::atomic<bool>& pending = r->rings->pending;
    if (!pending.load(std::memory_order_relaxed)) return false;
    if (rings_ready(r)) return true;
    pending.store(false, std::memory_order_seq_cst);
    return rings_ready(r);
}

size_t rings_queued(const RankState* r) {
    const Rings* rs = r->rings;
    if (!rs) return 0;
    size_t queued = 0;
    const uint32_t n = rs->count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < n; ++i) {
        const Ring* g = rs->in[i].load(std::memory_order_acquire);
        if (!g) continue;
        for (uint32_t h = g->head.load(std::memory_order_acquire);
             g->slot[h % kSlots].stamp.load(std::memory_order_acquire) == h + 1 &&
             queued < kSlots * kMaxRings;
             h += slots_for(g->slot[h % kSlots].bytes))
            queued += g->slot[h % kSlots].bytes != Slot::kSkip;
    }
    return queued;
}

}  // namespace mpc::mpi::intranode
