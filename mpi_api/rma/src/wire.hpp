// The messages of one-sided communication between node processes (the
// payload of the network's Rma messages). Every field is checked on receipt:
// ids through the registries, ranges against the window; a stale or forged
// message is dropped, never followed.
#pragma once

#include <cstdint>

namespace mpc::rma {

enum class Am : uint8_t {
    Put = 1,   // segments, then their data, into the window
    Get,       // segments; answered by Data (offset: where in the origin's stream)
    Acc,       // segments and data, combined with op (element type basic)
    GetAcc,    // as Acc; the old contents answered by Data
    Cas,       // one segment, origin value then compare value; answered by Data
    Lock,      // flags kExclusive; answered by Grant, at once or once released
    Unlock,    // answered by Ack once released (after every operation before it)
    Flush,     // answered by Ack (after every operation before it)
    Post,      // the target posted: counted at the origin
    Complete,  // the origin completed its PSCW access epoch: counted at the target
    Data,      // an answer's data (Get, GetAcc, Cas)
    Ack,       // Flush or Unlock done
    Grant,     // the lock is the origin's
    Refused,   // a Put or Acc was outside the target's memory
};

inline constexpr uint8_t kExclusive = 1;    // Lock
inline constexpr uint8_t kRefusedData = 2;  // Data: the target refused it (no data follows)

struct AmHeader {
    Am type;
    uint8_t flags;
    uint16_t nsegs;     // segments after the header
    int32_t from_rank;  // the sender's rank in the window
    uint32_t to_id;     // the receiver's TargetState
    uint32_t from_id;   // the sender's TargetState (answers go there)
    int32_t op;         // accumulates: predefined op (its handle)
    int32_t basic;      // accumulates: element type (predefined handle)
    uint64_t op_id;     // the origin's operation (Get, GetAcc, Cas and their Data)
    uint64_t offset;    // Data: where its bytes go in the operation's stream
    uint64_t bytes;     // data after the segments (Get: bytes asked for)
};
static_assert(sizeof(AmHeader) == 48, "one-sided message header");

// A piece of target memory: an offset in the window (an address for dynamic
// windows) and a length.
struct Seg {
    uint64_t disp;
    uint64_t len;
};

}  // namespace mpc::rma
