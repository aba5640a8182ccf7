// Accumulate kernels of one-sided communication: CPU atomics element by
// element where the element type allows, the target's accumulate lock
// otherwise (see accumulate.hpp).
#include "accumulate.hpp"

#include <cstring>
#include <type_traits>

#include "mpi_api/errors.hpp"
#include "mpi_api/handles.hpp"
#include "mpi_tables.inc"
#include "target.hpp"

namespace mpc::rma {
namespace {

// Indices of spec.OPS.
enum OpIndex {
    kMax,
    kMin,
    kSum,
    kProd,
    kLand,
    kBand,
    kLor,
    kBor,
    kLxor,
    kBxor,
    kMinloc,
    kMaxloc,
    kReplace,
    kNoOp
};

enum Kind : int { kNone, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF32, kF64 };

template <class T>
constexpr int kind_of(mpi::TypeCategory cat) {
    using C = mpi::TypeCategory;
    if constexpr (std::is_same_v<T, bool>) {
        return cat == C::Logical || cat == C::CInt ? kU8 : kNone;
    } else if constexpr (std::is_integral_v<T>) {
        if (cat != C::CInt && cat != C::FInt && cat != C::Byte && cat != C::Logical) return kNone;
        constexpr bool s = std::is_signed_v<T>;
        switch (sizeof(T)) {
            case 1:
                return s ? kI8 : kU8;
            case 2:
                return s ? kI16 : kU16;
            case 4:
                return s ? kI32 : kU32;
            case 8:
                return s ? kI64 : kU64;
        }
        return kNone;
    } else if constexpr (std::is_same_v<T, float>) {
        return cat == C::Float ? kF32 : kNone;
    } else if constexpr (std::is_same_v<T, double>) {
        return cat == C::Float ? kF64 : kNone;
    }
    return kNone;
}

// Atomic kind per predefined datatype, by handle index.
struct KindTable {
    int kind[mpi::kPredefinedTypeSlots] = {};
    KindTable() {
#define MPC_KIND(name, ctype, cat) kind[mpi::handle_index(name)] = kind_of<ctype>(cat);
        MPC_FOR_EACH_PREDEFINED_TYPE(MPC_KIND)
#undef MPC_KIND
    }
};
const KindTable g_kinds;

int atomic_kind(const mpi::Datatype& basic) {
    const uint32_t i = mpi::handle_index(basic.handle);
    return basic.predefined && i < mpi::kPredefinedTypeSlots ? g_kinds.kind[i] : kNone;
}

int op_index(const mpi::Op& op) {
    return op.builtin;
}

template <class T>
T combine(int op, T a, T b) {  // a: origin, b: target
    if constexpr (std::is_floating_point_v<T>) {
        switch (op) {
            case kMax:
                return a > b ? a : b;
            case kMin:
                return a < b ? a : b;
            case kSum:
                return a + b;
            case kProd:
                return a * b;
            case kReplace:
                return a;
            default:
                return b;
        }
    } else {
        using U = std::conditional_t<std::is_same_v<T, bool>, uint8_t, std::make_unsigned_t<T>>;
        switch (op) {
            case kMax:
                return a > b ? a : b;
            case kMin:
                return a < b ? a : b;
            case kSum:
                return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
            case kProd:
                return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
            case kLand:
                return static_cast<T>((a != T(0)) && (b != T(0)));
            case kLor:
                return static_cast<T>((a != T(0)) || (b != T(0)));
            case kLxor:
                return static_cast<T>((a != T(0)) != (b != T(0)));
            case kBand:
                return static_cast<T>(static_cast<U>(a) & static_cast<U>(b));
            case kBor:
                return static_cast<T>(static_cast<U>(a) | static_cast<U>(b));
            case kBxor:
                return static_cast<T>(static_cast<U>(a) ^ static_cast<U>(b));
            case kReplace:
                return a;
            default:
                return b;
        }
    }
}

// One element at p (aligned): in the origin's value (null for MPI_NO_OP), old
// the previous value (null when not wanted).
template <class T, class U>
void atomic_element(int op, char* p, const char* in, char* old) {
    static_assert(sizeof(T) == sizeof(U));
    U* word = reinterpret_cast<U*>(p);
    U prev;
    T v{};
    if (in) memcpy(&v, in, sizeof v);
    U vbits;
    memcpy(&vbits, &v, sizeof vbits);
    if (op == kNoOp) {
        prev = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    } else if (op == kReplace) {
        prev = __atomic_exchange_n(word, vbits, __ATOMIC_SEQ_CST);
    } else if (std::is_integral_v<T> && !std::is_same_v<T, bool> && op == kSum) {
        prev = __atomic_fetch_add(word, vbits, __ATOMIC_SEQ_CST);
    } else if (std::is_integral_v<T> && op == kBand) {
        prev = __atomic_fetch_and(word, vbits, __ATOMIC_SEQ_CST);
    } else if (std::is_integral_v<T> && op == kBor) {
        prev = __atomic_fetch_or(word, vbits, __ATOMIC_SEQ_CST);
    } else if (std::is_integral_v<T> && op == kBxor) {
        prev = __atomic_fetch_xor(word, vbits, __ATOMIC_SEQ_CST);
    } else {
        prev = __atomic_load_n(word, __ATOMIC_RELAXED);
        for (;;) {
            T cur;
            memcpy(&cur, &prev, sizeof cur);
            const T next = combine<T>(op, v, cur);
            U nbits;
            memcpy(&nbits, &next, sizeof nbits);
            if (__atomic_compare_exchange_n(word, &prev, nbits, true, __ATOMIC_SEQ_CST,
                                            __ATOMIC_RELAXED))
                break;
        }
    }
    if (old) memcpy(old, &prev, sizeof prev);
}

using ElementFn = void (*)(int, char*, const char*, char*);
const ElementFn kElementFns[] = {
    nullptr,
    atomic_element<int8_t, uint8_t>,
    atomic_element<int16_t, uint16_t>,
    atomic_element<int32_t, uint32_t>,
    atomic_element<int64_t, uint64_t>,
    atomic_element<uint8_t, uint8_t>,
    atomic_element<uint16_t, uint16_t>,
    atomic_element<uint32_t, uint32_t>,
    atomic_element<uint64_t, uint64_t>,
    atomic_element<float, uint32_t>,
    atomic_element<double, uint64_t>,
};

}  // namespace

Accumulator::Accumulator(TargetState& target, const mpi::Op& op, const mpi::Datatype& basic,
                         const char* in, char* result)
    : target_(target),
      op_(op_index(op)),
      kind_(atomic_kind(basic)),
      esize_(basic.size),
      in_(in),
      result_(result) {
    if (op_ != kReplace && op_ != kNoOp) kernel_ = mpi::op_kernel(op, basic);
}

Accumulator::~Accumulator() {
    if (locked_) target_.acc_lock.unlock();
}

void Accumulator::run(uintptr_t addr, size_t len) {
    char* dst = reinterpret_cast<char*>(addr);
    if (kind_ == kNone || addr % esize_ != 0) return locked_run(dst, len);
    const ElementFn fn = kElementFns[kind_];
    const size_t n = len / esize_;
    for (size_t i = 0; i < n; ++i) {
        fn(op_, dst + i * esize_, in_ ? in_ + i * esize_ : nullptr,
           result_ ? result_ + i * esize_ : nullptr);
    }
    if (in_) in_ += len;
    if (result_) result_ += len;
}

void Accumulator::locked_run(char* dst, size_t len) {
    if (!locked_) {
        target_.acc_lock.lock();
        locked_ = true;
    }
    if (result_) {
        memcpy(result_, dst, len);
        result_ += len;
    }
    if (op_ == kReplace)
        memcpy(dst, in_, len);
    else if (op_ != kNoOp)
        kernel_(in_, dst, len / esize_);
    if (in_) in_ += len;
}

int check_accumulate_op(const mpi::Op& op, const mpi::Datatype& basic) {
    if (!op.predefined)
        return mpi::make_error(MPI_ERR_OP,
                               "user-defined operations cannot be used in one-sided accumulates");
    if (op.builtin == kReplace || op.builtin == kNoOp) return MPI_SUCCESS;
    return mpi::op_check(op, basic);
}

bool compare_and_swap_type(const mpi::Datatype& type) {
    using C = mpi::TypeCategory;
    return type.predefined && (type.category == C::CInt || type.category == C::FInt ||
                               type.category == C::Logical || type.category == C::Byte);
}

void compare_and_swap_element(TargetState& target, uintptr_t addr, const mpi::Datatype& basic,
                              const void* origin, const void* compare, void* result) {
    const int kind = atomic_kind(basic);
    const size_t n = basic.size;
    char* p = reinterpret_cast<char*>(addr);
    if (kind != kNone && kind != kF32 && kind != kF64 && addr % n == 0) {
        auto cas = [&](auto zero) {
            using U = decltype(zero);
            U expected, desired;
            memcpy(&expected, compare, sizeof(U));
            memcpy(&desired, origin, sizeof(U));
            __atomic_compare_exchange_n(reinterpret_cast<U*>(p), &expected, desired, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            memcpy(result, &expected, sizeof(U));
        };
        switch (n) {
            case 1:
                return cas(uint8_t{});
            case 2:
                return cas(uint16_t{});
            case 4:
                return cas(uint32_t{});
            case 8:
                return cas(uint64_t{});
        }
    }
    target.acc_lock.lock();
    memcpy(result, p, n);
    if (memcmp(p, compare, n) == 0) memcpy(p, origin, n);
    target.acc_lock.unlock();
}

}  // namespace mpc::rma
