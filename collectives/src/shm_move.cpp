// Data movement among a group's members (Gather, Scatter, Allgather, Alltoall
// and their v and w forms) through the shared address space; the protocol of
// episodes and slots is in shm_group.hpp.
//
// A block a member sends is either staged (packed into the member's staging
// memory, up to kStageBlock bytes: the member goes on at once) or read
// straight from its buffer through the arguments it publishes (its Record:
// one copy, but the member waits until its readers are done). Sender and
// receiver of a block agree on which by its size. Receivers copy (pull),
// except into a Gather's root, where every member copies its own block in
// parallel (push). When every block of the call is staged and everyone knows
// it (the sizes are known to all members: not for Gatherv, Scatterv,
// Alltoallv, Alltoallw), the collective is one episode; otherwise two (the
// second says "done reading").
//
// Staged layouts: one block at the start; n even blocks at k * size; blocks
// of sizes only their two members know through a header of n + 1 offsets in
// the member's inline slot (MoveSteps::header_inline), the blocks behind it
// when they fit, else in its staging buffer (readers do not know the whole
// size).
#include <memory>
#include <vector>

#include "shm_data.hpp"
#include "shm_local.hpp"

namespace mpc::coll::shm {
namespace {

bool small(size_t bytes) {
    return bytes <= kStageBlock;
}

// n even blocks of `each` bytes, all staged by one member.
bool stage_all(size_t each, int n) {
    return small(each) && each * static_cast<size_t>(n) <= kStageTotal;
}

// What a member publishes for the blocks read straight from its buffers; it
// lives as long as its steps, and the member waits for its readers.
struct Record {
    Blocks send, recv;
};

// The halves of the one-episode (every block staged) movements, shared by
// the steps and the blocking path: what a member stages before publishing,
// and what it copies out once the members it reads are there. Member me of
// n, parity p.
struct Side {
    ShmGroup& g;
    int me, n, p;
};

// My block of `bytes` (block `k` of src), packed into my staging memory at
// `offset` of a payload of `total`.
void stage_block(const Side& s, const Blocks& src, int k, size_t total, size_t offset) {
    move_block(src, k, Blocks::packed(s.g.stage(s.me, s.p, total) + offset, src.bytes_of(k)), 0);
}

// Member m's staged payload of `total` bytes, from `offset`, into block k of
// dst.
void unstage_block(const Side& s, int m, size_t total, size_t offset, const Blocks& dst, int k) {
    move_block(Blocks::packed(s.g.staged(m, s.p, total) + offset, dst.bytes_of(k)), 0, dst, k);
}

void own_block(const Movement& m, int from, int to) {
    if (!m.in_place) move_block(m.send, from, m.recv, to);
}

// Gather: members stage their block, the root copies every one out.
void gather_collect(const Side& s, const Movement& m) {
    for (int k = 0; k < s.n; ++k)
        if (k != m.root) unstage_block(s, k, m.recv.bytes_of(k), 0, m.recv, k);
}

// Scatter: the root stages every block but its own, members copy theirs.
void scatter_stage(const Side& s, const Movement& m) {
    const size_t each = m.send.bytes_of(0), total = each * static_cast<size_t>(s.n);
    for (int k = 0; k < s.n; ++k)
        if (k != s.me) stage_block(s, m.send, k, total, each * static_cast<size_t>(k));
}
void scatter_collect(const Side& s, const Movement& m) {
    const size_t each = m.recv.bytes_of(0);
    unstage_block(s, m.root, each * static_cast<size_t>(s.n), each * static_cast<size_t>(s.me),
                  m.recv, 0);
}

// Allgather: my block staged (from where it is, in place), everyone's copied.
Blocks allgather_mine(int me, const Movement& m) {
    if (!m.in_place) return m.send;
    return Blocks::one(m.recv.at(me), m.recv.count_of(me), &m.recv.type_of(me));
}
void allgather_collect(const Side& s, const Movement& m) {
    for (int j = 1; j < s.n; ++j) {
        const int k = (s.me + j) % s.n;
        unstage_block(s, k, m.recv.bytes_of(k), 0, m.recv, k);
    }
}

// Alltoall: my blocks for the others staged (from my receive buffer, in
// place), mine copied out of everyone's.
void alltoall_stage(const Side& s, const Movement& m) {
    const Blocks& src = m.in_place ? m.recv : m.send;
    const size_t each = src.bytes_of(0), total = each * static_cast<size_t>(s.n);
    for (int k = 0; k < s.n; ++k)
        if (k != s.me) stage_block(s, src, k, total, each * static_cast<size_t>(k));
}
void alltoall_collect(const Side& s, const Movement& m) {
    const size_t each = m.recv.bytes_of(0), total = each * static_cast<size_t>(s.n);
    for (int j = 1; j < s.n; ++j) {
        const int k = (s.me + j) % s.n;
        unstage_block(s, k, total, each * static_cast<size_t>(s.me), m.recv, k);
    }
}

// The episodes a movement takes (see the file comment).
int episodes_of(const Local& l, MoveKind kind, const Movement& m, bool* staged_all) {
    *staged_all = false;
    if (l.size() == 1) return 0;
    if (m.varying) return 2;
    bool all = true;
    if (kind == MoveKind::Allgather && m.recv.form == Blocks::V) {
        for (int k = 0; k < l.size() && all; ++k) all = small(m.recv.bytes_of(k));
    } else {
        // Every member's block has the size of mine (the root's receive or
        // send blocks at the root).
        const bool root = l.me == m.root;
        size_t bytes = 0;
        switch (kind) {
            case MoveKind::Gather:
                bytes = root ? m.recv.bytes_of(0) : m.send.bytes_of(0);
                break;
            case MoveKind::Scatter:
                bytes = root ? m.send.bytes_of(0) : m.recv.bytes_of(0);
                break;
            case MoveKind::Allgather:
            case MoveKind::Alltoall:
                bytes = m.recv.bytes_of(0);
                break;
        }
        // A Scatter's root and an Alltoall's members stage a block per member.
        all = kind == MoveKind::Gather || kind == MoveKind::Allgather ? small(bytes)
                                                                      : stage_all(bytes, l.size());
    }
    *staged_all = all;
    return all ? 1 : 2;
}

class MoveSteps final : public Steps {
  public:
    MoveSteps(const Local& l, MoveKind kind, const Movement& m, bool staged_all, int episodes,
              bool nonblocking)
        : Steps(l, episodes, 3), kind_(kind), m_(m), staged_all_(staged_all) {
        if (nonblocking) keep_arguments();
    }

  private:
    Need needs(int k) const override;
    void run(int k) override;
    void keep_arguments();
    void gather(int k);
    void scatter(int k);
    void allgather(int k);
    void alltoall(int k);

    int n() const { return l_.size(); }
    int me() const { return l_.me; }
    int parity() const { return static_cast<int>(e_ & 1); }
    bool root() const { return l_.me == m_.root; }
    bool alone() const { return l_.size() == 1; }
    ShmGroup& g() const { return l_.group; }
    const Record& record_of(int k) const {
        return *static_cast<const Record*>(g().member(k).record[parity()]);
    }
    void publish(uint64_t e) { g().publish(me(), e); }
    void publish_record() { g().member(me()).record[parity()] = &record_; }
    void note(int err) {
        if (error_ == MPI_SUCCESS) error_ = err;
    }
    // My own block (my send side's block `from` to my receive side's `to`).
    void own_copy(const Blocks& src, int from, int to) {
        if (!m_.in_place) note(move_block(src, from, m_.recv, to));
    }
    // Varying sizes: the blocks of `src` for the others of up to kStageBlock
    // bytes (while they fit in kStageTotal) staged behind a header of
    // offsets, the others left to be read straight (direct_); member k's
    // block `index` into my block `to`, from its staging memory or its
    // buffer, as its header says.
    void stage_varying(const Blocks& src);
    void take_varying(int k, int index, int to);
    // Block k of src if staged (0 if not): small, for another member, and
    // within kStageTotal with the `used` bytes staged before it.
    size_t staged_bytes(const Blocks& src, int k, size_t* used) const {
        const size_t b = src.bytes_of(k);
        if (k == me() || !small(b) || *used + b > kStageTotal) return 0;
        *used += b;
        return b;
    }
    // The header of a varying stage: n + 1 offsets. It goes in the member's
    // inline slot when it fits, where every reader knows to look (one line
    // after the progress line, not the published pointer and then the
    // buffer); so do the blocks when they fit behind it. The first offset
    // says which: the blocks follow the header (it is not 0), or start the
    // staging buffer.
    size_t header_bytes() const { return sizeof(size_t) * static_cast<size_t>(n() + 1); }
    bool header_inline() const { return header_bytes() <= kInlineBytes; }

    const MoveKind kind_;
    Movement m_;
    const bool staged_all_;
    bool direct_ = false;                 // some of my blocks are read from my buffers
    const size_t* my_offsets_ = nullptr;  // my staged header (varying)
    Record record_;
    // Kept for a nonblocking call: the w form's displacements and types (the
    // binding's temporaries), references on the datatypes.
    std::vector<MPI_Aint> send_displs_, recv_displs_;
    std::vector<const mpi::Datatype*> send_types_, recv_types_;
    HeldTypes held_;
    // In place: a packed copy of my receive side, its blocks at offsets.
    std::unique_ptr<unsigned char[]> copy_;
    std::vector<size_t> copy_offsets_;
};

void MoveSteps::keep_arguments() {
    auto keep = [&](Blocks& b, std::vector<MPI_Aint>& displs,
                    std::vector<const mpi::Datatype*>& types) {
        held_.hold(b.type);
        if (b.form != Blocks::W) return;
        displs.assign(b.byte_displs, b.byte_displs + n());
        types.assign(b.types, b.types + n());
        b.byte_displs = displs.data();
        b.types = types.data();
        for (const mpi::Datatype* t : types) held_.hold(t);
    };
    keep(m_.send, send_displs_, send_types_);
    keep(m_.recv, recv_displs_, recv_types_);
}

Need MoveSteps::needs(int k) const {
    if (alone() || (k == 2 && kind_ != MoveKind::Allgather && kind_ != MoveKind::Alltoall))
        return {};
    const uint64_t e = e_;
    switch (kind_) {
        case MoveKind::Gather:
            if (k == 0) {
                // A member writing into the root's buffer needs its record.
                if (root()) return {};  // (it writes no slot)
                if (!staged_all_ && !small(m_.send.bytes_of(0))) return one(m_.root, e);
                return all(e - 1);
            }
            if (!root()) return {};
            return staged_all_ ? all(e) : all_but_me(e + 1);
        case MoveKind::Scatter:
            if (k == 0) return root() ? all(e - 1) : one(m_.root, e);
            return root() && direct_ ? all(e + 1) : Need{};
        case MoveKind::Allgather:
        case MoveKind::Alltoall:
            if (k == 0) return all(e - 1);
            if (k == 1) return all(e);
            // Others read my buffers until they are at e + 1.
            if (staged_all_) return {};
            if (kind_ == MoveKind::Allgather)
                return small(allgather_mine(me(), m_).bytes_of(0)) ? Need{} : all(e + 1);
            return direct_ ? all(e + 1) : Need{};
    }
    return {};
}

void MoveSteps::run(int k) {
    if (alone()) {
        if (k != 0) return;
        if (kind_ == MoveKind::Scatter) {
            if (!m_.in_place) note(move_block(m_.send, 0, m_.recv, 0));
        } else if (!m_.in_place) {
            note(move_block(m_.send, 0, m_.recv, 0));
        }
        return;
    }
    switch (kind_) {
        case MoveKind::Gather:
            return gather(k);
        case MoveKind::Scatter:
            return scatter(k);
        case MoveKind::Allgather:
            return allgather(k);
        case MoveKind::Alltoall:
            return alltoall(k);
    }
}

void MoveSteps::stage_varying(const Blocks& src) {
    if (!m_.varying) {  // even blocks too large to stage
        direct_ = src.bytes_of(0) > 0;
        return;
    }
    const int p = parity();
    size_t total = 0;
    for (int k = 0; k < n(); ++k) {
        const size_t b = staged_bytes(src, k, &total);
        if (k != me() && src.bytes_of(k) > 0 && b == 0) direct_ = true;
    }
    const size_t header = header_bytes();
    unsigned char* base;  // where the offsets count from
    size_t* offsets;
    size_t at;
    if (!header_inline()) {
        base = g().grow_stage(me(), p, header + total);
        offsets = reinterpret_cast<size_t*>(base);
        at = header;
    } else {
        unsigned char* slot = g().member(me()).data[p];
        offsets = reinterpret_cast<size_t*>(slot);
        const bool blocks_inline = header + total <= kInlineBytes;
        base = blocks_inline ? slot : g().grow_stage(me(), p, total);
        at = blocks_inline ? header : 0;
    }
    size_t used = 0;
    for (int k = 0; k < n(); ++k) {
        offsets[k] = at;
        at += staged_bytes(src, k, &used);
    }
    offsets[n()] = at;
    my_offsets_ = offsets;
    const Blocks staged = Blocks::packed_at(base, offsets);
    for (int k = 0; k < n(); ++k)
        if (offsets[k + 1] > offsets[k]) move_block(src, k, staged, k);
}

void MoveSteps::take_varying(int k, int index, int to) {
    const MemberSlots& slots = g().member(k);
    const int p = parity();
    const size_t* offsets;
    const unsigned char* base;
    if (header_inline()) {
        offsets = reinterpret_cast<const size_t*>(slots.data[p]);
        base = offsets[0] == 0 ? slots.stage[p] : slots.data[p];
    } else {
        base = slots.stage[p];
        offsets = reinterpret_cast<const size_t*>(base);
    }
    if (offsets[index + 1] > offsets[index]) {
        note(move_block(Blocks::packed_at(base, offsets), index, m_.recv, to));
    } else if (m_.recv.bytes_of(to) > 0) {
        note(move_block(record_of(k).send, index, m_.recv, to));
    }
}

void MoveSteps::gather(int k) {
    const int r = m_.root;
    const Side side{g(), me(), n(), parity()};
    if (k == 0 && root()) {
        if (!staged_all_) {
            record_.recv = m_.recv;
            publish_record();
        }
        publish(e_);
        own_copy(m_.send, 0, r);
    } else if (k == 0) {
        const size_t bytes = m_.send.bytes_of(0);
        if (staged_all_ || small(bytes)) {
            stage_block(side, m_.send, 0, bytes, 0);
        } else {
            note(move_block(m_.send, 0, record_of(r).recv, me()));
        }
        publish(e_ + static_cast<uint64_t>(staged_all_ ? 0 : 1));
    } else if (k == 1 && root()) {
        if (staged_all_) return gather_collect(side, m_);
        for (int m = 0; m < n(); ++m) {
            const size_t bytes = m_.recv.bytes_of(m);
            if (m != r && small(bytes)) unstage_block(side, m, bytes, 0, m_.recv, m);
        }
        publish(e_ + 1);
    }
}

void MoveSteps::scatter(int k) {
    const int r = m_.root;
    const Side side{g(), me(), n(), parity()};
    if (k != 0) return;
    if (root()) {
        if (staged_all_) {
            scatter_stage(side, m_);
        } else {
            stage_varying(m_.send);
            record_.send = m_.send;
            publish_record();
        }
        publish(e_ + static_cast<uint64_t>(staged_all_ ? 0 : 1));
        own_copy(m_.send, r, 0);
        return;
    }
    if (staged_all_) {
        scatter_collect(side, m_);
    } else if (m_.varying) {
        take_varying(r, me(), 0);
    } else {
        note(move_block(record_of(r).send, me(), m_.recv, 0));
    }
    publish(e_ + static_cast<uint64_t>(staged_all_ ? 0 : 1));
}

void MoveSteps::allgather(int k) {
    const Side side{g(), me(), n(), parity()};
    const Blocks mine = allgather_mine(me(), m_);
    if (k == 0) {
        const size_t bytes = mine.bytes_of(0);
        if (small(bytes)) {
            stage_block(side, mine, 0, bytes, 0);
        } else {
            record_.send = mine;
            publish_record();
        }
        publish(e_);
        own_copy(m_.send, 0, me());
        return;
    }
    if (k != 1) return;
    if (staged_all_) return allgather_collect(side, m_);
    for (int j = 1; j < n(); ++j) {
        const int m = (me() + j) % n();
        const size_t bytes = m_.recv.bytes_of(m);
        if (small(bytes)) {
            unstage_block(side, m, bytes, 0, m_.recv, m);
        } else {
            note(move_block(record_of(m).send, 0, m_.recv, m));
        }
    }
    publish(e_ + 1);
}

void MoveSteps::alltoall(int k) {
    const Side side{g(), me(), n(), parity()};
    if (k == 0) {
        if (staged_all_) {
            alltoall_stage(side, m_);
            publish(e_);
            own_copy(m_.send, me(), me());
            return;
        }
        // In place, my blocks are staged from my receive buffer before I
        // overwrite it; the ones read straight are read from a packed copy.
        const Blocks& source = m_.in_place ? m_.recv : m_.send;
        stage_varying(source);
        record_.send = source;
        if (m_.in_place && direct_) {
            // (the blocks not staged: all of them with even sizes)
            auto direct = [&](int m) {
                return m != me() && (!my_offsets_ || my_offsets_[m + 1] == my_offsets_[m]);
            };
            copy_offsets_.resize(static_cast<size_t>(n() + 1));
            size_t at = 0;
            for (int m = 0; m < n(); ++m) {
                copy_offsets_[static_cast<size_t>(m)] = at;
                if (direct(m)) at += source.bytes_of(m);
            }
            copy_offsets_[static_cast<size_t>(n())] = at;
            copy_.reset(new unsigned char[std::max<size_t>(at, 1)]);
            record_.send = Blocks::packed_at(copy_.get(), copy_offsets_.data());
            for (int m = 0; m < n(); ++m)
                if (direct(m)) move_block(source, m, record_.send, m);
        }
        publish_record();
        publish(e_);
        own_copy(m_.send, me(), me());
        return;
    }
    if (k != 1) return;
    if (staged_all_) return alltoall_collect(side, m_);
    for (int j = 1; j < n(); ++j) {
        const int m = (me() + j) % n();
        if (m_.varying) {
            take_varying(m, me(), m);
        } else {
            note(move_block(record_of(m).send, me(), m_.recv, m));
        }
    }
    publish(e_ + 1);
}

// The blocking path of a one-episode movement: the steps' halves, straight
// (the small collectives spend no time on the resumable machinery).
int staged_move(const Local& l, MoveKind kind, const Movement& m) {
    ShmGroup& g = l.group;
    const uint64_t e = ++*l.episode;
    const Side side{g, l.me, l.size(), static_cast<int>(e & 1)};
    const bool root = l.me == m.root;
    switch (kind) {
        case MoveKind::Gather:
            if (root) {
                g.publish(l.me, e);
                own_block(m, 0, m.root);
                wait_everyone(l, e);
                gather_collect(side, m);
            } else {
                wait_everyone(l, e - 1);
                stage_block(side, m.send, 0, m.send.bytes_of(0), 0);
                g.publish(l.me, e);
            }
            break;
        case MoveKind::Scatter:
            if (root) {
                wait_everyone(l, e - 1);
                scatter_stage(side, m);
                g.publish(l.me, e);
                own_block(m, m.root, 0);
            } else {
                g.wait_one(m.root, e);
                scatter_collect(side, m);
                g.publish(l.me, e);
            }
            break;
        case MoveKind::Allgather: {
            const Blocks mine = allgather_mine(l.me, m);
            wait_everyone(l, e - 1);
            stage_block(side, mine, 0, mine.bytes_of(0), 0);
            g.publish(l.me, e);
            own_block(m, 0, l.me);
            wait_everyone(l, e);
            allgather_collect(side, m);
            break;
        }
        case MoveKind::Alltoall:
            wait_everyone(l, e - 1);
            alltoall_stage(side, m);
            g.publish(l.me, e);
            own_block(m, l.me, l.me);
            wait_everyone(l, e);
            alltoall_collect(side, m);
            break;
    }
    return MPI_SUCCESS;
}

}  // namespace

std::unique_ptr<Steps> move_steps(const Local& l, MoveKind kind, const Movement& m) {
    bool staged_all;
    const int episodes = episodes_of(l, kind, m, &staged_all);
    return std::make_unique<MoveSteps>(l, kind, m, staged_all, episodes, true);
}

int local_move(const Local& l, MoveKind kind, const Movement& m) {
    bool staged_all;
    const int episodes = episodes_of(l, kind, m, &staged_all);
    if (episodes == 1) return staged_move(l, kind, m);
    MoveSteps steps(l, kind, m, staged_all, episodes, false);
    steps.run_all();
    return steps.error();
}

}  // namespace mpc::coll::shm
