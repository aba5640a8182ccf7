// runtime/sanitizers: whether this translation unit is built with
// AddressSanitizer (MPC_ASAN) or ThreadSanitizer (MPC_TSAN). GCC and Clang
// announce them differently; code that must behave differently under one of
// them (fiber switches, polling from a joining thread) asks here.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define MPC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MPC_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define MPC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MPC_TSAN 1
#endif
#endif

namespace mpc::runtime {

#ifdef MPC_TSAN
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif

}  // namespace mpc::runtime
