#include "mpi_api/match.hpp"

#include "mpi_api/request.hpp"

namespace mpc::mpi {

MatchQueues::Lists* MatchQueues::find_lists(uint32_t context, bool create) {
    for (Lists& l : lists_) {
        if (l.context == context) return last_ = &l;
    }
    if (!create) return nullptr;
    lists_.push_back(Lists{context});
    return last_ = &lists_.back();
}

Request* MatchQueues::take_posted(const Envelope& e) {
    Lists* l = lists_for(e.context, false);
    if (!l) return nullptr;
    for (Request* r = l->posted_head; r; r = r->next) {
        if (!envelope_matches(r->peer, r->tag, e)) continue;
        if (r->prev) r->prev->next = r->next; else l->posted_head = r->next;
        if (r->next) r->next->prev = r->prev; else l->posted_tail = r->prev;
        r->next = r->prev = nullptr;
        --posted_count_;
        return r;
    }
    return nullptr;
}

void MatchQueues::add_posted(Request* r) {
    Lists* l = lists_for(r->context, true);
    r->next = nullptr;
    r->prev = l->posted_tail;
    if (l->posted_tail) l->posted_tail->next = r; else l->posted_head = r;
    l->posted_tail = r;
    ++posted_count_;
}

bool MatchQueues::remove_posted(Request* r) {
    Lists* l = lists_for(r->context, false);
    if (!l) return false;
    for (Request* p = l->posted_head; p; p = p->next) {
        if (p != r) continue;
        if (r->prev) r->prev->next = r->next; else l->posted_head = r->next;
        if (r->next) r->next->prev = r->prev; else l->posted_tail = r->prev;
        r->next = r->prev = nullptr;
        --posted_count_;
        return true;
    }
    return false;
}

Incoming* MatchQueues::find_unexpected(uint32_t context, int source, int tag) {
    Lists* l = lists_for(context, false);
    if (!l) return nullptr;
    for (Incoming* m = l->unexp_head; m; m = m->next)
        if (envelope_matches(source, tag, m->env)) return m;
    return nullptr;
}

void MatchQueues::remove_unexpected(Incoming* m) {
    Lists* l = lists_for(m->env.context, false);
    if (m->prev) m->prev->next = m->next; else l->unexp_head = m->next;
    if (m->next) m->next->prev = m->prev; else l->unexp_tail = m->prev;
    m->next = m->prev = nullptr;
    --unexpected_count_;
}

void MatchQueues::count_context(uint32_t context, size_t* posted, size_t* unexpected) const {
    *posted = *unexpected = 0;
    for (const Lists& l : lists_) {
        if (l.context != context) continue;
        for (const Request* r = l.posted_head; r; r = r->next) ++*posted;
        for (const Incoming* m = l.unexp_head; m; m = m->next) ++*unexpected;
    }
}

void MatchQueues::add_unexpected(Incoming* m) {
    Lists* l = lists_for(m->env.context, true);
    m->next = nullptr;
    m->prev = l->unexp_tail;
    if (l->unexp_tail) l->unexp_tail->next = m; else l->unexp_head = m;
    l->unexp_tail = m;
    ++unexpected_count_;
}

}  // namespace mpc::mpi
