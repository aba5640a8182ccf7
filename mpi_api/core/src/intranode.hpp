// The intra-node transport (private to the MPI core).
//
// A send to a rank of the same node process pushes a small "cell" onto the
// receiver's inbox (or, once the pair has exchanged enough messages, writes it
// into the pair's own ring: intranode_rings.hpp): the data itself for small messages (the sender completes
// at once), or a pointer to the sender's buffer for large and synchronous
// ones (one copy, by whoever matches, straight into the receive buffer; the
// sender completes then). A message of a few words, when the inbox is empty,
// travels in the inbox's own cache line instead (its slot, see Inbox). The
// sender never touches the receiver's matching state, so a message costs it
// one or two cache lines of the receiver's; the receiver (or, in
// collaborative mode, any rank polling for it) takes the inbox in one swap
// and matches in arrival order. No system call on any of it.
// A large copy is shared: ranks that poll while it runs (its sender, waiting
// for it, first) copy chunks of it too.
#pragma once

#include <cstddef>

#include "mpi_api/match.hpp"

namespace mpc::mpi {

struct Datatype;
struct Request;
struct RankState;

namespace intranode {

void send(Request* s, RankState* dest);
// A message of at most g_intra_eager_limit bytes (not synchronous) from
// `from`: copied into a cell (or a ring entry) and handed to dest, so the send
// is complete on return. True when it travelled in a line of its own (dest's
// inbox slot, or its ring entry) rather than a cell (for the counters).
bool send_eager(RankState* from, RankState* dest, const Envelope& e, const void* buf,
                size_t count, const Datatype& type, size_t bytes);

// Matched messages to deliver once the matching lock is released.
class Deliveries {
public:
    bool full() const { return n_ == kMax; }
    void add(Incoming* m, Request* r) {
        pairs_[n_].m = m;
        pairs_[n_].r = r;
        ++n_;
    }
    void deliver_all();

private:
    static constexpr int kMax = 32;
    struct Pair {
        Incoming* m;
        Request* r;
    } pairs_[kMax];
    int n_ = 0;
};

// With r->match.lock held: moves r's inbox (and backlog) into matching, posted
// receives or the unexpected queue. Whenever `out` fills, it releases the lock
// to deliver those matches and takes it again. Returns true when anything
// became unexpected.
// With `posting` (a receive being posted, see rings_drain_locked): a message
// from a ring may go straight to *posting, which is then set to null.
bool drain_locked(RankState* r, Deliveries& out, Request** posting = nullptr);
// Drains r's inbox. The owner waits for the lock; a thief gives up at once.
// A lone small message is received in place (see receive_in_place).
bool drain(RankState* r, bool owner);
// With r->match.lock held: when r's inbox holds one small message (in the
// slot, or a class-0 cell) and nothing older is pending, gives it to the
// oldest posted receive it matches, or else to `posting` (a receive being
// posted, or nullptr) unless an older unexpected message matches that one.
// The message is copied without taking the inbox; returns the receive it
// went to, to complete once unlocked, or nullptr. Taking the inbox is a swap
// on a line its sender has just written: it waits for the line to come back
// before the data can move. The next drain (most often the rank's next
// receive posting, while its peer works on the reply) frees the slot or the
// cell, off the message's path; for a receive posted late it also saves
// moving the message through the unexpected queue.
Request* receive_in_place(RankState* r, Request* posting);
// Frees what r's inbox and rings still hold (r is being destroyed: a world in tests, or
// the ranks at process exit).
void release_inbox(RankState* r);

// Copies chunks of the large copies running in the node: those of messages
// `me` sent, and everyone's when `others`. Returns whether it copied any.
bool help_copy(const RankState* me, bool others);

}  // namespace intranode
}  // namespace mpc::mpi
