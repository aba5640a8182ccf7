// PMI-2 server of mpcrun: see pmi2_server.hpp.
#include "pmi2_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mpc::launcher {

using runtime::pmi2::Message;
namespace auth = runtime::auth;

Pmi2Server::Pmi2Server(int size, std::string jobid, const auth::Secret& secret)
    : clients_(static_cast<size_t>(size)), jobid_(std::move(jobid)), secret_(secret) {
    // Every node process stands for one node, so the mapping is one per node.
    attrs_["PMI_process_mapping"] = "(vector,(0," + std::to_string(size) + ",1))";
    attrs_["universeSize"] = std::to_string(size);
}

Pmi2Server::~Pmi2Server() {
    close_all();
    for (Client& c : clients_)
        if (c.child_fd >= 0) close(c.child_fd);
}

int Pmi2Server::open_channel(int client, std::string* error) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        *error = std::string("socketpair failed: ") + strerror(errno);
        return -1;
    }
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    Client& c = clients_[static_cast<size_t>(client)];
    c.conn.fd = sv[0];
    c.child_fd = sv[1];
    start_handshake(c.conn);  // the challenge waits in the socket for the child
    return sv[1];
}

void Pmi2Server::start_handshake(Connection& c) {
    c.auth = std::make_unique<auth::Acceptor>(secret_, auth::Purpose::kPmi, auth::kLauncherId);
    c.out.append(reinterpret_cast<const char*>(c.auth->challenge()), auth::kChallengeBytes);
    flush(c);
}

std::vector<std::pair<std::string, std::string>> Pmi2Server::child_environment(int client,
                                                                               int child_fd) const {
    return {{"PMI_FD", std::to_string(child_fd)},
            {"PMI_RANK", std::to_string(client)},
            {"PMI_SIZE", std::to_string(size())},
            {"PMI_JOBID", jobid_},
            {auth::kSecretVariable, auth::to_hex(secret_.bytes.data(), secret_.bytes.size())}};
}

void Pmi2Server::close_child_end(int client) {
    Client& c = clients_[static_cast<size_t>(client)];
    if (c.child_fd >= 0) close(c.child_fd);
    c.child_fd = -1;
}

short Pmi2Server::poll_events(int client) const {
    const Connection& c = clients_[static_cast<size_t>(client)].conn;
    if (c.fd < 0) return 0;
    return static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT));
}

void Pmi2Server::handle(int client, short revents) {
    if (revents & POLLOUT) flush(client);
    if (revents & (POLLIN | POLLHUP | POLLERR)) read_from(client);
}

void Pmi2Server::poll_once(int timeout_ms) {
    std::vector<pollfd> fds;
    std::vector<int> owner;
    for (int i = 0; i < size(); ++i) {
        if (fd(i) < 0) continue;
        fds.push_back({fd(i), poll_events(i), 0});
        owner.push_back(i);
    }
    // Pending connections as -2 - slot, the listening socket as -1.
    for (int slot = 0; slot < pending_slots(); ++slot) {
        if (pending_fd(slot) < 0) continue;
        fds.push_back({pending_fd(slot), pending_poll_events(slot), 0});
        owner.push_back(-2 - slot);
    }
    if (listen_fd_ >= 0) {
        fds.push_back({listen_fd_, POLLIN, 0});
        owner.push_back(-1);
    }
    if (poll(fds.data(), fds.size(), timeout_ms) <= 0) {
        expire(Clock::now());
        return;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        if (owner[i] >= 0)
            handle(owner[i], fds[i].revents);
        else if (owner[i] == -1)
            accept_connections();
        else
            handle_pending(-2 - owner[i], fds[i].revents);
    }
    expire(Clock::now());
}

void Pmi2Server::client_exited(int client, bool job_ending) {
    Client& c = clients_[static_cast<size_t>(client)];
    // What it wrote before dying (an abort, say) is in the socket already. A
    // process it left behind may still hold its end: read what is there, no more.
    read_from(client);
    close_channel(client);
    c.gone = true;
    if (!job_ending) check_fence();
}

std::vector<Pmi2Server::Event> Pmi2Server::take_events() {
    std::vector<Event> out;
    out.swap(events_);
    return out;
}

Pmi2Server::Read Pmi2Server::read_into(Connection& c, int expected, std::string* why) {
    char buf[16384];
    while (c.fd >= 0) {
        ssize_t n = read(c.fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Read::kOpen;
        if (n <= 0) return Read::kClosed;  // end of stream, or the peer vanished
        size_t used = 0;
        if (c.auth) {
            // Nothing reaches the decoder before the proof is good.
            used = std::min(static_cast<size_t>(n), auth::kProofBytes - c.proof.size());
            c.proof.append(buf, used);
            const auto* proof = reinterpret_cast<const uint8_t*>(c.proof.data());
            if (!auth::proof_prefix_plausible(proof, c.proof.size())) {
                *why = auth::verdict_text(auth::Verdict::kMalformed);
                return Read::kRefused;
            }
            if (c.proof.size() < auth::kProofBytes) continue;
            uint8_t confirm[auth::kConfirmBytes];
            int32_t id = -1;
            const auth::Verdict v = c.auth->check(proof, c.proof.size(), &id, confirm);
            c.auth.reset();
            c.proof.clear();
            if (v != auth::Verdict::kAccepted) {
                *why = auth::verdict_text(v);
                return Read::kRefused;
            }
            if (expected >= 0 && id != expected) {
                *why = "its proof named node process " + std::to_string(id);
                return Read::kRefused;
            }
            c.proven = id;
            c.out.append(reinterpret_cast<const char*>(confirm), sizeof confirm);
            flush(c);
        }
        c.decoder.feed(buf + used, static_cast<size_t>(n) - used);
    }
    return Read::kOpen;
}

void Pmi2Server::read_from(int client) {
    Client& c = clients_[static_cast<size_t>(client)];
    std::string why;
    const Read r = read_into(c.conn, client, &why);
    if (r == Read::kRefused) {
        protocol_error(client, "its PMI connection did not prove the job's secret: " + why);
        return;
    }
    process_decoded(client);  // what came before the end of stream counts
    if (r == Read::kOpen || c.conn.fd < 0) return;
    close_channel(client);
    if (c.tcp && !c.finalized && !c.gone) {
        // Over TCP this may be the only sign of a node process's death.
        c.gone = true;
        events_.push_back(
            {Event::Kind::kLost, client, 1, "closed its PMI connection without finalizing"});
        check_fence();
    }
}

void Pmi2Server::process_decoded(int client) {
    Client& c = clients_[static_cast<size_t>(client)];
    while (c.conn.fd >= 0) {
        Message m;
        bool v1 = false;
        std::string error;
        auto r = c.conn.decoder.next(&m, &v1, &error);
        if (r == runtime::pmi2::StreamDecoder::Result::kNeedMore) return;
        if (r == runtime::pmi2::StreamDecoder::Result::kError) {
            protocol_error(client, "malformed PMI message: " + error);
            return;
        }
        dispatch(client, m, v1);
    }
}

void Pmi2Server::flush(Connection& c) {
    while (c.fd >= 0 && !c.out.empty()) {
        ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c.out.erase(0, static_cast<size_t>(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;  // poll_events() now asks for POLLOUT
        } else {
            close(c.fd);  // the peer is gone; reading tells the rest
            c.fd = -1;
            c.out.clear();
        }
    }
}

void Pmi2Server::close_channel(int client) {
    Connection& c = clients_[static_cast<size_t>(client)].conn;
    if (c.fd >= 0) close(c.fd);
    c.fd = -1;
    c.out.clear();
    c.auth.reset();
}

const std::map<std::string, Pmi2Server::Handler>& Pmi2Server::handlers() {
    static const std::map<std::string, Handler> table = {
        {"fullinit", &Pmi2Server::on_fullinit},
        {"job-getid", &Pmi2Server::on_job_getid},
        {"info-getjobattr", &Pmi2Server::on_getjobattr},
        {"kvs-put", &Pmi2Server::on_kvs_put},
        {"kvs-fence", &Pmi2Server::on_kvs_fence},
        {"kvs-get", &Pmi2Server::on_kvs_get},
        {"name-publish", &Pmi2Server::on_name_publish},
        {"name-unpublish", &Pmi2Server::on_name_unpublish},
        {"name-lookup", &Pmi2Server::on_name_lookup},
        {"abort", &Pmi2Server::on_abort},
        {"finalize", &Pmi2Server::on_finalize},
    };
    return table;
}

// The PMI-1 init line; false when the client asked for another version.
bool Pmi2Server::answer_init(Connection& c, const Message& m) {
    long version = 0;
    bool ok = m.get_int("pmi_version", &version) && version == 2;
    Message resp("response_to_init");
    resp.add_int("pmi_version", 2).add_int("pmi_subversion", 0).add_int("rc", ok ? 0 : 1);
    c.out += runtime::pmi2::format_v1_line(resp);
    flush(c);
    return ok;
}

void Pmi2Server::dispatch(int client, const Message& m, bool v1) {
    Client& c = clients_[static_cast<size_t>(client)];
    if (v1) {
        if (m.cmd() != "init") {
            protocol_error(client, "PMI-1 command '" + m.cmd() + "': mpcrun serves PMI-2 only");
            return;
        }
        if (!answer_init(c.conn, m))
            protocol_error(client, "it asked for PMI version " + m.get("pmi_version", "?") +
                                       "; mpcrun serves PMI-2 only");
        return;
    }
    auto it = handlers().find(m.cmd());
    if (it == handlers().end()) {
        Message resp(m.cmd() + "-response");
        resp.add_int("rc", 1).add("errmsg", "mpcrun does not serve " + m.cmd());
        reply(client, std::move(resp), m);
        return;
    }
    (this->*(it->second))(client, m);
}

void Pmi2Server::reply(int client, Message resp, const Message& request) {
    Client& c = clients_[static_cast<size_t>(client)];
    if (const std::string* thrid = request.find("thrid")) resp.add("thrid", *thrid);
    std::string frame, error;
    if (!runtime::pmi2::format_frame(resp, &frame, &error)) {
        protocol_error(client, "cannot answer: " + error);
        return;
    }
    c.conn.out += frame;
    flush(client);
}

void Pmi2Server::protocol_error(int client, const std::string& what) {
    events_.push_back({Event::Kind::kProtocolError, client, 1, what});
    close_channel(client);
}

void Pmi2Server::on_fullinit(int client, const Message& m) {
    Message resp("fullinit-response");
    resp.add_int("rc", 0).add_int("pmi-version", 2).add_int("pmi-subversion", 0);
    resp.add_int("rank", client).add_int("size", size()).add_int("appnum", 0);
    resp.add_bool("debugged", false).add_bool("pmiverbose", false);
    reply(client, std::move(resp), m);
}

void Pmi2Server::on_job_getid(int client, const Message& m) {
    Message resp("job-getid-response");
    resp.add_int("rc", 0).add("jobid", jobid_);
    reply(client, std::move(resp), m);
}

void Pmi2Server::on_getjobattr(int client, const Message& m) {
    Message resp("info-getjobattr-response");
    resp.add_int("rc", 0);
    auto it = attrs_.find(m.get("key"));
    resp.add_bool("found", it != attrs_.end());
    if (it != attrs_.end()) resp.add("value", it->second);
    reply(client, std::move(resp), m);
}

void Pmi2Server::on_kvs_put(int client, const Message& m) {
    Message resp("kvs-put-response");
    const std::string* key = m.find("key");
    const std::string* value = m.find("value");
    if (!key || !value || !runtime::pmi2::valid_key(*key)) {
        resp.add_int("rc", 1).add("errmsg", "kvs-put needs a valid key and a value");
    } else {
        clients_[static_cast<size_t>(client)].puts.emplace_back(*key, *value);
        resp.add_int("rc", 0);
    }
    reply(client, std::move(resp), m);
}

void Pmi2Server::on_kvs_fence(int client, const Message& m) {
    Client& c = clients_[static_cast<size_t>(client)];
    if (c.in_fence) {
        protocol_error(client, "kvs-fence sent twice without waiting for the answer");
        return;
    }
    c.in_fence = true;
    c.fence_request = m;
    check_fence();
}

void Pmi2Server::on_kvs_get(int client, const Message& m) {
    Message resp("kvs-get-response");
    resp.add_int("rc", 0);
    auto it = kvs_.find(m.get("key"));
    resp.add_bool("found", it != kvs_.end());
    if (it != kvs_.end()) resp.add("value", it->second);
    reply(client, std::move(resp), m);
}

// The job's name service (MPI_Publish_name): names and ports as the clients
// encoded them, opaque here.
void Pmi2Server::on_name_publish(int client, const Message& m) {
    Message resp("name-publish-response");
    const std::string* name = m.find("name");
    const std::string* port = m.find("port");
    if (!name || !port)
        resp.add_int("rc", 1).add("errmsg", "name-publish needs a name and a port");
    else if (!names_.emplace(*name, *port).second)
        resp.add_int("rc", 1).add("errmsg", "the name is published already");
    else
        resp.add_int("rc", 0);
    reply(client, std::move(resp), m);
}

void Pmi2Server::on_name_unpublish(int client, const Message& m) {
    Message resp("name-unpublish-response");
    if (names_.erase(m.get("name")))
        resp.add_int("rc", 0);
    else
        resp.add_int("rc", 1).add("errmsg", "the name is not published");
    reply(client, std::move(resp), m);
}

void Pmi2Server::on_name_lookup(int client, const Message& m) {
    Message resp("name-lookup-response");
    resp.add_int("rc", 0);
    auto it = names_.find(m.get("name"));
    resp.add_bool("found", it != names_.end());
    if (it != names_.end()) resp.add("port", it->second);
    reply(client, std::move(resp), m);
}

void Pmi2Server::on_abort(int client, const Message& m) {
    long status = 1;
    if (!m.get_int("exitcode", &status)) status = 1;
    std::string text = m.find("msg") ? m.get("msg") : m.get("message");
    events_.push_back({Event::Kind::kAbort, client, static_cast<int>(status), text});
}

void Pmi2Server::on_finalize(int client, const Message& m) {
    Message resp("finalize-response");
    resp.add_int("rc", 0);
    reply(client, std::move(resp), m);
    clients_[static_cast<size_t>(client)].finalized = true;
    check_fence();
}

// Completes the fence when every client has joined it; fails it when one
// never can (it finalized or ended).
void Pmi2Server::check_fence() {
    int waiting = 0, absent = -1;
    for (int i = 0; i < size(); ++i) {
        const Client& c = clients_[static_cast<size_t>(i)];
        if (c.in_fence)
            ++waiting;
        else if ((c.finalized || c.gone) && absent < 0)
            absent = i;
    }
    if (waiting == 0) return;
    if (waiting == size()) {
        for (Client& c : clients_) {  // in client order: a later put of a key wins
            for (auto& kv : c.puts) kvs_[kv.first] = std::move(kv.second);
            c.puts.clear();
        }
        for (int i = 0; i < size(); ++i) {
            Client& c = clients_[static_cast<size_t>(i)];
            c.in_fence = false;
            Message resp("kvs-fence-response");
            resp.add_int("rc", 0);
            reply(i, std::move(resp), c.fence_request);
        }
        return;
    }
    if (absent < 0) return;
    const Client& gone = clients_[static_cast<size_t>(absent)];
    std::string why = "node process " + std::to_string(absent) +
                      (gone.finalized ? " finalized" : " ended") +
                      " without joining this kvs-fence";
    for (int i = 0; i < size(); ++i) {
        Client& c = clients_[static_cast<size_t>(i)];
        if (!c.in_fence) continue;
        c.in_fence = false;
        Message resp("kvs-fence-response");
        resp.add_int("rc", 1).add("errmsg", why);
        reply(i, std::move(resp), c.fence_request);
    }
}

}  // namespace mpc::launcher
