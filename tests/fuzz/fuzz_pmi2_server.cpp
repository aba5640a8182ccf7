// Fuzz target: mpcrun's PMI-2 server (launcher/mpcrun/pmi2_server) reading
// whatever its node processes send: the handshake's proof (or anything in its
// place), init lines, frames, commands in any order and any state (fences,
// puts, gets, aborts, finalize), garbage, clients that vanish. Property: the
// server never crashes, whatever the bytes, and never takes a client that
// did not prove the secret as connected.
//
// Input: a first byte whose bit i says client i proves the job's secret
// before its bytes (else its bytes meet the handshake), then records [client
// byte][length byte][bytes]; client bit 7 set means "this client exits now".
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "pmi2_server.hpp"
#include "runtime/handshake.hpp"

using mpc::launcher::Pmi2Server;
namespace auth = mpc::runtime::auth;

namespace {

constexpr int kClients = 3;

const auth::Secret& secret() {
    static const auth::Secret s = [] {
        auth::Secret fixed;
        fixed.bytes.fill(0x42);
        return fixed;
    }();
    return s;
}

// The client's proof for the challenge waiting in its socket.
void prove(Pmi2Server& server, int client, int fd) {
    uint8_t challenge[auth::kChallengeBytes], proof[auth::kProofBytes];
    if (recv(fd, challenge, sizeof challenge, MSG_DONTWAIT) != sizeof challenge) abort();
    auth::Connector c(secret(), auth::Purpose::kPmi, client, auth::kLauncherId);
    const char* why = nullptr;
    if (!c.answer(challenge, sizeof challenge, proof, &why)) abort();
    send(fd, proof, sizeof proof, MSG_NOSIGNAL | MSG_DONTWAIT);
    server.handle(client, POLLIN);
}

void drain(int fd) {
    char buf[4096];
    while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t proving = data[0];
    Pmi2Server server(kClients, "fuzz-job", secret());
    int ends[kClients];
    for (int i = 0; i < kClients; ++i) {
        std::string error;
        ends[i] = dup(server.open_channel(i, &error));
        server.close_child_end(i);
        if (proving & (1 << i)) prove(server, i, ends[i]);
    }
    size_t at = 1;
    while (at + 2 <= size) {
        const int client = (data[at] & 0x7f) % kClients;
        const bool exits = data[at] & 0x80;
        const size_t len = std::min<size_t>(data[at + 1], size - at - 2);
        const uint8_t* bytes = data + at + 2;
        at += 2 + len;
        if (ends[client] < 0) continue;
        if (len) send(ends[client], bytes, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (exits) {
            close(ends[client]);
            ends[client] = -1;
            server.client_exited(client, false);
        } else if (server.fd(client) >= 0) {
            server.handle(client, POLLIN | POLLOUT);
        }
        for (int i = 0; i < kClients; ++i)
            if (ends[i] >= 0) drain(ends[i]);
        // An abort is a PMI command: only a client that proved may send one.
        for (const auto& e : server.take_events())
            if (e.kind == Pmi2Server::Event::Kind::kAbort && !(proving & (1 << e.client))) abort();
    }
    for (int i = 0; i < kClients; ++i) {
        if (ends[i] >= 0) close(ends[i]);
        if (server.fd(i) >= 0) server.client_exited(i, true);
    }
    server.take_events();
    return 0;
}
