// Hierarchical composition (shm_hier.hpp): blocks meet in each node process's
// leader through shared memory, packed node by node (the leaders' order,
// each node's members in rank order), the leaders exchange them with their
// schedules (one message per pair of node processes, as bytes), and the
// members take their results straight from their leader's memory.
//
//  Allgather(v)  members -> leader (local gather, at their place in the whole
//                packed vector); leaders: Allgatherv in place; every member
//                unpacks the whole vector from its leader's.
//  Gather        the same towards the root's leader only (Gatherv of the node
//                parts), which lends the vector to the root.
//  Scatter       the root lends its buffer to its leader, which packs it;
//                leaders: Scatterv of node parts; local scatter.
//  Alltoall      members pack their blocks for each node into their leader's
//                buffer (one run per node and member); leaders: Alltoallv; every
//                member unpacks its blocks from its leader's.
//  Reduce_scatter(_block)  local reduce of the whole vector to the leader, the
//                blocks reordered node by node; leaders: Reduce_scatter in
//                place; local scatter of the node's part.
//  Scan, Exscan  when each node's ranks are consecutive: local scan; the last
//                member's inclusive result to the leader; leaders: Exscan of
//                node totals; every member folds its node's prefix in.
// The v forms of Gather and Scatter (sizes known only at the root) and
// scans over interleaved nodes run the communicator's schedule; so does
// anything whose packed sizes do not fit the leaders' int counts.
#include "shm_hier.hpp"

#include <climits>
#include <vector>

#include "builders.hpp"

namespace mpc::coll::shm {
namespace {

Datatype* mut(const mpi::Datatype* t) {
    return const_cast<Datatype*>(t);
}
const void* send_of(const Movement& m) {
    return m.in_place ? MPI_IN_PLACE : m.send.buf;
}
void note(int* err, int e) {
    if (*err == MPI_SUCCESS) *err = e;
}

// Blocks (sizes by communicator rank) packed node by node: rank r's at
// at[r]; node L's from base[L], bytes[L] long.
struct NodeMajor {
    std::vector<size_t> at, base, bytes;
    size_t total = 0;
    bool fits() const {
        for (size_t b : bytes)
            if (b > static_cast<size_t>(INT_MAX)) return false;
        return total <= static_cast<size_t>(INT_MAX);
    }
    std::vector<int> counts() const { return {bytes.begin(), bytes.end()}; }
    std::vector<int> displs() const { return {base.begin(), base.end() - 1}; }
};
template <class Size>
NodeMajor node_major(const View& v, int n, Size&& size_of) {
    NodeMajor nm;
    nm.at.assign(static_cast<size_t>(n), 0);
    for (const auto& members : v.node_members) {
        nm.base.push_back(nm.total);
        size_t bytes = 0;
        for (int r : members) {
            nm.at[static_cast<size_t>(r)] = nm.total + bytes;
            bytes += size_of(r);
        }
        nm.bytes.push_back(bytes);
        nm.total += bytes;
    }
    nm.base.push_back(nm.total);
    return nm;
}

// The packed offsets of node L's members (and its end), from `origin`.
std::vector<size_t> member_offsets(const NodeMajor& nm, const View& v, int L, size_t origin) {
    std::vector<size_t> out;
    for (int r : v.node_members[static_cast<size_t>(L)])
        out.push_back(nm.at[static_cast<size_t>(r)] - origin);
    out.push_back(nm.base[static_cast<size_t>(L) + 1] - origin);
    return out;
}

std::unique_ptr<unsigned char[]> bytes_for(bool need, size_t n) {
    return need ? std::unique_ptr<unsigned char[]>(new unsigned char[std::max<size_t>(n, 1)])
                : nullptr;
}

// Every rank's block of `all` (packed node by node) into block r of `to`.
void unpack_all(const NodeMajor& nm, const void* all, const Blocks& to) {
    for (size_t r = 0; r < nm.at.size(); ++r)
        move_block(Blocks::packed(offset_by(all, static_cast<MPI_Aint>(nm.at[r])),
                                  to.bytes_of(static_cast<int>(r))),
                   0, to, static_cast<int>(r));
}

}  // namespace

int hier_allgather(Comm* c, View& v, const Movement& m) {
    const NodeMajor nm = node_major(v, c->size, [&](int r) { return m.recv.bytes_of(r); });
    if (!nm.fits()) {
        void* recvbuf = const_cast<void*>(m.recv.buf);
        if (m.recv.form == Blocks::V)
            return run_blocking(make_allgatherv(send_of(m), m.send.count, mut(m.send.type), recvbuf,
                                                m.recv.counts, m.recv.displs, mut(m.recv.type), c));
        return run_blocking(make_allgather(send_of(m), m.send.count, mut(m.send.type), recvbuf,
                                           m.recv.count, mut(m.recv.type), c));
    }
    const Local l = local_of(v);
    const int L = v.leader_index[static_cast<size_t>(c->rank)];
    const bool leader = v.local_rank == 0;
    auto all = bytes_for(leader, nm.total);
    std::vector<size_t> offsets;
    Movement g;
    g.varying = m.recv.form == Blocks::V;
    g.send = m.in_place ? Blocks::one(m.recv.at(c->rank), m.recv.count_of(c->rank),
                                      &m.recv.type_of(c->rank))
                        : m.send;
    if (leader) {
        offsets = member_offsets(nm, v, L, 0);
        g.recv = Blocks::packed_at(all.get(), offsets.data());
    }
    int err = local_move(l, MoveKind::Gather, g);
    const std::vector<int> counts = nm.counts(), displs = nm.displs();
    note(&err, among_leaders(c, v, [&](Comm* leaders) {
        return make_allgatherv(MPI_IN_PLACE, 0, byte_type(), all.get(), counts.data(),
                               displs.data(), byte_type(), leaders);
    }));
    local_lend(l, 0, all.get(), -1, [&](const void* data) { unpack_all(nm, data, m.recv); });
    return err;
}

int hier_gather(Comm* c, View& v, const Movement& m) {
    const bool root = c->rank == m.root;
    const size_t block = root ? m.recv.bytes_of(0) : m.send.bytes_of(0);
    const NodeMajor nm = node_major(v, c->size, [&](int) { return block; });
    if (m.varying || !nm.fits()) {
        void* recvbuf = const_cast<void*>(m.recv.buf);
        if (m.varying)
            return run_blocking(make_gatherv(send_of(m), m.send.count, mut(m.send.type), recvbuf,
                                             m.recv.counts, m.recv.displs, mut(m.recv.type), m.root,
                                             c));
        return run_blocking(make_gather(send_of(m), m.send.count, mut(m.send.type), recvbuf,
                                        m.recv.count, mut(m.recv.type), m.root, c));
    }
    const Local l = local_of(v);
    const int L = v.leader_index[static_cast<size_t>(c->rank)];
    const int RL = v.leader_index[static_cast<size_t>(m.root)];
    const bool leader = v.local_rank == 0;
    // The root's leader holds the whole vector, the others their node's part.
    const size_t origin = L == RL ? 0 : nm.base[static_cast<size_t>(L)];
    auto part = bytes_for(leader, L == RL ? nm.total : nm.bytes[static_cast<size_t>(L)]);
    std::vector<size_t> offsets;
    Movement g;
    g.send =
        root && m.in_place ? Blocks::one(m.recv.at(c->rank), m.recv.count, m.recv.type) : m.send;
    if (leader) {
        offsets = member_offsets(nm, v, L, origin);
        g.recv = Blocks::packed_at(part.get(), offsets.data());
    }
    int err = local_move(l, MoveKind::Gather, g);
    const std::vector<int> counts = nm.counts(), displs = nm.displs();
    note(&err, among_leaders(c, v, [&](Comm* leaders) {
        const bool at_root = leaders->rank == RL;
        return make_gatherv(at_root ? MPI_IN_PLACE : part.get(), counts[static_cast<size_t>(L)],
                            byte_type(), part.get(), counts.data(), displs.data(), byte_type(), RL,
                            leaders);
    }));
    if (L != RL) return err;
    const int r = v.local_index[static_cast<size_t>(m.root)];
    if (r == 0) {
        if (root) unpack_all(nm, part.get(), m.recv);
    } else {
        local_lend(l, 0, part.get(), r, [&](const void* data) { unpack_all(nm, data, m.recv); });
    }
    return err;
}

int hier_scatter(Comm* c, View& v, const Movement& m) {
    const bool root = c->rank == m.root;
    const size_t block = root ? m.send.bytes_of(0) : m.recv.bytes_of(0);
    const NodeMajor nm = node_major(v, c->size, [&](int) { return block; });
    if (m.varying || !nm.fits()) {
        void* recvbuf = m.in_place ? MPI_IN_PLACE : const_cast<void*>(m.recv.buf);
        if (m.varying)
            return run_blocking(make_scatterv(m.send.buf, m.send.counts, m.send.displs,
                                              mut(m.send.type), recvbuf, m.recv.count,
                                              mut(m.recv.type), m.root, c));
        return run_blocking(make_scatter(m.send.buf, m.send.count, mut(m.send.type), recvbuf,
                                         m.recv.count, mut(m.recv.type), m.root, c));
    }
    const Local l = local_of(v);
    const int L = v.leader_index[static_cast<size_t>(c->rank)];
    const int RL = v.leader_index[static_cast<size_t>(m.root)];
    const bool leader = v.local_rank == 0;
    auto part = bytes_for(leader, L == RL ? nm.total : nm.bytes[static_cast<size_t>(L)]);
    // The root's leader packs the root's blocks node by node.
    auto pack_all = [&](const void* data) {
        const Blocks& from = *static_cast<const Blocks*>(data);
        for (size_t r = 0; r < nm.at.size(); ++r)
            move_block(from, static_cast<int>(r), Blocks::packed(part.get() + nm.at[r], block), 0);
    };
    if (L == RL) {
        const int r = v.local_index[static_cast<size_t>(m.root)];
        if (r == 0) {
            if (root) pack_all(&m.send);
        } else {
            local_lend(l, r, &m.send, 0, pack_all);
        }
    }
    int err = MPI_SUCCESS;
    const std::vector<int> counts = nm.counts(), displs = nm.displs();
    note(&err, among_leaders(c, v, [&](Comm* leaders) {
        const bool at_root = leaders->rank == RL;
        return make_scatterv(part.get(), counts.data(), displs.data(), byte_type(),
                             at_root ? MPI_IN_PLACE : part.get(), counts[static_cast<size_t>(L)],
                             byte_type(), RL, leaders);
    }));
    // From the leader's part to every member (an in-place root takes nothing:
    // its block lands in scratch).
    Movement s;
    s.in_place = leader && root && m.in_place;
    if (leader)
        s.send =
            Blocks::packed(part.get() + (L == RL ? nm.base[static_cast<size_t>(L)] : 0), block);
    std::unique_ptr<unsigned char[]> discard;
    if (root && m.in_place && !leader) {
        discard = bytes_for(true, block);
        s.recv = Blocks::packed(discard.get(), block);
    } else if (!s.in_place) {
        s.recv = m.recv;
    }
    note(&err, local_move(l, MoveKind::Scatter, s));
    return err;
}

int hier_alltoall(Comm* c, View& v, const Movement& m) {
    const size_t block = m.recv.bytes_of(0);
    const int L = v.leader_index[static_cast<size_t>(c->rank)];
    const auto& nodes = v.node_members;
    const size_t here = nodes[static_cast<size_t>(L)].size();
    // The leader's buffers: to node D, my members' blocks for D's members
    // (member-major); from node S, S's members' blocks for mine.
    std::vector<size_t> base(nodes.size() + 1, 0);
    for (size_t D = 0; D < nodes.size(); ++D)
        base[D + 1] = base[D] + here * nodes[D].size() * block;
    if (base.back() > static_cast<size_t>(INT_MAX))
        return run_blocking(make_alltoall(send_of(m), m.send.count, mut(m.send.type),
                                          const_cast<void*>(m.recv.buf), m.recv.count,
                                          mut(m.recv.type), c));
    const Local l = local_of(v);
    const bool leader = v.local_rank == 0;
    const size_t a = static_cast<size_t>(v.local_rank);
    auto out = bytes_for(leader, base.back());
    auto in = bytes_for(leader, base.back());
    const Blocks& src = m.in_place ? m.recv : m.send;
    local_lend(l, 0, out.get(), -1, [&](const void* data) {
        for (size_t D = 0; D < nodes.size(); ++D)
            for (size_t b = 0; b < nodes[D].size(); ++b)
                move_block(src, nodes[D][b],
                           Blocks::packed(
                               offset_by(data, static_cast<MPI_Aint>(
                                                   base[D] + (a * nodes[D].size() + b) * block)),
                               block),
                           0);
    });
    std::vector<int> counts(nodes.size()), displs(nodes.size());
    for (size_t D = 0; D < nodes.size(); ++D) {
        counts[D] = static_cast<int>(base[D + 1] - base[D]);
        displs[D] = static_cast<int>(base[D]);
    }
    int err = among_leaders(c, v, [&](Comm* leaders) {
        return make_alltoallv(out.get(), counts.data(), displs.data(), byte_type(), in.get(),
                              counts.data(), displs.data(), byte_type(), leaders);
    });
    local_lend(l, 0, in.get(), -1, [&](const void* data) {
        for (size_t S = 0; S < nodes.size(); ++S)
            for (size_t k = 0; k < nodes[S].size(); ++k)
                move_block(
                    Blocks::packed(
                        offset_by(data, static_cast<MPI_Aint>(base[S] + (k * here + a) * block)),
                        block),
                    0, m.recv, nodes[S][k]);
    });
    return err;
}

int hier_reduce_scatter(Comm* c, View& v, const Partial& r) {
    const int n = c->size;
    auto count_of = [&](int k) { return r.counts ? r.counts[k] : r.count; };
    const mpi::Datatype& t = *r.type;
    // Element positions, node by node (as "bytes" of one per element).
    const NodeMajor nm = node_major(v, n, [&](int k) { return static_cast<size_t>(count_of(k)); });
    if (!nm.fits()) {
        if (r.counts)
            return run_blocking(
                make_reduce_scatter(r.sendbuf, r.recvbuf, r.counts, mut(r.type), r.op, c));
        return run_blocking(
            make_reduce_scatter_block(r.sendbuf, r.recvbuf, r.count, mut(r.type), r.op, c));
    }
    const Local l = local_of(v);
    const int L = v.leader_index[static_cast<size_t>(c->rank)];
    const bool leader = v.local_rank == 0;
    const int total = static_cast<int>(nm.total);
    std::unique_ptr<TypedScratch> reduced, ordered;
    if (leader) {
        reduced = std::make_unique<TypedScratch>(total, r.type);
        ordered = std::make_unique<TypedScratch>(total, r.type);
    }
    const void* in = r.sendbuf == MPI_IN_PLACE ? r.recvbuf : r.sendbuf;
    local_reduce(l, in, leader ? reduced->base : nullptr, total, r.type, r.op, 0);
    int err = MPI_SUCCESS;
    if (leader) {
        // Blocks in rank order -> node by node.
        size_t first = 0;
        for (int k = 0; k < n; ++k) {
            const size_t cnt = static_cast<size_t>(count_of(k));
            mpi::typed_copy(
                offset_by(reduced->base, static_cast<MPI_Aint>(first) * t.extent), cnt, t,
                offset_by(ordered->base,
                          static_cast<MPI_Aint>(nm.at[static_cast<size_t>(k)]) * t.extent),
                cnt, t, cnt * t.size);
            first += cnt;
        }
    }
    const std::vector<int> counts = nm.counts();
    note(&err, among_leaders(c, v, [&](Comm* leaders) {
        return make_reduce_scatter(MPI_IN_PLACE, ordered->base, counts.data(), mut(r.type), r.op,
                                   leaders);
    }));
    // The node's part, at the start of the leader's vector, to its members.
    std::vector<int> member_counts, member_displs;
    for (int k : v.node_members[static_cast<size_t>(L)]) {
        member_displs.push_back(
            static_cast<int>(nm.at[static_cast<size_t>(k)] - nm.base[static_cast<size_t>(L)]));
        member_counts.push_back(count_of(k));
    }
    Movement s;
    s.varying = r.counts != nullptr;
    if (leader)
        s.send = r.counts
                     ? Blocks::v(ordered->base, member_counts.data(), member_displs.data(), r.type)
                     : Blocks::even(ordered->base, r.count, r.type);
    s.recv = Blocks::one(r.recvbuf, count_of(c->rank), r.type);
    note(&err, local_move(l, MoveKind::Scatter, s));
    return err;
}

int hier_scan(Comm* c, View& v, const Partial& r) {
    if (!v.blocks) {
        if (r.kind == PartKind::Scan)
            return run_blocking(make_scan(r.sendbuf, r.recvbuf, r.count, mut(r.type), r.op, c));
        return run_blocking(make_exscan(r.sendbuf, r.recvbuf, r.count, mut(r.type), r.op, c));
    }
    const Local l = local_of(v);
    const int L = v.leader_index[static_cast<size_t>(c->rank)];
    const bool leader = v.local_rank == 0, last = v.local_rank == l.size() - 1;
    const bool exclusive = r.kind == PartKind::Exscan;
    const size_t bytes = static_cast<size_t>(r.count) * r.type->size;
    Datatype* type = mut(r.type);
    // The last member's input, kept (an in-place Exscan overwrites it).
    std::unique_ptr<TypedScratch> input;
    const void* in = r.sendbuf == MPI_IN_PLACE ? r.recvbuf : r.sendbuf;
    if (exclusive && last) {
        input = std::make_unique<TypedScratch>(r.count, r.type);
        mpi::typed_copy(in, static_cast<size_t>(r.count), *r.type, input->base,
                        static_cast<size_t>(r.count), *r.type, bytes);
    }
    local_partial(l, r);
    // My node's total: the last member's inclusive result.
    std::unique_ptr<TypedScratch> total, prefix;
    if (leader) {
        total = std::make_unique<TypedScratch>(r.count, r.type);
        prefix = std::make_unique<TypedScratch>(r.count, r.type);
    }
    const void* inclusive = r.recvbuf;
    if (exclusive && last) {
        // excl op in (a node of one member: in).
        if (v.local_rank > 0) reduce_local(r.recvbuf, input->base, r.count, type, r.op);
        inclusive = input->base;
    }
    local_lend(l, l.size() - 1, inclusive, 0, [&](const void* data) {
        mpi::typed_copy(data, static_cast<size_t>(r.count), *r.type, total->base,
                        static_cast<size_t>(r.count), *r.type, bytes);
    });
    int err = among_leaders(c, v, [&](Comm* leaders) {
        return make_exscan(total->base, prefix->base, r.count, type, r.op, leaders);
    });
    if (L == 0) return err;  // (no node before mine)
    local_lend(l, 0, leader ? prefix->base : nullptr, -1, [&](const void* data) {
        if (exclusive && leader) {
            mpi::typed_copy(data, static_cast<size_t>(r.count), *r.type, r.recvbuf,
                            static_cast<size_t>(r.count), *r.type, bytes);
        } else {
            reduce_local(data, r.recvbuf, r.count, type, r.op);
        }
    });
    return err;
}

}  // namespace mpc::coll::shm
