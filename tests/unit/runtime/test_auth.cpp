// runtime/auth and runtime/handshake: SHA-256 against FIPS 180-4's examples,
// HMAC-SHA-256 against RFC 4231, the secret's text form, and the handshake:
// accepted with the secret, refused without it, with another one, with a
// proof replayed from another connection, with any byte changed.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "runtime/auth.hpp"
#include "runtime/handshake.hpp"

using namespace mpc::runtime::auth;
namespace auth = mpc::runtime::auth;

namespace {

std::string hex(const Digest& d) {
    return to_hex(d.data(), d.size());
}

std::string hmac_hex(const std::string& key, const std::string& data) {
    return hex(Hmac(key.data(), key.size()).update(data.data(), data.size()).finish());
}

Secret secret_of(uint8_t fill) {
    Secret s;
    s.bytes.fill(fill);
    return s;
}

// One handshake: the connector's proof for this acceptor's challenge.
void prove(Connector& c, const Acceptor& a, uint8_t proof[kProofBytes]) {
    const char* why = nullptr;
    REQUIRE(c.answer(a.challenge(), kChallengeBytes, proof, &why));
}

}  // namespace

TEST_CASE("SHA-256 gives the FIPS 180-4 example digests", "[auth]") {
    CHECK(hex(sha256("abc", 3)) ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(hex(sha256("", 0)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK(hex(sha256(two_blocks.data(), two_blocks.size())) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // A million 'a' fed in uneven pieces: the buffering across updates.
    Sha256 h;
    const std::string piece(997, 'a');
    size_t fed = 0;
    while (fed + piece.size() <= 1000000) {
        h.update(piece.data(), piece.size());
        fed += piece.size();
    }
    h.update(piece.data(), 1000000 - fed);
    CHECK(hex(h.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 pads at every length around a block's end", "[auth]") {
    // The length fits in the last block (55), needs another (56, 63, 64, 119,
    // 120), or the message fills whole blocks; digests from Python's hashlib.
    const std::pair<size_t, const char*> cases[] = {
        {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
        {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
        {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
        {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
        {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
        {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
        {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
    };
    for (const auto& [n, digest] : cases) {
        const std::string text(n, 'x');
        CHECK(hex(sha256(text.data(), n)) == digest);
        Sha256 split;  // the same bytes in two updates
        split.update(text.data(), n / 3);
        split.update(text.data() + n / 3, n - n / 3);
        CHECK(hex(split.finish()) == digest);
    }
}

TEST_CASE("HMAC-SHA-256 gives the RFC 4231 results", "[auth]") {
    CHECK(hmac_hex(std::string(20, '\x0b'), "Hi There") ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK(hmac_hex("Jefe", "what do ya want for nothing?") ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(hmac_hex(std::string(20, '\xaa'), std::string(50, '\xdd')) ==
          "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    std::string key4;
    for (int i = 1; i <= 25; ++i) key4.push_back(static_cast<char>(i));
    CHECK(hmac_hex(key4, std::string(50, '\xcd')) ==
          "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    // Keys longer than a block are hashed first (cases 6 and 7).
    CHECK(hmac_hex(std::string(131, '\xaa'),
                   "Test Using Larger Than Block-Size Key - Hash Key First") ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    CHECK(hmac_hex(std::string(131, '\xaa'),
                   "This is a test using a larger than block-size key and a larger than "
                   "block-size data. The key needs to be hashed before being used by the HMAC "
                   "algorithm.") ==
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST_CASE("a secret survives its text form, and only exact text parses", "[auth]") {
    const Secret s = make_secret();
    const std::string text = to_hex(s.bytes.data(), s.bytes.size());
    REQUIRE(text.size() == 64);
    Secret back;
    REQUIRE(secret_from_hex(text, &back));
    CHECK(back.bytes == s.bytes);
    CHECK_FALSE(secret_from_hex(text.substr(1), &back));
    CHECK_FALSE(secret_from_hex(text + "0", &back));
    CHECK_FALSE(secret_from_hex(std::string(63, '0') + "g", &back));
    // Two secrets drawn one after the other differ (256 random bits each).
    CHECK(make_secret().bytes != make_secret().bytes);
}

TEST_CASE("the secret is taken out of the environment", "[auth]") {
    const Secret s = secret_of(0x5a);
    const std::string text = to_hex(s.bytes.data(), s.bytes.size());
    setenv(kSecretVariable, text.c_str(), 1);
    Secret got;
    REQUIRE(take_secret_from_environment(&got));
    CHECK(got.bytes == s.bytes);
    CHECK(getenv(kSecretVariable) == nullptr);
    CHECK_FALSE(take_secret_from_environment(&got));
}

TEST_CASE("equal compares every byte", "[auth]") {
    uint8_t a[32] = {}, b[32] = {};
    CHECK(equal(a, b, 32));
    for (int i = 0; i < 32; ++i) {
        b[i] = 1;
        CHECK_FALSE(equal(a, b, 32));
        b[i] = 0;
    }
}

TEST_CASE("a handshake with the job's secret is accepted on both sides", "[auth]") {
    const Secret s = make_secret();
    Acceptor a(s, Purpose::kTcp, 3);
    Connector c(s, Purpose::kTcp, 1, 3);
    uint8_t proof[kProofBytes], confirm[kConfirmBytes];
    prove(c, a, proof);
    int32_t who = -7;
    REQUIRE(a.check(proof, sizeof proof, &who, confirm) == Verdict::kAccepted);
    CHECK(who == 1);
    const char* why = nullptr;
    CHECK(c.check_confirm(confirm, sizeof confirm, &why));
    // The secret is nowhere in what crossed the wire.
    const std::string wire =
        std::string(reinterpret_cast<const char*>(a.challenge()), kChallengeBytes) +
        std::string(reinterpret_cast<char*>(proof), sizeof proof) +
        std::string(reinterpret_cast<char*>(confirm), sizeof confirm);
    CHECK(wire.find(std::string(reinterpret_cast<const char*>(s.bytes.data()), 8)) ==
          std::string::npos);
}

TEST_CASE("a handshake without the secret, or with another one, is refused", "[auth]") {
    const Secret s = make_secret();
    Acceptor a(s, Purpose::kPmi, kLauncherId);
    uint8_t proof[kProofBytes], confirm[kConfirmBytes];
    int32_t who = 0;
    Connector stranger(make_secret(), Purpose::kPmi, 0, kLauncherId);
    prove(stranger, a, proof);
    CHECK(a.check(proof, sizeof proof, &who, confirm) == Verdict::kBadProof);
    // A connector refuses a confirm made for another handshake (with another
    // secret): only the acceptor of its own challenge, knowing the secret, can answer.
    const auth::Secret other = make_secret();
    Acceptor liar(other, Purpose::kPmi, kLauncherId);
    Connector accomplice(other, Purpose::kPmi, 0, kLauncherId);
    prove(accomplice, liar, proof);
    REQUIRE(liar.check(proof, sizeof proof, &who, confirm) == Verdict::kAccepted);
    Connector mine(s, Purpose::kPmi, 0, kLauncherId);
    uint8_t mine_proof[kProofBytes], unused[kConfirmBytes];
    prove(mine, liar, mine_proof);
    CHECK(liar.check(mine_proof, sizeof mine_proof, &who, unused) == Verdict::kBadProof);
    const char* why = nullptr;
    CHECK_FALSE(mine.check_confirm(confirm, sizeof confirm, &why));
    CHECK(std::string(why) == "the peer does not know the job's secret");
}

TEST_CASE("a proof replayed on another connection is refused", "[auth]") {
    const Secret s = make_secret();
    Acceptor first(s, Purpose::kTcp, 2), second(s, Purpose::kTcp, 2);
    Connector c(s, Purpose::kTcp, 0, 2);
    uint8_t proof[kProofBytes], confirm[kConfirmBytes];
    prove(c, first, proof);
    int32_t who = 0;
    REQUIRE(first.check(proof, sizeof proof, &who, confirm) == Verdict::kAccepted);
    CHECK(second.check(proof, sizeof proof, &who, confirm) == Verdict::kBadProof);
    // Nor is a proof for another acceptor id or purpose answered at all.
    Connector wrong_peer(s, Purpose::kTcp, 0, 1);
    const char* why = nullptr;
    CHECK_FALSE(wrong_peer.answer(second.challenge(), kChallengeBytes, proof, &why));
    Connector wrong_kind(s, Purpose::kPmi, 0, kAnyAcceptor);
    CHECK_FALSE(wrong_kind.answer(second.challenge(), kChallengeBytes, proof, &why));
}

TEST_CASE("any changed byte of a proof or confirm is refused", "[auth]") {
    const Secret s = make_secret();
    Acceptor a(s, Purpose::kOfi, 5);
    Connector c(s, Purpose::kOfi, 4, 5);
    uint8_t proof[kProofBytes], confirm[kConfirmBytes];
    prove(c, a, proof);
    int32_t who = 0;
    REQUIRE(a.check(proof, sizeof proof, &who, confirm) == Verdict::kAccepted);
    for (size_t i = 0; i < kProofBytes; ++i) {
        uint8_t changed[kProofBytes], unused[kConfirmBytes];
        std::memcpy(changed, proof, sizeof changed);
        changed[i] ^= 0x20;
        CHECK(a.check(changed, sizeof changed, &who, unused) != Verdict::kAccepted);
    }
    const char* why = nullptr;
    for (size_t i = 0; i < kConfirmBytes; ++i) {
        uint8_t changed[kConfirmBytes];
        std::memcpy(changed, confirm, sizeof changed);
        changed[i] ^= 0x01;
        CHECK_FALSE(c.check_confirm(changed, sizeof changed, &why));
    }
    CHECK(a.check(proof, sizeof proof - 1, &who, confirm) == Verdict::kMalformed);
    CHECK(c.check_confirm(confirm, sizeof confirm, &why));
}

TEST_CASE("handshake messages encode and decode field by field", "[auth]") {
    Challenge ch;
    ch.purpose = Purpose::kTcp;
    ch.acceptor = -1;
    ch.nonce.fill(9);
    uint8_t buf[kChallengeBytes];
    encode(ch, buf);
    Challenge back;
    REQUIRE(decode(buf, sizeof buf, &back));
    CHECK(back.acceptor == -1);
    CHECK(back.purpose == Purpose::kTcp);
    CHECK(back.nonce == ch.nonce);
    buf[6] = 1;  // a reserved byte
    CHECK_FALSE(decode(buf, sizeof buf, &back));
    buf[6] = 0;
    buf[5] = 9;  // no such purpose
    CHECK_FALSE(decode(buf, sizeof buf, &back));
    Proof p;
    CHECK_FALSE(decode(buf, sizeof buf, &p));  // a challenge is not a proof
}
