// Fuzz target: the PMI-2 client of a node process (runtime/pmi2_client)
// during its handshake (init, fullinit, job-getid), reading whatever a
// launcher answers. Property: it either connects with a valid rank and size
// or returns an error; it never crashes or reads past what it was sent.
//
// Input: the launcher's answers, as bytes on the connection.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/pmi2_client.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 60000) return 0;  // fits in the socket buffer: the writes below never block
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(sv[1], data + done, size - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
    }
    shutdown(sv[1], SHUT_WR);  // then the end of stream, never a hang
    std::string error;
    mpc::runtime::pmi2::ClientOptions options;
    options.fd = sv[0];
    options.jobid = "fuzz-job";
    options.rank = 1;
    auto boot = mpc::runtime::pmi2::connect(options, &error);
    if (boot && (boot->rank() < 0 || boot->rank() >= boot->size())) abort();
    boot.reset();  // closes sv[0]
    close(sv[1]);
    return 0;
}
