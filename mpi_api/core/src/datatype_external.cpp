// The "external32" representation (MPI 3.1 section 13.5.2): big-endian two's
// complement and IEEE formats, with the standard's sizes (MPI_LONG and
// MPI_UNSIGNED_LONG are 4 bytes, MPI_WCHAR 2, long double IEEE binary128).
// Conversion walks the signature (which primitive comes next) and a pack
// cursor (where it lies) side by side, converting straight between the user
// buffer and the external buffer: runs always hold whole primitives.
#include <complex>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "datatype_layout.hpp"
#include "mpi_api/errors.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_tables.inc"
#include "runtime/log.hpp"

namespace mpc::mpi {
namespace {

enum class Conv : uint8_t { None, Copy, Bool, Swap, NarrowSigned, NarrowUnsigned, LongDouble };

// How one primitive converts: `parts` components (2 for complex types) of
// `native` bytes each, `ext` bytes each outside.
struct ExtInfo {
    Conv conv = Conv::None;
    uint8_t native = 0, ext = 0, parts = 1;
};

ExtInfo g_ext[gen::kNumPredefinedTypes + 1];

template <class T>
constexpr bool is_complex = false;
template <class T>
constexpr bool is_complex<std::complex<T>> = true;

template <class T>
ExtInfo info_for(int handle) {
    constexpr uint8_t n = static_cast<uint8_t>(sizeof(T));
    if constexpr (is_complex<T>) {
        ExtInfo e = info_for<typename T::value_type>(handle);
        e.parts = 2;
        return e;
    } else if constexpr (std::is_same_v<T, long double>) {
        return {Conv::LongDouble, n, 16, 1};
    } else if constexpr (std::is_same_v<T, bool>) {
        return {Conv::Bool, n, 1, 1};
    } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, __float128>) {
        return {Conv::Swap, n, n, 1};
    } else if constexpr (std::is_same_v<T, __int128>) {
        return {Conv::Swap, n, n, 1};
    } else if constexpr (std::is_integral_v<T>) {
        if (handle == MPI_LONG) return {Conv::NarrowSigned, n, 4, 1};
        if (handle == MPI_UNSIGNED_LONG) return {Conv::NarrowUnsigned, n, 4, 1};
        if (handle == MPI_WCHAR) return {Conv::NarrowUnsigned, n, 2, 1};
        return {n == 1 ? Conv::Copy : Conv::Swap, n, n, 1};
    } else if constexpr (std::is_array_v<T>) {
        return {Conv::Copy, n, n, 1};
    } else {
        return {};  // pairs: converted member by member through their signature
    }
}

const ExtInfo* table() {
    static std::once_flag once;
    std::call_once(once, [] {
#define MPC_EXT(name, ctype, cat) g_ext[handle_index(name)] = info_for<ctype>(name);
        MPC_FOR_EACH_PREDEFINED_TYPE(MPC_EXT)
#undef MPC_EXT
    });
    return g_ext;
}

uint64_t load_uint(const char* p, size_t n) {  // native, zero-extended
    uint64_t v = 0;
    if (n == 8)
        memcpy(&v, p, 8);
    else if (n == 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        v = w;
    } else if (n == 2) {
        uint16_t w;
        memcpy(&w, p, 2);
        v = w;
    } else
        v = static_cast<unsigned char>(*p);
    return v;
}

void store_uint(char* p, size_t n, uint64_t v) {  // native
    if (n == 8)
        memcpy(p, &v, 8);
    else if (n == 4) {
        uint32_t w = static_cast<uint32_t>(v);
        memcpy(p, &w, 4);
    } else if (n == 2) {
        uint16_t w = static_cast<uint16_t>(v);
        memcpy(p, &w, 2);
    } else
        *p = static_cast<char>(v);
}

void store_be(char* p, size_t n, uint64_t v) {
    for (size_t i = 0; i < n; ++i) p[n - 1 - i] = static_cast<char>(v >> (8 * i));
}

uint64_t load_be(const char* p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = v << 8 | static_cast<unsigned char>(p[i]);
    return v;
}

void reverse(const char* in, char* out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = in[n - 1 - i];
}

// n components native -> external. False when a value does not fit.
bool to_external(const ExtInfo& e, const char* in, char* out, size_t n) {
    bool ok = true;
    for (size_t i = 0; i < n; ++i, in += e.native, out += e.ext) {
        switch (e.conv) {
            case Conv::Copy:
                memcpy(out, in, e.native);
                break;
            case Conv::Bool:
                *out = *in ? 1 : 0;
                break;
            case Conv::Swap:
                reverse(in, out, e.native);
                break;
            case Conv::NarrowSigned: {
                int64_t v = static_cast<int64_t>(load_uint(in, e.native));
                int64_t lim = int64_t{1} << (8 * e.ext - 1);
                ok = ok && v >= -lim && v < lim;
                store_be(out, e.ext, static_cast<uint64_t>(v));
                break;
            }
            case Conv::NarrowUnsigned: {
                uint64_t v = load_uint(in, e.native);
                ok = ok && v >> (8 * e.ext) == 0;
                store_be(out, e.ext, v);
                break;
            }
            case Conv::LongDouble: {
                long double x;
                memcpy(&x, in, sizeof(x));
                __float128 q = static_cast<__float128>(x);
                reverse(reinterpret_cast<const char*>(&q), out, 16);
                break;
            }
            case Conv::None:
                MPC_CHECK(!"no external32 conversion");
        }
    }
    return ok;
}

void from_external(const ExtInfo& e, const char* in, char* out, size_t n) {
    for (size_t i = 0; i < n; ++i, in += e.ext, out += e.native) {
        switch (e.conv) {
            case Conv::Copy:
                memcpy(out, in, e.native);
                break;
            case Conv::Bool:
                *out = *in ? 1 : 0;
                break;
            case Conv::Swap:
                reverse(in, out, e.native);
                break;
            case Conv::NarrowSigned: {
                uint64_t v = load_be(in, e.ext);
                const unsigned shift = 64 - 8 * e.ext;  // sign-extend
                store_uint(out, e.native,
                           static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift));
                break;
            }
            case Conv::NarrowUnsigned:
                store_uint(out, e.native, load_be(in, e.ext));
                break;
            case Conv::LongDouble: {
                __float128 q;
                reverse(in, reinterpret_cast<char*>(&q), 16);
                long double x = static_cast<long double>(q);
                memcpy(out, &x, sizeof(x));
                break;
            }
            case Conv::None:
                MPC_CHECK(!"no external32 conversion");
        }
    }
}

// Calls f(primitive, n) for the runs of primitives of count elements of t,
// in type-map order. Homogeneous types give one call.
template <class F>
void for_each_primitive_run(const Datatype& t, size_t count, F& f) {
    if (count == 0) return;
    if (t.signature.empty()) return f(t, count);
    if (t.basic != MPI_DATATYPE_NULL) {
        const Datatype* b = datatype_lookup(t.basic);
        if (b && b->signature.empty()) return f(*b, count * t.basic_count);
    }
    for (size_t i = 0; i < count; ++i)
        for (const SigPart& p : t.signature) for_each_primitive_run(*p.type, p.count, f);
}

}  // namespace

size_t external32_size(int handle) {
    const ExtInfo& e = table()[handle_index(handle)];
    return static_cast<size_t>(e.ext) * e.parts;
}

int pack_external32(const void* buf, size_t count, const Datatype& type, void* out) {
    const ExtInfo* info = table();
    Cursor c(buf, count, type, 0);
    char* o = static_cast<char*>(out);
    bool ok = true;
    auto convert = [&](const Datatype& p, size_t n) {
        const ExtInfo& e = info[handle_index(p.handle)];
        while (n) {
            size_t k = std::min(n, c.avail() / p.size);
            MPC_CHECK(k > 0);
            ok = to_external(e, c.ptr(), o, k * e.parts) && ok;
            c.consume(k * p.size);
            o += k * e.parts * e.ext;
            n -= k;
        }
    };
    for_each_primitive_run(type, count, convert);
    if (!ok)
        return make_error(MPI_ERR_CONVERSION,
                          "a value does not fit its external32 size (4-byte long, 2-byte wchar)");
    return MPI_SUCCESS;
}

int unpack_external32(const void* in, void* buf, size_t count, const Datatype& type) {
    const ExtInfo* info = table();
    Cursor c(buf, count, type, 0);
    const char* i = static_cast<const char*>(in);
    auto convert = [&](const Datatype& p, size_t n) {
        const ExtInfo& e = info[handle_index(p.handle)];
        while (n) {
            size_t k = std::min(n, c.avail() / p.size);
            MPC_CHECK(k > 0);
            from_external(e, i, c.ptr(), k * e.parts);
            c.consume(k * p.size);
            i += k * e.parts * e.ext;
            n -= k;
        }
    };
    for_each_primitive_run(type, count, convert);
    return MPI_SUCCESS;
}

}  // namespace mpc::mpi
