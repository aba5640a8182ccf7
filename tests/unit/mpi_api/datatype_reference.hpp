// A naive model of MPI type maps for the datatype tests: every type is the
// explicit list of its basic entries (and lb/ub markers) in order, built by
// replicating component maps exactly as MPI 3.1 sections 4.1.2-4.1.7 define
// the constructors. Slow and simple on purpose: it shares no code or idea
// with the Layout engine it checks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mpi.h"

namespace ref {

struct Entry {
    enum Kind { Data, Lb, Ub } kind;
    MPI_Aint disp;
    size_t size;  // Data only
    MPI_Aint align;
};

struct Type {
    std::vector<Entry> map;  // in type-map order

    bool has(Entry::Kind k) const {
        return std::any_of(map.begin(), map.end(), [k](const Entry& e) { return e.kind == k; });
    }
    bool has_data() const { return has(Entry::Data); }
    size_t size() const {
        size_t s = 0;
        for (const Entry& e : map)
            if (e.kind == Entry::Data) s += e.size;
        return s;
    }
    MPI_Aint true_lb() const {
        MPI_Aint v = INT64_MAX;
        for (const Entry& e : map)
            if (e.kind == Entry::Data) v = std::min(v, e.disp);
        return has_data() ? v : 0;
    }
    MPI_Aint true_ub() const {
        MPI_Aint v = INT64_MIN;
        for (const Entry& e : map)
            if (e.kind == Entry::Data) v = std::max(v, e.disp + static_cast<MPI_Aint>(e.size));
        return has_data() ? v : 0;
    }
    MPI_Aint lb() const {
        if (!has(Entry::Lb)) return has_data() ? true_lb() : 0;
        MPI_Aint v = INT64_MAX;
        for (const Entry& e : map)
            if (e.kind == Entry::Lb) v = std::min(v, e.disp);
        return v;
    }
    MPI_Aint ub() const {
        if (has(Entry::Ub)) {
            MPI_Aint v = INT64_MIN;
            for (const Entry& e : map)
                if (e.kind == Entry::Ub) v = std::max(v, e.disp);
            return v;
        }
        if (!has_data()) return lb();
        MPI_Aint ub = true_ub(), k = 1;
        for (const Entry& e : map)
            if (e.kind == Entry::Data) k = std::max(k, e.align);
        MPI_Aint ext = ub - lb();
        while (ext > 0 && ext % k) ++ub, ++ext;  // the epsilon of section 4.1.6
        return ub;
    }
    MPI_Aint extent() const { return ub() - lb(); }
};

inline Type basic(size_t size, MPI_Aint align) {
    return Type{{Entry{Entry::Data, 0, size, align}}};
}

// MPI_DOUBLE_INT: {(double, 0), (int, 8)}.
inline Type double_int() {
    return Type{{Entry{Entry::Data, 0, 8, 8}, Entry{Entry::Data, 8, 4, 4}}};
}

// Appends count copies of t, copy k at disp + k * extent(t).
inline void append_copies(Type& out, const Type& t, MPI_Aint disp, size_t count) {
    const MPI_Aint ext = t.extent();
    for (size_t k = 0; k < count; ++k)
        for (Entry e : t.map) {
            e.disp += disp + static_cast<MPI_Aint>(k) * ext;
            out.map.push_back(e);
        }
}

inline Type hindexed(const std::vector<size_t>& bls, const std::vector<MPI_Aint>& disps,
                     const Type& t) {
    Type out;
    for (size_t i = 0; i < bls.size(); ++i) append_copies(out, t, disps[i], bls[i]);
    return out;
}

inline Type contiguous(size_t n, const Type& t) {
    return hindexed({n}, {0}, t);
}

inline Type hvector(size_t count, size_t bl, MPI_Aint stride, const Type& t) {
    Type out;
    for (size_t i = 0; i < count; ++i) append_copies(out, t, static_cast<MPI_Aint>(i) * stride, bl);
    return out;
}

inline Type structure(const std::vector<size_t>& bls, const std::vector<MPI_Aint>& disps,
                      const std::vector<Type>& ts) {
    Type out;
    for (size_t i = 0; i < bls.size(); ++i) append_copies(out, ts[i], disps[i], bls[i]);
    return out;
}

// Previous markers are erased; new ones at lb and lb + extent.
inline Type resized(const Type& t, MPI_Aint lb, MPI_Aint extent) {
    Type out;
    for (const Entry& e : t.map)
        if (e.kind == Entry::Data) out.map.push_back(e);
    out.map.push_back(Entry{Entry::Lb, lb, 0, 1});
    out.map.push_back(Entry{Entry::Ub, lb + extent, 0, 1});
    return out;
}

// Address range [lo, hi) touched by count elements.
inline void touched(const Type& t, size_t count, MPI_Aint* lo, MPI_Aint* hi) {
    *lo = 0;
    *hi = 0;
    const MPI_Aint ext = t.extent();
    for (size_t k = 0; k < count; ++k)
        for (const Entry& e : t.map) {
            if (e.kind != Entry::Data) continue;
            MPI_Aint a = static_cast<MPI_Aint>(k) * ext + e.disp;
            *lo = std::min(*lo, a);
            *hi = std::max(*hi, a + static_cast<MPI_Aint>(e.size));
        }
}

// The packed stream of (base, count, t).
inline std::vector<unsigned char> pack(const unsigned char* base, size_t count, const Type& t) {
    std::vector<unsigned char> out;
    const MPI_Aint ext = t.extent();
    for (size_t k = 0; k < count; ++k)
        for (const Entry& e : t.map)
            if (e.kind == Entry::Data) {
                const unsigned char* p = base + static_cast<MPI_Aint>(k) * ext + e.disp;
                out.insert(out.end(), p, p + e.size);
            }
    return out;
}

// Writes stream bytes [0, n) into (base, count, t).
inline void unpack(unsigned char* base, size_t count, const Type& t, const unsigned char* in,
                   size_t n) {
    const MPI_Aint ext = t.extent();
    size_t at = 0;
    for (size_t k = 0; k < count && at < n; ++k)
        for (const Entry& e : t.map) {
            if (e.kind != Entry::Data) continue;
            unsigned char* p = base + static_cast<MPI_Aint>(k) * ext + e.disp;
            for (size_t b = 0; b < e.size && at < n; ++b) p[b] = in[at++];
        }
}

// True when no byte is written twice by count elements (valid receive type).
inline bool disjoint(const Type& t, size_t count) {
    std::vector<std::pair<MPI_Aint, MPI_Aint>> r;
    const MPI_Aint ext = t.extent();
    for (size_t k = 0; k < count; ++k)
        for (const Entry& e : t.map)
            if (e.kind == Entry::Data) {
                MPI_Aint a = static_cast<MPI_Aint>(k) * ext + e.disp;
                r.push_back({a, a + static_cast<MPI_Aint>(e.size)});
            }
    std::sort(r.begin(), r.end());
    for (size_t i = 1; i < r.size(); ++i)
        if (r[i].first < r[i - 1].second) return false;
    return true;
}

// Basic elements wholly inside the first `bytes` of the stream; -1 when bytes
// ends inside one (MPI_UNDEFINED).
inline long long elements_in(const Type& t, size_t count, size_t bytes) {
    long long n = 0;
    size_t at = 0;
    for (size_t k = 0; k < count; ++k)
        for (const Entry& e : t.map) {
            if (e.kind != Entry::Data) continue;
            if (at == bytes) return n;
            if (at + e.size > bytes) return -1;
            at += e.size;
            ++n;
        }
    return at == bytes ? n : -1;
}

// Count elements form one contiguous piece of memory in stream order.
inline bool contiguous_memory(const Type& t, size_t count) {
    const MPI_Aint ext = t.extent();
    bool first = true;
    MPI_Aint next = 0;
    for (size_t k = 0; k < count; ++k)
        for (const Entry& e : t.map) {
            if (e.kind != Entry::Data) continue;
            MPI_Aint a = static_cast<MPI_Aint>(k) * ext + e.disp;
            if (!first && a != next) return false;
            first = false;
            next = a + static_cast<MPI_Aint>(e.size);
        }
    return true;
}

}  // namespace ref
