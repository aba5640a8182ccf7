// Connection set-up of the verbs driver through rdma_cm. As in the ofi
// driver, the lower-numbered node process of a pair connects and the higher
// one accepts; the private data of the connect request names the caller.
// Every event is acknowledged before any id it refers to is destroyed
// (rdma_destroy_id waits for outstanding acknowledgements).
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "../hello.hpp"
#include "../hex.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/sync.hpp"
#include "verbs_driver.hpp"

namespace mpc::ib::verbs {

namespace {

constexpr int kResolveTimeoutMs = 5000;

socklen_t address_length(const sockaddr* sa) {
    return sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

rdma_conn_param connection_param(const Hello* hello) {
    rdma_conn_param param{};
    param.private_data = hello;
    param.private_data_len = sizeof *hello;
    // RDMA reads and atomics of one-sided communication, a few in flight at
    // once each way (devices allow at least 4).
    param.responder_resources = 4;
    param.initiator_depth = 4;
    param.retry_count = 7;
    param.rnr_retry_count = 7;  // 7: retry forever while the SRQ is empty
    return param;
}

}  // namespace

bool VerbsDriver::listen(std::string* error) {
    cm_channel_.reset(rdma_create_event_channel());
    if (!cm_channel_) {
        *error = std::string("rdma_create_event_channel: ") + std::strerror(errno);
        return false;
    }
    int flags = fcntl(cm_channel_->fd, F_GETFL);
    fcntl(cm_channel_->fd, F_SETFL, flags | O_NONBLOCK);

    // Binding to an address tells which device serves it: take the first
    // address whose interface is RDMA-capable, or the one the user named.
    auto try_bind = [&](const sockaddr* sa) {
        rdma_cm_id* id = nullptr;
        if (rdma_create_id(cm_channel_.get(), &id, nullptr, RDMA_PS_TCP) != 0) return false;
        VerbsPtr<rdma_cm_id> owned(id);
        if (rdma_bind_addr(id, const_cast<sockaddr*>(sa)) != 0 || !id->verbs) return false;
        listen_id_ = std::move(owned);
        return true;
    };
    if (const char* wanted = std::getenv("MPC_VERBS_ADDR"); wanted && *wanted) {
        addrinfo* res = nullptr;
        addrinfo hints{};
        hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
        if (getaddrinfo(wanted, nullptr, &hints, &res) != 0 || !try_bind(res->ai_addr)) {
            if (res) freeaddrinfo(res);
            *error =
                std::string("MPC_VERBS_ADDR=") + wanted + " is not an address of an RDMA device";
            return false;
        }
        freeaddrinfo(res);
    } else {
        ifaddrs* list = nullptr;
        if (getifaddrs(&list) == 0) {
            for (int family : {AF_INET, AF_INET6}) {
                for (ifaddrs* ifa = list; ifa && !listen_id_; ifa = ifa->ifa_next) {
                    if (ifa->ifa_addr && ifa->ifa_addr->sa_family == family)
                        try_bind(ifa->ifa_addr);
                }
            }
            freeifaddrs(list);
        }
        if (!listen_id_) {
            *error = "no IP address of this host belongs to an RDMA device (set MPC_VERBS_ADDR)";
            return false;
        }
    }
    if (rdma_listen(listen_id_.get(), 64) != 0) {
        *error = std::string("rdma_listen: ") + std::strerror(errno);
        return false;
    }
    context_ = listen_id_->verbs;
    sockaddr* local = rdma_get_local_addr(listen_id_.get());
    local_address_ = to_hex(local, address_length(local));
    return true;
}

Status VerbsDriver::connect_all(const std::vector<std::string>& addresses) {
    const int self = config_.self;
    if (addresses.size() != static_cast<size_t>(config_.num_peers)) {
        runtime::warn("verbs: connect_all got %zu addresses for %d node processes",
                      addresses.size(), config_.num_peers);
        return Status::Error;
    }
    // Outgoing connections leave from our device's address (any port).
    sockaddr_storage source{};
    sockaddr* local = rdma_get_local_addr(listen_id_.get());
    std::memcpy(&source, local, address_length(local));
    if (source.ss_family == AF_INET)
        reinterpret_cast<sockaddr_in*>(&source)->sin_port = 0;
    else
        reinterpret_cast<sockaddr_in6*>(&source)->sin6_port = 0;

    for (int peer = self + 1; peer < config_.num_peers; ++peer) {
        std::vector<uint8_t> addr;
        if (!from_hex(addresses[peer], &addr) || addr.size() < sizeof(sockaddr_in)) {
            runtime::warn("verbs: malformed address for node %d", peer);
            return Status::Error;
        }
        sockaddr_storage dest{};
        std::memcpy(&dest, addr.data(), std::min(addr.size(), sizeof dest));
        Connection& conn = connections_[peer];
        rdma_cm_id* id = nullptr;
        if (rdma_create_id(cm_channel_.get(), &id, &conn, RDMA_PS_TCP) != 0) {
            runtime::warn("verbs: rdma_create_id: %s", std::strerror(errno));
            return Status::Error;
        }
        conn.id.reset(id);
        if (rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&source),
                              reinterpret_cast<sockaddr*>(&dest), kResolveTimeoutMs) != 0) {
            runtime::warn("verbs: rdma_resolve_addr for node %d: %s", peer, std::strerror(errno));
            return Status::Error;
        }
    }
    std::string error;
    Status status = connect_loop(config_.num_peers - 1, &error);
    if (status != Status::Ok) runtime::warn("verbs: connecting node %d: %s", self, error.c_str());
    return status;
}

Status VerbsDriver::connect_loop(int expected, std::string* error) {
    const double timeout_s = runtime::env::get_seconds("MPC_CONNECT_TIMEOUT", 60.0);
    const int64_t deadline = runtime::now_ns() + static_cast<int64_t>(timeout_s * 1e9);
    const Hello hello{kHelloMagic, config_.self};
    int established = 0;
    while (established < expected) {
        int64_t left_ms = (deadline - runtime::now_ns()) / 1000000;
        if (left_ms <= 0) {
            *error = std::to_string(established) + " of " + std::to_string(expected) +
                     " connections established after " + std::to_string(timeout_s) +
                     " s (MPC_CONNECT_TIMEOUT)";
            return Status::Error;
        }
        rdma_cm_event* event = nullptr;
        if (rdma_get_cm_event(cm_channel_.get(), &event) != 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                *error = std::string("rdma_get_cm_event: ") + std::strerror(errno);
                return Status::Error;
            }
            pollfd pfd{cm_channel_->fd, POLLIN, 0};
            poll(&pfd, 1, static_cast<int>(left_ms));
            continue;
        }
        rdma_cm_event_type type = event->event;
        rdma_cm_id* id = event->id;
        auto* conn = static_cast<Connection*>(id->context);
        VerbsPtr<rdma_cm_id> rejected;  // destroyed after the event is acknowledged
        bool ok = true;
        switch (type) {
            case RDMA_CM_EVENT_ADDR_RESOLVED:
                if (id->verbs != context_) {
                    *error = "node " + std::to_string(conn->peer) +
                             " is reached through another RDMA device than ours";
                    ok = false;
                } else if (rdma_resolve_route(id, kResolveTimeoutMs) != 0) {
                    *error = std::string("rdma_resolve_route: ") + std::strerror(errno);
                    ok = false;
                }
                break;
            case RDMA_CM_EVENT_ROUTE_RESOLVED: {
                rdma_conn_param param = connection_param(&hello);
                ok = create_qp(id, error);
                if (ok && rdma_connect(id, &param) != 0) {
                    *error = std::string("rdma_connect: ") + std::strerror(errno);
                    ok = false;
                }
                break;
            }
            case RDMA_CM_EVENT_CONNECT_REQUEST: {
                Hello theirs{};
                if (event->param.conn.private_data_len >= sizeof theirs)
                    std::memcpy(&theirs, event->param.conn.private_data, sizeof theirs);
                if (!hello_from_lower(theirs, config_.self) || connections_[theirs.node].id ||
                    id->verbs != context_) {
                    runtime::warn("verbs: rejecting an unexpected connection request (node %d)",
                                  theirs.node);
                    rdma_reject(id, nullptr, 0);
                    rejected.reset(id);
                    break;
                }
                Connection& accepted = connections_[theirs.node];
                accepted.id.reset(id);
                id->context = &accepted;
                rdma_conn_param param = connection_param(&hello);
                ok = create_qp(id, error);
                if (ok && rdma_accept(id, &param) != 0) {
                    *error = std::string("rdma_accept: ") + std::strerror(errno);
                    ok = false;
                }
                break;
            }
            case RDMA_CM_EVENT_ESTABLISHED:
                if (conn && !conn->connected) {
                    conn->connected = true;
                    ++established;
                    runtime::debug("verbs: node %d connected to node %d", config_.self, conn->peer);
                }
                break;
            default:  // address/route/connect errors, rejection, disconnection
                *error = std::string(rdma_event_str(type)) +
                         (conn ? " (node " + std::to_string(conn->peer) + ")" : "") + ", status " +
                         std::to_string(event->status);
                ok = false;
                break;
        }
        rdma_ack_cm_event(event);
        if (!ok) return Status::Error;
    }
    return Status::Ok;
}

}  // namespace mpc::ib::verbs
