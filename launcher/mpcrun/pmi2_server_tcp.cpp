// The TCP side of mpcrun's PMI-2 server (node processes on other hosts): see
// pmi2_server.hpp.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pmi2_server.hpp"

namespace mpc::launcher {

using runtime::pmi2::Message;

namespace {

void set_nonblocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// A socket listening on every IPv6 and IPv4 address (one dual-stack socket,
// or IPv4 alone where IPv6 is off); -1 with *error.
int open_listener(int* port, std::string* error) {
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        int off = 0;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_any;
        if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
            *error = std::string("cannot open a TCP port for PMI: ") + strerror(errno);
            if (fd >= 0) close(fd);
            return -1;
        }
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    if (listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
        *error = std::string("cannot listen for PMI connections: ") + strerror(errno);
        close(fd);
        return -1;
    }
    *port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    set_nonblocking(fd);
    return fd;
}

}  // namespace

int Pmi2Server::listen_tcp(std::string* error) {
    int port = -1;
    listen_fd_ = open_listener(&port, error);
    return listen_fd_ < 0 ? -1 : port;
}

std::vector<std::pair<std::string, std::string>> Pmi2Server::tcp_environment(
    const std::string& host, int client) const {
    std::vector<std::pair<std::string, std::string>> vars = {
        {"PMI_PORT", host}, {"PMI_JOBID", jobid_}, {"PMI_SIZE", std::to_string(size())}};
    if (client >= 0) vars.emplace_back("PMI_RANK", std::to_string(client));
    return vars;
}

void Pmi2Server::accept_connections() {
    for (;;) {
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;  // EAGAIN: no more; others (EMFILE...): the next poll retries
        int one = 1;         // one small answer per request: no Nagle delay
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        size_t slot = 0;
        while (slot < pending_.size() && pending_[slot].fd >= 0) ++slot;
        if (slot == pending_.size()) pending_.emplace_back();
        pending_[slot] = Connection();
        pending_[slot].fd = fd;
    }
}

short Pmi2Server::pending_poll_events(int slot) const {
    const Connection& c = pending_[static_cast<size_t>(slot)];
    if (c.fd < 0) return 0;
    return static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT));
}

// A connection that has not said who it is: init, then fullinit names the
// client. Anything else, or a connection that ends first, is dropped without
// an event: it belongs to no node process (a port scanner, a stale job).
void Pmi2Server::handle_pending(int slot, short revents) {
    Connection& c = pending_[static_cast<size_t>(slot)];
    if (revents & POLLOUT) flush(c);
    if (!(revents & (POLLIN | POLLHUP | POLLERR))) return;
    const bool open = read_into(c);
    bool unexpected = false;
    while (c.fd >= 0 && !unexpected) {
        Message m;
        bool v1 = false;
        std::string error;
        auto r = c.decoder.next(&m, &v1, &error);
        if (r == runtime::pmi2::StreamDecoder::Result::kNeedMore) break;
        const bool message = r == runtime::pmi2::StreamDecoder::Result::kMessage;
        if (message && !v1 && m.cmd() == "fullinit") {
            identify(slot, m);  // moves the connection on, or drops it
            return;
        }
        unexpected = !(message && v1 && m.cmd() == "init" && answer_init(c, m));
    }
    if (c.fd >= 0 && (unexpected || !open)) {
        close(c.fd);
        c = Connection();
    }
}

void Pmi2Server::identify(int slot, const Message& fullinit) {
    Connection& c = pending_[static_cast<size_t>(slot)];
    long rank = -1;
    const bool known_rank = fullinit.get_int("pmirank", &rank) && rank >= 0 && rank < size();
    std::string why;
    if (fullinit.get("pmijobid") != jobid_)
        why = "it belongs to another job (pmijobid '" + fullinit.get("pmijobid") + "')";
    else if (!known_rank)
        why = "no valid pmirank in its fullinit";
    else if (clients_[static_cast<size_t>(rank)].conn.fd >= 0 ||
             clients_[static_cast<size_t>(rank)].gone)
        why = "node process " + std::to_string(rank) + " is connected already";
    if (!why.empty()) {
        Message resp("fullinit-response");
        resp.add_int("rc", 1).add("errmsg", "mpcrun refused this connection: " + why);
        std::string frame;
        if (runtime::pmi2::format_frame(resp, &frame, nullptr)) {
            c.out += frame;
            flush(c);  // best effort: the socket buffer takes one short frame
        }
        if (c.fd >= 0) close(c.fd);
        c = Connection();
        return;
    }
    Client& client = clients_[static_cast<size_t>(rank)];
    client.conn = std::move(c);
    client.tcp = true;
    c = Connection();
    const int id = static_cast<int>(rank);
    dispatch(id, fullinit, false);
    process_decoded(id);  // what it sent after fullinit without waiting
}

void Pmi2Server::close_all() {
    for (int i = 0; i < size(); ++i) close_channel(i);
    for (Connection& c : pending_)
        if (c.fd >= 0) {
            close(c.fd);
            c = Connection();
        }
    if (listen_fd_ >= 0) close(listen_fd_);
    listen_fd_ = -1;
}

}  // namespace mpc::launcher
