// mpcrun/pmi2_server: the PMI-2 server of a local launch.
//
// One socketpair per node process ("client"); the child gets its end as PMI_FD
// together with PMI_RANK, PMI_SIZE and PMI_JOBID, the variables Slurm and
// hydra set. The server answers init, fullinit, job-getid, info-getjobattr,
// kvs-put, kvs-fence, kvs-get, abort and finalize. kvs-fence is a barrier of
// all clients; puts become visible to kvs-get when the fence completes. A
// fence that can no longer complete (a client finalized or ended without
// joining it) fails with an error answer instead of hanging.
//
// Every connection opens with the job's handshake (runtime/handshake.hpp):
// the server sends a challenge at once and takes nothing but the client's
// proof of the job secret before any PMI message. On a socketpair the proven
// id must be the client's index; a failure there is a protocol error (that
// node process cannot take part). Over TCP, a proof that fails closes the
// connection at once and is reported as a kRefused event (the job goes on);
// a connection that stays silent is closed after kHandshakeTimeout, and at
// most kMaxPending unproven connections are kept (the oldest goes first).
//
// Node processes on other hosts (started by ssh or srun) connect over TCP
// instead: listen_tcp() opens a port on one address, given to them as
// PMI_PORT. Until its fullinit a connection is "pending"; fullinit's pmirank
// must be the rank its proof named and its pmijobid this job's. Once every
// node process has connected, the port is closed. A TCP client that goes away
// before finalize is reported as a kLost event (its host may not tell mpcrun
// otherwise).
//
// The server never blocks and never owns the event loop: mpcrun polls fd()
// with poll_events() and calls handle() (likewise the listening socket and
// pending connections, and expire() at next_deadline()); abort and protocol
// errors come back as events for mpcrun to end the job. It never kills or
// waits for processes, and never writes the secret anywhere but into
// child_environment() (which mpcrun passes to local forks only).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/auth.hpp"
#include "runtime/handshake.hpp"
#include "runtime/pmi2_wire.hpp"

namespace mpc::launcher {

class Pmi2Server {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
    static constexpr int kMaxPending = 64;
    static constexpr int kLoggedRefusals = 5;  // kRefused events; later ones are only counted

    struct Event {
        // kRefused: a TCP connection failed the handshake and was closed (the
        // job goes on); message says from where and why.
        enum class Kind { kAbort, kProtocolError, kLost, kRefused };
        Kind kind;
        int client;
        int status;           // abort: the exit code asked for
        std::string message;  // abort: the client's message; error: what was wrong
    };

    // size clients; PMI_process_mapping says one node process per node
    // unless set_job_attr changes it. Clients prove `secret`.
    Pmi2Server(int size, std::string jobid, const runtime::auth::Secret& secret);
    ~Pmi2Server();
    Pmi2Server(const Pmi2Server&) = delete;
    Pmi2Server& operator=(const Pmi2Server&) = delete;

    int size() const { return static_cast<int>(clients_.size()); }
    void set_job_attr(const std::string& key, const std::string& value) { attrs_[key] = value; }

    // Creates client's socketpair and returns the child's end, close-on-exec
    // (the child clears the flag on its copy); -1 with *error on failure.
    int open_channel(int client, std::string* error);
    // The variables the child of client needs, child_fd being its end; the
    // secret among them (a local fork's environment is its own).
    std::vector<std::pair<std::string, std::string>> child_environment(int client,
                                                                       int child_fd) const;
    // In the parent, after fork: its copy of the child's end is not needed.
    void close_child_end(int client);

    // TCP: listens on `address` (an IPv4 or IPv6 address of this host), an
    // ephemeral port; returns the port, or -1 with *error.
    int listen_tcp(const std::string& address, std::string* error);
    // The variables of a node process that connects over TCP: PMI_PORT (at
    // host, which must reach this one), PMI_JOBID, PMI_SIZE, and PMI_RANK
    // unless client < 0 (srun gives each task SLURM_PROCID instead). Not the
    // secret: the caller hands it over its own way.
    std::vector<std::pair<std::string, std::string>> tcp_environment(const std::string& host,
                                                                     int client) const;

    // Polling: the server's end of client's channel (-1 once closed), the
    // events to wait for, and what to do when poll() reports revents.
    int fd(int client) const { return clients_[static_cast<size_t>(client)].conn.fd; }
    short poll_events(int client) const;
    void handle(int client, short revents);
    // The same for the listening socket (-1 without TCP) and for the pending
    // connections (slots whose fd is -1 are free).
    int listen_fd() const { return listen_fd_; }
    void accept_connections();
    int pending_slots() const { return static_cast<int>(pending_.size()); }
    int pending_fd(int slot) const { return pending_[static_cast<size_t>(slot)].fd; }
    short pending_poll_events(int slot) const;
    void handle_pending(int slot, short revents);
    // Pending connections silent for kHandshakeTimeout: the earliest time one
    // expires (max() when none), and closing those whose time has come.
    Clock::time_point next_deadline() const;
    void expire(Clock::time_point now);
    // Connections refused so far (kRefused events stop after kLoggedRefusals).
    int refused() const { return refused_; }
    // Closes every connection (the job is over: remote node processes still
    // running see it and end) and the listening socket.
    void close_all();
    // One poll() round over every channel (tests, simple loops).
    void poll_once(int timeout_ms);

    // The node process ended: what it sent is processed, then the channel is
    // closed. Unless the job is ending anyway, fences it will never join fail.
    void client_exited(int client, bool job_ending);

    std::vector<Event> take_events();
    bool finalized(int client) const { return clients_[static_cast<size_t>(client)].finalized; }

  private:
    struct Connection {
        int fd = -1;
        runtime::pmi2::StreamDecoder decoder;
        std::string out;  // answers not yet written
        // Until the proof is checked: the challenge sent and the proof's
        // bytes so far. Afterwards null, and proven the id the proof named.
        std::unique_ptr<runtime::auth::Acceptor> auth;
        std::string proof;
        int proven = -1;
        Clock::time_point deadline = Clock::time_point::max();  // pending only
        std::string from;                                       // TCP: the peer's address
    };
    enum class Read { kOpen, kClosed, kRefused };
    struct Client {
        Connection conn;
        int child_fd = -1;
        bool tcp = false;  // connected through listen_tcp()
        bool in_fence = false;
        bool finalized = false;
        bool gone = false;
        std::vector<std::pair<std::string, std::string>> puts;  // until the next fence
        runtime::pmi2::Message fence_request;                   // answered when the fence ends
    };
    using Handler = void (Pmi2Server::*)(int, const runtime::pmi2::Message&);

    void read_from(int client);
    void process_decoded(int client);
    // Reads what c holds: the handshake first, then into the decoder. kRefused
    // with *why when the proof fails or names another id than `expected`
    // (-1: any); the caller closes.
    Read read_into(Connection& c, int expected, std::string* why);
    void start_handshake(Connection& c);
    void refuse(Connection& c, const std::string& why);
    static void flush(Connection& c);
    void flush(int client) { flush(clients_[static_cast<size_t>(client)].conn); }
    void close_channel(int client);
    static bool answer_init(Connection& c, const runtime::pmi2::Message& m);
    void identify(int slot, const runtime::pmi2::Message& fullinit);
    void dispatch(int client, const runtime::pmi2::Message& m, bool v1);
    void reply(int client, runtime::pmi2::Message m, const runtime::pmi2::Message& request);
    void protocol_error(int client, const std::string& what);
    void check_fence();

    void on_fullinit(int client, const runtime::pmi2::Message& m);
    void on_job_getid(int client, const runtime::pmi2::Message& m);
    void on_getjobattr(int client, const runtime::pmi2::Message& m);
    void on_kvs_put(int client, const runtime::pmi2::Message& m);
    void on_kvs_fence(int client, const runtime::pmi2::Message& m);
    void on_kvs_get(int client, const runtime::pmi2::Message& m);
    void on_name_publish(int client, const runtime::pmi2::Message& m);
    void on_name_unpublish(int client, const runtime::pmi2::Message& m);
    void on_name_lookup(int client, const runtime::pmi2::Message& m);
    void on_abort(int client, const runtime::pmi2::Message& m);
    void on_finalize(int client, const runtime::pmi2::Message& m);

    static const std::map<std::string, Handler>& handlers();

    std::vector<Client> clients_;
    std::vector<Connection> pending_;
    int listen_fd_ = -1;
    std::string jobid_;
    runtime::auth::Secret secret_;
    int refused_ = 0;
    std::map<std::string, std::string> attrs_;
    std::map<std::string, std::string> kvs_;
    std::map<std::string, std::string> names_;  // MPI_Publish_name's
    std::vector<Event> events_;
};

}  // namespace mpc::launcher
