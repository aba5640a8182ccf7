// runtime/copy: copying a few bytes without a library call.
//
// memcpy with a length known only at run time is a call into libc that runs
// a few dozen instructions before the first byte moves. The scalars and short
// vectors of small reductions and messages (the latency-bound ones) move with
// two overlapping loads and stores instead; longer ranges go to memcpy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mpc::runtime {

// memcpy(dst, src, n): the ranges must not overlap.
inline void copy_bytes(void* dst, const void* src, size_t n) {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    auto pair = [&](auto word) {  // n is within [sizeof word, 2 * sizeof word]
        constexpr size_t w = sizeof(word);
        decltype(word) head, tail;
        memcpy(&head, s, w);
        memcpy(&tail, s + n - w, w);
        memcpy(d, &head, w);
        memcpy(d + n - w, &tail, w);
    };
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        pair(uint64_t{});
    } else if (n >= 4) {
        pair(uint32_t{});
    } else if (n >= 2) {
        pair(uint16_t{});
    } else if (n == 1) {
        *d = *s;
    }
}

}  // namespace mpc::runtime
