// Predefined reduction kernels, generated per operation and element type from
// the datatype table, and user operations.
#include "mpi_api/op.hpp"

#include <complex>
#include <cstring>
#include <type_traits>

#include "mpi_api/errors.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_tables.inc"
#include "runtime/log.hpp"

namespace mpc::mpi {
namespace {

enum OpIndex { kMax, kMin, kSum, kProd, kLand, kBand, kLor, kBor, kLxor, kBxor, kMinloc,
               kMaxloc, kReplace, kNoOp, kNumOps };
static_assert(kNumOps == gen::kNumPredefinedOps);

Kernel g_kernels[kNumOps][gen::kNumPredefinedTypes + 1];

HandlePool<Op, HandleKind::Op>& pool() {
    // Outlives every thread (handles.hpp).
    static auto* p = new HandlePool<Op, HandleKind::Op>(gen::kNumPredefinedOps + 1);
    return *p;
}

template <class T, class F>
Kernel make_kernel() {
    if constexpr (alignof(T) > 8) {
        // 16-byte types (__float128, __int128) are loaded with aligned SSE
        // moves, and reduction buffers (message cells, packed data) are only
        // 8-byte aligned: element by element through copies.
        return [](const void* in, void* inout, size_t n) {
            const char* a = static_cast<const char*>(in);
            char* b = static_cast<char*>(inout);
            F f;
            for (size_t i = 0; i < n; ++i, a += sizeof(T), b += sizeof(T)) {
                T x, y;
                memcpy(&x, a, sizeof(T));
                memcpy(&y, b, sizeof(T));
                y = f(x, y);
                memcpy(b, &y, sizeof(T));
            }
        };
    } else {
        return [](const void* in, void* inout, size_t n) {
            const T* a = static_cast<const T*>(in);
            T* b = static_cast<T*>(inout);
            F f;
            for (size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
        };
    }
}

struct Max { template <class T> T operator()(T a, T b) const { return a > b ? a : b; } };
struct Min { template <class T> T operator()(T a, T b) const { return a < b ? a : b; } };
struct Sum { template <class T> T operator()(T a, T b) const { return static_cast<T>(a + b); } };
struct Prod { template <class T> T operator()(T a, T b) const { return static_cast<T>(a * b); } };
struct Land { template <class T> T operator()(T a, T b) const { return static_cast<T>((a != T(0)) && (b != T(0))); } };
struct Lor { template <class T> T operator()(T a, T b) const { return static_cast<T>((a != T(0)) || (b != T(0))); } };
struct Lxor { template <class T> T operator()(T a, T b) const { return static_cast<T>((a != T(0)) != (b != T(0))); } };
struct Band { template <class T> T operator()(T a, T b) const { return static_cast<T>(a & b); } };
struct Bor { template <class T> T operator()(T a, T b) const { return static_cast<T>(a | b); } };
struct Bxor { template <class T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); } };

// Pairs arrive packed: value then index with no padding (a pair type's data
// is smaller than its extent, e.g. MPI_DOUBLE_INT: 12 bytes, extent 16).
template <class P, bool IsMax>
Kernel make_loc_kernel() {
    return [](const void* in, void* inout, size_t n) {
        using V = decltype(P::v);
        using I = decltype(P::i);
        constexpr size_t kStride = sizeof(V) + sizeof(I);
        const char* a = static_cast<const char*>(in);
        char* b = static_cast<char*>(inout);
        for (size_t k = 0; k < n; ++k, a += kStride, b += kStride) {
            V av, bv;
            I ai, bi;
            memcpy(&av, a, sizeof(V));
            memcpy(&ai, a + sizeof(V), sizeof(I));
            memcpy(&bv, b, sizeof(V));
            memcpy(&bi, b + sizeof(V), sizeof(I));
            bool better = IsMax ? av > bv : av < bv;
            if (better || (av == bv && ai < bi)) {
                if (better) memcpy(b, &av, sizeof(V));
                memcpy(b + sizeof(V), &ai, sizeof(I));
            }
        }
    };
}

template <class T>
constexpr bool is_complex = false;
template <class T>
constexpr bool is_complex<std::complex<T>> = true;

// GCC's 128-bit types (MPI_REAL16, MPI_INTEGER16) count as numbers, though
// the standard traits leave them out in strict C++.
template <class T>
constexpr bool is_integer = std::is_integral_v<T> || std::is_same_v<T, __int128>;
template <class T>
constexpr bool is_number =
    std::is_arithmetic_v<T> || std::is_same_v<T, __int128> || std::is_same_v<T, __float128>;

using Cat = TypeCategory;

template <class T>
void register_type(int handle, Cat cat) {
    uint32_t idx = handle_index(handle);
    const bool numeric = cat == Cat::CInt || cat == Cat::FInt || cat == Cat::Float;
    if constexpr (is_number<T>) {
        if (numeric) {
            g_kernels[kMax][idx] = make_kernel<T, Max>();
            g_kernels[kMin][idx] = make_kernel<T, Min>();
            g_kernels[kSum][idx] = make_kernel<T, Sum>();
            g_kernels[kProd][idx] = make_kernel<T, Prod>();
        }
        if (cat == Cat::CInt || cat == Cat::Logical) {
            g_kernels[kLand][idx] = make_kernel<T, Land>();
            g_kernels[kLor][idx] = make_kernel<T, Lor>();
            g_kernels[kLxor][idx] = make_kernel<T, Lxor>();
        }
        if constexpr (is_integer<T>) {
            if (cat == Cat::CInt || cat == Cat::FInt || cat == Cat::Byte) {
                g_kernels[kBand][idx] = make_kernel<T, Band>();
                g_kernels[kBor][idx] = make_kernel<T, Bor>();
                g_kernels[kBxor][idx] = make_kernel<T, Bxor>();
            }
        }
    } else if constexpr (is_complex<T>) {
        g_kernels[kSum][idx] = make_kernel<T, Sum>();
        g_kernels[kProd][idx] = make_kernel<T, Prod>();
    } else if constexpr (std::is_class_v<T>) {
        if (cat == Cat::Pair) {
            g_kernels[kMinloc][idx] = make_loc_kernel<T, false>();
            g_kernels[kMaxloc][idx] = make_loc_kernel<T, true>();
        }
    }
}

const char* op_name(const Op& op) {
    static const char* names[] = {"MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND",
                                  "MPI_BAND", "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR",
                                  "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};
    return op.builtin >= 0 ? names[op.builtin] : "user operation";
}

}  // namespace

void op_init_predefined() {
#define MPC_REGISTER(name, ctype, cat) register_type<ctype>(name, cat);
    MPC_FOR_EACH_PREDEFINED_TYPE(MPC_REGISTER)
#undef MPC_REGISTER
    for (int i = 0; i < kNumOps; ++i) {
        Op* op = pool().at(static_cast<uint32_t>(i + 1));
        op->handle = make_handle(HandleKind::Op, static_cast<uint32_t>(i + 1));
        op->builtin = i;
        op->commutative = true;
        op->predefined = true;
        pool().mark_live(static_cast<uint32_t>(i + 1));
    }
}

Op* op_lookup(MPI_Op handle) { return pool().lookup(handle); }

MPI_Op op_create(MPI_User_function* fn, bool commutative) {
    int h;
    Op* op = pool().allocate(&h);
    op->handle = h;
    op->builtin = -1;
    op->user = fn;
    op->user_c = nullptr;
    op->commutative = commutative;
    op->predefined = false;
    return h;
}

MPI_Op op_create_c(MPI_User_function_c* fn, bool commutative) {
    MPI_Op h = op_create(nullptr, commutative);
    pool().lookup(h)->user_c = fn;
    return h;
}

void op_free(MPI_Op handle) {
    Op* op = pool().lookup(handle);
    if (!op || op->predefined) return;
    op->user = nullptr;
    op->user_c = nullptr;
    pool().release(handle);
}

int op_check(const Op& op, const Datatype& type) {
    if (op.is_user()) return MPI_SUCCESS;
    if (op.builtin == kReplace || op.builtin == kNoOp)
        return make_error(MPI_ERR_OP, "%s is only valid in one-sided accumulate operations",
                          op_name(op));
    if (type.basic == MPI_DATATYPE_NULL ||
        !g_kernels[op.builtin][handle_index(type.basic)])
        return make_error(MPI_ERR_OP, "%s is not defined on datatype %s", op_name(op),
                          type.name.empty() ? "(derived, mixed)" : type.name.c_str());
    return MPI_SUCCESS;
}

void op_apply(const Op& op, const void* in, void* inout, size_t count, const Datatype& type) {
    if (count == 0) return;
    if (op.user_c) {  // the large-count form: one call
        MPI_Datatype dt = type.handle;
        MPI_Count n = static_cast<MPI_Count>(count);
        op.user_c(const_cast<void*>(in), inout, &n, &dt);
        return;
    }
    if (op.user) {
        // User functions take an int count: split huge reductions.
        MPI_Datatype dt = type.handle;
        const char* a = static_cast<const char*>(in);
        char* b = static_cast<char*>(inout);
        while (count) {
            int n = count > 0x7fffffff ? 0x7fffffff : static_cast<int>(count);
            op.user(const_cast<char*>(a), b, &n, &dt);
            a += static_cast<MPI_Aint>(n) * type.extent;
            b += static_cast<MPI_Aint>(n) * type.extent;
            count -= static_cast<size_t>(n);
        }
        return;
    }
    op_kernel(op, type)(in, inout, count * type.basic_count);
}

Kernel op_kernel(const Op& op, const Datatype& type) {
    Kernel k = g_kernels[op.builtin][handle_index(type.basic)];
    MPC_CHECK(k != nullptr);
    return k;
}

}  // namespace mpc::mpi
