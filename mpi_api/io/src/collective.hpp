// Collective data access with the node process as aggregator (two-phase I/O).
//
// The k-th collective access of a file is one NodeColl per node process. Each
// member rank brings a Part (its stream range, its memory) and then only
// helps: a driver, run by whichever member gets its lock, does the node's
// protocol, and members (or, collaboratively, any rank polling for them) take
// the work items it posts: vector system calls over file domain windows,
// copies between messages and buffers, or whole independent accesses.
//
// The protocol (docs/io.md): members arrive; for an ordered access the nodes
// place every rank's data in rank order; the nodes exchange their ranges
// (Bruck allgather among node leaders); when every access is one contiguous
// extent each part is written or read on its own, else the file range is cut
// into one domain per aggregating node and each domain into windows of
// cb_buffer_size, and in round k every node sends (write) or asks for (read)
// the pieces of its members that fall into each other node's k-th window,
// while each aggregator moves its own window with its local members' pieces
// by address (no copy) and the others' from their messages. Last, the nodes
// agree on the error.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "mpi_api/request.hpp"
#include "node.hpp"
#include "resumable.hpp"
#include "runtime/sync.hpp"
#include "walk.hpp"

namespace mpc::io {

// What one rank brings to a collective access.
struct Part {
    ViewRef view;
    uint64_t s0 = 0, n = 0;   // its stream bytes [s0, s0 + n)
    Memory mem;               // holding them (packed offset 0 = stream byte s0)
    int error = MPI_SUCCESS;  // found while preparing: takes part with no data
    // Filled at arrival (ordered accesses: once placed).
    uint64_t lo = 0, hi = 0;  // file range touched (lo == hi: none)
    bool contiguous = true;   // one extent
    uint64_t etypes = 0;      // ordered accesses: its size in etypes
    // Per aggregating node: the file offset its last window ended at and the
    // stream position of the part there (walks go on from it).
    struct Resume {
        uint64_t at = UINT64_MAX, stream = 0;
    };
    std::vector<Resume> resume;
};

struct WorkItem {
    enum class Kind : uint8_t { Io, Gather, Scatter, Whole };
    Kind kind = Kind::Io;
    std::vector<Piece> pieces;  // Io: file pieces; Gather/Scatter: memory pieces
    char* buf = nullptr;        // Gather: into it in order; Scatter: from it in order
    int part = -1;              // Whole: the member whose part moves on its own
};

struct NodeColl {
    NodeColl(std::shared_ptr<NodeFile> node, uint64_t seq, Dir dir, bool ordered);

    // A member brings its part (kept until finished).
    void arrive(int member, Part* part);
    // Runs the driver if no one else does, and work items; true when finished.
    bool help();
    bool finished() const { return finished_.load(std::memory_order_acquire); }
    int error() const { return error_; }
    uint64_t eof() const { return eof_; }  // reads: the file size the access saw

    std::shared_ptr<NodeFile> nf;
    const uint64_t seq;
    const Dir dir;
    const bool ordered;
    int members_done = 0;  // under nf->mutex

  private:
    friend struct Driver;
    friend Resumable drive(NodeColl* c);
    void run_items();
    void post(std::vector<WorkItem> items);
    void notify_members();
    void note_error(int code);

    std::vector<Part*> parts_;
    std::atomic<int> arrived_{0};
    runtime::SpinLock drive_lock_;
    std::atomic<bool> look_again_{false};  // someone asked the driver to run (help)
    Resumable driver_;
    // Posted work: items are taken by index, counted when done.
    runtime::SpinLock items_lock_;
    std::vector<WorkItem> items_;
    std::atomic<size_t> next_item_{0};
    std::atomic<size_t> done_items_{0};
    size_t posted_ = 0;
    std::atomic<int> item_error_{MPI_SUCCESS};
    int error_ = MPI_SUCCESS;
    uint64_t eof_ = 0;
    std::atomic<bool> finished_{false};
};

// The k-th collective access of f's node (created by its first member).
std::shared_ptr<NodeColl> node_coll(File* f, uint64_t seq, Dir dir, bool ordered);
// Drops the node's record of it once a member is done.
void node_coll_done(File* f, uint64_t seq);

}  // namespace mpc::io
