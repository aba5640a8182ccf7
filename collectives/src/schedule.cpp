#include "collectives/schedule.hpp"

#include <algorithm>

#include "mpi_api/p2p.hpp"
#include "mpi_api/rank.hpp"
#include "runtime/log.hpp"

namespace mpc::coll {

Schedule::Schedule(Comm* comm, int tags)
    : comm_(comm),
      owner_(comm->owner),
      sequence_(comm->coll_sequence),
      tags_(tags),
      context_(comm->context + 1) {
    comm->coll_sequence += static_cast<uint32_t>(tags);
}

Schedule::~Schedule() {
    for (Datatype* t : held_) mpi::datatype_release(t);
}

Schedule::Node& Schedule::add(Kind kind, Deps deps, Step* id) {
    MPC_CHECK(!started_);
    *id = static_cast<Step>(steps_.size());
    Node& n = steps_.emplace_back(&arena_);
    n.kind = kind;
    for (Step d : deps) depend(*id, d);
    return n;
}

void Schedule::hold(Datatype* t) {
    if (t && !t->predefined) held_.push_back(mpi::datatype_retain(t));
}

void Schedule::depend(Step step, Step on) {
    if (on < 0) return;
    MPC_CHECK(on < step && !started_);
    steps_[static_cast<size_t>(on)].next.push_back(step);
    steps_[static_cast<size_t>(step)].pending++;
    steps_[static_cast<size_t>(step)].deps++;
}

void Schedule::set_tag_offset(Step step, int k) {
    MPC_CHECK(k >= 0 && k < tags_ && !started_);
    steps_[static_cast<size_t>(step)].tag_offset = k;
}

Schedule::Step Schedule::send(const void* buf, int count, Datatype* type, int peer, Deps deps) {
    Step id;
    Node& n = add(Kind::Send, deps, &id);
    n.src = buf;
    n.count = count;
    n.type = type;
    n.peer = peer;
    hold(type);
    return id;
}

Schedule::Step Schedule::recv(void* buf, int count, Datatype* type, int peer, Deps deps) {
    Step id;
    Node& n = add(Kind::Recv, deps, &id);
    n.dst = buf;
    n.count = count;
    n.type = type;
    n.peer = peer;
    hold(type);
    return id;
}

Schedule::Step Schedule::calc(const Op* op, const void* in, void* inout, int count, Datatype* type,
                              Deps deps) {
    Step id;
    Node& n = add(Kind::Calc, deps, &id);
    n.op = *op;
    n.src = in;
    n.dst = inout;
    n.count = count;
    n.type = type;
    hold(type);
    return id;
}

Schedule::Step Schedule::copy(const void* src, int scount, Datatype* stype, void* dst, int dcount,
                              Datatype* dtype, Deps deps) {
    Step id;
    Node& n = add(Kind::Copy, deps, &id);
    n.src = src;
    n.count = scount;
    n.type = stype;
    n.dst = dst;
    n.dcount = dcount;
    n.dtype = dtype;
    hold(stype);
    hold(dtype);
    return id;
}

Schedule::Step Schedule::join(Deps deps) {
    Step id;
    add(Kind::Join, deps, &id);
    return id;
}

char* Schedule::scratch(size_t bytes) {
    scratch_.emplace_back(new char[bytes ? bytes : 1]);
    return scratch_.back().get();
}

// Chains the sends to each (peer, tag), and the receives from each, in
// construction order (see "Matching rule" in schedule.hpp).
void Schedule::link_message_order() {
    struct Key {
        int kind, peer, tag;
        Step step;
    };
    std::pmr::vector<Key> keys{&arena_};
    for (size_t i = 0; i < steps_.size(); ++i) {
        const Node& n = steps_[i];
        if (n.kind == Kind::Send || n.kind == Kind::Recv)
            keys.push_back({static_cast<int>(n.kind), n.peer, n.tag_offset, static_cast<Step>(i)});
    }
    if (keys.size() < 2) return;
    std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
        if (a.kind != b.kind) return a.kind < b.kind;
        if (a.peer != b.peer) return a.peer < b.peer;
        if (a.tag != b.tag) return a.tag < b.tag;
        return a.step < b.step;
    });
    for (size_t i = 1; i < keys.size(); ++i) {
        const Key& a = keys[i - 1];
        const Key& b = keys[i];
        if (a.kind != b.kind || a.peer != b.peer || a.tag != b.tag) continue;
        steps_[static_cast<size_t>(a.step)].order_next = b.step;
        steps_[static_cast<size_t>(b.step)].order_blocked = true;
        steps_[static_cast<size_t>(b.step)].order_later = true;
    }
}

// All dependencies of s are done: issue it, unless an earlier message to the
// same peer is not issued yet (then that one's issue releases it).
void Schedule::make_ready(Step s) {
    if (!steps_[static_cast<size_t>(s)].order_blocked) ready_.push_back(s);
}

void Schedule::issue(Step s) {
    Node& n = steps_[static_cast<size_t>(s)];
    n.issued = true;
    switch (n.kind) {
        case Kind::Send:
        case Kind::Recv: {
            if (n.order_next >= 0) {
                Node& after = steps_[static_cast<size_t>(n.order_next)];
                after.order_blocked = false;
                if (after.pending == 0) ready_.push_back(n.order_next);
            }
            mpi::Request& r = n.req;
            r.kind = n.kind == Kind::Send ? mpi::Request::Kind::Send : mpi::Request::Kind::Recv;
            r.rank = owner_;
            r.comm = comm_;
            r.buf = n.kind == Kind::Send ? const_cast<void*>(n.src) : n.dst;
            r.count = n.count;
            r.type = n.type;
            r.peer = n.peer;
            r.tag = static_cast<int>((sequence_ + static_cast<uint32_t>(n.tag_offset)) & kTagMask);
            r.context = context_;
            r.notify = owner_;
            in_flight_.push_back(s);
            if (n.kind == Kind::Send)
                mpi::p2p_start_send(&r);
            else
                mpi::p2p_start_recv(&r);
            break;
        }
        case Kind::Calc:
            if (n.op.is_user() && !by_owner_) {
                // A user function runs on its own rank's thread only: it may
                // call MPI (type queries), which must see the right rank.
                n.issued = false;
                owner_only_.push_back(s);
                break;
            }
            mpi::op_apply(n.op, n.src, n.dst, static_cast<size_t>(n.count), *n.type);
            finish_step(s);
            break;
        case Kind::Copy: {
            const size_t bytes = static_cast<size_t>(n.count) * n.type->size;
            mpi::typed_copy(n.src, static_cast<size_t>(n.count), *n.type, n.dst,
                            static_cast<size_t>(n.dcount), *n.dtype, bytes);
            finish_step(s);
            break;
        }
        case Kind::Join:
            finish_step(s);
            break;
    }
}

void Schedule::finish_step(Step s) {
    Node& n = steps_[static_cast<size_t>(s)];
    n.done = true;
    ++done_count_;
    for (Step next : n.next)
        if (--steps_[static_cast<size_t>(next)].pending == 0) make_ready(next);
}

bool Schedule::progress() {
    by_owner_ = mpi::current_rank() == owner_;
    if (by_owner_ && !owner_only_.empty()) {
        ready_.insert(ready_.end(), owner_only_.begin(), owner_only_.end());
        owner_only_.clear();
    }
    for (;;) {
        // Harvest completed sends and receives.
        for (size_t i = 0; i < in_flight_.size();) {
            Step s = in_flight_[i];
            Node& n = steps_[static_cast<size_t>(s)];
            if (!n.req.is_complete()) {
                ++i;
                continue;
            }
            if (n.req.status.MPI_ERROR != MPI_SUCCESS && error_ == MPI_SUCCESS)
                error_ = n.req.status.MPI_ERROR;
            in_flight_[i] = in_flight_.back();
            in_flight_.pop_back();
            finish_step(s);
        }
        if (ready_.empty()) break;
        // By index: issuing a step may make others ready (appended here).
        for (size_t i = 0; i < ready_.size(); ++i) issue(ready_[i]);
        ready_.clear();
    }
    if (done_count_ < steps_.size()) {
        // Steps left for the owner: make sure it comes (and is woken).
        if (!owner_only_.empty()) mpi::progress_notify(owner_);
        return false;
    }
    request->status.MPI_SOURCE = MPI_ANY_SOURCE;
    request->status.MPI_TAG = MPI_ANY_TAG;
    request->status.MPI_ERROR = error_;
    request->status.mpc_count = 0;
    return true;
}

// A finished schedule back to its state before the first start.
void Schedule::rewind() {
    MPC_CHECK(done_count_ == steps_.size() && in_flight_.empty());
    for (Node& n : steps_) {
        n.pending = n.deps;
        n.order_blocked = n.order_later;
        n.issued = n.done = false;
        n.req.reset();
    }
    done_count_ = 0;
    error_ = MPI_SUCCESS;
    ready_.clear();
    owner_only_.clear();
}

void Schedule::start(mpi::Request* done) {
    request = done;
    if (!linked_) {
        link_message_order();
        linked_ = true;
    } else {
        rewind();
    }
    started_ = true;
    for (size_t i = 0; i < steps_.size(); ++i)
        if (steps_[i].pending == 0) make_ready(static_cast<Step>(i));
    mpi::progress_add(owner_, this);
}

int run_blocking(std::unique_ptr<Schedule> s) {
    mpi::Request done;
    done.kind = mpi::Request::Kind::Collective;
    done.rank = s->comm()->owner;
    done.comm = s->comm();
    Schedule* raw = s.release();
    raw->start(&done);
    mpi::wait_complete(&done);
    delete raw;  // finished: the progress engine no longer knows it
    return done.status.MPI_ERROR;
}

MPI_Request run_nonblocking(std::unique_ptr<Schedule> s) {
    Comm* c = s->comm();
    mpi::Request* r = mpi::request_allocate(mpi::Request::Kind::Collective, c->owner, c);
    r->active = true;
    Schedule* raw = s.release();
    r->operation = raw;  // freed with the request
    raw->start(r);
    return r->handle;
}

}  // namespace mpc::coll
