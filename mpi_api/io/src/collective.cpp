// NodeColl: the members' side of a node's collective access (arrival, help,
// work items) and the registry that lets them find it (collective.hpp). The
// driver's protocol is in driver.cpp.
#include "collective.hpp"

#include <cstring>

#include "mover.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/progress_engine.hpp"
#include "transfer.hpp"

namespace mpc::io {

Resumable drive(NodeColl* c);  // driver.cpp

NodeColl::NodeColl(std::shared_ptr<NodeFile> node, uint64_t s, Dir d, bool o)
    : nf(std::move(node)), seq(s), dir(d), ordered(o) {
    parts_.assign(static_cast<size_t>(nf->members()), nullptr);
}

void NodeColl::arrive(int member, Part* part) {
    parts_[static_cast<size_t>(member)] = part;
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == nf->members()) notify_members();
}

void NodeColl::notify_members() {
    for (File* f : nf->files)
        if (f) mpi::progress_notify(f->owner);
}

void NodeColl::note_error(int code) {
    int none = MPI_SUCCESS;
    if (code) item_error_.compare_exchange_strong(none, code);
}

void NodeColl::post(std::vector<WorkItem> items) {
    items_lock_.lock();
    items_ = std::move(items);
    posted_ = items_.size();
    done_items_.store(0, std::memory_order_relaxed);
    next_item_.store(0, std::memory_order_release);
    items_lock_.unlock();
    notify_members();
}

void NodeColl::run_items() {
    for (;;) {
        items_lock_.lock();
        const size_t i = next_item_.load(std::memory_order_relaxed);
        const size_t posted = posted_;  // the driver may post anew once all are done
        const bool have = i < posted;
        if (have) next_item_.store(i + 1, std::memory_order_relaxed);
        items_lock_.unlock();
        if (!have) return;
        // The driver posts nothing new until every item is done: the item
        // stays where it is while we work on it.
        WorkItem& w = items_[i];
        File* lead = nf->leader();
        switch (w.kind) {
            case WorkItem::Kind::Io: {
                Mover m(lead->fd, dir, lead->hints.ind_rd_buffer_size, &lead->filename,
                        lead->hints.serialize_writes);
                for (const Piece& p : w.pieces) m.add(p.off, p.mem, p.len);
                note_error(m.finish());
                break;
            }
            case WorkItem::Kind::Gather: {
                char* out = w.buf;
                for (const Piece& p : w.pieces) {
                    memcpy(out, reinterpret_cast<const void*>(p.mem), p.len);
                    out += p.len;
                }
                break;
            }
            case WorkItem::Kind::Scatter: {
                const char* in = w.buf;
                for (const Piece& p : w.pieces) {
                    memcpy(reinterpret_cast<void*>(p.mem), in, p.len);
                    in += p.len;
                }
                break;
            }
            case WorkItem::Kind::Whole: {
                Part& p = *parts_[static_cast<size_t>(w.part)];
                uint64_t moved = 0;
                p.error = transfer(nf->files[static_cast<size_t>(w.part)], dir, *p.view, p.s0,
                                   p.mem, p.n, &moved);
                break;
            }
        }
        if (done_items_.fetch_add(1, std::memory_order_acq_rel) + 1 == posted) notify_members();
    }
}

bool NodeColl::help() {
    run_items();
    // What woke us (a message, a finished item) may have come while another
    // member held the lock and its driver had already looked: ask for another
    // look first, so that either we take the lock or its holder sees the ask
    // after it unlocks. A lost ask would leave the access waiting forever.
    while (!finished()) {
        look_again_.store(true, std::memory_order_seq_cst);
        if (!drive_lock_.try_lock()) break;
        // Look again under the lock too: the driver may have finished after
        // the check, and a second one would replay the protocol (messages,
        // shared pointer, data) over parts whose ranks have gone.
        while (!finished() && look_again_.exchange(false, std::memory_order_seq_cst)) {
            if (!driver_) driver_ = drive(this);
            if (driver_.resume()) {
                driver_ = Resumable();
                finished_.store(true, std::memory_order_release);
                notify_members();
            }
        }
        drive_lock_.unlock();
        if (!look_again_.load(std::memory_order_seq_cst)) break;
    }
    run_items();
    return finished();
}

std::shared_ptr<NodeColl> node_coll(File* f, uint64_t seq, Dir dir, bool ordered) {
    NodeFile& n = *f->node;
    std::lock_guard<std::mutex> g(n.mutex);
    std::shared_ptr<NodeColl>& c = n.colls[seq];
    if (!c) c = std::make_shared<NodeColl>(f->node, seq, dir, ordered);
    return c;
}

void node_coll_done(File* f, uint64_t seq) {
    NodeFile& n = *f->node;
    std::lock_guard<std::mutex> g(n.mutex);
    auto it = n.colls.find(seq);
    if (it != n.colls.end() && ++it->second->members_done == n.members()) n.colls.erase(it);
}

}  // namespace mpc::io
