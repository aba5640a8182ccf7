// Setting up the tcp driver's connections: every one opens with the job's
// handshake (runtime/handshake.hpp), the acceptor's challenge first.
//
// One poll loop drives all of them at once: our connects to the higher nodes
// (retried while refused: a peer may not listen yet), the lower nodes'
// connections to us, and whatever else knocks. A node process is connected
// once its handshake is done, whatever the others are doing, so a stranger
// that stays silent delays nobody: it is closed after kSilentLimitNs, or
// earlier when kMaxUnproven connections wait and it is the oldest. A proof
// that fails closes the connection at once; the first kLoggedRefusals
// refusals are logged, the rest counted and their number said at the end.
// Our own connects are held to the same standard: a peer whose confirm does
// not prove the secret ends the set-up with an error (the address came from
// the bootstrap, so something else took that port).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "runtime/handshake.hpp"
#include "runtime/log.hpp"
#include "tcp_driver.hpp"

namespace mpc::ib::tcp {
namespace auth = runtime::auth;

namespace {

constexpr int64_t kSilentLimitNs = 10'000'000'000;  // an unproven connection's time
constexpr int64_t kRetryNs = 10'000'000;            // between refused connects
constexpr int kMaxUnproven = 64;
constexpr int kLoggedRefusals = 5;

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

std::string address_text(const sockaddr_in& a) {
    char host[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(a.sin_port));
}

// One connection being set up.
struct Link {
    enum class Step { kRetryWait, kConnecting, kChallenge, kConfirm, kProof, kDone };
    UniqueFd fd;
    bool outgoing = false;
    int peer = -1;  // outgoing: the node dialled; incoming: the id proven
    Step step = Step::kConnecting;
    uint8_t in[auth::kProofBytes];  // the message being read (the largest is a proof)
    size_t got = 0, want = 0;
    std::string out;  // bytes still to send
    std::optional<auth::Acceptor> acceptor;
    std::optional<auth::Connector> connector;
    int64_t timer = 0;  // incoming: when a silent one goes; kRetryWait: when to dial again
    sockaddr_in addr{};
    std::string from;  // incoming: the peer's address, for the log
};

// The outcome of a step of a link.
enum class Outcome { kPending, kDone, kRetry, kRefused, kFailed };

class Setup {
  public:
    Setup(const DriverConfig& config, int listen_fd) : config_(config), listen_fd_(listen_fd) {}

    bool run(const std::vector<std::string>& addresses, int64_t deadline,
             std::vector<std::unique_ptr<Link>>* done, std::string* error);

  private:
    void dial(Link& l);
    void accept_all(int64_t now);
    Outcome advance(Link& l, short revents, std::string* why);
    Outcome on_message(Link& l, std::string* why);
    bool flush(Link& l);
    void refuse(Link& l, const std::string& why);
    bool wanted(int id) const {
        return id >= 0 && id < config_.self && !connected_[static_cast<size_t>(id)];
    }

    const DriverConfig& config_;
    int listen_fd_;
    std::vector<std::unique_ptr<Link>> links_;
    std::vector<bool> connected_;
    int refused_ = 0;
};

void Setup::dial(Link& l) {
    l.fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    l.got = 0;
    l.out.clear();
    l.step = Link::Step::kConnecting;
    if (l.fd && (::connect(l.fd.get(), reinterpret_cast<sockaddr*>(&l.addr), sizeof l.addr) == 0 ||
                 errno == EINPROGRESS))
        return;
    l.fd = UniqueFd();  // no socket, or refused at once: again in a moment
    l.step = Link::Step::kRetryWait;
    l.timer = runtime::now_ns() + kRetryNs;
}

void Setup::accept_all(int64_t now) {
    for (;;) {
        sockaddr_in from{};
        socklen_t len = sizeof from;
        UniqueFd fd(::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &len,
                              SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!fd) return;
        // Room: the oldest unproven connection goes when too many wait.
        int unproven = 0;
        Link* oldest = nullptr;
        for (auto& l : links_) {
            if (l->outgoing || l->step != Link::Step::kProof) continue;
            ++unproven;
            if (!oldest || l->timer < oldest->timer) oldest = l.get();
        }
        if (unproven >= kMaxUnproven && oldest)
            refuse(*oldest, "too many connections waiting to prove the job's secret");
        auto l = std::make_unique<Link>();
        l->fd = std::move(fd);
        l->from = address_text(from);
        l->timer = now + kSilentLimitNs;
        l->acceptor.emplace(config_.secret, auth::Purpose::kTcp, config_.self);
        l->out.assign(reinterpret_cast<const char*>(l->acceptor->challenge()),
                      auth::kChallengeBytes);
        l->step = Link::Step::kProof;
        l->want = auth::kProofBytes;
        flush(*l);
        links_.push_back(std::move(l));
    }
}

bool Setup::flush(Link& l) {
    while (!l.out.empty()) {
        const ssize_t n = ::send(l.fd.get(), l.out.data(), l.out.size(), MSG_NOSIGNAL);
        if (n > 0) {
            l.out.erase(0, static_cast<size_t>(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        }
    }
    return true;
}

void Setup::refuse(Link& l, const std::string& why) {
    ++refused_;
    if (refused_ <= kLoggedRefusals)
        runtime::warn("tcp: refused a connection from %s: %s%s", l.from.c_str(), why.c_str(),
                      refused_ == kLoggedRefusals ? " (further refusals are only counted)" : "");
    l.fd = UniqueFd();  // closed at once; the link goes at the end of the round
}

Outcome Setup::advance(Link& l, short revents, std::string* why) {
    if (l.step == Link::Step::kConnecting) {
        if (!(revents & (POLLOUT | POLLERR | POLLHUP))) return Outcome::kPending;
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(l.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) return Outcome::kRetry;  // refused: the peer may not listen yet
        l.step = Link::Step::kChallenge;
        l.want = auth::kChallengeBytes;
        l.got = 0;
    }
    if ((revents & POLLOUT) && !flush(l)) {
        *why = "the connection broke";
        return l.outgoing ? Outcome::kFailed : Outcome::kRefused;
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR))) return Outcome::kPending;
    while (l.got < l.want) {
        const ssize_t n = ::recv(l.fd.get(), l.in + l.got, l.want - l.got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Outcome::kPending;
        if (n <= 0) {
            // Before any challenge came, a dial is retried (the peer was not
            // ready); later, our proof was turned down.
            if (l.outgoing)
                return l.step == Link::Step::kChallenge && l.got == 0 ? Outcome::kRetry
                                                                      : Outcome::kFailed;
            *why = "it closed the connection before proving the job's secret";
            return Outcome::kRefused;
        }
        l.got += static_cast<size_t>(n);
        if (l.step == Link::Step::kProof && !auth::proof_prefix_plausible(l.in, l.got)) {
            *why = auth::verdict_text(auth::Verdict::kMalformed);
            return Outcome::kRefused;
        }
    }
    return on_message(l, why);
}

// A whole message is in l.in: the next step of the handshake.
Outcome Setup::on_message(Link& l, std::string* why) {
    const char* reason = nullptr;
    if (l.step == Link::Step::kChallenge) {
        uint8_t proof[auth::kProofBytes];
        if (!l.connector->answer(l.in, l.got, proof, &reason)) {
            *why = reason;
            return Outcome::kFailed;
        }
        l.out.assign(reinterpret_cast<const char*>(proof), sizeof proof);
        l.step = Link::Step::kConfirm;
        l.want = auth::kConfirmBytes;
        l.got = 0;
        if (!flush(l)) {
            *why = "the connection broke";
            return Outcome::kFailed;
        }
        return Outcome::kPending;
    }
    if (l.step == Link::Step::kConfirm) {
        if (!l.connector->check_confirm(l.in, l.got, &reason)) {
            *why = reason;
            return Outcome::kFailed;
        }
        l.step = Link::Step::kDone;
        return Outcome::kDone;
    }
    // kProof: a lower node process, or nobody we know.
    int32_t id = -1;
    uint8_t confirm[auth::kConfirmBytes];
    const auth::Verdict v = l.acceptor->check(l.in, l.got, &id, confirm);
    if (v != auth::Verdict::kAccepted) {
        *why = auth::verdict_text(v);
        return Outcome::kRefused;
    }
    if (!wanted(id)) {
        *why = "its proof names node " + std::to_string(id) +
               ", not a lower node process still to connect";
        return Outcome::kRefused;
    }
    l.peer = id;
    l.out.assign(reinterpret_cast<const char*>(confirm), sizeof confirm);
    if (!flush(l) || !l.out.empty()) {  // 48 bytes into a fresh socket: all or broken
        *why = "the connection broke";
        return Outcome::kRefused;
    }
    l.step = Link::Step::kDone;
    return Outcome::kDone;
}

bool Setup::run(const std::vector<std::string>& addresses, int64_t deadline,
                std::vector<std::unique_ptr<Link>>* done, std::string* error) {
    const int self = config_.self;
    connected_.assign(static_cast<size_t>(config_.num_peers), false);
    connected_[static_cast<size_t>(self)] = true;
    int missing = config_.num_peers - 1;
    for (int peer = self + 1; peer < config_.num_peers; ++peer) {
        auto l = std::make_unique<Link>();
        l->outgoing = true;
        l->peer = peer;
        if (!parse_address(addresses[static_cast<size_t>(peer)], &l->addr)) {
            *error = "malformed address for node " + std::to_string(peer) + ": '" +
                     addresses[static_cast<size_t>(peer)] + "'";
            return false;
        }
        l->connector.emplace(config_.secret, auth::Purpose::kTcp, self, peer);
        dial(*l);
        links_.push_back(std::move(l));
    }
    std::vector<pollfd> fds;
    while (missing > 0) {
        int64_t now = runtime::now_ns();
        if (now > deadline) {
            std::string who;
            for (int n = 0; n < config_.num_peers; ++n)
                if (!connected_[static_cast<size_t>(n)])
                    who += (who.empty() ? "" : ", ") + std::to_string(n);
            *error = "node processes " + who + " not connected before the deadline";
            return false;
        }
        int64_t wake = deadline;
        fds.clear();
        const bool listening =
            std::any_of(connected_.begin(), connected_.begin() + self, [](bool c) { return !c; });
        if (listening) fds.push_back({listen_fd_, POLLIN, 0});
        const size_t first_link = fds.size();
        for (auto& l : links_) {
            short events = 0;
            if (l->step == Link::Step::kRetryWait) {
                wake = std::min(wake, l->timer);
            } else if (l->fd) {
                events = l->step == Link::Step::kConnecting ? POLLOUT : POLLIN;
                if (!l->out.empty()) events |= POLLOUT;
                if (!l->outgoing) wake = std::min(wake, l->timer);
            }
            fds.push_back({l->fd ? l->fd.get() : -1, events, 0});
        }
        const int timeout_ms = static_cast<int>(std::max<int64_t>(0, (wake - now) / 1000000) + 1);
        if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
            *error = std::string("poll: ") + std::strerror(errno);
            return false;
        }
        now = runtime::now_ns();
        const size_t count = links_.size();  // accept_all appends after these
        if (listening && (fds[0].revents & POLLIN)) accept_all(now);
        for (size_t i = 0; i < count; ++i) {
            Link& l = *links_[i];
            if (!l.fd && l.step != Link::Step::kRetryWait) continue;  // refused meanwhile
            std::string why;
            Outcome o = Outcome::kPending;
            if (l.step == Link::Step::kRetryWait) {
                if (now >= l.timer) dial(l);
                continue;
            }
            o = advance(l, fds[first_link + i].revents, &why);
            if (o == Outcome::kPending && !l.outgoing && now >= l.timer) {
                o = Outcome::kRefused;
                why = "it did not prove the job's secret in time";
            }
            if (o == Outcome::kDone) {
                connected_[static_cast<size_t>(l.peer)] = true;
                --missing;
            } else if (o == Outcome::kRetry) {
                l.fd = UniqueFd();
                l.step = Link::Step::kRetryWait;
                l.timer = now + kRetryNs;
            } else if (o == Outcome::kRefused) {
                refuse(l, why);
            } else if (o == Outcome::kFailed) {
                *error = "node " + std::to_string(l.peer) + " at " + address_text(l.addr) +
                         " failed the handshake: " + (why.empty() ? "it refused our proof" : why);
                return false;
            }
        }
        // Done links move out; refused ones go.
        for (auto& l : links_)
            if (l && l->step == Link::Step::kDone) done->push_back(std::move(l));
        links_.erase(std::remove_if(links_.begin(), links_.end(),
                                    [](const std::unique_ptr<Link>& l) {
                                        return !l || (!l->fd && l->step != Link::Step::kRetryWait);
                                    }),
                     links_.end());
    }
    if (refused_ > kLoggedRefusals)
        runtime::warn("tcp: %d connections were refused in all while connecting", refused_);
    return true;
}

}  // namespace

bool TcpDriver::set_up_connections(const std::vector<std::string>& addresses, int64_t deadline,
                                   std::string* error) {
    Setup setup(config_, listen_fd_.get());
    std::vector<std::unique_ptr<Link>> done;
    if (!setup.run(addresses, deadline, &done, error)) return false;
    for (auto& l : done) {
        auto conn = std::make_unique<Connection>();
        conn->peer = l->peer;
        conn->fd = std::move(l->fd);
        runtime::auth::random_bytes(&conn->key_mask, sizeof conn->key_mask);
        connections_[static_cast<size_t>(conn->peer)] = std::move(conn);
    }
    return true;
}

}  // namespace mpc::ib::tcp
