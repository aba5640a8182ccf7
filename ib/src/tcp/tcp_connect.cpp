// Opening the tcp driver and connecting node processes. A listening socket
// exists from open on; connect_all has each node process connect to every
// higher-numbered one and accept the lower-numbered ones, so every pair is
// connected once and nobody waits for someone who waits for them (connects
// complete in the listener's backlog). The connector's first bytes name it.
//
// The published address is "ip:port". The ip: the IPv4 address of the
// interface MPC_NET_IF names, else of the first interface that is up and not
// loopback, else 127.0.0.1 (a host without a network still runs jobs).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../hello.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "tcp_driver.hpp"

namespace mpc::ib::tcp {

namespace {

std::string errno_text(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

// The address peers reach this node at; empty with *error set on failure.
std::string host_address(std::string* error) {
    const char* wanted = runtime::env::get("MPC_NET_IF");
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) {
        *error = errno_text("getifaddrs");
        return {};
    }
    std::string found;
    for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        if (wanted ? std::strcmp(i->ifa_name, wanted) != 0 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        char text[INET_ADDRSTRLEN];
        auto* in = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
        if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text)) found = text;
    }
    freeifaddrs(list);
    if (found.empty() && wanted) {
        *error = std::string("MPC_NET_IF=") + wanted + ": no such interface with an IPv4 address";
        return {};
    }
    return found.empty() ? "127.0.0.1" : found;
}

bool parse_address(const std::string& text, sockaddr_in* out) {
    auto colon = text.rfind(':');
    if (colon == std::string::npos) return false;
    std::memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    char* end = nullptr;
    unsigned long port = std::strtoul(text.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port == 0 || port > 65535) return false;
    out->sin_port = htons(static_cast<uint16_t>(port));
    return inet_pton(AF_INET, text.substr(0, colon).c_str(), &out->sin_addr) == 1;
}

// Moves exactly len bytes on a blocking socket; false on error or deadline.
bool send_all(int fd, const void* data, size_t len) {
    auto* p = static_cast<const char*>(data);
    while (len > 0) {
        ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

bool recv_all(int fd, void* data, size_t len, int64_t deadline) {
    auto* p = static_cast<char*>(data);
    while (len > 0) {
        const int64_t left_ms = (deadline - runtime::now_ns()) / 1000000;
        pollfd pfd{fd, POLLIN, 0};
        if (left_ms <= 0 || poll(&pfd, 1, static_cast<int>(left_ms)) <= 0) return false;
        ssize_t n = ::recv(fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return false;
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

std::unique_ptr<Driver> TcpDriver::open(const DriverConfig& config, std::string* error) {
    if (!config.valid()) {
        *error = "tcp: invalid driver configuration";
        return nullptr;
    }
    std::unique_ptr<TcpDriver> driver(new TcpDriver(config));
    if (!driver->init(error)) {
        *error = "tcp: " + *error;
        return nullptr;
    }
    return driver;
}

TcpDriver::~TcpDriver() = default;

bool TcpDriver::init(std::string* error) {
    pool_ = BufferBlock(static_cast<size_t>(config_.recv_buffers) * config_.recv_buffer_size);
    if (!pool_) {
        *error = "cannot allocate the receive pool";
        return false;
    }
    // Every buffer is posted from the start, as in the other drivers.
    free_buffers_.reserve(config_.recv_buffers);
    for (uint32_t i = config_.recv_buffers; i-- > 0;) free_buffers_.push_back(i);
    sent_.resize(static_cast<size_t>(config_.send_queue_depth) * config_.num_peers);
    connections_.resize(static_cast<size_t>(config_.num_peers));
    ready_epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    if (!ready_epoll_) {
        *error = errno_text("epoll_create1");
        return false;
    }
    if (!wakeup_.open(error)) return false;
    return listen(error);
}

bool TcpDriver::listen(std::string* error) {
    std::string host = host_address(error);
    if (host.empty()) return false;
    listen_fd_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listen_fd_) {
        *error = errno_text("socket");
        return false;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_.get(), SOMAXCONN) != 0 ||
        ::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        *error = errno_text("listening socket");
        return false;
    }
    local_address_ = host + ":" + std::to_string(ntohs(addr.sin_port));
    return true;
}

Status TcpDriver::connect_all(const std::vector<std::string>& addresses) {
    const int self = config_.self;
    if (addresses.size() != static_cast<size_t>(config_.num_peers)) {
        runtime::warn("tcp: connect_all got %zu addresses for %d node processes", addresses.size(),
                      config_.num_peers);
        return Status::Error;
    }
    const double timeout_s = runtime::env::get_seconds("MPC_CONNECT_TIMEOUT", 60.0);
    const int64_t deadline = runtime::now_ns() + static_cast<int64_t>(timeout_s * 1e9);
    std::string error;
    for (int peer = self + 1; peer < config_.num_peers; ++peer) {
        sockaddr_in addr;
        if (!parse_address(addresses[peer], &addr)) {
            runtime::warn("tcp: malformed address for node %d: '%s'", peer,
                          addresses[peer].c_str());
            return Status::Error;
        }
        auto conn = std::make_unique<Connection>();
        conn->peer = peer;
        // A refused connect is retried: the peer may not listen yet when it
        // published its address through a slower path.
        for (;;) {
            conn->fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
            if (conn->fd &&
                ::connect(conn->fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
                break;
            const int err = errno;
            if ((err != ECONNREFUSED && err != EINTR) || runtime::now_ns() > deadline) {
                runtime::warn("tcp: connecting to node %d at %s: %s", peer, addresses[peer].c_str(),
                              std::strerror(err));
                return Status::Error;
            }
            usleep(10000);
        }
        Hello hello{kHelloMagic, self};
        if (!send_all(conn->fd.get(), &hello, sizeof hello)) {
            runtime::warn("tcp: %s (node %d)", errno_text("greeting").c_str(), peer);
            return Status::Error;
        }
        connections_[peer] = std::move(conn);
    }
    if (accept_lower(self, deadline, &error) != Status::Ok) {
        runtime::warn("tcp: node %d: %s (MPC_CONNECT_TIMEOUT=%g)", self, error.c_str(), timeout_s);
        return Status::Error;
    }
    listen_fd_ = UniqueFd();  // every pair is connected: nobody else may come
    for (auto& conn : connections_)
        if (conn && !ready_connection(*conn, &error)) {
            runtime::warn("tcp: node %d: %s", self, error.c_str());
            return Status::Error;
        }
    return Status::Ok;
}

// Accepts the connections of the `expected` lower-numbered node processes.
Status TcpDriver::accept_lower(int expected, int64_t deadline, std::string* error) {
    for (int accepted = 0; accepted < expected;) {
        const int64_t left_ms = (deadline - runtime::now_ns()) / 1000000;
        pollfd pfd{listen_fd_.get(), POLLIN, 0};
        const int ready = left_ms > 0 ? poll(&pfd, 1, static_cast<int>(left_ms)) : 0;
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            *error = std::to_string(accepted) + " of " + std::to_string(expected) +
                     " lower node processes connected before the deadline";
            return Status::Error;
        }
        UniqueFd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!fd) continue;
        Hello hello{};
        if (!recv_all(fd.get(), &hello, sizeof hello, deadline) ||
            !hello_from_lower(hello, config_.self) || connections_[hello.node]) {
            runtime::warn("tcp: rejecting an unexpected connection (node %d)", hello.node);
            continue;
        }
        auto conn = std::make_unique<Connection>();
        conn->peer = hello.node;
        conn->fd = std::move(fd);
        connections_[hello.node] = std::move(conn);
        ++accepted;
    }
    return Status::Ok;
}

// Switches a connected socket to the data path: no Nagle delay, watched by
// wait() and by the set that tells polls which sockets have data.
bool TcpDriver::ready_connection(Connection& conn, std::string* error) {
    const int fd = conn.fd.get();
    int one = 1;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
        *error = errno_text("TCP_NODELAY");
        return false;
    }
    conn.in.stage = std::make_unique<char[]>(kStageBytes);
    peers_.push_back(&conn);
    if (!wakeup_.add(fd, error)) return false;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(conn.peer);
    if (epoll_ctl(ready_epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
        *error = errno_text("epoll for the sockets");
        return false;
    }
    return true;
}

}  // namespace mpc::ib::tcp
