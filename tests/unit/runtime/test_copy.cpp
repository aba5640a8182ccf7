// copy_bytes against memcpy: every length around the word sizes it switches
// on, at every alignment, and not one byte written outside the destination.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "runtime/copy.hpp"

using mpc::runtime::copy_bytes;

TEST_CASE("copy_bytes copies exactly n bytes at any alignment", "[copy]") {
    constexpr size_t kGuard = 16;
    for (size_t n = 0; n <= 40; ++n) {
        for (size_t src_off = 0; src_off < 8; ++src_off) {
            for (size_t dst_off = 0; dst_off < 8; ++dst_off) {
                std::vector<unsigned char> src(n + 2 * kGuard), dst(n + 2 * kGuard, 0xee);
                for (size_t i = 0; i < src.size(); ++i)
                    src[i] = static_cast<unsigned char>(i * 7 + 1);
                copy_bytes(dst.data() + dst_off, src.data() + src_off, n);
                INFO("n=" << n << " src_off=" << src_off << " dst_off=" << dst_off);
                REQUIRE(std::memcmp(dst.data() + dst_off, src.data() + src_off, n) == 0);
                for (size_t i = 0; i < dst_off; ++i) REQUIRE(dst[i] == 0xee);
                for (size_t i = dst_off + n; i < dst.size(); ++i) REQUIRE(dst[i] == 0xee);
            }
        }
    }
}
