// The connection handshake's messages and both sides: see runtime/handshake.hpp.
#include "runtime/handshake.hpp"

#include <cstring>

namespace mpc::runtime::auth {
namespace {

constexpr uint8_t kVersion = 1;
constexpr char kChallengeMagic[4] = {'M', 'P', 'C', 'h'};
constexpr char kProofMagic[4] = {'M', 'P', 'C', 'p'};
constexpr char kConfirmMagic[4] = {'M', 'P', 'C', 'c'};
constexpr char kConnectorLabel[] = "fibermpi-auth-1 connector";
constexpr char kAcceptorLabel[] = "fibermpi-auth-1 acceptor";
constexpr size_t kHead = 16;  // magic, version, purpose, id and reserved bytes

void put_le32(uint8_t* p, int32_t v) {
    const auto u = static_cast<uint32_t>(v);
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(u >> (8 * i));
}

int32_t get_le32(const uint8_t* p) {
    uint32_t u = 0;
    for (int i = 0; i < 4; ++i) u |= static_cast<uint32_t>(p[i]) << (8 * i);
    return static_cast<int32_t>(u);
}

bool known_purpose(uint8_t p) {
    return p >= static_cast<uint8_t>(Purpose::kPmi) && p <= static_cast<uint8_t>(Purpose::kOfi);
}

void put_head(uint8_t* out, const char magic[4], Purpose purpose, int32_t id) {
    std::memset(out, 0, kHead);
    std::memcpy(out, magic, 4);
    out[4] = kVersion;
    out[5] = static_cast<uint8_t>(purpose);
    put_le32(out + 8, id);
}

// The fixed fields of a head: magic, version, purpose (unless confirm), zeros.
bool check_head(const uint8_t* in, const char magic[4], bool with_purpose) {
    if (std::memcmp(in, magic, 4) != 0 || in[4] != kVersion) return false;
    if (with_purpose ? !known_purpose(in[5]) : in[5] != 0) return false;
    if (in[6] | in[7] | in[12] | in[13] | in[14] | in[15]) return false;
    return with_purpose || (in[8] | in[9] | in[10] | in[11]) == 0;
}

Digest connector_mac(const Secret& s, const uint8_t* challenge, const uint8_t* proof) {
    return Hmac(s.bytes.data(), s.bytes.size())
        .update(kConnectorLabel, sizeof kConnectorLabel)
        .update(challenge, kChallengeBytes)
        .update(proof, kHead + kNonceBytes)
        .finish();
}

Digest acceptor_mac(const Secret& s, const uint8_t* challenge, const uint8_t* proof) {
    return Hmac(s.bytes.data(), s.bytes.size())
        .update(kAcceptorLabel, sizeof kAcceptorLabel)
        .update(challenge, kChallengeBytes)
        .update(proof, kProofBytes)
        .finish();
}

}  // namespace

void encode(const Challenge& c, uint8_t out[kChallengeBytes]) {
    put_head(out, kChallengeMagic, c.purpose, c.acceptor);
    std::memcpy(out + kHead, c.nonce.data(), kNonceBytes);
}

void encode(const Proof& p, uint8_t out[kProofBytes]) {
    put_head(out, kProofMagic, p.purpose, p.connector);
    std::memcpy(out + kHead, p.nonce.data(), kNonceBytes);
    std::memcpy(out + kHead + kNonceBytes, p.mac.data(), kDigestBytes);
}

void encode(const Confirm& c, uint8_t out[kConfirmBytes]) {
    std::memset(out, 0, kHead);
    std::memcpy(out, kConfirmMagic, 4);
    out[4] = kVersion;
    std::memcpy(out + kHead, c.mac.data(), kDigestBytes);
}

bool decode(const uint8_t* in, size_t len, Challenge* out) {
    if (len != kChallengeBytes || !check_head(in, kChallengeMagic, true)) return false;
    out->purpose = static_cast<Purpose>(in[5]);
    out->acceptor = get_le32(in + 8);
    std::memcpy(out->nonce.data(), in + kHead, kNonceBytes);
    return true;
}

bool decode(const uint8_t* in, size_t len, Proof* out) {
    if (len != kProofBytes || !check_head(in, kProofMagic, true)) return false;
    out->purpose = static_cast<Purpose>(in[5]);
    out->connector = get_le32(in + 8);
    std::memcpy(out->nonce.data(), in + kHead, kNonceBytes);
    std::memcpy(out->mac.data(), in + kHead + kNonceBytes, kDigestBytes);
    return true;
}

bool decode(const uint8_t* in, size_t len, Confirm* out) {
    if (len != kConfirmBytes || !check_head(in, kConfirmMagic, false)) return false;
    std::memcpy(out->mac.data(), in + kHead, kDigestBytes);
    return true;
}

bool proof_prefix_plausible(const uint8_t* in, size_t len) {
    for (size_t i = 0; i < len && i < kHead; ++i) {
        bool ok = true;
        if (i < 4)
            ok = in[i] == static_cast<uint8_t>(kProofMagic[i]);
        else if (i == 4)
            ok = in[i] == kVersion;
        else if (i == 5)
            ok = known_purpose(in[i]);
        else if (i == 6 || i == 7 || i >= 12)
            ok = in[i] == 0;
        if (!ok) return false;
    }
    return true;
}

const char* verdict_text(Verdict v) {
    switch (v) {
        case Verdict::kAccepted:
            return "accepted";
        case Verdict::kMalformed:
            return "not a handshake of this job's version";
        case Verdict::kWrongPurpose:
            return "a handshake meant for another kind of connection";
        case Verdict::kBadProof:
            return "its proof of the job's secret is wrong";
    }
    return "?";
}

Acceptor::Acceptor(const Secret& secret, Purpose purpose, int32_t self)
    : secret_(secret), purpose_(purpose) {
    Challenge c;
    c.purpose = purpose;
    c.acceptor = self;
    random_bytes(c.nonce.data(), c.nonce.size());
    encode(c, challenge_);
}

Verdict Acceptor::check(const uint8_t* proof, size_t len, int32_t* connector,
                        uint8_t confirm[kConfirmBytes]) const {
    Proof p;
    if (!decode(proof, len, &p)) return Verdict::kMalformed;
    if (p.purpose != purpose_) return Verdict::kWrongPurpose;
    const Digest expected = connector_mac(secret_, challenge_, proof);
    if (!equal(expected.data(), p.mac.data(), kDigestBytes)) return Verdict::kBadProof;
    *connector = p.connector;
    Confirm c;
    c.mac = acceptor_mac(secret_, challenge_, proof);
    encode(c, confirm);
    return Verdict::kAccepted;
}

Connector::Connector(const Secret& secret, Purpose purpose, int32_t self, int32_t expected)
    : secret_(secret), purpose_(purpose), self_(self), expected_(expected) {}

bool Connector::answer(const uint8_t* challenge, size_t len, uint8_t proof[kProofBytes],
                       const char** why) {
    Challenge c;
    if (!decode(challenge, len, &c)) {
        *why = "the peer's challenge is malformed (not a fibermpi process of this version?)";
        return false;
    }
    if (c.purpose != purpose_) {
        *why = "the peer's challenge is for another kind of connection";
        return false;
    }
    if (expected_ != kAnyAcceptor && c.acceptor != expected_) {
        *why = "the peer is not the process this connection was meant for";
        return false;
    }
    std::memcpy(challenge_, challenge, kChallengeBytes);
    Proof p;
    p.purpose = purpose_;
    p.connector = self_;
    random_bytes(p.nonce.data(), p.nonce.size());
    encode(p, proof_);  // the MAC covers the head and nonce just encoded
    p.mac = connector_mac(secret_, challenge_, proof_);
    encode(p, proof_);
    std::memcpy(proof, proof_, kProofBytes);
    answered_ = true;
    return true;
}

bool Connector::check_confirm(const uint8_t* confirm, size_t len, const char** why) const {
    Confirm c;
    if (!answered_ || !decode(confirm, len, &c)) {
        *why = "the peer's answer to our proof is malformed";
        return false;
    }
    const Digest expected = acceptor_mac(secret_, challenge_, proof_);
    if (!equal(expected.data(), c.mac.data(), kDigestBytes)) {
        *why = "the peer does not know the job's secret";
        return false;
    }
    return true;
}

}  // namespace mpc::runtime::auth
