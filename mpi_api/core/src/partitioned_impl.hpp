// Partitioned communication's insides (private to the MPI core; the design is
// in mpi_api/partitioned.hpp): the two sides of a transfer as progressable
// operations, the hello that matches them, and the state a sender and a
// receiver of one node process share.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "mpi_api/comm.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/p2p.hpp"
#include "mpi_api/progress_engine.hpp"
#include "mpi_api/rank.hpp"
#include "mpi_api/request.hpp"
#include "runtime/sync.hpp"

namespace mpc::mpi::part {

// Contexts only partitioned traffic uses (communicators' contexts are below
// 2^13): the hellos on one, the partitions crossing node processes on another.
inline uint32_t hello_context(const Comm* c) {
    return 0x80000000u | (c->context + 1);
}
inline uint32_t data_context(const Comm* c) {
    return 0x80000000u | c->context;
}
inline constexpr uint32_t kTagMask = 0x3fffffff;

// A sender partition's state word: the run (start) it belongs to, and where it is.
enum Phase : uint64_t { kIdle = 0, kReady = 1, kClaimed = 2, kCopied = 3 };
inline uint64_t state_word(uint64_t run, Phase p) {
    return run << 2 | p;
}

struct Channel;

// A receiver that found a partition missing this recently is still polling
// (Channel::recv_looked_ns).
inline constexpr int64_t kLookingNs = 5000;

// What MPI_Psend_init tells the matching receive.
struct Hello {
    Channel* channel = nullptr;  // inside a node process
    uint64_t partitions = 0;
    uint64_t part_bytes = 0;
    uint32_t tag_base = 0;  // across node processes: partition i has tag base + i
    uint32_t reserved = 0;
};

// One side's buffer: `parts` partitions of part_bytes packed bytes each,
// `elements` elements of type in all.
struct Data {
    void* buf = nullptr;
    Datatype* type = nullptr;
    size_t parts = 0, part_bytes = 0, elements = 0;
    size_t total() const { return parts * part_bytes; }
    // Packed bytes [offset, offset + len) of this buffer into the same bytes of `to`.
    void copy_range_to(const Data& to, size_t offset, size_t len) const;
};

// A partitioned request's operation (Request::operation): request is the
// user's request, which it completes at the end of each run.
class Side : public Progressable {
  public:
    Side(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count, Datatype* type,
         int peer, int tag, bool send);
    ~Side() override;
    // A new run (MPI_Start); runs count from 1.
    virtual void start(uint64_t run) = 0;
    // MPI_Pready of partition i (send side).
    virtual int ready(size_t i) = 0;
    // MPI_Parrived of partition j (receive side).
    virtual bool arrived(size_t) const { return false; }
    // The receiver found a partition missing (MPI_Parrived): it is idle and
    // may move partitions itself.
    virtual void look() {}

    bool is_send() const { return send_; }
    size_t parts() const { return data_.parts; }
    int peer() const { return peer_; }
    uint64_t runs = 0;  // starts so far
    // Fills the user's request status for the end of a run.
    void finish(MPI_Count bytes, int error);

  protected:
    int already_ready(size_t i) const {
        return make_error(MPI_ERR_ARG, "partition %zu is already marked ready in this start", i);
    }

    RankState* owner_;
    Comm* comm_;
    int peer_, tag_;
    bool send_;
    bool local_;  // the peer lives in this node process
    Data data_;
    Request hello_;  // the hello's send or receive
    Hello hello_msg_;
    uint64_t run_ = 0;
};

class LocalRecv;

// The state a sender and a receiver of one node process share, referenced by
// the send request and by the hello until the receiver takes it over.
struct Channel {
    explicit Channel(const Data& send_data);
    void release();
    // The receiver's run `run` begins: it may be written to, and takes the
    // partitions already ready.
    void open_run(LocalRecv* r, uint64_t run);
    // Copies sender partition i of run `run` unless another thread does.
    void claim(size_t i, uint64_t run);
    // Claims every partition of run `run` marked ready; true once none of the
    // run is left to claim (every one claimed, or the sender is past it).
    bool claim_ready(uint64_t run);

    std::atomic<int> refs{2};
    const Data send;
    std::unique_ptr<std::atomic<uint64_t>[]> state;  // per sender partition
    std::atomic<size_t> copied{0};                   // sender partitions copied in this run
    Request* send_request = nullptr;
    std::atomic<LocalRecv*> recv{nullptr};
    std::atomic<uint64_t> recv_run{0};  // the receiver's open run (0: none yet)
    // Who copies a partition marked ready. The receiver, when it is idle
    // (polling MPI_Parrived: it last found a partition missing less than
    // kLookingNs ago) and a Claimer of the run is with its engine: the
    // marking thread (the sender's, busy computing the next partition) only
    // notifies its engine then. Otherwise the marking thread, at once.
    std::atomic<int64_t> recv_looked_ns{0};
    std::atomic<uint64_t> claimer_run{0};  // the run a Claimer serves
    RankState* recv_owner = nullptr;       // set before claimer_run
};

void finish_send(Channel* ch);

Side* make_local_send(RankState* me, Comm* c, const void* buf, int partitions, MPI_Count count,
                      Datatype* type, int dest, int tag);
Side* make_local_recv(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count,
                      Datatype* type, int source, int tag);
Side* make_remote_send(RankState* me, Comm* c, const void* buf, int partitions, MPI_Count count,
                       Datatype* type, int dest, int tag);
Side* make_remote_recv(RankState* me, Comm* c, void* buf, int partitions, MPI_Count count,
                       Datatype* type, int source, int tag);

}  // namespace mpc::mpi::part
