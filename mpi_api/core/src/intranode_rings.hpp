// Per-pair rings of the intra-node transport (private to it, intranode.cpp).
//
// A pair of ranks of one node process that exchanges many messages gets a
// ring: 128 slots of half a cache line, written only by the sender's side
// and read in order by whoever holds the receiver's matching lock. A message
// of up to 12 bytes travels in an entry of one slot, up to 40 bytes in two; a
// larger one, or a rendezvous, as a pointer in one. A sender writes a window
// of messages into lines its receiver is not reading, and no word is written
// by every sender (the receiver's inbox, which pairs use until they get a
// ring, is such a word: every push takes its line from the receiver). This is
// what makes windows of small nonblocking messages fast (issue 33).
//
// A pair gets its ring after kPromoteAfter messages through the inbox, while
// the receiver has fewer than kMaxRings rings (memory: about 4 KiB per ring),
// and only in node processes of at most kMaxRingRanks ranks (the receiver's
// table is one word pair per local rank). Order per sender holds across the
// switch: a ring entry is matched only when the receiver's inbox holds
// nothing unmatched (rings_drain_locked asks the caller), so the inbox
// messages a thread sent before it (it may have looked for the ring just
// before the ring was made) go first.
// Never: a ring entry read without the receiver's matching lock, or written
// without its ring's lock.
#pragma once

#include <cstddef>

#include "mpi_api/match.hpp"

namespace mpc::mpi {
struct Datatype;
struct RankState;
struct Request;
}  // namespace mpc::mpi

namespace mpc::mpi::intranode {

class Deliveries;
struct Ring;
struct Rings;  // a rank's rings as receiver and its table as sender

constexpr unsigned kPromoteAfter = 16;
constexpr unsigned kMaxRings = 32;
constexpr size_t kMaxRingRanks = 256;
constexpr size_t kRingInline = 40;
constexpr uint32_t kRingSlots = 128;  // half a line each

void rings_init(RankState* r, size_t nlocal);
// Frees r's rings and the messages still in them (r is being destroyed).
void rings_release(RankState* r);

// The ring from `from` to `dest`, or nullptr while the pair uses dest's inbox
// (counts the pair's messages; gives it a ring when the time has come).
Ring* ring_for(RankState* from, RankState* dest);
// Sends a message of at most kRingInline bytes in its entry.
void ring_send_inline(Ring* g, RankState* dest, const Envelope& e, const void* buf,
                      size_t count, const Datatype& type, size_t bytes);
// Sends m (a cell or a rendezvous) through the ring.
void ring_send(Ring* g, RankState* dest, Incoming* m);

// Hints, without the lock. For r itself: a ring's next entry is written
// (reads r's rings, lines that stay in its cache while nothing arrives). For
// ranks polling for r (collaborative polling): the same, looked at only
// when senders raised r's flag since a poller last found the rings empty.
bool rings_ready(const RankState* r);
bool rings_to_steal(RankState* r);

enum class RingDrain {
    Done,       // every ring read up to its newest message
    Full,       // stopped because `out` filled
    InboxFirst  // a ring message waits for the inbox to be matched first
};
// With r->match.lock held: moves messages of r's rings into matching (posted
// receives, or the unexpected queue: `unexpected` set). `inbox_clear` says
// whether r's inbox and backlog hold nothing unmatched. *posting, when not
// null, is a receive being posted: the first message no posted receive
// wants but it does (and no older unexpected one would match it first) goes
// straight to it, saving a trip through the unexpected queue; *posting is
// then set to null (the receive is in `out`, to complete).
RingDrain rings_drain_locked(RankState* r, Deliveries& out, bool& unexpected,
                             bool (*inbox_clear)(const RankState*), Request** posting);
// Messages in r's rings not matched yet (the hang report; a snapshot).
size_t rings_queued(const RankState* r);

// From intranode.cpp (the messages themselves):
// Copies a message into posted receive q and sets its status; completing q
// is left to the caller (once the matching lock is released).
void place(Request* q, const Envelope& e, const unsigned char* data, size_t bytes);
// A cell holding a copy of `bytes` of data (an unexpected inline message).
Incoming* cell_with(const Envelope& e, const unsigned char* data, size_t bytes);
// Frees a cell or rendezvous that was never delivered.
void free_incoming(Incoming* m);

}  // namespace mpc::mpi::intranode
