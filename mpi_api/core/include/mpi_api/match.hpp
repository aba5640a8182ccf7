// mpi_api/match: one rank's matching state: the receives it has posted and the
// messages that arrived before their receive ("unexpected"), per context id.
//
// MPI's order holds because both lists are FIFO and every insertion and search
// happens under the rank's lock: an incoming message takes the first posted
// receive it matches, a new receive takes the first unexpected message. Any
// thread of the node may match for the rank (a sender on another VP, or a rank
// polling on its behalf), always under that lock; critical sections only move
// pointers, never copy data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpi.h"
#include "runtime/sync.hpp"

namespace mpc::mpi {

struct Request;

struct Envelope {
    uint32_t context;
    int source;  // sender's rank in the communicator
    int tag;
};

struct Incoming;

// How a kind of unexpected message is delivered. Kinds are added by transports
// (intra-node cells, intra-node rendezvous, network eager/fragments/rendezvous).
struct IncomingOps {
    // Moves the message's data into r's buffer and completes r, now or later.
    // Called without any lock held, exactly once per message.
    void (*deliver)(Incoming* m, Request* r);
    // Name for diagnostics.
    const char* name;
};

struct Incoming {
    Envelope env;
    size_t bytes = 0;
    const IncomingOps* ops = nullptr;
    Incoming* next = nullptr;
    Incoming* prev = nullptr;
};

inline bool envelope_matches(int want_source, int want_tag, const Envelope& e) {
    return (want_source == MPI_ANY_SOURCE || want_source == e.source) &&
           (want_tag == MPI_ANY_TAG || want_tag == e.tag);
}

class MatchQueues {
public:
    MatchQueues() = default;
    MatchQueues(const MatchQueues&) = delete;  // last_ points into lists_
    MatchQueues& operator=(const MatchQueues&) = delete;

    runtime::SpinLock lock;

    // All below: caller holds `lock`.
    // First posted receive that e matches, removed from the queue; nullptr if none.
    Request* take_posted(const Envelope& e);
    void add_posted(Request* r);
    // Removes r if still posted; false when it was already matched.
    bool remove_posted(Request* r);

    // First unexpected message a receive (context, source, tag) matches.
    Incoming* find_unexpected(uint32_t context, int source, int tag);
    void remove_unexpected(Incoming* m);
    void add_unexpected(Incoming* m);

    // Calls f(const Request*) on each posted receive, g(const Incoming*) on
    // each unexpected message, in queue order (diagnostics).
    template <class F, class G, class R = Request>  // R: Request is incomplete here
    void for_each(F&& f, G&& g) const {
        for (const Lists& l : lists_) {
            for (const R* r = l.posted_head; r; r = r->next) f(r);
            for (const Incoming* m = l.unexp_head; m; m = m->next) g(m);
        }
    }

    size_t posted_count() const { return posted_count_; }
    size_t unexpected_count() const { return unexpected_count_; }
    // Posted receives and unexpected messages of one context (tools).
    void count_context(uint32_t context, size_t* posted, size_t* unexpected) const;

  private:
    struct Lists {
        uint32_t context;
        Request* posted_head = nullptr;
        Request* posted_tail = nullptr;
        Incoming* unexp_head = nullptr;
        Incoming* unexp_tail = nullptr;
    };
    // Every match looks its context up, most often the one of the match before:
    // that case is a compare, inline; the search is out of line (its growth
    // path would make every caller save registers).
    Lists* lists_for(uint32_t context, bool create) {
        if (last_ && last_->context == context) return last_;
        return find_lists(context, create);
    }
    Lists* find_lists(uint32_t context, bool create);
    std::vector<Lists> lists_;  // few contexts per rank: a linear scan is fastest
    Lists* last_ = nullptr;     // the last context used (lists_ only grows)
    size_t posted_count_ = 0;
    size_t unexpected_count_ = 0;
};

}  // namespace mpc::mpi
