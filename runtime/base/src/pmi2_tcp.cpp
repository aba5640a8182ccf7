// The TCP side of the PMI-2 client: see runtime/pmi2_client.hpp.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/pmi2_client.hpp"

namespace mpc::runtime::pmi2 {

int connect_tcp(const std::string& address, std::string* error) {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
        *error = "PMI_PORT='" + address + "' is not host:port";
        return -1;
    }
    std::string host = address.substr(0, colon);
    const std::string port = address.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')  // [::1]:port
        host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
        *error = "cannot resolve PMI_PORT=" + address + ": " + gai_strerror(rc);
        return -1;
    }
    int fd = -1;
    std::string last_error = "no address";
    for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last_error = strerror(errno);
            continue;
        }
        int rc;
        do rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
        while (rc != 0 && errno == EINTR);
        if (rc != 0) {
            last_error = strerror(errno);
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(found);
    if (fd < 0) {
        *error = "cannot connect to the launcher at PMI_PORT=" + address + ": " + last_error;
        return -1;
    }
    // One small request, one small answer: Nagle's delay would cost each fence.
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

LauncherWatch::LauncherWatch(int fd) {
    if (pipe2(stop_pipe_, O_CLOEXEC) != 0) return;  // no watch: the node process still works
    thread_ = std::thread([fd, stop = stop_pipe_[0]] {
        // Only POLLRDHUP: answers the client is waiting for must not wake us.
        pollfd fds[2] = {{fd, POLLRDHUP, 0}, {stop, POLLIN, 0}};
        for (;;) {
            int n = poll(fds, 2, -1);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 || fds[1].revents) return;
            if (fds[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) break;
        }
        static const char text[] =
            "mpcx: the launcher closed its PMI connection (mpcrun ended); ending this node "
            "process\n";
        ssize_t ignored = write(STDERR_FILENO, text, sizeof(text) - 1);
        (void)ignored;
        _exit(1);
    });
}

LauncherWatch::~LauncherWatch() {
    if (thread_.joinable()) {
        char byte = 0;
        ssize_t ignored = write(stop_pipe_[1], &byte, 1);
        (void)ignored;
        thread_.join();
    }
    for (int fd : stop_pipe_)
        if (fd >= 0) close(fd);
}

}  // namespace mpc::runtime::pmi2
