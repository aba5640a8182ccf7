// Fuzz target: the datatype engine (mpi_api/core/src/datatype_*): the type
// constructors of MPI 3.1 section 4.1 nested on each other, with small, huge
// and negative arguments, their bounds, envelope and contents, and the pack
// engine. It calls the core functions behind MPI_Type_*, MPI_Pack and
// MPI_Unpack directly, as tests/unit/mpi_api/test_datatype.cpp does, so no
// MPI_Init is needed. Properties:
//   - no crash, no undefined behaviour, no leak, whatever the arguments;
//   - a constructor succeeds or returns a code of class MPI_ERR_ARG,
//     MPI_ERR_COUNT or MPI_ERR_TYPE, and invalid arguments (negative counts,
//     bad subarray or darray shapes) fail;
//   - a created type has the size, element count, lb, extent and true bounds
//     the standard's definition gives, computed exactly in 128 bits (a type
//     whose bounds leave MPI_Aint must fail), and its envelope and contents
//     are the constructor's arguments;
//   - a type with small arguments is created and matches the naive type-map
//     model of tests/unit/mpi_api/datatype_reference.hpp: packing 1-3
//     elements (whole, and in two pieces) gives the model's stream, unpacking
//     it (in two pieces) and a typed copy to the previous type write exactly
//     the model's bytes and no other;
//   - once every handle is freed, every type object is destroyed.
//
// Input: [count][cut] then records [op][args...] (missing bytes read as 0),
// each making one type from predefined types and the live types made before
// (op 12 frees one of those); count = 1 + count % 3 elements are packed,
// `cut` picks where the stream splits. Argument bytes (see Input below):
//   T type: < 0x80 a live type (index modulo), else a predefined one
//   C count 0..7, D element displacement -4..11, A byte displacement
//   -32..95; bytes >= 0xF0 give extreme values instead (INT_MIN, -1, 2^30,
//   INT64_MAX - 7, raw 4- or 8-byte values...)
//   N array length: C capped at 64 (arrays follow, one entry per element)
//   0 contiguous T C          4 hindexed T N (C A)*      8 resized T A(lb) A(extent)
//   1 vector T C C D          5 indexed_block T N C D*   9 subarray T ndims order (C C C)*
//   2 hvector T C C A         6 hindexed_block T N C A* 10 darray T ndims order
//   3 indexed T N (C D)*      7 struct N (T C A)*             (C dist darg psize)* rank size
//                                                      11 dup T   12 free [index]
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "datatype_reference.hpp"
#include "mpi_api/datatype.hpp"
#include "mpi_api/errors.hpp"

namespace mm = mpc::mpi;
using mm::Datatype;

namespace {

[[noreturn]] void broken(const char* what) {
    fprintf(stderr, "fuzz_datatype: %s\n", what);
    abort();
}

void expect(bool ok, const char* what) {
    if (!ok) broken(what);
}

// ---- Input -------------------------------------------------------------------

struct Input {
    const uint8_t* p;
    size_t n;

    uint8_t byte() {
        if (!n) return 0;
        --n;
        return *p++;
    }
    uint64_t raw(int bytes) {
        uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(byte()) << (8 * i);
        return v;
    }
    int special_int(uint8_t b) {
        static const int kInts[12] = {-1,      -2,      INT_MIN, INT_MAX,    1 << 16, 1 << 20,
                                      1 << 24, 1 << 28, 1 << 30, -(1 << 30), 1000,    65535};
        if (b - 0xF0 < 12) return kInts[b - 0xF0];
        return static_cast<int>(static_cast<uint32_t>(raw(4)));
    }
    MPI_Aint special_aint(uint8_t b) {
        static const MPI_Aint kAints[13] = {-1,
                                            INT64_MIN,
                                            INT64_MAX,
                                            MPI_Aint{1} << 31,
                                            MPI_Aint{1} << 40,
                                            MPI_Aint{1} << 62,
                                            -(MPI_Aint{1} << 62),
                                            (MPI_Aint{1} << 32) + 8,
                                            -(MPI_Aint{1} << 40),
                                            INT64_MAX - 7,
                                            INT64_MIN + 8,
                                            MPI_Aint{1} << 20,
                                            -(MPI_Aint{1} << 20)};
        if (b - 0xF0 < 13) return kAints[b - 0xF0];
        return static_cast<MPI_Aint>(raw(8));
    }
    int count() {
        uint8_t b = byte();
        return b < 0xF0 ? b % 8 : special_int(b);
    }
    int disp() {
        uint8_t b = byte();
        return b < 0xF0 ? b % 16 - 4 : special_int(b);
    }
    MPI_Aint bytes() {
        uint8_t b = byte();
        return b < 0xF0 ? b % 128 - 32 : special_aint(b);
    }
    int length() { return std::min(count(), 64); }
};

// ---- Exact bounds ------------------------------------------------------------

// 128-bit arithmetic saturating at +-2^110: far outside MPI_Aint, never wraps.
using I128 = __int128;
constexpr I128 kHuge = I128{1} << 110;

I128 clamp(I128 v) {
    return std::max(-kHuge, std::min(kHuge, v));
}
I128 mul(I128 a, I128 b) {
    I128 r;
    if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? -kHuge : kHuge;
    return clamp(r);
}
I128 add(I128 a, I128 b) {
    return clamp(a + b);  // both within 2^110: no overflow
}
bool fits(I128 v) {
    return v >= INT64_MIN && v <= INT64_MAX;
}

// The bounds of a type map by the standard's definitions (MPI 3.1 section
// 4.1.6): data bounds, sticky lb/ub markers, epsilon padding to the largest
// alignment.
struct Exact {
    bool data = false;
    I128 dlb = 0, dub = 0;
    bool lbm = false, ubm = false;
    I128 lbmark = 0, ubmark = 0;
    I128 align = 1, size = 0, elements = 0;

    I128 lb() const { return lbm ? lbmark : data ? dlb : 0; }
    I128 ub() const {
        if (ubm) return ubmark;
        if (!data) return lb();
        I128 ext = dub - lb();
        return ext > 0 && ext % align ? dub + align - ext % align : dub;
    }
    I128 extent() const { return ub() - lb(); }
    I128 true_lb() const { return data ? dlb : 0; }
    I128 true_extent() const { return data ? dub - dlb : 0; }
    bool representable() const {
        return fits(lb()) && fits(ub()) && fits(extent()) && fits(true_lb()) &&
               fits(true_lb() + true_extent()) && fits(true_extent()) && size <= INT64_MAX;
    }
    // n > 0 copies of c at displacements ranging over [lo, hi].
    void copies(const Exact& c, I128 lo, I128 hi, I128 n) {
        if (n <= 0) return;
        size = add(size, mul(n, c.size));
        elements = add(elements, mul(n, c.elements));
        if (c.data) {
            dlb = data ? std::min(dlb, add(lo, c.dlb)) : add(lo, c.dlb);
            dub = data ? std::max(dub, add(hi, c.dub)) : add(hi, c.dub);
            align = std::max(align, c.align);
            data = true;
        }
        if (c.lbm) {
            lbmark = lbm ? std::min(lbmark, add(lo, c.lbmark)) : add(lo, c.lbmark);
            lbm = true;
        }
        if (c.ubm) {
            ubmark = ubm ? std::max(ubmark, add(hi, c.ubmark)) : add(hi, c.ubmark);
            ubm = true;
        }
    }
    // n copies of c, copy k at disp + k * step.
    void run(const Exact& c, I128 disp, I128 n, I128 step) {
        const I128 last = mul(n - 1, step);
        copies(c, add(disp, std::min<I128>(0, last)), add(disp, std::max<I128>(0, last)), n);
    }
};

Exact exact_of(const ref::Type& r) {
    Exact x;
    x.data = r.has_data();
    x.dlb = r.true_lb();
    x.dub = r.true_ub();
    x.size = static_cast<I128>(r.size());
    for (const ref::Entry& e : r.map) {
        x.align = std::max<I128>(x.align, e.align);
        x.elements += 1;
    }
    return x;
}

// ---- Types -----------------------------------------------------------------

constexpr MPI_Aint kSmall = 1 << 16;  // bounds and arguments of "small" types
constexpr size_t kMaxEntries = 4096;  // type-map entries of a small type

bool little(I128 v) {
    return v >= -kSmall && v <= kSmall;
}

struct Made {
    Datatype* t;  // one reference (its handle's), or a predefined type
    Exact x;
    bool small;
    ref::Type r;  // the type map when small
};

template <class V, class I>
struct Pair {
    V v;
    I i;
};

template <class P>
ref::Type pair_map() {
    auto entry = [](size_t at, size_t size, size_t align) {
        return ref::Entry{ref::Entry::Data, static_cast<MPI_Aint>(at), size,
                          static_cast<MPI_Aint>(align)};
    };
    return ref::Type{{entry(offsetof(P, v), sizeof(P::v), alignof(decltype(P::v))),
                      entry(offsetof(P, i), sizeof(P::i), alignof(decltype(P::i)))}};
}

Made predefined(uint8_t which) {
    struct Prim {
        MPI_Datatype h;
        ref::Type r;
    };
    static const std::vector<Prim> prims = {
        {MPI_CHAR, ref::basic(1, 1)},
        {MPI_SHORT, ref::basic(sizeof(short), alignof(short))},
        {MPI_INT, ref::basic(sizeof(int), alignof(int))},
        {MPI_DOUBLE, ref::basic(sizeof(double), alignof(double))},
        {MPI_BYTE, ref::basic(1, 1)},
        {MPI_LONG_DOUBLE, ref::basic(sizeof(long double), alignof(long double))},
        {MPI_DOUBLE_INT, pair_map<Pair<double, int>>()},
        {MPI_SHORT_INT, pair_map<Pair<short, int>>()},
        {MPI_LONG_DOUBLE_INT, pair_map<Pair<long double, int>>()},
    };
    const Prim& p = prims[(which & 0x7f) % prims.size()];
    Datatype* t = mm::datatype_lookup(p.h);
    expect(t && t->predefined, "a predefined type is missing");
    return Made{t, exact_of(p.r), true, p.r};
}

// A buffer covering what count elements of r touch, plus margins; filled
// with a nonzero pattern, or zeroed.
struct Buffer {
    std::vector<unsigned char> mem;
    unsigned char* base;
    Buffer(const ref::Type& r, size_t count, bool pattern) {
        MPI_Aint lo, hi;
        ref::touched(r, count, &lo, &hi);
        mem.assign(static_cast<size_t>(hi - lo) + 32, 0);
        base = mem.data() + 16 - lo;
        if (pattern)
            for (size_t i = 0; i < mem.size(); ++i)
                mem[i] = static_cast<unsigned char>((i * 131 + 7) % 251 + 1);
    }
};

// One constructor call, both ways.
struct Call {
    bool valid = true;  // the arguments are valid (whatever the sizes)
    bool small = true;  // ... and small: the model r is built and the call must succeed
    Exact x;
    ref::Type r;
    size_t entries = 0;  // type-map entries of r, counted before building it
    int combiner;
    std::vector<int> ints;
    std::vector<MPI_Aint> aints;
    std::vector<const Made*> kids;

    explicit Call(int c) : combiner(c) {}
    void need(bool ok) { valid = valid && ok; }
    // n copies of kid k: the model stays small?
    void count_copies(const Made& k, I128 n, std::initializer_list<I128> args) {
        small = small && k.small && n >= 0 && n <= static_cast<I128>(kMaxEntries);
        for (I128 a : args) small = small && little(a);
        if (small) entries += static_cast<size_t>(n) * k.r.map.size();
    }
    bool model() {
        small = small && valid && entries <= kMaxEntries;
        return small;
    }
};

struct Fuzz {
    explicit Fuzz(Input i) : in(i) {}
    Input in;
    size_t count = 1, cut = 0;
    std::vector<Made> live;
    std::vector<Datatype*> created;

    Made type_arg() {
        uint8_t b = in.byte();
        if (b < 0x80 && !live.empty()) return live[b % live.size()];
        return predefined(b);
    }

    void check_data(const Made& m);
    void check_created(Call& c, Datatype* t);
    void finish(Call& c, int err, Datatype* const& t);
    void step(int op);
};

void Fuzz::check_data(const Made& m) {
    const Datatype& t = *m.t;
    const ref::Type& r = m.r;
    expect(static_cast<long long>(t.elements * count) == ref::elements_in(r, count, count * t.size),
           "element count differs from the model");
    if (t.contiguous && t.size)
        expect(ref::contiguous_memory(r, 3) && r.extent() == static_cast<MPI_Aint>(r.size()),
               "a type claimed contiguous is not");
    Buffer src(r, count, true);
    const std::vector<unsigned char> want = ref::pack(src.base, count, r);
    const size_t total = want.size();
    expect(total == count * t.size, "packed size differs from the model");
    std::vector<unsigned char> got(total + 1, 0);
    const size_t at = cut % (total + 1);
    mm::pack(src.base, count, t, 0, got.data(), total);
    expect(std::equal(want.begin(), want.end(), got.begin()) && !got[total],
           "pack differs from the model");
    std::fill(got.begin(), got.end(), 0);
    mm::pack(src.base, count, t, 0, got.data(), at);
    mm::pack(src.base, count, t, at, got.data() + at, total - at);
    expect(std::equal(want.begin(), want.end(), got.begin()) && !got[total],
           "pack in two pieces differs from the model");
    if (!ref::disjoint(r, count)) return;  // not a valid receive type
    Buffer model(r, count, false), out(r, count, false);
    ref::unpack(model.base, count, r, want.data(), total);
    mm::unpack(out.base, count, t, 0, want.data(), at);
    mm::unpack(out.base, count, t, at, want.data() + at, total - at);
    expect(out.mem == model.mem, "unpack differs from the model");
    // A typed copy from this type to the live type before it.
    if (live.size() < 2 || !live[live.size() - 2].small) return;
    const Made& dst = live[live.size() - 2];
    if (!ref::disjoint(dst.r, count)) return;
    const size_t bytes = std::min(total, count * dst.t->size);
    Buffer cmodel(dst.r, count, false), cout(dst.r, count, false);
    ref::unpack(cmodel.base, count, dst.r, want.data(), bytes);
    mm::typed_copy(src.base, count, t, cout.base, count, *dst.t, bytes);
    expect(cout.mem == cmodel.mem, "typed_copy differs from the model");
}

void Fuzz::check_created(Call& c, Datatype* t) {
    expect(c.valid, "a constructor accepted invalid arguments");
    expect(c.x.representable(), "a type whose bounds leave MPI_Aint was created");
    expect(!t->predefined, "a new type is predefined");
    expect(t->committed == (c.combiner == MPI_COMBINER_DUP && c.kids[0]->t->committed),
           "a new type is committed (only a duplicate of a committed type is)");
    expect(static_cast<I128>(t->size) == c.x.size && static_cast<I128>(t->elements) == c.x.elements,
           "size or element count differs from the definition");
    expect(t->lb == c.x.lb() && t->extent == c.x.extent(),
           "lb or extent differs from the definition");
    expect(t->true_lb == c.x.true_lb() && t->true_extent == c.x.true_extent(),
           "true lb or true extent differs from the definition");
    // Envelope and contents (MPI_Type_get_envelope / MPI_Type_get_contents).
    expect(t->combiner == c.combiner && t->ints == c.ints && t->aints == c.aints &&
               t->children.size() == c.kids.size(),
           "envelope or contents differ from the arguments");
    for (size_t i = 0; i < c.kids.size(); ++i) {
        expect(t->children[i] == c.kids[i]->t, "contents name another datatype");
        Datatype* copy = mm::type_contents_copy(t->children[i]);
        expect(copy->size == c.kids[i]->t->size && copy->lb == c.kids[i]->t->lb &&
                   copy->extent == c.kids[i]->t->extent && copy->true_lb == c.kids[i]->t->true_lb &&
                   copy->true_extent == c.kids[i]->t->true_extent &&
                   copy->combiner == c.kids[i]->t->combiner,
               "a datatype returned by get_contents differs from the original");
        if (!copy->predefined) {
            created.push_back(copy);
            expect(mm::type_free(copy) == MPI_SUCCESS, "freeing a contents copy failed");
        }
    }
    t->committed = true;  // MPI_Type_commit
    if (c.small && c.model()) {
        const ref::Type& r = c.r;
        expect(r.size() == t->size && r.lb() == t->lb && r.extent() == t->extent &&
                   r.true_lb() == t->true_lb && r.true_ub() - r.true_lb() == t->true_extent,
               "bounds differ from the model");
    }
}

// Checks the outcome of a constructor; a created type joins the live ones.
// t is read after the constructor (an argument of this call) has filled it.
void Fuzz::finish(Call& c, int err, Datatype* const& t) {
    if (err != MPI_SUCCESS) {
        const int cls = mm::error_class_of(err);
        expect(cls == MPI_ERR_ARG || cls == MPI_ERR_COUNT || cls == MPI_ERR_TYPE,
               "a constructor failed with an unexpected error class");
        expect(!t, "a failed constructor returned a type");
        expect(!c.model(), "a constructor failed on small valid arguments");
        return;
    }
    expect(t != nullptr, "a constructor succeeded without a type");
    created.push_back(t);
    live.push_back(Made{t, c.x, false, {}});
    check_created(c, t);
    Made& m = live.back();
    m.small = c.model() && little(c.r.lb()) && little(c.r.ub()) && little(c.r.true_lb()) &&
              little(c.r.true_ub());
    if (m.small) {
        m.r = std::move(c.r);
        check_data(m);
    }
}

// The local indices of one darray dimension: blocks of b at (coord + j*p)*b.
std::vector<int> local_indices(int g, int p, int coord, I128 b) {
    std::vector<int> v;
    for (int x = 0; x < g; ++x)
        if ((x / b) % p == coord) v.push_back(x);
    return v;
}

// Subarray and darray, per dimension: the array size, the lowest and highest
// local index and the number of local elements (for the exact bounds), and the
// local indices (for the model, when the array is small).
struct ArrayShape {
    std::vector<I128> size, lo, hi, n;  // n: local elements
    std::vector<std::vector<int>> idx;
    bool empty = false;

    void make(Call& c, const Made& k, int order) {
        const size_t nd = size.size();
        I128 unit = k.x.extent(), total = 1, copies = 1;
        std::vector<I128> step(nd);
        for (size_t i = 0; i < nd; ++i) {  // innermost dimension first
            const size_t d = order == MPI_ORDER_C ? nd - 1 - i : i;
            step[d] = unit;
            unit = mul(unit, size[d]);
            total = mul(total, size[d]);
            copies = mul(copies, empty ? 0 : n[d]);
        }
        Exact data;
        if (!empty) {
            I128 dlo = 0, dhi = 0;
            for (size_t d = 0; d < nd; ++d) {
                dlo = add(dlo, std::min(mul(lo[d], step[d]), mul(hi[d], step[d])));
                dhi = add(dhi, std::max(mul(lo[d], step[d]), mul(hi[d], step[d])));
            }
            data.copies(k.x, dlo, dhi, 1);
            data.size = mul(k.x.size, copies);
            data.elements = mul(k.x.elements, copies);
        }
        c.x = data;  // resized: markers at 0 and the whole array replace those of k
        c.x.lbm = c.x.ubm = true;
        c.x.lbmark = 0;
        c.x.ubmark = unit;
        // The model: every local element, innermost dimension fastest.
        for (I128 s : size) c.small = c.small && s <= static_cast<I128>(kMaxEntries);
        c.count_copies(k, empty ? 0 : copies, {unit, total});
        if (!c.model()) return;
        std::vector<MPI_Aint> disps{0};
        for (size_t i = 0; i < nd; ++i) {  // outermost dimension first
            const size_t d = order == MPI_ORDER_C ? i : nd - 1 - i;
            std::vector<MPI_Aint> next;
            for (MPI_Aint base : disps)
                for (int x : idx[d]) next.push_back(base + x * static_cast<MPI_Aint>(step[d]));
            disps = std::move(next);
        }
        if (empty) disps.clear();
        c.r = ref::resized(ref::hindexed(std::vector<size_t>(disps.size(), 1), disps, k.r), 0,
                           static_cast<MPI_Aint>(unit));
    }
};

void Fuzz::step(int op) {
    Datatype* t = nullptr;
    switch (op) {
        case 0: {
            Made k = type_arg();
            int n = in.count();
            Call c(MPI_COMBINER_CONTIGUOUS);
            c.need(n >= 0);
            c.ints = {n};
            c.kids = {&k};
            c.x.run(k.x, 0, n, k.x.extent());
            c.count_copies(k, n, {});
            if (c.model()) c.r = ref::contiguous(static_cast<size_t>(n), k.r);
            return finish(c, mm::type_contiguous(n, k.t, &t), t);
        }
        case 1:
        case 2: {
            Made k = type_arg();
            int n = in.count(), bl = in.count();
            const bool h = op == 2;
            int stride = h ? 0 : in.disp();
            I128 sbytes = h ? in.bytes() : mul(stride, k.x.extent());
            Call c(h ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR);
            c.need(n >= 0 && bl >= 0);
            c.ints = {n, bl};
            if (h)
                c.aints = {static_cast<MPI_Aint>(sbytes)};
            else
                c.ints.push_back(stride);
            c.kids = {&k};
            if (n > 0 && bl > 0) {
                Exact block;
                block.run(k.x, 0, bl, k.x.extent());
                c.x.run(block, 0, n, sbytes);
            }
            c.small = c.small && n <= static_cast<int>(kMaxEntries);  // the model loops n times
            c.count_copies(k, mul(std::max(n, 0), std::max(bl, 0)), {sbytes});
            if (c.model())
                c.r = ref::hvector(static_cast<size_t>(n), static_cast<size_t>(bl),
                                   static_cast<MPI_Aint>(sbytes), k.r);
            int err = h ? mm::type_hvector(n, bl, static_cast<MPI_Aint>(sbytes), k.t, &t)
                        : mm::type_vector(n, bl, stride, k.t, &t);
            return finish(c, err, t);
        }
        case 3:
        case 4:
        case 5:
        case 6:
        case 7: {
            static const int kComb[5] = {MPI_COMBINER_INDEXED, MPI_COMBINER_HINDEXED,
                                         MPI_COMBINER_INDEXED_BLOCK, MPI_COMBINER_HINDEXED_BLOCK,
                                         MPI_COMBINER_STRUCT};
            const bool block = op == 5 || op == 6, bytes = op == 4 || op == 6 || op == 7;
            Made k = op == 7 ? Made{} : type_arg();
            const int n = in.length();
            const int bl = block ? in.count() : 0;
            const size_t len = static_cast<size_t>(std::max(n, 0));
            std::vector<int> bls(len, bl), disps(len);
            std::vector<MPI_Aint> hdisps(len);
            std::vector<Made> kids(op == 7 ? len : 1, k);
            for (size_t i = 0; i < len; ++i) {
                if (op == 7) kids[i] = type_arg();
                if (!block) bls[i] = in.count();
                if (bytes)
                    hdisps[i] = in.bytes();
                else
                    disps[i] = in.disp();
            }
            Call c(kComb[op - 3]);
            c.need(n >= 0 && bl >= 0);
            c.ints = {n};
            if (block) c.ints.push_back(bl);
            if (!block) c.ints.insert(c.ints.end(), bls.begin(), bls.end());
            if (bytes)
                c.aints = hdisps;
            else
                c.ints.insert(c.ints.end(), disps.begin(), disps.end());
            for (const Made& m : kids) c.kids.push_back(&m);
            std::vector<size_t> sbls;
            std::vector<MPI_Aint> ds;
            for (size_t i = 0; i < len; ++i) {
                const Made& m = kids[op == 7 ? i : 0];
                I128 d = bytes ? I128{hdisps[i]} : mul(disps[i], m.x.extent());
                c.need(bls[i] >= 0);
                c.x.run(m.x, d, bls[i], m.x.extent());
                c.count_copies(m, std::max(bls[i], 0), {d});
                sbls.push_back(static_cast<size_t>(std::max(bls[i], 0)));
                ds.push_back(static_cast<MPI_Aint>(clamp(d)));
            }
            if (c.model()) {
                if (op == 7) {
                    std::vector<ref::Type> rs;
                    for (const Made& m : kids) rs.push_back(m.r);
                    c.r = ref::structure(sbls, ds, rs);
                } else {
                    c.r = ref::hindexed(sbls, ds, k.r);
                }
            }
            int err;
            switch (op) {
                case 3:
                    err = mm::type_indexed(n, bls.data(), disps.data(), k.t, &t);
                    break;
                case 4:
                    err = mm::type_hindexed(n, bls.data(), hdisps.data(), k.t, &t);
                    break;
                case 5:
                    err = mm::type_indexed_block(n, bl, disps.data(), k.t, &t);
                    break;
                case 6:
                    err = mm::type_hindexed_block(n, bl, hdisps.data(), k.t, &t);
                    break;
                default: {
                    std::vector<Datatype*> ts;
                    for (const Made& m : kids) ts.push_back(m.t);
                    err = mm::type_struct(n, bls.data(), hdisps.data(), ts.data(), &t);
                }
            }
            return finish(c, err, t);
        }
        case 8: {
            Made k = type_arg();
            MPI_Aint lb = in.bytes(), extent = in.bytes();
            Call c(MPI_COMBINER_RESIZED);
            c.aints = {lb, extent};
            c.kids = {&k};
            c.x = k.x;
            c.x.lbm = c.x.ubm = true;
            c.x.lbmark = lb;
            c.x.ubmark = I128{lb} + extent;
            c.count_copies(k, 1, {lb, extent});
            if (c.model()) c.r = ref::resized(k.r, lb, extent);
            return finish(c, mm::type_resized(k.t, lb, extent, &t), t);
        }
        case 9:
        case 10: {
            Made k = type_arg();
            const uint8_t nb = in.byte(), ob = in.byte();
            const int nd = nb < 0xF0 ? 1 + nb % 3 : nb - 0xF4;
            const int order = ob >= 0xF0 ? 99 : ob % 2 ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
            const size_t len = static_cast<size_t>(std::max(nd, 0));
            std::vector<int> a(len), b(len), s(len), p(len);
            Call c(op == 9 ? MPI_COMBINER_SUBARRAY : MPI_COMBINER_DARRAY);
            c.need(nd > 0 && (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN));
            c.kids = {&k};
            ArrayShape shape;
            if (op == 9) {  // a = sizes, b = subsizes, s = starts
                for (size_t d = 0; d < len; ++d) {
                    a[d] = in.count();
                    b[d] = in.count();
                    s[d] = in.count();
                    const bool ok = a[d] > 0 && b[d] > 0 && s[d] >= 0 && I128{s[d]} + b[d] <= a[d];
                    c.need(ok);
                    std::vector<int> range;
                    for (int x = 0; ok && x < b[d] && x < static_cast<int>(kMaxEntries); ++x)
                        range.push_back(s[d] + x);
                    shape.idx.push_back(std::move(range));
                    shape.size.push_back(a[d]);
                    shape.lo.push_back(s[d]);
                    shape.hi.push_back(I128{s[d]} + b[d] - 1);
                    shape.n.push_back(b[d]);
                }
                c.ints = {nd};
                for (const auto* v : {&a, &b, &s})
                    c.ints.insert(c.ints.end(), v->begin(), v->end());
                c.ints.push_back(order);
                if (c.valid) shape.make(c, k, order);
                return finish(
                    c, mm::type_subarray(nd, a.data(), b.data(), s.data(), order, k.t, &t), t);
            }
            // Darray: a = gsizes, b = distribs, s = dargs, p = psizes.
            I128 grid = 1;
            for (size_t d = 0; d < len; ++d) {
                a[d] = in.count();
                const uint8_t db = in.byte(), gb = in.byte(), pb = in.byte();
                static const int kDist[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
                                             MPI_DISTRIBUTE_NONE};
                b[d] = db < 0xF0 ? kDist[db % 3] : 1000 + db;
                s[d] = gb == 0 ? MPI_DISTRIBUTE_DFLT_DARG : gb < 0xF0 ? gb % 5 : in.special_int(gb);
                p[d] = pb < 0xF0 ? 1 + pb % 3 : in.special_int(pb);
                grid = mul(grid, p[d]);
            }
            const uint8_t rb = in.byte(), sb = in.byte();
            const int size =
                sb < 0xF0 ? static_cast<int>(std::min<I128>(grid, INT_MAX)) : in.special_int(sb);
            const int rank = rb < 0xF0 ? (size > 0 ? rb % size : rb) : in.special_int(rb);
            c.need(size > 0 && rank >= 0 && rank < size && grid == size);
            c.ints = {size, rank, nd};
            for (const auto* v : {&a, &b, &s, &p})
                c.ints.insert(c.ints.end(), v->begin(), v->end());
            c.ints.push_back(order);
            for (size_t d = 0, r = static_cast<size_t>(std::max(rank, 0)); d < len; ++d) {
                const int g = a[d], ps = p[d], darg = s[d];
                c.need(g > 0 && ps > 0);
                if (!c.valid) break;
                I128 bsize = 0;
                if (b[d] == MPI_DISTRIBUTE_BLOCK) {
                    bsize = darg == MPI_DISTRIBUTE_DFLT_DARG ? (I128{g} + ps - 1) / ps : darg;
                    c.need(bsize > 0 && bsize * ps >= g);
                } else if (b[d] == MPI_DISTRIBUTE_CYCLIC) {
                    bsize = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
                    c.need(bsize > 0);
                } else if (b[d] == MPI_DISTRIBUTE_NONE) {
                    bsize = g;
                    c.need(ps == 1);
                } else {
                    c.need(false);
                }
                if (!c.valid) break;
                // Process coordinates: the grid is row-major whatever the order.
                size_t below = 1;
                for (size_t e = d + 1; e < len; ++e) below *= static_cast<size_t>(p[e]);
                const int coord = static_cast<int>((r / below) % static_cast<size_t>(ps));
                const I128 first = coord * bsize;
                shape.size.push_back(g);
                if (first >= g) {
                    shape.empty = true;
                    shape.lo.push_back(0);
                    shape.hi.push_back(0);
                    shape.n.push_back(0);
                    shape.idx.emplace_back();
                    continue;
                }
                const I128 nblocks = (g - 1 - first) / (bsize * ps) + 1;
                const I128 last = first + (nblocks - 1) * bsize * ps;
                shape.lo.push_back(first);
                shape.hi.push_back(std::min<I128>(last + bsize, g) - 1);
                shape.n.push_back((nblocks - 1) * bsize + shape.hi.back() - last + 1);
                shape.idx.push_back(g <= static_cast<int>(kMaxEntries)
                                        ? local_indices(g, ps, coord, bsize)
                                        : std::vector<int>());
            }
            if (c.valid) shape.make(c, k, order);
            return finish(c,
                          mm::type_darray(size, rank, nd, a.data(), b.data(), s.data(), p.data(),
                                          order, k.t, &t),
                          t);
        }
        case 11: {
            Made k = type_arg();
            Call c(MPI_COMBINER_DUP);
            c.kids = {&k};
            c.x = k.x;
            c.count_copies(k, 1, {});
            if (c.model()) c.r = k.r;
            return finish(c, mm::type_dup(k.t, &t), t);
        }
        default: {
            const uint8_t b = in.byte();
            if (live.empty()) return;
            const size_t i = b % live.size();
            expect(mm::type_free(live[i].t) == MPI_SUCCESS, "MPI_Type_free failed");
            live.erase(live.begin() + static_cast<long>(i));
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    mm::datatype_init_predefined();
    Fuzz f(Input{data, size});
    f.count = 1 + f.in.byte() % 3;
    f.cut = f.in.byte();
    for (int records = 0; records < 16 && f.in.n; ++records) f.step(f.in.byte() % 13);
    for (const Made& m : f.live) expect(mm::type_free(m.t) == MPI_SUCCESS, "MPI_Type_free failed");
    for (const Datatype* t : f.created)
        expect(t->handle == MPI_DATATYPE_NULL && t->refs.load() == 0,
               "a type outlived the handles of all types built on it");
    return 0;
}
