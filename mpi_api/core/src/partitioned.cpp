// Partitioned communication (partitioned.hpp): the requests, matching by
// hello, and the transfer inside a node process; the transfer between node
// processes is in partitioned_remote.cpp.
#include "mpi_api/partitioned.hpp"

#include "partitioned_impl.hpp"

namespace mpc::mpi::part {

// ---- The data of one side ---------------------------------------------------

void Data::copy_range_to(const Data& to, size_t offset, size_t len) const {
    if (len == 0) return;
    if (type->contiguous && to.type->contiguous) {
        memcpy(reinterpret_cast<void*>(contiguous_at(to.buf, *to.type, offset)),
               reinterpret_cast<const void*>(contiguous_at(buf, *type, offset)), len);
    } else if (to.type->contiguous) {
        pack(buf, elements, *type, offset,
             reinterpret_cast<void*>(contiguous_at(to.buf, *to.type, offset)), len);
    } else if (type->contiguous) {
        unpack(to.buf, to.elements, *to.type, offset,
               reinterpret_cast<const void*>(contiguous_at(buf, *type, offset)), len);
    } else {
        // Both scattered: through a bounce buffer on the stack.
        unsigned char bounce[8192];
        for (size_t done = 0; done < len;) {
            const size_t n = std::min(len - done, sizeof bounce);
            pack(buf, elements, *type, offset + done, bounce, n);
            unpack(to.buf, to.elements, *to.type, offset + done, bounce, n);
            done += n;
        }
    }
}

// ---- Requests -----------------------------------------------------------------

Side::Side(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count, Datatype* type,
           int peer, int tag, bool send)
    : owner_(me), comm_(c), peer_(peer), tag_(tag), send_(send) {
    data_.buf = buf;
    data_.type = datatype_retain(type);
    data_.parts = static_cast<size_t>(partitions);
    data_.part_bytes = static_cast<size_t>(count) * type->size;
    data_.elements = static_cast<size_t>(partitions) * static_cast<size_t>(count);
    local_ = peer != MPI_PROC_NULL && world().local(c->peer_world_rank(peer)) != nullptr;
    hello_.kind = send ? Request::Kind::Send : Request::Kind::Recv;
    hello_.rank = me;
    hello_.comm = c;
    hello_.buf = &hello_msg_;
    hello_.count = sizeof(Hello);
    hello_.type = datatype_lookup(MPI_BYTE);
    hello_.peer = peer;
    hello_.tag = tag;
    hello_.context = hello_context(c);
    hello_.notify = me;  // an attach waiting for the hello must be told
}

Side::~Side() {
    datatype_release(data_.type);
}

void Side::finish(MPI_Count bytes, int error) {
    Request* r = request;
    set_status(&r->status, send_ ? MPI_ANY_SOURCE : peer_, send_ ? MPI_ANY_TAG : tag_, bytes);
    r->status.MPI_ERROR = error;
    if (peer_ == MPI_PROC_NULL) r->status.MPI_SOURCE = MPI_PROC_NULL;
}

// ---- Inside a node process ----------------------------------------------------

// The send side of a transfer to a rank of this node process.
class LocalSend final : public Side {
  public:
    LocalSend(RankState* me, Comm* c, const void* buf, int partitions, MPI_Count count,
              Datatype* type, int dest, int tag)
        : Side(me, c, const_cast<void*>(buf), partitions, count, type, dest, tag, true) {
        channel_ = new Channel(data_);
        hello_msg_.channel = channel_;
        hello_msg_.partitions = data_.parts;
        hello_msg_.part_bytes = data_.part_bytes;
        p2p_start_send(&hello_);  // a cell: complete on return
    }
    ~LocalSend() override {
        wait_complete(&hello_);
        channel_->release();
    }
    void start(uint64_t run) override {
        channel_->send_request = request;
        channel_->copied.store(0, std::memory_order_relaxed);
        run_ = run;
        if (data_.parts == 0) finish_send(channel_);
    }
    int ready(size_t i) override {
        std::atomic<uint64_t>& s = channel_->state[i];
        if ((s.load(std::memory_order_relaxed) >> 2) == run_) return already_ready(i);
        s.store(state_word(run_, kReady), std::memory_order_seq_cst);
        // Pairs with the receiver's store of its run and look at the states
        // (Channel::open_run): one of the two sees the other.
        if (channel_->recv_run.load(std::memory_order_seq_cst) < run_) return MPI_SUCCESS;
        if (channel_->claimer_run.load(std::memory_order_acquire) == run_ &&
            runtime::now_ns() - channel_->recv_looked_ns.load(std::memory_order_relaxed) <
                kLookingNs) {
            // The receiver is polling: its next look, or its engine's
            // Claimer (flagged now), copies; this thread computes on.
            progress_notify(channel_->recv_owner);
            return MPI_SUCCESS;
        }
        channel_->claim(i, run_);
        return MPI_SUCCESS;
    }
    bool progress() override { return true; }

  private:
    Channel* channel_;
};

// The receive side of a transfer from a rank of this node process.
class LocalRecv final : public Side {
  public:
    LocalRecv(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count, Datatype* type,
              int source, int tag)
        : Side(me, c, buf, partitions, count, type, source, tag, false) {
        arrived_.reset(new std::atomic<uint64_t>[std::max<size_t>(data_.parts, 1)]);
        p2p_start_recv(&hello_);
    }
    ~LocalRecv() override {
        if (!hello_.is_complete() && !p2p_cancel_recv(&hello_)) wait_complete(&hello_);
        if (Channel* ch = channel_.load(std::memory_order_acquire)) {
            ch->recv.store(nullptr, std::memory_order_release);
            ch->release();
        } else if (hello_.is_complete() && hello_.status.mpc_cancelled == 0) {
            hello_msg_.channel->release();  // arrived, never attached
        }
    }
    void start(uint64_t run) override {
        run_ = run;
        delivered.store(0, std::memory_order_relaxed);
        for (size_t j = 0; j < data_.parts; ++j) arrived_[j].store(0, std::memory_order_relaxed);
        if (Channel* ch = channel_.load(std::memory_order_acquire)) {
            // Before the run opens: its copiers read it (account).
            claimer_run_ = run_;
            open(ch);
            add_claimer(ch);
            return;
        }
        if (hello_.is_complete() && try_attach()) return;
        // The hello has not arrived: whoever polls this rank's operations
        // attaches once it has (the progress engine owns the attacher).
        Request* helper = request_allocate(Request::Kind::Collective, owner_, comm_);
        helper->operation = new Attacher(this);
        helper->operation->request = helper;
        helper->state.store(Request::kUserFreed, std::memory_order_relaxed);
        progress_add(owner_, helper->operation, false);
    }
    int ready(size_t) override { return MPI_ERR_REQUEST; }
    bool arrived(size_t j) const override {
        if (data_.part_bytes == 0 || !channel_.load(std::memory_order_acquire))
            return request->is_complete();
        return arrived_[j].load(std::memory_order_acquire) >= data_.part_bytes ||
               request->is_complete();
    }
    bool progress() override { return true; }
    void look() override {
        Channel* ch = channel_.load(std::memory_order_acquire);
        if (!ch || ch->recv_run.load(std::memory_order_acquire) != run_) return;
        // Written only when stale: the marking threads read the line.
        const int64_t now = runtime::now_ns();
        if (now - ch->recv_looked_ns.load(std::memory_order_relaxed) > kLookingNs / 4)
            ch->recv_looked_ns.store(now, std::memory_order_relaxed);
        ch->claim_ready(run_);
    }

    // Copier side (Channel::claim): sender partition i's bytes
    // [offset, offset + len) are in the buffer.
    void account(size_t offset, size_t len) {
        const size_t per = data_.part_bytes;
        if (per) {
            const size_t end = std::min(offset + len, data_.total());
            for (size_t j = offset / per; j < data_.parts && j * per < end; ++j) {
                const size_t lo = std::max(offset, j * per), hi = std::min(end, (j + 1) * per);
                if (hi > lo) arrived_[j].fetch_add(hi - lo, std::memory_order_release);
            }
        }
        if (delivered.fetch_add(1, std::memory_order_acq_rel) + 1 == sender_parts) {
            RankState* const owner = owner_;  // this may go once the request completes
            const bool claimer = claimer_run_ == run_;
            finish(static_cast<MPI_Count>(std::min(sender_total, data_.total())), error_);
            complete(request);
            if (claimer) progress_notify(owner);  // the run's Claimer leaves the engine
        }
    }
    const Data& data() const { return data_; }
    uint64_t current_run() const { return run_; }
    std::atomic<size_t> delivered{0};
    size_t sender_parts = 0, sender_total = 0;

  private:
    // Runs the attach once the hello is in, then lets the engine recycle it.
    class Attacher final : public Progressable {
      public:
        explicit Attacher(LocalRecv* r) : recv_(r) {}
        bool progress() override { return recv_->hello_.is_complete() && recv_->try_attach(); }

      private:
        LocalRecv* recv_;  // not touched once attached: it may complete and go
    };

    // The hello is in: joins the sender's channel and takes the partitions
    // already marked ready in the current run. Once only.
    bool try_attach() {
        if (attaching_.exchange(true, std::memory_order_acq_rel)) return true;
        Channel* ch = hello_msg_.channel;
        sender_parts = hello_msg_.partitions;
        sender_total = hello_msg_.partitions * hello_msg_.part_bytes;
        if (sender_total > data_.total())
            error_ = make_error(MPI_ERR_TRUNCATE,
                                "a partitioned send of %zu bytes does not fit the partitioned "
                                "receive of %zu bytes",
                                sender_total, data_.total());
        channel_.store(ch, std::memory_order_release);
        open(ch);
        return true;
    }

    // Partitions the sender leaves to this rank (Channel::recv_looked_ns)
    // are claimed by the engine's Claimer of the run whenever the rank's
    // operations progress (in any of its waits, or by a rank polling for it),
    // not only in MPI_Parrived. It holds the channel, never this request,
    // which may complete and go before the Claimer leaves the engine.
    class Claimer final : public Progressable {
      public:
        Claimer(Channel* ch, uint64_t run) : ch_(ch), run_(run) {
            ch_->refs.fetch_add(1, std::memory_order_relaxed);
        }
        ~Claimer() override { ch_->release(); }
        bool progress() override { return ch_->claim_ready(run_); }

      private:
        Channel* ch_;
        uint64_t run_;
    };

    // Not from open(): an attach runs inside the engine, which cannot take a
    // new operation then. A run without a Claimer has the sender copy.
    void add_claimer(Channel* ch) {
        if (sender_parts == 0) return;
        Request* helper = request_allocate(Request::Kind::Collective, owner_, comm_);
        helper->operation = new Claimer(ch, run_);
        helper->operation->request = helper;
        helper->state.store(Request::kUserFreed, std::memory_order_relaxed);
        progress_add(owner_, helper->operation, false);
        // Once: the marking threads read it unsynchronized in later runs.
        if (ch->recv_owner != owner_) ch->recv_owner = owner_;
        ch->claimer_run.store(run_, std::memory_order_release);
    }

    // The current run is open to the sender's copies.
    void open(Channel* ch) {
        if (sender_parts == 0) {  // nothing will come: done
            finish(0, error_);
            complete(request);
            return;
        }
        ch->open_run(this, run_);
    }

    std::unique_ptr<std::atomic<uint64_t>[]> arrived_;  // bytes per receive partition
    std::atomic<Channel*> channel_{nullptr};
    std::atomic<bool> attaching_{false};
    int error_ = MPI_SUCCESS;
    uint64_t claimer_run_ = 0;  // the last run given a Claimer
};

Channel::Channel(const Data& send_data) : send(send_data) {
    state.reset(new std::atomic<uint64_t>[std::max<size_t>(send.parts, 1)]);
    for (size_t i = 0; i < send.parts; ++i) state[i].store(0, std::memory_order_relaxed);
}

void Channel::release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

void Channel::open_run(LocalRecv* r, uint64_t run) {
    recv.store(r, std::memory_order_release);
    recv_run.store(run, std::memory_order_seq_cst);
    for (size_t i = 0; i < send.parts; ++i)
        if (state[i].load(std::memory_order_seq_cst) == state_word(run, kReady)) claim(i, run);
}

bool Channel::claim_ready(uint64_t run) {
    bool left = false;
    for (size_t i = 0; i < send.parts; ++i) {
        uint64_t st = state[i].load(std::memory_order_acquire);
        if (st == state_word(run, kReady)) {
            claim(i, run);
            st = state[i].load(std::memory_order_acquire);
        }
        if ((st >> 2) < run || st == state_word(run, kReady)) left = true;
    }
    return !left;
}

void Channel::claim(size_t i, uint64_t run) {
    uint64_t expect = state_word(run, kReady);
    if (!state[i].compare_exchange_strong(expect, state_word(run, kClaimed),
                                          std::memory_order_acq_rel))
        return;  // another thread has it
    LocalRecv* r = recv.load(std::memory_order_acquire);
    const Data& to = r->data();
    const size_t offset = i * send.part_bytes;
    const size_t len = offset < to.total() ? std::min(send.part_bytes, to.total() - offset) : 0;
    send.copy_range_to(to, offset, len);
    state[i].store(state_word(run, kCopied), std::memory_order_release);
    r->account(offset, len);  // may complete the receive: r is not touched after
    if (copied.fetch_add(1, std::memory_order_acq_rel) + 1 == send.parts) finish_send(this);
}

void finish_send(Channel* ch) {
    Request* r = ch->send_request;
    set_status(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    complete(r);
}

Side* make_local_send(RankState* me, Comm* c, const void* buf, int partitions, MPI_Count count,
                      Datatype* type, int dest, int tag) {
    return new LocalSend(me, c, buf, partitions, count, type, dest, tag);
}

Side* make_local_recv(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count,
                      Datatype* type, int source, int tag) {
    return new LocalRecv(me, c, buf, partitions, count, type, source, tag);
}

}  // namespace mpc::mpi::part

// ---- The API ------------------------------------------------------------------

namespace mpc::mpi {
namespace {

// A transfer with MPI_PROC_NULL: every run completes when started.
class NullSide final : public part::Side {
  public:
    using Side::Side;
    void start(uint64_t) override {}
    int ready(size_t) override { return MPI_SUCCESS; }
    bool arrived(size_t) const override { return true; }
    bool progress() override { return true; }
};

Request* make_request(RankState* me, Comm* c, part::Side* side, int peer, int tag) {
    Request* r = request_allocate(Request::Kind::Partitioned, me, c);
    r->persistent = true;
    r->peer = peer;
    r->tag = tag;
    r->operation = side;  // freed with the request
    side->request = r;
    r->state.store(Request::kComplete, std::memory_order_relaxed);  // inactive
    return r;
}

}  // namespace

Request* partitioned_send_init(RankState* me, Comm* c, const void* buf, int partitions,
                               MPI_Count count, Datatype* type, int dest, int tag) {
    part::Side* s;
    if (dest == MPI_PROC_NULL)
        s = new NullSide(me, c, const_cast<void*>(buf), partitions, count, type, dest, tag, true);
    else if (world().local(c->peer_world_rank(dest)))
        s = part::make_local_send(me, c, buf, partitions, count, type, dest, tag);
    else
        s = part::make_remote_send(me, c, buf, partitions, count, type, dest, tag);
    return make_request(me, c, s, dest, tag);
}

Request* partitioned_recv_init(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count,
                               Datatype* type, int source, int tag) {
    part::Side* s;
    if (source == MPI_PROC_NULL)
        s = new NullSide(me, c, buf, partitions, count, type, source, tag, false);
    else if (world().local(c->peer_world_rank(source)))
        s = part::make_local_recv(me, c, buf, partitions, count, type, source, tag);
    else
        s = part::make_remote_recv(me, c, buf, partitions, count, type, source, tag);
    return make_request(me, c, s, source, tag);
}

int partitioned_start(Request* r) {
    auto* s = static_cast<part::Side*>(r->operation);
    if (s->peer() == MPI_PROC_NULL) {
        s->finish(0, MPI_SUCCESS);
        complete(r);
        return MPI_SUCCESS;
    }
    s->start(++s->runs);
    return MPI_SUCCESS;
}

bool partitioned_is_send(const Request* r) {
    return static_cast<const part::Side*>(r->operation)->is_send();
}

int partitioned_partitions(const Request* r) {
    return static_cast<int>(static_cast<const part::Side*>(r->operation)->parts());
}

int partitioned_ready(Request* r, int partition) {
    return static_cast<part::Side*>(r->operation)->ready(static_cast<size_t>(partition));
}

bool partitioned_arrived(Request* r, int partition) {
    auto* s = static_cast<part::Side*>(r->operation);
    const auto j = static_cast<size_t>(partition);
    if (s->arrived(j)) return true;
    s->look();
    return s->arrived(j);
}

}  // namespace mpc::mpi
