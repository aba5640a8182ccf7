#include "mpi_api/p2p.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/progress.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/log.hpp"

namespace mpc::mpi {

size_t g_intra_eager_limit = 16384;

namespace {

const RemoteTransport* g_remote = nullptr;

// ---- Intra-node messages ---------------------------------------------------

// A small message copied into a cell. The sender enqueues the cell under the
// receiver's lock (keeping MPI order) and fills it after unlocking; `ready`
// tells the receiver the copy is done.
struct IntraCell : Incoming {
    std::atomic<bool> ready{false};
    unsigned char* data() { return reinterpret_cast<unsigned char*>(this + 1); }
};

// A large or synchronous message left in the sender's buffer.
struct IntraRendezvous : Incoming {
    Request* send;
};

void deliver_cell(Incoming* m, Request* r);
void deliver_rendezvous(Incoming* m, Request* r);

const IncomingOps kCellOps{deliver_cell, "intra-node cell"};
const IncomingOps kRendezvousOps{deliver_rendezvous, "intra-node rendezvous"};

IntraCell* new_cell(const Envelope& e, size_t bytes) {
    void* mem = malloc(sizeof(IntraCell) + bytes);
    if (!mem) runtime::fatal("out of memory for a %zu-byte message", bytes);
    auto* c = new (mem) IntraCell();
    c->env = e;
    c->bytes = bytes;
    c->ops = &kCellOps;
    return c;
}

void free_cell(IntraCell* c) {
    c->~IntraCell();
    free(c);
}

size_t message_bytes(const Request* r) { return static_cast<size_t>(r->count) * r->type->size; }

void deliver_cell(Incoming* m, Request* r) {
    auto* c = static_cast<IntraCell*>(m);
    // The sender fills the cell right after enqueueing it, without switching.
    for (unsigned spins = 0; !c->ready.load(std::memory_order_acquire); ++spins) {
        if (spins > 1000) sched::yield();
        else runtime::cpu_relax();
    }
    size_t n = std::min(c->bytes, receive_capacity(r));
    unpack(r->buf, static_cast<size_t>(r->count), *r->type, 0, c->data(), n);
    finish_receive(r, c->env.source, c->env.tag, c->bytes, n);
    free_cell(c);
}

void deliver_rendezvous(Incoming* m, Request* r) {
    auto* rv = static_cast<IntraRendezvous*>(m);
    Request* s = rv->send;
    size_t n = std::min(rv->bytes, receive_capacity(r));
    typed_copy(s->buf, static_cast<size_t>(s->count), *s->type, r->buf,
               static_cast<size_t>(r->count), *r->type, n);
    finish_receive(r, rv->env.source, rv->env.tag, rv->bytes, n);
    delete rv;
    complete(s);
}

void intra_send(Request* s, RankState* dest) {
    const Envelope e{s->context, s->comm->rank, s->tag};
    const size_t bytes = message_bytes(s);
    MatchQueues& q = dest->match;

    q.lock.lock();
    if (Request* r = q.take_posted(e)) {
        q.lock.unlock();
        size_t n = std::min(bytes, receive_capacity(r));
        typed_copy(s->buf, static_cast<size_t>(s->count), *s->type, r->buf,
                   static_cast<size_t>(r->count), *r->type, n);
        finish_receive(r, e.source, e.tag, bytes, n);
        complete(s);
        return;
    }
    if (bytes <= g_intra_eager_limit && s->mode != SendMode::Synchronous) {
        IntraCell* c = new_cell(e, bytes);
        enqueue_unexpected(dest, c);
        q.lock.unlock();
        pack(s->buf, static_cast<size_t>(s->count), *s->type, 0, c->data(), bytes);
        c->ready.store(true, std::memory_order_release);
        wake_prober(dest);
        complete(s);
        return;
    }
    auto* rv = new IntraRendezvous();
    rv->env = e;
    rv->bytes = bytes;
    rv->ops = &kRendezvousOps;
    rv->send = s;
    enqueue_unexpected(dest, rv);
    q.lock.unlock();
    wake_prober(dest);
}

}  // namespace

size_t receive_capacity(const Request* r) {
    return static_cast<size_t>(r->count) * r->type->size;
}

void finish_receive(Request* r, int source, int tag, size_t bytes, size_t copied) {
    set_status(&r->status, source, tag, static_cast<MPI_Count>(copied));
    if (bytes > copied)
        r->status.MPI_ERROR = make_error(
            MPI_ERR_TRUNCATE,
            "a message of %zu bytes from rank %d (tag %d) does not fit the receive buffer of "
            "%zu bytes",
            bytes, source, tag, copied);
    complete(r);
}

void enqueue_unexpected(RankState* dest, Incoming* m) { dest->match.add_unexpected(m); }

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
        intra_send(s, dest);
        return;
    }
    if (!g_remote)
        runtime::fatal("rank %d is on another node process but no network is running",
                       dest_world);
    g_remote->start_send(s, dest_world);
}

void p2p_start_recv(Request* r) {
    MatchQueues& q = r->rank->match;
    q.lock.lock();
    Incoming* m = q.find_unexpected(r->context, r->peer, r->tag);
    if (!m) {
        q.add_posted(r);
        q.lock.unlock();
        return;
    }
    q.remove_unexpected(m);
    q.lock.unlock();
    m->ops->deliver(m, r);
}

bool p2p_cancel_recv(Request* r) {
    MatchQueues& q = r->rank->match;
    q.lock.lock();
    bool removed = q.remove_posted(r);
    q.lock.unlock();
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
    q.lock.lock();
    Incoming* m = q.find_unexpected(context, source, tag);
    if (m) {
        if (status && status != MPI_STATUS_IGNORE)
            set_status(status, m->env.source, m->env.tag, static_cast<MPI_Count>(m->bytes));
        if (taken) {
            q.remove_unexpected(m);
            *taken = m;
        }
    }
    q.lock.unlock();
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
