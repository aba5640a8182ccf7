// Partitioned transfers between node processes (partitioned.hpp): each sender
// partition is one message on the communicator's partitioned data context,
// sent when it is marked ready; the receiver posts one receive per sender
// partition at each start. Both sides are progressed as operations of their
// rank (progress_engine.hpp), which complete the user's request once every
// message of the run is done.
#include <vector>

#include "mpi_api/progress.hpp"
#include "partitioned_impl.hpp"

namespace mpc::mpi::part {
namespace {

// Partitions of different transfers never share a tag (until 2^30
// partitions later).
std::atomic<uint32_t> g_next_tag{0};

// Sets up internal request r for one partition's message.
void init_message(Request& r, Request::Kind kind, RankState* owner, Comm* c, void* buf,
                  size_t bytes, int peer, uint32_t tag) {
    r.reset();
    r.kind = kind;
    r.rank = owner;
    r.comm = c;
    r.buf = buf;
    r.count = static_cast<MPI_Count>(bytes);
    r.type = datatype_lookup(MPI_BYTE);
    r.peer = peer;
    r.tag = static_cast<int>(tag & kTagMask);
    r.context = data_context(c);
    r.notify = owner;  // its completion flags the owner's operations
}

class RemoteSend final : public Side {
  public:
    RemoteSend(RankState* me, Comm* c, const void* buf, int partitions, MPI_Count count,
               Datatype* type, int dest, int tag)
        : Side(me, c, const_cast<void*>(buf), partitions, count, type, dest, tag, true),
          sends_(new Request[std::max<size_t>(data_.parts, 1)]),
          state_(new std::atomic<uint64_t>[std::max<size_t>(data_.parts, 1)]),
          counted_(data_.parts) {
        for (size_t i = 0; i < data_.parts; ++i) state_[i].store(0, std::memory_order_relaxed);
        if (!type->contiguous)
            staging_.reset(new unsigned char[std::max<size_t>(data_.total(), 1)]);
        hello_msg_.partitions = data_.parts;
        hello_msg_.part_bytes = data_.part_bytes;
        hello_msg_.tag_base =
            g_next_tag.fetch_add(static_cast<uint32_t>(data_.parts), std::memory_order_relaxed);
        p2p_start_send(&hello_);
    }
    ~RemoteSend() override { wait_complete(&hello_); }

    void start(uint64_t run) override {
        run_ = run;
        done_ = 0;
        error_ = MPI_SUCCESS;
        std::fill(counted_.begin(), counted_.end(), 0);
        for (size_t i = 0; i < data_.parts; ++i) sends_[i].reset();
        if (data_.parts == 0) {
            finish(0, MPI_SUCCESS);
            complete(request);
            return;
        }
        progress_add(owner_, this, false);
    }

    int ready(size_t i) override {
        if ((state_[i].exchange(state_word(run_, kReady), std::memory_order_acq_rel) >> 2) == run_)
            return already_ready(i);
        const size_t offset = i * data_.part_bytes;
        void* from;
        if (staging_) {
            pack(data_.buf, data_.elements, *data_.type, offset, staging_.get() + offset,
                 data_.part_bytes);
            from = staging_.get() + offset;
        } else {
            from = reinterpret_cast<void*>(contiguous_at(data_.buf, *data_.type, offset));
        }
        Request& r = sends_[i];
        init_message(r, Request::Kind::Send, owner_, comm_, from, data_.part_bytes, peer_,
                     hello_msg_.tag_base + static_cast<uint32_t>(i));
        p2p_start_send(&r);
        return MPI_SUCCESS;
    }

    bool progress() override {
        for (size_t i = 0; i < data_.parts; ++i) {
            if (counted_[i] || !sends_[i].is_complete()) continue;
            counted_[i] = 1;
            ++done_;
            if (sends_[i].status.MPI_ERROR && !error_) error_ = sends_[i].status.MPI_ERROR;
        }
        if (done_ < data_.parts) return false;
        finish(0, error_);
        return true;
    }

  private:
    std::unique_ptr<Request[]> sends_;
    std::unique_ptr<std::atomic<uint64_t>[]> state_;
    std::unique_ptr<unsigned char[]> staging_;  // packed data of a type not contiguous
    std::vector<char> counted_;                 // sends seen complete in this run
    size_t done_ = 0;
    int error_ = MPI_SUCCESS;
};

class RemoteRecv final : public Side {
  public:
    RemoteRecv(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count, Datatype* type,
               int source, int tag)
        : Side(me, c, buf, partitions, count, type, source, tag, false),
          arrived_(new std::atomic<uint64_t>[std::max<size_t>(data_.parts, 1)]) {
        for (size_t j = 0; j < data_.parts; ++j) arrived_[j].store(0, std::memory_order_relaxed);
        p2p_start_recv(&hello_);
    }
    ~RemoteRecv() override {
        if (!hello_.is_complete() && !p2p_cancel_recv(&hello_)) wait_complete(&hello_);
    }

    void start(uint64_t run) override {
        run_ = run;
        delivered_ = 0;
        error_ = MPI_SUCCESS;
        for (size_t j = 0; j < data_.parts; ++j) arrived_[j].store(0, std::memory_order_relaxed);
        if (attached_) post();
        progress_add(owner_, this, true);
    }

    int ready(size_t) override { return MPI_ERR_REQUEST; }

    bool arrived(size_t j) const override {
        return request->is_complete() ||
               (data_.part_bytes &&
                arrived_[j].load(std::memory_order_acquire) >= data_.part_bytes);
    }

    bool progress() override {
        if (!attached_) {
            if (!hello_.is_complete()) return false;
            attach();
            post();
        }
        for (size_t i = 0; i < sender_parts_; ++i) {
            Request& r = recvs_[i];
            if (counted_[i] || !r.is_complete()) continue;
            counted_[i] = 1;
            if (r.status.MPI_ERROR && !error_) error_ = r.status.MPI_ERROR;
            const size_t offset = i * sender_part_bytes_;
            const size_t len = static_cast<size_t>(r.status.mpc_count);
            if (staging_ && len)
                unpack(data_.buf, data_.elements, *data_.type, offset, staging_.get() + offset,
                       len);
            account(offset, len);
            ++delivered_;
        }
        if (delivered_ < sender_parts_) return false;
        finish(static_cast<MPI_Count>(std::min(sender_parts_ * sender_part_bytes_, data_.total())),
               error_);
        return true;
    }

  private:
    void attach() {
        attached_ = true;
        sender_parts_ = hello_msg_.partitions;
        sender_part_bytes_ = hello_msg_.part_bytes;
        recvs_.reset(new Request[std::max<size_t>(sender_parts_, 1)]);
        counted_.assign(sender_parts_, 0);
        if (!data_.type->contiguous)
            staging_.reset(new unsigned char[std::max<size_t>(data_.total(), 1)]);
    }

    // The run's receives, one per sender partition, each into its bytes of
    // the buffer (the rest of a partition that does not fit is truncated).
    void post() {
        std::fill(counted_.begin(), counted_.end(), 0);
        for (size_t i = 0; i < sender_parts_; ++i) {
            const size_t offset = i * sender_part_bytes_;
            const size_t room =
                offset < data_.total() ? std::min(sender_part_bytes_, data_.total() - offset) : 0;
            void* into =
                staging_ ? staging_.get() + offset
                         : reinterpret_cast<void*>(contiguous_at(data_.buf, *data_.type, offset));
            init_message(recvs_[i], Request::Kind::Recv, owner_, comm_, into, room, peer_,
                         hello_msg_.tag_base + static_cast<uint32_t>(i));
            p2p_start_recv(&recvs_[i]);
        }
    }

    void account(size_t offset, size_t len) {
        const size_t per = data_.part_bytes;
        if (!per) return;
        const size_t end = std::min(offset + len, data_.total());
        for (size_t j = offset / per; j < data_.parts && j * per < end; ++j) {
            const size_t lo = std::max(offset, j * per), hi = std::min(end, (j + 1) * per);
            if (hi > lo) arrived_[j].fetch_add(hi - lo, std::memory_order_release);
        }
    }

    std::unique_ptr<std::atomic<uint64_t>[]> arrived_;  // bytes per receive partition
    std::unique_ptr<Request[]> recvs_;
    std::unique_ptr<unsigned char[]> staging_;
    std::vector<char> counted_;
    bool attached_ = false;
    size_t sender_parts_ = 0, sender_part_bytes_ = 0;
    size_t delivered_ = 0;
    int error_ = MPI_SUCCESS;
};

}  // namespace

Side* make_remote_send(RankState* me, Comm* c, const void* buf, int partitions, MPI_Count count,
                       Datatype* type, int dest, int tag) {
    return new RemoteSend(me, c, buf, partitions, count, type, dest, tag);
}

Side* make_remote_recv(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count,
                       Datatype* type, int source, int tag) {
    return new RemoteRecv(me, c, buf, partitions, count, type, source, tag);
}

}  // namespace mpc::mpi::part
