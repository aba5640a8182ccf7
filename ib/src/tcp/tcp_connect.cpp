// Opening the tcp driver and connecting node processes. A listening socket
// exists from open on; connect_all has each node process connect to every
// higher-numbered one and accept the lower-numbered ones, so every pair is
// connected once and nobody waits for someone who waits for them (connects
// complete in the listener's backlog). Each connection opens with the job's
// handshake (tcp_setup.cpp).
//
// The published address is "ip:port", and the listener binds that ip only:
// 127.0.0.1 when every node process runs on this host, else the job's
// interface (MPC_NET_IF, or the first interface up and not loopback; see
// runtime/netif.hpp).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/netif.hpp"
#include "tcp_driver.hpp"

namespace mpc::ib::tcp {

namespace {

std::string errno_text(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
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
    const std::string host =
        config_.one_host ? runtime::netif::kLoopback : runtime::netif::job_address(error);
    if (host.empty()) return false;
    listen_fd_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!listen_fd_) {
        *error = errno_text("socket");
        return false;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
        *error = "not an IPv4 address: " + host;
        return false;
    }
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_.get(), SOMAXCONN) != 0 ||
        ::getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        *error = errno_text(("listening socket on " + host).c_str());
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
    if (!set_up_connections(addresses, deadline, &error)) {
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
