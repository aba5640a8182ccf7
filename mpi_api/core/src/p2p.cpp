#include "mpi_api/p2p.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "intranode.hpp"
#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/hang_watch.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/tool_events.hpp"
#include "runtime/log.hpp"
#include "runtime/tools.hpp"

namespace mpc::mpi {

std::atomic<size_t> g_intra_eager_limit{16384};

namespace {

const RemoteTransport* g_remote = nullptr;

// A send done at once, counted (the transport gate is open: MPI_T, MPC_STATS
// or the hang watch). Out of line: the fast path only tests the gate.
__attribute__((noinline)) void counted_send(RankState* from, bool slot, size_t bytes) {
    from->transport.count(slot ? TransportCounters::IntraSlot : TransportCounters::IntraCell,
                          bytes);
    if (hang_watch_on()) from->completions.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

size_t receive_capacity(const Request* r) {
    return static_cast<size_t>(r->count) * r->type->size;
}

void set_receive_status(Request* r, int source, int tag, size_t bytes, size_t copied) {
    set_status(&r->status, source, tag, static_cast<MPI_Count>(copied));
    if (bytes > copied)
        r->status.MPI_ERROR = make_error(
            MPI_ERR_TRUNCATE,
            "a message of %zu bytes from rank %d (tag %d) does not fit the receive buffer of "
            "%zu bytes",
            bytes, source, tag, copied);
}

void finish_receive(Request* r, int source, int tag, size_t bytes, size_t copied) {
    set_receive_status(r, source, tag, bytes, copied);
    complete(r);
}

void enqueue_unexpected(RankState* dest, Incoming* m) {
    dest->match.add_unexpected(m);
    runtime::tools::raise(events::g_unexpected, dest->local_index,
                          events::Unexpected{m->env.source, m->env.tag, m->bytes});
}

// A thread blocked in MPI_Probe: a node of its rank's list of probers, on the
// prober's stack.
struct ProbeWaiter {
    sched::Waiter* waiter = nullptr;
    ProbeWaiter* next = nullptr;
    bool listed = false;
};

void wake_prober(RankState* dest) {
    // A prober lists itself before it looks at the queue, and we enqueued before
    // this load: either it sees the message or we see it (both under the lock).
    if (dest->prober_count.load(std::memory_order_seq_cst) == 0) return;
    dest->match.lock.lock();
    for (ProbeWaiter* p = dest->probers; p; p = p->next) p->waiter->unpark();
    dest->match.lock.unlock();
}

void set_remote_transport(const RemoteTransport* transport) { g_remote = transport; }

void p2p_start_send(Request* s) {
    int dest_world = s->comm->peer_world_rank(s->peer);
    if (RankState* dest = world().local(dest_world)) {
        intranode::send(s, dest);
        return;
    }
    if (!g_remote)
        runtime::fatal("rank %d is on another node process but no network is running",
                       dest_world);
    g_remote->start_send(s, dest_world);
}

bool p2p_send_now(Comm* c, int dest, int tag, const void* buf, MPI_Count count,
                  const Datatype& type) {
    // The first test bounds the product.
    const size_t limit = g_intra_eager_limit.load(std::memory_order_relaxed);
    if (type.size > limit) return false;
    const size_t bytes = static_cast<size_t>(count) * type.size;
    if (bytes > limit) return false;
    RankState* d = world().local(c->peer_world_rank(dest));
    if (!d) return false;
    const bool slot = intranode::send_eager(c->owner, d, Envelope{c->context, c->rank, tag},
                                            buf, static_cast<size_t>(count), type, bytes);
    if (__builtin_expect(runtime::tools::g_transport.on(), 0)) counted_send(c->owner, slot, bytes);
    return true;
}

namespace {

// Takes the lock of me's matching with every message that arrived before this
// point moved into matching: a new receive or probe must see them all.
// Returns with the lock held; `out` holds matches to deliver after unlocking.
bool lock_with_inbox_drained(RankState* me, intranode::Deliveries& out) {
    me->match.lock.lock();
    return intranode::drain_locked(me, out);
}

}  // namespace

void p2p_start_recv(Request* r) {
    RankState* me = r->rank;
    MatchQueues& q = me->match;
    q.lock.lock();
    Request* in_place = intranode::receive_in_place(me, r);
    if (in_place == r) {
        q.lock.unlock();
        complete(r);
        return;
    }
    intranode::Deliveries out;
    Request* posting = r;
    bool unexpected = intranode::drain_locked(me, out, &posting);
    Incoming* m = nullptr;
    if (posting) {  // (else a ring's message went straight to r: it is in `out`)
        m = q.find_unexpected(r->context, r->peer, r->tag);
        if (m) q.remove_unexpected(m);
        else q.add_posted(r);
    }
    q.lock.unlock();
    if (in_place) complete(in_place);  // an older posted receive had it
    out.deliver_all();
    if (unexpected) wake_prober(me);
    if (m) m->ops->deliver(m, r);
}

bool p2p_cancel_recv(Request* r) {
    // Messages that arrived before the cancel match first: only a receive that
    // nothing sent so far can match is cancelled.
    RankState* me = r->rank;
    MatchQueues& q = me->match;
    intranode::Deliveries out;
    bool unexpected = lock_with_inbox_drained(me, out);
    bool removed = q.remove_posted(r);
    q.lock.unlock();
    out.deliver_all();
    if (unexpected) wake_prober(me);
    if (removed) {
        set_empty_status(&r->status);
        r->status.mpc_cancelled = 1;
        complete(r);
    }
    return removed;
}

bool p2p_probe(RankState* me, uint32_t context, int source, int tag, MPI_Status* status,
               Incoming** taken) {
    MatchQueues& q = me->match;
    intranode::Deliveries out;
    bool unexpected = lock_with_inbox_drained(me, out);
    Incoming* m = q.find_unexpected(context, source, tag);
    if (m) {
        status_out(status, m->env.source, m->env.tag, static_cast<MPI_Count>(m->bytes));
        if (taken) {
            q.remove_unexpected(m);
            *taken = m;
        }
    }
    q.lock.unlock();
    out.deliver_all();
    if (unexpected) wake_prober(me);
    return m != nullptr;
}

namespace {

void list_prober(RankState* me, ProbeWaiter* p, sched::Waiter* w) {
    me->match.lock.lock();
    if (!p->listed) {
        p->waiter = w;
        p->next = me->probers;
        me->probers = p;
        p->listed = true;
        me->prober_count.fetch_add(1, std::memory_order_seq_cst);
    }
    me->match.lock.unlock();
}

void unlist_prober(RankState* me, ProbeWaiter* p) {
    me->match.lock.lock();
    if (p->listed) {
        ProbeWaiter** link = &me->probers;
        while (*link != p) link = &(*link)->next;
        *link = p->next;
        p->listed = false;
        me->prober_count.fetch_sub(1, std::memory_order_relaxed);
    }
    me->match.lock.unlock();
}

}  // namespace

void p2p_probe_wait(RankState* me, uint32_t context, int source, int tag, MPI_Status* status,
                    Incoming** taken) {
    bool found = false;
    ProbeWaiter self;
    block_until(
        [&] {
            found = found || p2p_probe(me, context, source, tag, status, taken);
            return found;
        },
        [&](sched::Waiter* w) { list_prober(me, &self, w); },
        [&](sched::Waiter*) { unlist_prober(me, &self); });
}

void p2p_receive_taken(Incoming* m, Request* r) { m->ops->deliver(m, r); }

namespace {

void init_internal(Request& r, Comm* c, const void* buf, int count, Datatype* type, int peer,
                   int tag, Request::Kind kind) {
    r.kind = kind;
    r.rank = c->owner;
    r.comm = c;
    r.buf = const_cast<void*>(buf);
    r.count = count;
    r.type = type;
    r.peer = peer;
    r.tag = tag;
    r.context = c->context + 1;
}

}  // namespace

void coll_send(Comm* c, const void* buf, int count, Datatype* type, int dest, int tag) {
    Request r;
    init_internal(r, c, buf, count, type, dest, tag, Request::Kind::Send);
    p2p_start_send(&r);
    wait_complete(&r);
}

void coll_recv(Comm* c, void* buf, int count, Datatype* type, int source, int tag) {
    Request r;
    init_internal(r, c, buf, count, type, source, tag, Request::Kind::Recv);
    p2p_start_recv(&r);
    wait_complete(&r);
}

void coll_sendrecv(Comm* c, const void* sbuf, int scount, Datatype* stype, int dest, void* rbuf,
                   int rcount, Datatype* rtype, int source, int tag) {
    Request rr, sr;
    init_internal(rr, c, rbuf, rcount, rtype, source, tag, Request::Kind::Recv);
    init_internal(sr, c, sbuf, scount, stype, dest, tag, Request::Kind::Send);
    p2p_start_recv(&rr);
    p2p_start_send(&sr);
    wait_complete(&sr);
    wait_complete(&rr);
}

void coll_start_send(Request* r, Comm* c, const void* buf, int count, Datatype* type, int dest,
                     int tag) {
    init_internal(*r, c, buf, count, type, dest, tag, Request::Kind::Send);
    p2p_start_send(r);
}

void coll_start_recv(Request* r, Comm* c, void* buf, int count, Datatype* type, int source,
                     int tag) {
    init_internal(*r, c, buf, count, type, source, tag, Request::Kind::Recv);
    p2p_start_recv(r);
}

}  // namespace mpc::mpi
