// The greeting a connecting node process sends first, in every driver (in the
// connection request's private data, or as the first bytes of the stream):
// who it is. The lower-numbered process of a pair connects, so an acceptor
// takes greetings from lower nodes only; the magic turns away strangers that
// probe the port.
#pragma once

#include <cstdint>

namespace mpc::ib {

struct Hello {
    uint32_t magic;
    int32_t node;
};
constexpr uint32_t kHelloMagic = 0x6d706331;  // "mpc1"

// A greeting node `self` may accept (whether that node is connected already
// is the caller's to check).
inline bool hello_from_lower(const Hello& h, int self) {
    return h.magic == kHelloMagic && h.node >= 0 && h.node < self;
}

}  // namespace mpc::ib
