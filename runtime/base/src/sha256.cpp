// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104): see runtime/auth.hpp.
// Checked against the FIPS examples and RFC 4231's test cases
// (tests/unit/runtime/test_auth.cpp).
#include <algorithm>
#include <cstring>

#include "runtime/auth.hpp"

namespace mpc::runtime::auth {
namespace {

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) {
    return (x >> n) | (x << (32 - n));
}

inline uint32_t load_be32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
           static_cast<uint32_t>(p[2]) << 8 | static_cast<uint32_t>(p[3]);
}

inline void store_be32(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}

constexpr size_t kBlock = 64;

}  // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::compress(const uint8_t* block) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) w[i] = load_be32(block + 4 * i);
    for (int i = 16; i < 64; ++i) {
        const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
    uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
    for (int i = 0; i < 64; ++i) {
        const uint32_t t1 =
            h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
        const uint32_t t2 =
            (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
}

void Sha256::update(const void* data, size_t len) {
    const auto* p = static_cast<const uint8_t*>(data);
    total_ += len;
    if (used_ > 0) {
        const size_t take = std::min(len, kBlock - used_);
        std::memcpy(buffer_ + used_, p, take);
        used_ += take;
        p += take;
        len -= take;
        if (used_ < kBlock) return;
        compress(buffer_);
        used_ = 0;
    }
    for (; len >= kBlock; p += kBlock, len -= kBlock) compress(p);
    std::memcpy(buffer_, p, len);
    used_ = len;
}

Digest Sha256::finish() {
    const uint64_t bits = total_ * 8;
    // 0x80, zeros up to 56 bytes into a block, then the length in bits.
    uint8_t tail[kBlock * 2] = {0x80};
    const size_t pad = (used_ < 56 ? 56 : 120) - used_;
    for (int i = 0; i < 8; ++i) tail[pad + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
    update(tail, pad + 8);
    Digest out;
    for (int i = 0; i < 8; ++i) store_be32(out.data() + 4 * i, state_[i]);
    return out;
}

Digest sha256(const void* data, size_t len) {
    Sha256 h;
    h.update(data, len);
    return h.finish();
}

Hmac::Hmac(const void* key, size_t key_len) {
    uint8_t block[kBlock] = {};
    if (key_len > kBlock) {
        const Digest d = sha256(key, key_len);
        std::memcpy(block, d.data(), d.size());
    } else {
        std::memcpy(block, key, key_len);
    }
    uint8_t pad[kBlock];
    for (size_t i = 0; i < kBlock; ++i) pad[i] = block[i] ^ 0x36;
    inner_.update(pad, kBlock);
    for (size_t i = 0; i < kBlock; ++i) pad[i] = block[i] ^ 0x5c;
    outer_.update(pad, kBlock);
    // The key's copies on the stack are cleared: they are as good as the key.
    volatile uint8_t* wipe = block;
    for (size_t i = 0; i < kBlock; ++i) wipe[i] = 0;
    wipe = pad;
    for (size_t i = 0; i < kBlock; ++i) wipe[i] = 0;
}

Digest Hmac::finish() {
    const Digest inner = inner_.finish();
    outer_.update(inner.data(), inner.size());
    return outer_.finish();
}

}  // namespace mpc::runtime::auth
