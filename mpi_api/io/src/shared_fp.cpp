// Shared file pointer: the host node's counter and the server that answers
// the other nodes (shared_fp.hpp).
#include "shared_fp.hpp"

#include <atomic>
#include <deque>

#include "mpi_api/p2p.hpp"
#include "mpi_api/progress_engine.hpp"
#include "node.hpp"

namespace mpc::io {

// Answers {delta, reply tag} requests with the pointer's previous value.
class SfpServer final : public mpi::Progressable {
  public:
    explicit SfpServer(File* f) : f_(f) {
        request = &done_;
        done_.rank = f->owner;
        post();
    }
    void stop() {
        stopping_.store(true, std::memory_order_release);
        mpi::progress_notify(f_->owner);
    }
    void wait() { mpi::wait_complete(&done_); }

    bool progress() override {
        while (recv_.is_complete() && !recv_.status.mpc_cancelled) {
            int64_t old = f_->node->shared_fp.fetch_add(in_[0], std::memory_order_acq_rel);
            Reply& r = replies_.emplace_back();
            r.value = old;
            r.req.notify = f_->owner;
            mpi::coll_start_send(&r.req, f_->comm, &r.value, 8, byte(), recv_.status.MPI_SOURCE,
                                 static_cast<int>(in_[1]));
            post();
        }
        while (!replies_.empty() && replies_.front().req.is_complete()) replies_.pop_front();
        if (!stopping_.load(std::memory_order_acquire)) return false;
        // Every client is in MPI_File_close: no request can come any more.
        if (!recv_.is_complete() && !mpi::p2p_cancel_recv(&recv_)) return false;
        return replies_.empty();
    }

  private:
    struct Reply {
        mpi::Request req;
        int64_t value = 0;
    };
    static mpi::Datatype* byte() { return mpi::datatype_lookup(MPI_BYTE); }
    void post() {
        recv_.reset();
        recv_.notify = f_->owner;
        mpi::coll_start_recv(&recv_, f_->comm, in_, 16, byte(), MPI_ANY_SOURCE, kSfpRequestTag);
    }

    File* f_;
    mpi::Request recv_;
    int64_t in_[2] = {0, 0};
    std::deque<Reply> replies_;  // requests never move
    std::atomic<bool> stopping_{false};
    mpi::Request done_;
};

void sfp_fetch_add(File* f, int64_t delta, int64_t* old) {
    NodeFile& n = *f->node;
    if (n.hosts_shared_fp()) {
        *old = n.shared_fp.fetch_add(delta, std::memory_order_acq_rel);
        return;
    }
    const uint32_t k = f->sfp_tag.fetch_add(1, std::memory_order_relaxed);
    const int64_t req[2] = {delta, kSfpReplyTagBase + static_cast<int64_t>(k & 0xffffff)};
    mpi::Datatype* byte = mpi::datatype_lookup(MPI_BYTE);
    mpi::Request r;
    mpi::coll_start_recv(&r, f->comm, old, 8, byte, 0, static_cast<int>(req[1]));
    mpi::coll_send(f->comm, req, 16, byte, 0, kSfpRequestTag);
    mpi::wait_complete(&r);
}

void sfp_store(File* f, int64_t value) {
    f->node->shared_fp.store(value, std::memory_order_release);
}

int64_t sfp_load(File* f) {
    int64_t v = 0;
    sfp_fetch_add(f, 0, &v);
    return v;
}

void sfp_server_start(File* f) {
    NodeFile& n = *f->node;
    if (n.num_nodes < 2 || f->comm->rank != 0) return;
    n.server = new SfpServer(f);
    mpi::progress_add(f->owner, n.server, false);
}

void sfp_server_stop(File* f) {
    NodeFile& n = *f->node;
    if (!n.server || f->comm->rank != 0) return;
    n.server->stop();
    n.server->wait();
    delete n.server;
    n.server = nullptr;
}

}  // namespace mpc::io
