// Predefined datatypes and the segment-walking pack engine.
#include "mpi_api/datatype.hpp"

#include <algorithm>
#include <cstring>

#include "mpi_api/handles.hpp"
#include "mpi_tables.inc"
#include "runtime/log.hpp"

namespace mpc::mpi {
namespace {

HandlePool<Datatype, HandleKind::Datatype>& pool() {
    static HandlePool<Datatype, HandleKind::Datatype> p(gen::kNumPredefinedTypes + 1);
    return p;
}

void define_predefined(int handle, const char* name, size_t size, TypeCategory cat) {
    Datatype* t = pool().at(handle_index(handle));
    t->handle = handle;
    t->name = name;
    t->lb = 0;
    t->extent = static_cast<MPI_Aint>(size);
    t->true_lb = 0;
    t->true_extent = static_cast<MPI_Aint>(size);
    t->predefined = true;
    t->committed = true;
    t->category = cat;
    t->basic = handle;
    t->basic_count = 1;
    t->combiner = MPI_COMBINER_NAMED;
    t->segments = {Segment{0, size}};
    finish_layout(*t);
    pool().mark_live(handle_index(handle));
}

// A position in the packed stream of (base, count, type): which element,
// which segment of it, and how far into that segment.
class Cursor {
public:
    Cursor(const void* base, size_t count, const Datatype& t, size_t offset)
        : base_(static_cast<const char*>(base)), t_(t), count_(count) {
        if (t.size == 0) return;
        elem_ = offset / t.size;
        size_t in_elem = offset % t.size;
        auto it = std::upper_bound(t.segment_start.begin(), t.segment_start.end(), in_elem);
        seg_ = static_cast<size_t>(it - t.segment_start.begin()) - 1;
        seg_off_ = in_elem - t.segment_start[seg_];
    }
    // Start and length of the contiguous run at the cursor.
    char* ptr() const {
        const Segment& s = t_.segments[seg_];
        return const_cast<char*>(base_) + static_cast<MPI_Aint>(elem_) * t_.extent + s.offset +
               static_cast<MPI_Aint>(seg_off_);
    }
    size_t run() const { return t_.segments[seg_].length - seg_off_; }
    void advance(size_t n) {
        seg_off_ += n;
        while (seg_off_ >= t_.segments[seg_].length) {
            seg_off_ -= t_.segments[seg_].length;
            if (++seg_ == t_.segments.size()) {
                seg_ = 0;
                ++elem_;
                if (elem_ >= count_) return;
            }
        }
    }

private:
    const char* base_;
    const Datatype& t_;
    size_t count_;
    size_t elem_ = 0;
    size_t seg_ = 0;
    size_t seg_off_ = 0;
};

}  // namespace

void finish_layout(Datatype& t) {
    // Drop empty segments and merge adjacent ones.
    std::vector<Segment> merged;
    for (const Segment& s : t.segments) {
        if (s.length == 0) continue;
        if (!merged.empty() &&
            merged.back().offset + static_cast<MPI_Aint>(merged.back().length) == s.offset)
            merged.back().length += s.length;
        else
            merged.push_back(s);
    }
    t.segments = std::move(merged);
    t.segment_start.resize(t.segments.size());
    size_t total = 0;
    for (size_t i = 0; i < t.segments.size(); ++i) {
        t.segment_start[i] = total;
        total += t.segments[i].length;
    }
    t.size = total;
    t.contiguous = t.segments.size() <= 1 && static_cast<MPI_Aint>(t.size) == t.extent &&
                   (t.segments.empty() || t.segments[0].offset == t.true_lb);
    if (t.segments.empty()) t.contiguous = true;
}

void datatype_init_predefined() {
#define MPC_DEFINE_TYPE(name, ctype, cat) \
    define_predefined(name, #name, sizeof(ctype), cat);
    MPC_FOR_EACH_PREDEFINED_TYPE(MPC_DEFINE_TYPE)
#undef MPC_DEFINE_TYPE
}

Datatype* datatype_lookup(MPI_Datatype handle) { return pool().lookup(handle); }

void pack(const void* buf, size_t count, const Datatype& type, size_t offset, void* out,
          size_t len) {
    if (len == 0) return;
    if (type.contiguous) {
        memcpy(out, static_cast<const char*>(buf) + type.true_lb + offset, len);
        return;
    }
    Cursor c(buf, count, type, offset);
    char* o = static_cast<char*>(out);
    while (len) {
        size_t n = std::min(len, c.run());
        memcpy(o, c.ptr(), n);
        o += n;
        len -= n;
        if (len) c.advance(n);
    }
}

void unpack(void* buf, size_t count, const Datatype& type, size_t offset, const void* in,
            size_t len) {
    if (len == 0) return;
    if (type.contiguous) {
        memcpy(static_cast<char*>(buf) + type.true_lb + offset, in, len);
        return;
    }
    Cursor c(buf, count, type, offset);
    const char* i = static_cast<const char*>(in);
    while (len) {
        size_t n = std::min(len, c.run());
        memcpy(c.ptr(), i, n);
        i += n;
        len -= n;
        if (len) c.advance(n);
    }
}

void typed_copy(const void* sbuf, size_t scount, const Datatype& stype, void* rbuf,
                size_t rcount, const Datatype& rtype, size_t bytes) {
    if (bytes == 0) return;
    if (stype.contiguous && rtype.contiguous) {
        memcpy(static_cast<char*>(rbuf) + rtype.true_lb,
               static_cast<const char*>(sbuf) + stype.true_lb, bytes);
        return;
    }
    if (stype.contiguous) {
        unpack(rbuf, rcount, rtype, 0, static_cast<const char*>(sbuf) + stype.true_lb, bytes);
        return;
    }
    if (rtype.contiguous) {
        pack(sbuf, scount, stype, 0, static_cast<char*>(rbuf) + rtype.true_lb, bytes);
        return;
    }
    Cursor s(sbuf, scount, stype, 0);
    Cursor r(rbuf, rcount, rtype, 0);
    while (bytes) {
        size_t n = std::min({bytes, s.run(), r.run()});
        memcpy(r.ptr(), s.ptr(), n);
        bytes -= n;
        if (bytes) {
            s.advance(n);
            r.advance(n);
        }
    }
}

}  // namespace mpc::mpi
