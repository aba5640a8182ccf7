// Fuzz target: mpcrun's PMI-2 server (launcher/mpcrun/pmi2_server) reading
// whatever its node processes send: init lines, frames, commands in any order
// and any state (fences, puts, gets, aborts, finalize), garbage, clients that
// vanish. Property: the server never crashes, whatever the bytes.
//
// Input: records [client byte][length byte][bytes]; client bit 7 set means
// "this client exits now".
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "pmi2_server.hpp"

using mpc::launcher::Pmi2Server;

namespace {

constexpr int kClients = 3;

void drain(int fd) {
    char buf[4096];
    while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Pmi2Server server(kClients, "fuzz-job");
    int ends[kClients];
    for (int i = 0; i < kClients; ++i) {
        std::string error;
        ends[i] = dup(server.open_channel(i, &error));
        server.close_child_end(i);
    }
    size_t at = 0;
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
        server.take_events();
    }
    for (int i = 0; i < kClients; ++i) {
        if (ends[i] >= 0) close(ends[i]);
        if (server.fd(i) >= 0) server.client_exited(i, true);
    }
    server.take_events();
    return 0;
}
