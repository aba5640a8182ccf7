// The TCP side of mpcrun's PMI-2 server (node processes on other hosts): see
// pmi2_server.hpp.
#include <arpa/inet.h>
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

// A socket listening on `address` (IPv4 or IPv6 text), an ephemeral port; -1
// with *error.
int open_listener(const std::string& address, int* port, std::string* error) {
    sockaddr_storage a{};
    socklen_t alen = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&a);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&a);
    if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        alen = sizeof *v4;
    } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        alen = sizeof *v6;
    } else {
        *error = "cannot listen for PMI on '" + address + "': not an IP address";
        return -1;
    }
    int fd = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), alen) != 0) {
        *error = "cannot open a TCP port for PMI on " + address + ": " + strerror(errno);
        if (fd >= 0) close(fd);
        return -1;
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

std::string peer_text(const sockaddr_storage& a) {
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (a.ss_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        port = ntohs(v4->sin_port);
    } else if (a.ss_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        port = ntohs(v6->sin6_port);
    }
    return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

int Pmi2Server::listen_tcp(const std::string& address, std::string* error) {
    int port = -1;
    listen_fd_ = open_listener(address, &port, error);
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
        sockaddr_storage from{};
        socklen_t from_len = sizeof from;
        int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) return;  // EAGAIN: no more; others (EMFILE...): the next poll retries
        int one = 1;         // one small answer per request: no Nagle delay
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        // Room for it: a free slot, else a new one, else the oldest unproven
        // connection goes (a node process proves itself within milliseconds;
        // a crowd of silent strangers must not keep it out).
        size_t slot = 0, oldest = 0;
        int open = 0;
        for (size_t i = 0; i < pending_.size(); ++i) {
            if (pending_[i].fd < 0) continue;
            ++open;
            if (pending_[oldest].fd < 0 || pending_[i].deadline < pending_[oldest].deadline)
                oldest = i;
        }
        if (open >= kMaxPending)
            refuse(pending_[oldest], "too many connections waiting to prove the job's secret");
        while (slot < pending_.size() && pending_[slot].fd >= 0) ++slot;
        if (slot == pending_.size()) pending_.emplace_back();
        Connection& c = pending_[slot];
        c = Connection();
        c.fd = fd;
        c.from = peer_text(from);
        c.deadline = Clock::now() + kHandshakeTimeout;
        start_handshake(c);
    }
}

void Pmi2Server::refuse(Connection& c, const std::string& why) {
    ++refused_;
    if (refused_ <= kLoggedRefusals) {
        std::string text = "refused a PMI connection from " + c.from + ": " + why;
        if (refused_ == kLoggedRefusals) text += " (further refusals are only counted)";
        events_.push_back({Event::Kind::kRefused, -1, 0, text});
    }
    if (c.fd >= 0) close(c.fd);
    c = Connection();
}

Pmi2Server::Clock::time_point Pmi2Server::next_deadline() const {
    Clock::time_point next = Clock::time_point::max();
    for (const Connection& c : pending_)
        if (c.fd >= 0) next = std::min(next, c.deadline);
    return next;
}

void Pmi2Server::expire(Clock::time_point now) {
    for (Connection& c : pending_)
        if (c.fd >= 0 && c.deadline <= now)
            refuse(c, c.auth ? "it did not prove the job's secret in time"
                             : "it did not name its node process in time");
}

short Pmi2Server::pending_poll_events(int slot) const {
    const Connection& c = pending_[static_cast<size_t>(slot)];
    if (c.fd < 0) return 0;
    return static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT));
}

// A connection that has not said who it is: the handshake, then init, then
// fullinit names the client. A failed proof, anything else, or a connection
// that ends first is refused (an event, no harm to the job): it belongs to no
// node process (a port scanner, a stale job, an intruder).
void Pmi2Server::handle_pending(int slot, short revents) {
    Connection& c = pending_[static_cast<size_t>(slot)];
    if (revents & POLLOUT) flush(c);
    if (!(revents & (POLLIN | POLLHUP | POLLERR))) return;
    std::string why;
    const Read r = read_into(c, -1, &why);
    if (r == Read::kRefused) {
        refuse(c, why);
        return;
    }
    bool unexpected = false;
    while (c.fd >= 0 && !unexpected) {
        Message m;
        bool v1 = false;
        std::string error;
        auto d = c.decoder.next(&m, &v1, &error);
        if (d == runtime::pmi2::StreamDecoder::Result::kNeedMore) break;
        const bool message = d == runtime::pmi2::StreamDecoder::Result::kMessage;
        if (message && !v1 && m.cmd() == "fullinit") {
            identify(slot, m);  // moves the connection on, or drops it
            return;
        }
        unexpected = !(message && v1 && m.cmd() == "init" && answer_init(c, m));
    }
    if (c.fd >= 0 && unexpected) {
        refuse(c, "it sent something else than PMI-2's init and fullinit");
    } else if (c.fd >= 0 && r == Read::kClosed) {
        refuse(c, c.auth ? "it closed the connection before proving the job's secret"
                         : "it closed the connection before its fullinit");
    }
}

void Pmi2Server::identify(int slot, const Message& fullinit) {
    Connection& c = pending_[static_cast<size_t>(slot)];
    long rank = -1;
    const bool known_rank = fullinit.get_int("pmirank", &rank) && rank >= 0 && rank < size();
    std::string why;
    if (rank != c.proven)
        why = "its fullinit names node process " + std::to_string(rank) + ", its proof " +
              std::to_string(c.proven);
    else if (fullinit.get("pmijobid") != jobid_)
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
        refuse(c, why);
        return;
    }
    Client& client = clients_[static_cast<size_t>(rank)];
    client.conn = std::move(c);
    client.conn.deadline = Clock::time_point::max();
    client.tcp = true;
    c = Connection();
    const int id = static_cast<int>(rank);
    dispatch(id, fullinit, false);
    process_decoded(id);  // what it sent after fullinit without waiting
    // Everyone is here: nobody else has a reason to connect.
    bool all = true;
    for (const Client& other : clients_) all = all && (other.conn.fd >= 0 || other.gone);
    if (all && listen_fd_ >= 0) {
        close(listen_fd_);
        listen_fd_ = -1;
    }
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
