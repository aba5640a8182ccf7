// Connection set-up of the ofi driver: a passive endpoint listens from open
// on; connect_all connects every pair once. The lower-numbered node process
// of a pair connects and the higher one accepts, so no pair is connected
// twice and no two processes wait for each other.
//
// Each connection proves the job's secret (runtime/handshake.hpp) within
// the connection manager's private data, the only bytes that cross before
// the acceptor decides:
//   1. the connector's request carries a Request (who it claims to be); the
//      acceptor rejects it, its rejection carrying a fresh Challenge;
//   2. the connector connects again with that challenge and its Proof; the
//      acceptor checks both (the challenge must be one it issued and has not
//      seen answered) and accepts with the Confirm, which the connector
//      checks before anything else crosses.
// A request that fails is rejected and logged (the first kLoggedRefusals),
// and the set-up goes on. Rejections, acceptances and connects progress in
// the provider: nothing here blocks on one peer.
#include <rdma/fi_cm.h>

#include <cstring>

#include "../hex.hpp"
#include "ofi_driver.hpp"
#include "runtime/env.hpp"
#include "runtime/log.hpp"
#include "runtime/sync.hpp"

namespace mpc::ib::ofi {

namespace auth = runtime::auth;

namespace {

// An fi_eq_cm_entry followed by room for its connection data.
struct alignas(fi_eq_cm_entry) CmEvent {
    uint8_t bytes[sizeof(fi_eq_cm_entry) + 256];
    fi_eq_cm_entry& entry() { return *reinterpret_cast<fi_eq_cm_entry*>(bytes); }
    const uint8_t* data() const { return bytes + sizeof(fi_eq_cm_entry); }
};

constexpr size_t kIssued = 256;  // challenges kept for their answers
constexpr int kLoggedRefusals = 5;

// The first request: "MPCq", version 1, purpose ofi, two zeros, the claimed
// node (little-endian), four zeros. It proves nothing; it asks for a challenge.
constexpr size_t kRequestBytes = 16;
void encode_request(int32_t node, uint8_t out[kRequestBytes]) {
    std::memset(out, 0, kRequestBytes);
    std::memcpy(out, "MPCq", 4);
    out[4] = 1;
    out[5] = static_cast<uint8_t>(auth::Purpose::kOfi);
    for (int i = 0; i < 4; ++i)
        out[8 + i] = static_cast<uint8_t>(static_cast<uint32_t>(node) >> (8 * i));
}
bool is_request(const uint8_t* in, size_t len, int32_t* node) {
    if (len != kRequestBytes || std::memcmp(in, "MPCq", 4) != 0 || in[4] != 1 ||
        in[5] != static_cast<uint8_t>(auth::Purpose::kOfi))
        return false;
    uint32_t u = 0;
    for (int i = 0; i < 4; ++i) u |= static_cast<uint32_t>(in[8 + i]) << (8 * i);
    *node = static_cast<int32_t>(u);
    return true;
}

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
        Connection& conn = connections_[peer];
        if (!from_hex(addresses[peer], &conn.address) || conn.address.empty()) {
            runtime::warn("ofi: malformed address for node %d: '%s'", peer,
                          addresses[peer].c_str());
            return Status::Error;
        }
        conn.connector.emplace(config_.secret, auth::Purpose::kOfi, self, peer);
        uint8_t req[kRequestBytes];
        encode_request(self, req);
        if (!request(conn, req, sizeof req, &error)) {
            runtime::warn("ofi: node %d: %s", peer, error.c_str());
            return Status::Error;
        }
    }
    Status status = connect_loop(config_.num_peers - 1, &error);
    if (status != Status::Ok) runtime::warn("ofi: connecting node %d: %s", self, error.c_str());
    if (refused_ > kLoggedRefusals)
        runtime::warn("ofi: %d connection requests were refused in all while connecting", refused_);
    issued_.clear();
    return status;
}

// A connect request to conn's peer on a fresh endpoint, with data.
bool OfiDriver::request(Connection& conn, const void* data, size_t len, std::string* error) {
    conn.ep.reset();
    if (!make_endpoint(conn, info_.get(), error)) return false;
    const int ret = fi_connect(conn.ep.get(), conn.address.data(), data, len);
    if (ret != 0) *error = fi_error("fi_connect", ret);
    return ret == 0;
}

void OfiDriver::refuse(fi_info* info, const std::string& why) {
    ++refused_;
    if (refused_ <= kLoggedRefusals)
        runtime::warn("ofi: refused a connection request: %s%s", why.c_str(),
                      refused_ == kLoggedRefusals ? " (further refusals are only counted)" : "");
    fi_reject(pep_.get(), info->handle, nullptr, 0);
}

// A request on the passive endpoint: a first one gets a challenge (in its
// rejection), a second one with a good proof an endpoint and the confirm.
bool OfiDriver::on_connreq(fi_info* info, const uint8_t* data, size_t len, std::string* error) {
    auto wanted = [&](int32_t id) {
        return id >= 0 && id < config_.self && !connections_[static_cast<size_t>(id)].ep;
    };
    int32_t node = -1;
    if (is_request(data, len, &node)) {
        if (!wanted(node)) {
            refuse(info, "it claims node " + std::to_string(node) +
                             ", not a lower node process still to connect");
            return true;
        }
        if (issued_.size() >= kIssued) issued_.pop_front();
        issued_.emplace_back(config_.secret, auth::Purpose::kOfi, config_.self);
        fi_reject(pep_.get(), info->handle, issued_.back().challenge(), auth::kChallengeBytes);
        return true;
    }
    if (len != auth::kChallengeBytes + auth::kProofBytes) {
        refuse(info, auth::verdict_text(auth::Verdict::kMalformed));
        return true;
    }
    // Which challenge it answers: one of ours, once.
    auto it = issued_.begin();
    while (it != issued_.end() && std::memcmp(it->challenge(), data, auth::kChallengeBytes) != 0)
        ++it;
    if (it == issued_.end()) {
        refuse(info, "it answers a challenge this node did not issue, or one answered already");
        return true;
    }
    int32_t id = -1;
    uint8_t confirm[auth::kConfirmBytes];
    const auth::Verdict v =
        it->check(data + auth::kChallengeBytes, auth::kProofBytes, &id, confirm);
    issued_.erase(it);
    if (v != auth::Verdict::kAccepted) {
        refuse(info, auth::verdict_text(v));
        return true;
    }
    if (!wanted(id)) {
        refuse(info, "its proof names node " + std::to_string(id) +
                         ", not a lower node process still to connect");
        return true;
    }
    Connection& conn = connections_[static_cast<size_t>(id)];
    if (!make_endpoint(conn, info, error)) return false;
    const int ret = fi_accept(conn.ep.get(), confirm, sizeof confirm);
    if (ret != 0) {
        *error = fi_error("fi_accept", ret);
        return false;
    }
    return true;
}

// Our request was rejected: with a challenge, the second request carries our
// proof; a rejection of that one means the peer refused our proof.
bool OfiDriver::on_refused(Connection& conn, const uint8_t* data, size_t len, std::string* error) {
    if (conn.answered || len != auth::kChallengeBytes) {
        *error = "node " + std::to_string(conn.peer) +
                 (conn.answered ? " refused our proof of the job's secret"
                                : " refused the connection without a challenge");
        return false;
    }
    uint8_t second[auth::kChallengeBytes + auth::kProofBytes];
    std::memcpy(second, data, auth::kChallengeBytes);
    const char* why = nullptr;
    if (!conn.connector->answer(data, len, second + auth::kChallengeBytes, &why)) {
        *error = "node " + std::to_string(conn.peer) + ": " + why;
        return false;
    }
    conn.answered = true;
    return request(conn, second, sizeof second, error);
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
            uint8_t err_data[256];
            err.err_data = err_data;
            err.err_data_size = sizeof err_data;
            fi_eq_readerr(eq_.get(), &err, 0);
            auto* conn = err.fid ? static_cast<Connection*>(err.fid->context) : nullptr;
            // Our request, rejected: a challenge to answer, or a refusal.
            if (conn && conn->connector && err.err == FI_ECONNREFUSED) {
                if (!on_refused(*conn, err_data, std::min(err.err_data_size, sizeof err_data),
                                error))
                    return Status::Error;
                continue;
            }
            char text[256];
            const char* detail =
                fi_eq_strerror(eq_.get(), err.prov_errno, nullptr, text, sizeof text);
            *error = "connection" + (conn ? " to node " + std::to_string(conn->peer) : "") +
                     " failed: " + lib::strerror(err.err) +
                     (detail ? std::string(" / ") + detail : "");
            return Status::Error;
        }
        if (n < 0) {
            *error = fi_error("fi_eq_sread", n);
            return Status::Error;
        }
        const size_t data_len = static_cast<size_t>(n) - sizeof(fi_eq_cm_entry);
        if (event == FI_CONNREQ) {
            InfoPtr info(ev.entry().info);  // ours to free
            if (!on_connreq(info.get(), ev.data(), data_len, error)) return Status::Error;
        } else if (event == FI_CONNECTED) {
            auto* conn = static_cast<Connection*>(ev.entry().fid->context);
            if (conn->connected) continue;
            // Ours: the acceptance must carry the confirm of our proof.
            const char* why = nullptr;
            if (conn->connector &&
                (!conn->answered || !conn->connector->check_confirm(ev.data(), data_len, &why))) {
                *error = "node " + std::to_string(conn->peer) +
                         " accepted without proving the job's secret" +
                         (why ? std::string(": ") + why : "");
                return Status::Error;
            }
            conn->connector.reset();
            conn->connected = true;
            ++established;
            runtime::debug("ofi: node %d connected to node %d", config_.self, conn->peer);
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
                runtime::warn("ofi: error on the listening endpoint: %s", lib::strerror(err.err));
                continue;
            }
            *peer = conn->peer;
            *why = std::string(lib::strerror(err.err)) +
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
