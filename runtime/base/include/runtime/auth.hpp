// runtime/auth: the job secret and the keyed hash that proves knowledge of it.
//
// Every connection of a job (PMI, network drivers) proves that its ends know
// the job's secret (runtime/handshake.hpp); the secret itself never crosses
// the wire. This room has the pieces: SHA-256 and HMAC-SHA-256 (FIPS 180-4,
// RFC 2104; written here rather than linked from a crypto library, so that
// every MPI program does not load one for two small functions), random bytes
// from the kernel (getrandom), a comparison whose time does not depend on
// where two strings differ, and the secret's text form.
//
// mpcrun makes the secret and hands it to node processes in kSecretVariable
// (environment of local forks and of srun; the remote shell's standard input
// for ssh, read into the variable by the shell before the program starts).
// Nothing here may print a secret or put one on a command line.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mpc::runtime::auth {

constexpr size_t kDigestBytes = 32;
using Digest = std::array<uint8_t, kDigestBytes>;

class Sha256 {
  public:
    Sha256();
    void update(const void* data, size_t len);
    Digest finish();  // the object is spent afterwards

  private:
    void compress(const uint8_t* block);
    uint32_t state_[8];
    uint64_t total_ = 0;  // bytes hashed
    uint8_t buffer_[64];
    size_t used_ = 0;
};

Digest sha256(const void* data, size_t len);

// HMAC-SHA-256 over whatever update() is given.
class Hmac {
  public:
    Hmac(const void* key, size_t key_len);
    Hmac& update(const void* data, size_t len) {
        inner_.update(data, len);
        return *this;
    }
    Digest finish();

  private:
    Sha256 inner_, outer_;
};

// A job's secret: 256 random bits.
constexpr size_t kSecretBytes = 32;
struct Secret {
    std::array<uint8_t, kSecretBytes> bytes{};
};

// The variable that carries the secret (64 hex digits) to a node process.
constexpr const char* kSecretVariable = "MPC_JOB_SECRET";

// len random bytes from the kernel (getrandom, else /dev/urandom); ends the
// process with a message when neither works (nothing here can go on without).
void random_bytes(void* out, size_t len);
Secret make_secret();

// Lower-case hex, and its strict inverse (exactly 2 * kSecretBytes digits).
std::string to_hex(const void* data, size_t len);
bool secret_from_hex(std::string_view text, Secret* out);

// Reads kSecretVariable and removes it from the environment (programs the
// ranks start must not inherit it); false when unset. A malformed value is
// fatal: the launcher and the node process disagree.
bool take_secret_from_environment(Secret* out);

// True when the n bytes at a and b are equal; takes the same time wherever
// they differ (a proof checked byte by byte would tell a guesser how far it got).
bool equal(const void* a, const void* b, size_t n);

}  // namespace mpc::runtime::auth
