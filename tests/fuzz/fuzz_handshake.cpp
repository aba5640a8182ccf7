// Fuzz target: the connection handshake's parsers and both of its sides
// (runtime/handshake), as every PMI and tcp connection meets them. The input
// is offered as a challenge to a connector, as a proof to an acceptor (whole,
// and prefix by prefix as bytes trickle in), as a confirm, and to the
// decoders. Properties: nothing crashes or reads past the input; no input is
// accepted as a proof or confirm (that would need the secret and this run's
// random nonce); whatever decodes re-encodes to the same bytes (one form per
// message); a proof that decodes has only plausible prefixes.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/handshake.hpp"

namespace auth = mpc::runtime::auth;

namespace {

const auth::Secret& secret() {
    static const auth::Secret s = auth::make_secret();
    return s;
}

template <class Message, size_t N>
void round_trip(const uint8_t* data, size_t size) {
    Message m;
    if (!auth::decode(data, size, &m)) return;
    uint8_t again[N];
    auth::encode(m, again);
    if (size != N || std::memcmp(again, data, N) != 0) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    round_trip<auth::Challenge, auth::kChallengeBytes>(data, size);
    round_trip<auth::Proof, auth::kProofBytes>(data, size);
    round_trip<auth::Confirm, auth::kConfirmBytes>(data, size);

    for (auth::Purpose purpose : {auth::Purpose::kPmi, auth::Purpose::kTcp}) {
        const auth::Acceptor acceptor(secret(), purpose, 3);
        int32_t who = 0;
        uint8_t confirm[auth::kConfirmBytes];
        if (acceptor.check(data, size, &who, confirm) == auth::Verdict::kAccepted) abort();
        auth::Proof p;
        const bool decodes = auth::decode(data, size, &p);
        for (size_t n = 0; n <= size && n <= auth::kProofBytes; ++n)
            if (decodes && !auth::proof_prefix_plausible(data, n)) abort();

        auth::Connector connector(secret(), purpose, 1, auth::kAnyAcceptor);
        uint8_t proof[auth::kProofBytes];
        const char* why = nullptr;
        const bool answered = connector.answer(data, size, proof, &why);
        if (!answered && !why) abort();  // a refusal always says why
        // Whatever follows the challenge is offered as the confirm.
        const size_t rest = size > auth::kChallengeBytes ? size - auth::kChallengeBytes : 0;
        if (connector.check_confirm(data + (size - rest), rest, &why)) abort();
    }
    return 0;
}
