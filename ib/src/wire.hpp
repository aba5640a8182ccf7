// The wire format between node processes: one fixed header in front of every
// message. Every field is checked on receipt (ids are validated through their
// tables, never used as pointers): a corrupted or hostile packet must never
// crash the node process.
#pragma once

#include <cstdint>

namespace mpc::ib {

enum class MsgType : uint8_t {
    Eager = 1,      // header + whole payload
    FragFirst = 2,  // first fragment of a buffered-eager message: carries the match
    Frag = 3,       // later fragment: msg_id + offset
    Rts = 4,        // rendezvous request (REQ): match + size
    Cts = 5,        // rendezvous answer (ACK): where to write
    Credit = 6,     // returns credits only
    RndvData = 7,   // rendezvous data sent as messages, when a side could not
                    // register its buffer: msg_id = receiver's operation (as
                    // Cts.offset gave it), offset = where its data goes
    Rma = 8,        // a one-sided engine's message (payload: its own format)
    Bye = 9,        // the sender is shutting down: it closes once everyone said bye
};

// Header::flags of a Cts: the receiver could not register its buffer, so the
// data must come as RndvData messages (addr and rkey are meaningless).
inline constexpr uint8_t kCtsNoRdma = 1;

struct Header {
    MsgType type;
    uint8_t flags;
    uint16_t credits;     // receive-pool buffers of the receiver's returned to it
    uint32_t src_node;
    int32_t src_world;
    int32_t dst_world;
    uint32_t seq;         // per (src_world, dst_world) order of matched messages
    uint32_t context;     // match bits
    int32_t source;
    int32_t tag;
    uint64_t bytes;       // whole message size
    uint64_t msg_id;      // sender's operation (FragFirst, Frag, Rts, Cts); RndvData: receiver's
    uint64_t offset;      // Frag, RndvData: offset of its data; Cts: receiver's operation id
    uint64_t addr;        // Cts: where to write
    uint64_t rkey;        // Cts: key of that memory
    uint64_t length;      // Cts: bytes the receiver takes (truncation)
};
static_assert(sizeof(Header) == 80, "the header layout is part of the wire format");

inline bool carries_match(MsgType t) {
    return t == MsgType::Eager || t == MsgType::FragFirst || t == MsgType::Rts;
}

}  // namespace mpc::ib
