// runtime/handshake: the challenge-response that opens every connection of a
// job (PMI to mpcrun, node process to node process in the network drivers).
//
// Three fixed-size binary messages, before anything else on the connection:
//   acceptor -> connector  Challenge (32 bytes): purpose, acceptor's id, nonce Na
//   connector -> acceptor  Proof (64 bytes): purpose, connector's id, nonce Nc,
//                          HMAC(secret, "connector" label, challenge, proof's head)
//   acceptor -> connector  Confirm (48 bytes): HMAC(secret, "acceptor" label,
//                          challenge, the whole proof)
// Both sides thus prove the secret without sending it; the proof covers the
// acceptor's fresh random nonce, so a recorded proof is worthless on another
// connection (replay), and the ids it covers say who speaks to whom (a proof
// made for one pair of node processes is refused by any other). The two labels
// differ, so a confirm cannot be passed off as a proof. Comparisons of MACs
// take constant time. A connector sends nothing else before it has checked the
// confirm; an acceptor takes nothing but the proof before checking it.
//
// Layout (multi-byte fields little-endian, reserved bytes zero):
//   0-3 magic ("MPCh" / "MPCp" / "MPCc"), 4 version (1), 5 purpose, 6-7 zero,
//   8-11 id (challenge: acceptor, proof: connector; confirm: zero), 12-15 zero,
//   16-31 nonce (challenge, proof; confirm: the MAC starts here),
//   32-63 proof's MAC.
// The parsers accept exactly this and nothing else (tests/fuzz/fuzz_handshake).
// Nothing here does I/O: callers move the bytes (blocking or from a poll loop).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "runtime/auth.hpp"

namespace mpc::runtime::auth {

enum class Purpose : uint8_t { kPmi = 1, kTcp = 2, kOfi = 3 };

constexpr size_t kNonceBytes = 16;
constexpr size_t kChallengeBytes = 32;
constexpr size_t kProofBytes = 64;
constexpr size_t kConfirmBytes = 48;
constexpr int32_t kLauncherId = -1;   // mpcrun's id as the PMI acceptor
constexpr int32_t kAnyAcceptor = -2;  // a connector that does not check the acceptor's id

using Nonce = std::array<uint8_t, kNonceBytes>;

struct Challenge {
    Purpose purpose = Purpose::kPmi;
    int32_t acceptor = 0;
    Nonce nonce{};
};
struct Proof {
    Purpose purpose = Purpose::kPmi;
    int32_t connector = 0;
    Nonce nonce{};
    Digest mac{};
};
struct Confirm {
    Digest mac{};
};

void encode(const Challenge& c, uint8_t out[kChallengeBytes]);
void encode(const Proof& p, uint8_t out[kProofBytes]);
void encode(const Confirm& c, uint8_t out[kConfirmBytes]);
// False unless `len` is the message's size and every fixed field holds what
// the layout says (magic, version, a known purpose, zero reserved bytes).
bool decode(const uint8_t* in, size_t len, Challenge* out);
bool decode(const uint8_t* in, size_t len, Proof* out);
bool decode(const uint8_t* in, size_t len, Confirm* out);

// Whether the first len bytes of a proof (any len up to kProofBytes) can
// still begin a good one: an acceptor closes a connection that speaks
// something else at once instead of waiting for all 64 bytes.
bool proof_prefix_plausible(const uint8_t* in, size_t len);

// Why an acceptor turned a proof down (refused connections are logged with it).
enum class Verdict { kAccepted, kMalformed, kWrongPurpose, kBadProof };
const char* verdict_text(Verdict v);

// The acceptor's side of one connection.
class Acceptor {
  public:
    // Draws the nonce: every Acceptor's challenge is fresh.
    Acceptor(const Secret& secret, Purpose purpose, int32_t self);
    const uint8_t* challenge() const { return challenge_; }
    // Checks the connector's proof (exactly kProofBytes expected); when it
    // is good, *connector is the id it proved and `confirm` the answer to send.
    Verdict check(const uint8_t* proof, size_t len, int32_t* connector,
                  uint8_t confirm[kConfirmBytes]) const;

  private:
    Secret secret_;
    Purpose purpose_;
    uint8_t challenge_[kChallengeBytes];
};

// The connector's side.
class Connector {
  public:
    // expected_acceptor: the id the acceptor must show (kAnyAcceptor: any).
    Connector(const Secret& secret, Purpose purpose, int32_t self, int32_t expected_acceptor);
    // From the acceptor's challenge, the proof to send; false with a reason
    // (a static string) when the challenge is malformed or not the expected one.
    bool answer(const uint8_t* challenge, size_t len, uint8_t proof[kProofBytes], const char** why);
    // After answer(): whether the acceptor's confirm proves the secret.
    bool check_confirm(const uint8_t* confirm, size_t len, const char** why) const;

  private:
    Secret secret_;
    Purpose purpose_;
    int32_t self_, expected_;
    uint8_t challenge_[kChallengeBytes] = {};
    uint8_t proof_[kProofBytes] = {};
    bool answered_ = false;
};

}  // namespace mpc::runtime::auth
