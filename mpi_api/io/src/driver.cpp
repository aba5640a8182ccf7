// The driver of a node's collective access: the protocol of collective.hpp,
// written as one resumable function that whichever member holds the drive
// lock runs until it has to wait (for members, messages or work items).
//
// Messages go out and come in as the node's leader, on the file's private
// communicator, with tags of this access (node.hpp): kind 0 orders ranks
// (ordered accesses), 1 exchanges the nodes' ranges, 2 carries a round's
// headers and payloads, 3 read replies, 4 the final errors. Between two
// nodes, messages of one kind match in the order they were sent, so rounds
// never need their own tags.
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "collective.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/p2p.hpp"

namespace mpc::io {
namespace {

// What nodes tell each other first.
struct Record {
    uint64_t lo = 0, hi = 0;  // the node's file range (lo == hi: no data)
    uint64_t bytes = 0;
    uint64_t size = 0;        // reads: the file's size
    uint64_t contiguous = 1;  // every part of the node is one extent
    int64_t error = 0;        // a class
    // The collective hints of node 0 decide for everyone.
    uint64_t cb_buffer_size = 0, cb_block_size = 0;
    int64_t cb_nodes = 0, independent = 0;
};

struct Range {
    uint64_t lo = 0, hi = 0;
    bool empty() const { return lo >= hi; }
    bool meets(const Range& o) const { return !empty() && !o.empty() && lo < o.hi && o.lo < hi; }
};

uint64_t round_up(uint64_t v, uint64_t a) {
    return (v + a - 1) / a * a;
}

struct Header {
    uint64_t runs = 0, bytes = 0;
};

// A message of any size, in chunks of at most 1 GiB (counts are ints) that
// match in order (same peer and tag).
struct Message {
    static constexpr size_t kChunk = size_t{1} << 30;
    std::deque<mpi::Request> parts;  // requests never move
    bool complete() const {
        for (const mpi::Request& r : parts)
            if (!r.is_complete()) return false;
        return true;
    }
};

// A message pair to one other node (or from it) in a round.
struct Peer {
    int node = 0;
    Header hdr;
    std::vector<char> payload;  // runs (off, len pairs), then data (writes)
    std::vector<char> reply;    // reads: the data of the runs
    std::vector<Piece> pieces;  // reads, as requester: where the reply goes
    mpi::Request hdr_req;
    Message payload_msg, reply_msg;
    bool payload_posted = false;
};

}  // namespace

struct Driver {
    NodeColl& c;
    NodeFile& nf;
    File* lead;
    mpi::Datatype* byte;
    int tag_base;
    std::vector<Record> records;
    Record global;
    // Two-phase plan.
    int naggs = 0;
    std::vector<int> agg_node;  // aggregator index -> node
    int my_agg = -1;            // this node's aggregator index, or -1
    std::vector<Range> domains;
    std::vector<uint64_t> domain_base;  // window 0 of a domain starts at its aligned base
    uint64_t window = 0;
    uint64_t rounds = 0;

    explicit Driver(NodeColl& col)
        : c(col),
          nf(*col.nf),
          lead(col.nf->leader()),
          byte(mpi::datatype_lookup(MPI_BYTE)),
          tag_base(kCollTagBase + static_cast<int>(col.seq % kCollSequences) * kCollTagKinds) {}

    Comm* comm() const { return lead->comm; }
    int tag(int kind) const { return tag_base + kind; }
    Part& part(int m) { return *c.parts_[static_cast<size_t>(m)]; }

    void start_send(mpi::Request* r, const void* buf, size_t n, int node, int kind) {
        r->notify = lead->owner;
        mpi::coll_start_send(r, comm(), buf, static_cast<int>(n), byte,
                             nf.leaders[static_cast<size_t>(node)], tag(kind));
    }
    void start_recv(mpi::Request* r, void* buf, size_t n, int node, int kind) {
        r->notify = lead->owner;
        mpi::coll_start_recv(r, comm(), buf, static_cast<int>(n), byte,
                             nf.leaders[static_cast<size_t>(node)], tag(kind));
    }
    void check(const mpi::Request& r) {
        if (r.status.MPI_ERROR) c.note_error(r.status.MPI_ERROR);
    }
    void send(Message* m, const void* buf, size_t n, int node, int kind) {
        for (size_t at = 0; at < n; at += Message::kChunk)
            start_send(&m->parts.emplace_back(), static_cast<const char*>(buf) + at,
                       std::min(Message::kChunk, n - at), node, kind);
    }
    void recv(Message* m, void* buf, size_t n, int node, int kind) {
        for (size_t at = 0; at < n; at += Message::kChunk)
            start_recv(&m->parts.emplace_back(), static_cast<char*>(buf) + at,
                       std::min(Message::kChunk, n - at), node, kind);
    }
    void check(const Message& m) {
        for (const mpi::Request& r : m.parts) check(r);
    }

    Resumable allgather(const void* mine, size_t bytes, void* all, int kind);
    Resumable place();
    void describe(Part& p);
    Record summarize();
    void plan();
    Range window_of(int agg, uint64_t k) const;
    void pieces_in(int agg, Range w, std::vector<Piece>& out);
    void post_io(std::vector<Piece> pieces);
    bool items_done() const { return c.done_items_.load(std::memory_order_acquire) == c.posted_; }
    Resumable whole();
    Resumable round(uint64_t k);
    Resumable run();
};

// Bruck's allgather of fixed-size blocks among the node leaders: after the
// step at distance d a node holds the blocks of the 2d nodes from itself on.
Resumable Driver::allgather(const void* mine, size_t bytes, void* all, int kind) {
    const int n = nf.num_nodes, me = nf.node_index;
    std::vector<char> buf(bytes * static_cast<size_t>(n));
    memcpy(buf.data(), mine, bytes);
    int have = 1;
    while (have < n) {
        const int k = std::min(have, n - have);
        mpi::Request s, r;
        start_recv(&r, buf.data() + bytes * static_cast<size_t>(have),
                   bytes * static_cast<size_t>(k), (me + have) % n, kind);
        start_send(&s, buf.data(), bytes * static_cast<size_t>(k), (me - have + n) % n, kind);
        MPC_AWAIT(s.is_complete() && r.is_complete());
        check(s);
        check(r);
        have += k;
    }
    char* out = static_cast<char*>(all);
    for (int i = 0; i < n; ++i)
        memcpy(out + bytes * static_cast<size_t>((me + i) % n),
               buf.data() + bytes * static_cast<size_t>(i), bytes);
}

void Driver::describe(Part& p) {
    if (!p.n) return;
    const View& v = *p.view;
    p.lo = v.file_offset(p.s0);
    p.hi = v.file_offset(p.s0 + p.n - 1) + 1;
    p.contiguous = v.contiguous || p.hi - p.lo == p.n;
}

// Ordered accesses: every rank's data goes at the shared pointer plus what
// the ranks before it access, in rank order; the pointer moves past all.
Resumable Driver::place() {
    const int members = nf.members();
    const uint64_t esize = part(0).view->esize;
    // Per node: [shared pointer (node 0)] then (rank, etypes) per member.
    const size_t words = 1 + 2 * static_cast<size_t>(nf.max_members);
    std::vector<int64_t> mine(words, -1), all(words * static_cast<size_t>(nf.num_nodes));
    mine[0] = nf.hosts_shared_fp() ? nf.shared_fp.load(std::memory_order_acquire) : 0;
    for (int m = 0; m < members; ++m) {
        mine[1 + 2 * static_cast<size_t>(m)] = nf.member_ranks[static_cast<size_t>(m)];
        mine[2 + 2 * static_cast<size_t>(m)] = static_cast<int64_t>(part(m).etypes);
    }
    if (nf.num_nodes > 1) {
        Resumable ag = allgather(mine.data(), words * 8, all.data(), 0);
        MPC_AWAIT(ag.resume());
    } else {
        all = mine;
    }
    std::vector<int64_t> by_rank(nf.node_of.size(), 0);
    for (int node = 0; node < nf.num_nodes; ++node)
        for (size_t m = 0; m < static_cast<size_t>(nf.max_members); ++m) {
            const int64_t* e = &all[words * static_cast<size_t>(node) + 1 + 2 * m];
            if (e[0] >= 0) by_rank[static_cast<size_t>(e[0])] = e[1];
        }
    const int64_t base = all[0];
    int64_t total = 0;
    std::vector<int64_t> before(by_rank.size());
    for (size_t r = 0; r < by_rank.size(); ++r) {
        before[r] = total;
        total += by_rank[r];
    }
    for (int m = 0; m < members; ++m)
        part(m).s0 =
            static_cast<uint64_t>(
                base + before[static_cast<size_t>(nf.member_ranks[static_cast<size_t>(m)])]) *
            esize;
    if (nf.hosts_shared_fp()) nf.shared_fp.fetch_add(total, std::memory_order_acq_rel);
}

Record Driver::summarize() {
    Record r;
    bool any = false;
    for (int m = 0; m < nf.members(); ++m) {
        Part& p = part(m);
        if (p.error) r.error = std::max<int64_t>(r.error, mpi::error_class_of(p.error));
        if (!p.n) continue;
        r.lo = any ? std::min(r.lo, p.lo) : p.lo;
        r.hi = any ? std::max(r.hi, p.hi) : p.hi;
        r.bytes += p.n;
        r.contiguous &= p.contiguous ? 1 : 0;
        any = true;
    }
    struct stat st;
    if (c.dir == Dir::Read && fstat(lead->fd, &st) == 0) r.size = static_cast<uint64_t>(st.st_size);
    const Hints& h = lead->hints;
    const Hints::Cb cb = c.dir == Dir::Read ? h.cb_read : h.cb_write;
    r.cb_buffer_size = h.cb_buffer_size;
    r.cb_block_size = std::max<uint64_t>(h.cb_block_size, 1);
    r.cb_nodes = h.cb_nodes;
    r.independent = lead->atomic || cb == Hints::Cb::Disable ? 1 : 0;
    if (cb == Hints::Cb::Enable) r.contiguous = 0;  // two-phase even for contiguous accesses
    return r;
}

// File domains: the accessed range cut into one aligned piece per
// aggregating node, each moved in windows of cb_buffer_size per round.
void Driver::plan() {
    const Record& h = records[0];
    const int n = nf.num_nodes;
    naggs = h.cb_nodes > 0 ? static_cast<int>(std::min<int64_t>(h.cb_nodes, n)) : n;
    agg_node.resize(static_cast<size_t>(naggs));
    for (int i = 0; i < naggs; ++i) {
        agg_node[static_cast<size_t>(i)] = static_cast<int>(static_cast<int64_t>(i) * n / naggs);
        if (agg_node[static_cast<size_t>(i)] == nf.node_index) my_agg = i;
    }
    const uint64_t align = h.cb_block_size;
    const uint64_t base = global.lo / align * align;
    const uint64_t per = round_up(
        (global.hi - base + static_cast<uint64_t>(naggs) - 1) / static_cast<uint64_t>(naggs),
        align);
    window = std::max(align, h.cb_buffer_size / align * align);
    domains.resize(static_cast<size_t>(naggs));
    domain_base.resize(static_cast<size_t>(naggs));
    for (int i = 0; i < naggs; ++i) {
        const uint64_t a = base + per * static_cast<uint64_t>(i);
        Range d{std::max(global.lo, a), std::min(global.hi, a + per)};
        domains[static_cast<size_t>(i)] = d;
        domain_base[static_cast<size_t>(i)] = a;
        if (!d.empty()) rounds = std::max(rounds, (d.hi - a + window - 1) / window);
    }
}

Range Driver::window_of(int agg, uint64_t k) const {
    const Range& d = domains[static_cast<size_t>(agg)];
    const uint64_t a = domain_base[static_cast<size_t>(agg)] + k * window;
    return Range{std::max(d.lo, a), std::min(d.hi, a + window)};
}

// The pieces of the node's parts in window w of aggregator agg, part by part.
void Driver::pieces_in(int agg, Range w, std::vector<Piece>& out) {
    if (w.empty()) return;
    for (int m = 0; m < nf.members(); ++m) {
        Part& p = part(m);
        if (!p.n || !Range{p.lo, p.hi}.meets(w)) continue;
        if (p.resume.empty()) p.resume.resize(static_cast<size_t>(naggs));
        Part::Resume& r = p.resume[static_cast<size_t>(agg)];
        uint64_t s =
            r.at == w.lo ? r.stream : std::clamp(p.view->stream_before(w.lo), p.s0, p.s0 + p.n);
        PieceWalk walk(*p.view, s, p.mem, s - p.s0, p.s0 + p.n - s);
        Piece pc;
        while (walk.next(&pc, w.hi)) out.push_back(pc);
        r.at = w.hi;
        r.stream = walk.stream();
    }
}

// Sorts a window's pieces by file offset and posts them as work items: reads
// one slice per member when there is enough to share (they run in parallel),
// writes one (a local file system serialises writers of one file on its
// inode lock: a second writer only spins on it).
void Driver::post_io(std::vector<Piece> pieces) {
    auto by_off = [](const Piece& a, const Piece& b) { return a.off < b.off; };
    if (!std::is_sorted(pieces.begin(), pieces.end(), by_off))
        std::stable_sort(pieces.begin(), pieces.end(), by_off);
    uint64_t total = 0;
    for (const Piece& p : pieces) total += p.len;
    constexpr uint64_t kMinSlice = 1u << 20;
    const uint64_t sharers = c.dir == Dir::Read ? static_cast<uint64_t>(nf.members()) : 1;
    const uint64_t slices = std::max<uint64_t>(1, std::min<uint64_t>(sharers, total / kMinSlice));
    const uint64_t target = (total + slices - 1) / slices;
    std::vector<WorkItem> items;
    uint64_t acc = target;
    for (const Piece& p : pieces) {
        if (acc >= target) {
            items.emplace_back();
            acc = 0;
        }
        items.back().pieces.push_back(p);
        acc += p.len;
    }
    c.post(std::move(items));
}

// Every access is one extent (or the hints say so): each part on its own.
Resumable Driver::whole() {
    std::vector<WorkItem> items;
    for (int m = 0; m < nf.members(); ++m) {
        if (!part(m).n) continue;
        WorkItem w;
        w.kind = WorkItem::Kind::Whole;
        w.part = m;
        items.push_back(std::move(w));
    }
    c.post(std::move(items));
    MPC_AWAIT(items_done());
}

Resumable Driver::round(uint64_t k) {
    const bool write = c.dir == Dir::Write;
    const Range mine_range{records[static_cast<size_t>(nf.node_index)].lo,
                           records[static_cast<size_t>(nf.node_index)].hi};
    std::deque<Peer> in, out;  // requests never move
    // As aggregator: who sends to (or asks of) this node's window.
    const Range w = my_agg >= 0 ? window_of(my_agg, k) : Range{};
    if (my_agg >= 0)
        for (int node = 0; node < nf.num_nodes; ++node) {
            const Record& r = records[static_cast<size_t>(node)];
            if (node == nf.node_index || !Range{r.lo, r.hi}.meets(w)) continue;
            Peer& p = in.emplace_back();
            p.node = node;
            start_recv(&p.hdr_req, &p.hdr, sizeof(Header), node, 2);
        }
    // As member of a node with data in other aggregators' windows.
    for (int a = 0; a < naggs; ++a) {
        const int node = agg_node[static_cast<size_t>(a)];
        const Range wa = window_of(a, k);
        if (node == nf.node_index || !mine_range.meets(wa)) continue;
        Peer& p = out.emplace_back();
        p.node = node;
        pieces_in(a, wa, p.pieces);
        std::vector<uint64_t> runs;
        for (const Piece& pc : p.pieces) {
            if (!runs.empty() && runs[runs.size() - 2] + runs.back() == pc.off)
                runs.back() += pc.len;
            else
                runs.insert(runs.end(), {pc.off, pc.len});
            p.hdr.bytes += pc.len;
        }
        p.hdr.runs = runs.size() / 2;
        const size_t run_bytes = runs.size() * 8;
        p.payload.resize(run_bytes + (write ? p.hdr.bytes : 0));
        if (run_bytes) memcpy(p.payload.data(), runs.data(), run_bytes);
        if (write) {
            char* d = p.payload.data() + run_bytes;
            for (const Piece& pc : p.pieces) {
                memcpy(d, reinterpret_cast<const void*>(pc.mem), pc.len);
                d += pc.len;
            }
        } else if (p.hdr.bytes) {
            p.reply.resize(p.hdr.bytes);
            recv(&p.reply_msg, p.reply.data(), p.reply.size(), node, 3);
        }
        start_send(&p.hdr_req, &p.hdr, sizeof(Header), node, 2);
        if (p.hdr.runs) send(&p.payload_msg, p.payload.data(), p.payload.size(), node, 2);
    }
    // This node's window: its members' pieces by address, the others' from
    // their messages.
    std::vector<Piece> pieces;
    if (my_agg >= 0) pieces_in(my_agg, w, pieces);
    for (;;) {
        bool all = true;
        for (Peer& p : in) {
            if (!p.hdr_req.is_complete()) {
                all = false;
                continue;
            }
            if (!p.payload_posted) {
                p.payload_posted = true;
                check(p.hdr_req);
                if (!p.hdr.runs) continue;
                p.payload.resize(p.hdr.runs * 16 + (write ? p.hdr.bytes : 0));
                recv(&p.payload_msg, p.payload.data(), p.payload.size(), p.node, 2);
            }
            if (p.hdr.runs && !p.payload_msg.complete()) all = false;
        }
        if (all) break;
        co_await std::suspend_always{};
    }
    for (Peer& p : in) {
        if (!p.hdr.runs) continue;
        check(p.payload_msg);
        const uint64_t* runs = reinterpret_cast<const uint64_t*>(p.payload.data());
        char* data = write ? p.payload.data() + p.hdr.runs * 16 : nullptr;
        if (!write) {
            p.reply.resize(p.hdr.bytes);
            data = p.reply.data();
        }
        for (uint64_t i = 0; i < p.hdr.runs; ++i) {
            pieces.push_back(
                Piece{runs[2 * i], reinterpret_cast<uintptr_t>(data), runs[2 * i + 1]});
            data += runs[2 * i + 1];
        }
    }
    if (!pieces.empty()) {
        post_io(std::move(pieces));
        MPC_AWAIT(items_done());
    }
    if (!write)
        for (Peer& p : in)
            if (p.hdr.bytes) send(&p.reply_msg, p.reply.data(), p.reply.size(), p.node, 3);
    // Replies to this node's questions go where its members want them.
    if (!write) {
        for (Peer& p : out) {
            if (!p.hdr.bytes) continue;
            MPC_AWAIT(p.reply_msg.complete());
            check(p.reply_msg);
            const char* d = p.reply.data();
            for (const Piece& pc : p.pieces) {
                memcpy(reinterpret_cast<void*>(pc.mem), d, pc.len);
                d += pc.len;
            }
        }
    }
    auto sent = [&] {
        for (Peer& p : out)
            if (!p.hdr_req.is_complete() || (p.hdr.runs && !p.payload_msg.complete())) return false;
        for (Peer& p : in)
            if (!write && p.hdr.bytes && !p.reply_msg.complete()) return false;
        return true;
    };
    MPC_AWAIT(sent());
    for (Peer& p : out) {
        check(p.hdr_req);
        if (p.hdr.runs) check(p.payload_msg);
    }
}

Resumable Driver::run() {
    MPC_AWAIT(c.arrived_.load(std::memory_order_acquire) == nf.members());
    if (c.ordered) {
        Resumable p = place();
        MPC_AWAIT(p.resume());
    }
    for (int m = 0; m < nf.members(); ++m) describe(part(m));
    Record mine = summarize();
    records.assign(static_cast<size_t>(nf.num_nodes), Record{});
    if (nf.num_nodes > 1) {
        Resumable ag = allgather(&mine, sizeof(Record), records.data(), 1);
        MPC_AWAIT(ag.resume());
    } else {
        records[0] = mine;
    }
    bool any = false;
    for (const Record& r : records) {
        global.size = std::max(global.size, r.size);
        global.bytes += r.bytes;
        global.contiguous &= r.contiguous;
        if (r.lo >= r.hi) continue;
        global.lo = any ? std::min(global.lo, r.lo) : r.lo;
        global.hi = any ? std::max(global.hi, r.hi) : r.hi;
        any = true;
    }
    c.eof_ = global.size;
    if (!global.bytes) co_return;
    if (records[0].independent || global.contiguous) {
        Resumable w = whole();
        MPC_AWAIT(w.resume());
        co_return;
    }
    plan();
    for (uint64_t k = 0; k < rounds; ++k) {
        Resumable r = round(k);
        MPC_AWAIT(r.resume());
    }
    // Every rank of every node returns the same outcome.
    int64_t err = mpi::error_class_of(c.item_error_.load());
    if (nf.num_nodes > 1) {
        std::vector<int64_t> errs(static_cast<size_t>(nf.num_nodes));
        Resumable ag = allgather(&err, 8, errs.data(), 4);
        MPC_AWAIT(ag.resume());
        err = *std::max_element(errs.begin(), errs.end());
    }
    if (err) {
        const int mine_err = c.item_error_.load();
        c.error_ = mine_err ? mine_err
                            : mpi::make_error(static_cast<int>(err),
                                              "the collective access failed on another node");
    }
}

Resumable drive(NodeColl* c) {
    Driver d(*c);
    Resumable body = d.run();
    MPC_AWAIT(body.resume());
}

}  // namespace mpc::io
