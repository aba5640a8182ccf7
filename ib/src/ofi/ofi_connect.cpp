// Connection set-up of the ofi driver: a passive endpoint listens from open
// on; connect_all connects every pair once. The lower-numbered node process
// of a pair connects and the higher one accepts, so no pair is connected
// twice and no two processes wait for each other; the connect request carries
// the connecting node's index, which is how the acceptor knows who called.
#include <rdma/fi_cm.h>

#include <cstring>

#include "../hello.hpp"
#include "../hex.hpp"
#include "ofi_driver.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/sync.hpp"

namespace mpc::ib::ofi {

namespace {

// An fi_eq_cm_entry followed by room for its connection data.
struct alignas(fi_eq_cm_entry) CmEvent {
    uint8_t bytes[sizeof(fi_eq_cm_entry) + 256];
    fi_eq_cm_entry& entry() { return *reinterpret_cast<fi_eq_cm_entry*>(bytes); }
    const uint8_t* data() const { return bytes + sizeof(fi_eq_cm_entry); }
};

}  // namespace

bool OfiDriver::listen(std::string* error) {
    fid_pep* pep = nullptr;
    int ret = fi_passive_ep(fabric_.get(), info_.get(), &pep, nullptr);
    if (ret != 0) {
        *error = fi_error("fi_passive_ep", ret);
        return false;
    }
    pep_.reset(pep);
    if ((ret = fi_pep_bind(pep, &eq_->fid, 0)) != 0 || (ret = fi_listen(pep)) != 0) {
        *error = fi_error("listening on the passive endpoint", ret);
        return false;
    }
    uint8_t addr[128];
    size_t len = sizeof addr;
    if ((ret = fi_getname(&pep->fid, addr, &len)) != 0) {
        *error = fi_error("fi_getname of the passive endpoint", ret);
        return false;
    }
    local_address_ = to_hex(addr, len);
    return true;
}

bool OfiDriver::make_endpoint(Connection& conn, fi_info* info, std::string* error) {
    fid_ep* ep = nullptr;
    int ret = fi_endpoint(domain_.get(), info, &ep, &conn);
    if (ret != 0) {
        *error = fi_error("fi_endpoint", ret);
        return false;
    }
    conn.ep.reset(ep);
    const char* step = "fi_ep_bind(eq)";
    if ((ret = fi_ep_bind(ep, &eq_->fid, 0)) == 0) {
        step = "fi_ep_bind(send cq)";
        if ((ret = fi_ep_bind(ep, &send_cq_->fid, FI_TRANSMIT)) == 0) {
            step = "fi_ep_bind(recv cq)";
            if ((ret = fi_ep_bind(ep, &recv_cq_->fid, FI_RECV)) == 0) {
                step = "fi_ep_bind(shared receive context)";
                if ((ret = fi_ep_bind(ep, &srx_->fid, 0)) == 0) {
                    step = "fi_enable";
                    ret = fi_enable(ep);
                }
            }
        }
    }
    if (ret != 0) {
        *error = fi_error(step, ret);
        conn.ep.reset();
        return false;
    }
    return true;
}

Status OfiDriver::connect_all(const std::vector<std::string>& addresses) {
    const int self = config_.self;
    if (addresses.size() != static_cast<size_t>(config_.num_peers)) {
        runtime::warn("ofi: connect_all got %zu addresses for %d node processes", addresses.size(),
                      config_.num_peers);
        return Status::Error;
    }
    std::string error;
    for (int peer = self + 1; peer < config_.num_peers; ++peer) {
        std::vector<uint8_t> addr;
        if (!from_hex(addresses[peer], &addr) || addr.empty()) {
            runtime::warn("ofi: malformed address for node %d: '%s'", peer,
                          addresses[peer].c_str());
            return Status::Error;
        }
        Connection& conn = connections_[peer];
        if (!make_endpoint(conn, info_.get(), &error)) {
            runtime::warn("ofi: endpoint for node %d: %s", peer, error.c_str());
            return Status::Error;
        }
        Hello hello{kHelloMagic, self};
        int ret = fi_connect(conn.ep.get(), addr.data(), &hello, sizeof hello);
        if (ret != 0) {
            runtime::warn("ofi: %s (node %d)", fi_error("fi_connect", ret).c_str(), peer);
            return Status::Error;
        }
    }
    Status status = connect_loop(config_.num_peers - 1, &error);
    if (status != Status::Ok) runtime::warn("ofi: connecting node %d: %s", self, error.c_str());
    return status;
}

// Processes connection events until every connection is up: connect requests
// from lower nodes are accepted, established connections counted.
Status OfiDriver::connect_loop(int expected, std::string* error) {
    const double timeout_s = runtime::env::get_seconds("MPC_CONNECT_TIMEOUT", 60.0);
    const int64_t deadline = runtime::now_ns() + static_cast<int64_t>(timeout_s * 1e9);
    int established = 0;
    while (established < expected) {
        int64_t left_ms = (deadline - runtime::now_ns()) / 1000000;
        if (left_ms <= 0) {
            *error = std::to_string(established) + " of " + std::to_string(expected) +
                     " connections established after " + std::to_string(timeout_s) +
                     " s (MPC_CONNECT_TIMEOUT)";
            return Status::Error;
        }
        CmEvent ev;
        uint32_t event = 0;
        ssize_t n = fi_eq_sread(eq_.get(), &event, &ev, sizeof ev, static_cast<int>(left_ms), 0);
        if (n == -FI_EAGAIN || n == -FI_ETIMEDOUT) continue;
        if (n == -FI_EAVAIL) {
            fi_eq_err_entry err{};
            char text[256];
            fi_eq_readerr(eq_.get(), &err, 0);
            const char* detail =
                fi_eq_strerror(eq_.get(), err.prov_errno, err.err_data, text, sizeof text);
            auto* conn = err.fid ? static_cast<Connection*>(err.fid->context) : nullptr;
            *error = "connection" + (conn ? " to node " + std::to_string(conn->peer) : "") +
                     " failed: " + fi_strerror(err.err) +
                     (detail ? std::string(" / ") + detail : "");
            return Status::Error;
        }
        if (n < 0) {
            *error = fi_error("fi_eq_sread", n);
            return Status::Error;
        }
        if (event == FI_CONNREQ) {
            InfoPtr info(ev.entry().info);  // ours to free
            size_t data_len = static_cast<size_t>(n) - sizeof(fi_eq_cm_entry);
            Hello hello{};
            if (data_len >= sizeof hello) std::memcpy(&hello, ev.data(), sizeof hello);
            if (!hello_from_lower(hello, config_.self) || connections_[hello.node].ep) {
                runtime::warn("ofi: rejecting an unexpected connection request (node %d)",
                              hello.node);
                fi_reject(pep_.get(), info->handle, nullptr, 0);
                continue;
            }
            Connection& conn = connections_[hello.node];
            if (!make_endpoint(conn, info.get(), error)) return Status::Error;
            int ret = fi_accept(conn.ep.get(), nullptr, 0);
            if (ret != 0) {
                *error = fi_error("fi_accept", ret);
                return Status::Error;
            }
        } else if (event == FI_CONNECTED) {
            auto* conn = static_cast<Connection*>(ev.entry().fid->context);
            if (!conn->connected) {
                conn->connected = true;
                ++established;
                runtime::debug("ofi: node %d connected to node %d", config_.self, conn->peer);
            }
        } else if (event == FI_SHUTDOWN) {
            auto* conn = static_cast<Connection*>(ev.entry().fid->context);
            *error = "node " + std::to_string(conn->peer) + " closed its connection";
            return Status::Error;
        }
    }
    return Status::Ok;
}

// After connect_all the event queue only reports trouble: a peer that
// closed its end (FI_SHUTDOWN), a transport error, or a stranger knocking.
bool OfiDriver::connection_lost(int* peer, std::string* why) {
    for (;;) {
        CmEvent ev;
        uint32_t event = 0;
        ssize_t n = fi_eq_read(eq_.get(), &event, &ev, sizeof ev, 0);
        if (n == -FI_EAGAIN) return false;
        if (n == -FI_EAVAIL) {
            fi_eq_err_entry err{};
            if (fi_eq_readerr(eq_.get(), &err, 0) != sizeof err) return false;
            char text[256];
            const char* detail =
                fi_eq_strerror(eq_.get(), err.prov_errno, err.err_data, text, sizeof text);
            // Endpoints carry their Connection as context, the listener none.
            auto* conn = err.fid ? static_cast<Connection*>(err.fid->context) : nullptr;
            if (!conn) {
                runtime::warn("ofi: error on the listening endpoint: %s", fi_strerror(err.err));
                continue;
            }
            *peer = conn->peer;
            *why = std::string(fi_strerror(err.err)) +
                   (detail && *detail ? std::string(" / ") + detail : "");
            return true;
        }
        if (n < 0) {
            runtime::warn("ofi: %s", fi_error("fi_eq_read", n).c_str());
            return false;
        }
        if (event == FI_SHUTDOWN) {
            *peer = static_cast<Connection*>(ev.entry().fid->context)->peer;
            *why = "closed or reset by the other end or the network";
            return true;
        }
        if (event == FI_CONNREQ) {  // every pair is connected already
            InfoPtr info(ev.entry().info);
            runtime::warn("ofi: rejecting a connection request after start-up");
            fi_reject(pep_.get(), info->handle, nullptr, 0);
        }
    }
}

}  // namespace mpc::ib::ofi
