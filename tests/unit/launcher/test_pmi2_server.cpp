// mpcrun's PMI-2 server with the runtime's client, in one process: clients in
// threads over socketpairs, and raw clients speaking the wire by hand; every
// connection proves the job's secret first, and those that do not are refused.
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "pmi2_server.hpp"
#include "runtime/auth.hpp"
#include "runtime/handshake.hpp"
#include "runtime/pmi2_client.hpp"
#include "runtime/pmi2_wire.hpp"

using mpc::launcher::Pmi2Server;
using mpc::runtime::Bootstrap;
namespace pmi2 = mpc::runtime::pmi2;
namespace auth = mpc::runtime::auth;

namespace {

const auth::Secret& job_secret() {
    static const auth::Secret secret = auth::make_secret();
    return secret;
}

// The client's half of the handshake on a blocking fd, the server being
// polled by `pump` (or by its own thread when null); false when refused.
bool prove(int fd, int id, const auth::Secret& secret, Pmi2Server* pump = nullptr) {
    uint8_t challenge[auth::kChallengeBytes], proof[auth::kProofBytes],
        confirm[auth::kConfirmBytes];
    if (read(fd, challenge, sizeof challenge) != static_cast<ssize_t>(sizeof challenge))
        return false;
    auth::Connector c(secret, auth::Purpose::kPmi, id, auth::kLauncherId);
    const char* why = nullptr;
    if (!c.answer(challenge, sizeof challenge, proof, &why)) return false;
    if (!pmi2::write_all(fd, std::string(reinterpret_cast<char*>(proof), sizeof proof)))
        return false;
    if (pump) pump->poll_once(1000);
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 5000) != 1) return false;
    if (read(fd, confirm, sizeof confirm) != static_cast<ssize_t>(sizeof confirm)) return false;
    return c.check_confirm(confirm, sizeof confirm, &why);
}

// A server polled by its own thread; events are collected for the test.
// With tcp, clients connect to its port instead of using socketpairs.
class ServerThread {
  public:
    explicit ServerThread(int size, bool tcp = false) : server_(size, "test-job", job_secret()) {
        if (tcp) {
            std::string error;
            port_ = server_.listen_tcp("127.0.0.1", &error);
            INFO(error);
            REQUIRE(port_ > 0);
        }
        for (int i = 0; i < size && !tcp; ++i) {
            std::string error;
            int child = server_.open_channel(i, &error);
            REQUIRE(child >= 0);
            fds_.push_back(dup(child));  // the client owns this copy
            server_.close_child_end(i);
        }
        thread_ = std::thread([this] {
            while (!stop_) {
                server_.poll_once(5);
                std::lock_guard lock(mutex_);
                for (auto& e : server_.take_events()) events_.push_back(e);
            }
        });
    }
    ~ServerThread() {
        stop_ = true;
        thread_.join();
    }

    std::unique_ptr<Bootstrap> connect(int i) {
        std::string error;
        auto boot = connect_quiet(i, &error);
        INFO(error);
        REQUIRE(boot);
        return boot;
    }
    // For client threads: Catch2's assertion macros are for the test's thread only.
    std::unique_ptr<Bootstrap> connect_quiet(int i, std::string* error) {
        if (port_ > 0) return connect_tcp(i, "test-job", error);
        return pmi2::connect({fds_[static_cast<size_t>(i)], "test-job", i, false, job_secret()},
                             error);
    }
    // As a node process on another host would: PMI_PORT, PMI_JOBID, PMI_RANK,
    // and the job's secret (or another one).
    std::unique_ptr<Bootstrap> connect_tcp(int rank, const std::string& jobid, std::string* error,
                                           const auth::Secret& secret = job_secret()) {
        int fd = pmi2::connect_tcp(address(), error);
        if (fd < 0) return nullptr;
        return pmi2::connect({fd, jobid, rank, false, secret}, error);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

    int port() const { return port_; }

    // Waits up to timeout_ms for an event (shorter when none is expected).
    std::vector<Pmi2Server::Event> wait_events(int timeout_ms = 5000) {
        for (int i = 0; i < timeout_ms / 5; ++i) {
            {
                std::lock_guard lock(mutex_);
                if (!events_.empty()) return events_;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return {};
    }

  private:
    Pmi2Server server_;
    int port_ = -1;
    std::vector<int> fds_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::vector<Pmi2Server::Event> events_;
    std::thread thread_;
};

// A client written by hand, against a server the test polls itself.
struct RawClient {
    Pmi2Server& server;
    int fd;

    void send(const pmi2::Message& m) {
        std::string frame, error;
        REQUIRE(pmi2::format_frame(m, &frame, &error));
        REQUIRE(pmi2::write_all(fd, frame));
        server.poll_once(1000);
    }
    pmi2::Message receive() {
        pmi2::Message m;
        std::string error;
        INFO(error);
        REQUIRE(pmi2::read_frame(fd, &m, &error));
        return m;
    }
    pmi2::Message call(const pmi2::Message& m) {
        send(m);
        return receive();
    }
};

// Socketpair clients of `server`; with proven, each has done its handshake.
std::vector<int> open_raw(Pmi2Server& server, bool proven = true) {
    std::vector<int> fds;
    for (int i = 0; i < server.size(); ++i) {
        std::string error;
        int child = server.open_channel(i, &error);
        REQUIRE(child >= 0);
        fds.push_back(dup(child));
        server.close_child_end(i);
        if (proven) REQUIRE(prove(fds.back(), i, job_secret(), &server));
    }
    return fds;
}

std::string tricky_value(int i) {
    std::string v = "v";
    v += std::to_string(i) + ";=% \n";
    for (int b = 0; b < 256; b += 3) v += static_cast<char>(b);
    return v;
}

}  // namespace

TEST_CASE("fullinit gives rank, size and the job attributes", "[pmi2][server]") {
    ServerThread s(3);
    std::vector<std::unique_ptr<Bootstrap>> boots;
    for (int i = 0; i < 3; ++i) boots.push_back(s.connect(i));
    for (int i = 0; i < 3; ++i) {
        CHECK(boots[static_cast<size_t>(i)]->rank() == i);
        CHECK(boots[static_cast<size_t>(i)]->size() == 3);
        CHECK(boots[static_cast<size_t>(i)]->appnum() == 0);
    }
    CHECK(boots[1]->job_attr("PMI_process_mapping") == "(vector,(0,3,1))");
    CHECK(boots[2]->job_attr("no-such-attribute").empty());
    for (auto& b : boots) b->finalize();
}

TEST_CASE("names published by one client are found by the others", "[pmi2][server]") {
    ServerThread s(2);
    auto a = s.connect(0);
    auto b = s.connect(1);
    std::string error, port;
    bool found = true;
    // Any text: the client encodes what the wire cannot carry.
    const std::string name = "svc;with=odd chars", value = tricky_value(3);
    CHECK(a->name_publish(name, value, &error));
    CHECK_FALSE(b->name_publish(name, "other", &error));
    CHECK(error.find("published already") != std::string::npos);
    CHECK(b->name_lookup(name, &port, &found, &error));
    CHECK(found);
    CHECK(port == value);
    CHECK(b->name_unpublish(name, &error));
    CHECK_FALSE(a->name_unpublish(name, &error));
    CHECK(a->name_lookup(name, &port, &found, &error));
    CHECK_FALSE(found);
    a->finalize();
    b->finalize();
}

TEST_CASE("kvs-fence is a barrier after which every put is visible", "[pmi2][server]") {
    constexpr int kClients = 4;
    const bool tcp = GENERATE(false, true);
    INFO("over " << (tcp ? "TCP" : "socketpairs"));
    ServerThread s(kClients, tcp);
    std::atomic<int> arrived{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kClients; ++i) {
        threads.emplace_back([&, i] {
            std::string error;
            auto boot = s.connect_quiet(i, &error);
            if (!boot) {
                ++failures;
                ++arrived;  // (the others then fail the fence check too)
                return;
            }
            boot->put("key-" + std::to_string(i), tricky_value(i));
            if (!boot->get("key-" + std::to_string(i)).empty()) ++failures;  // not before fence
            if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            ++arrived;
            boot->fence();
            if (arrived != kClients) ++failures;  // left the fence before all came
            for (int j = 0; j < kClients; ++j)
                if (boot->get("key-" + std::to_string(j)) != tricky_value(j)) ++failures;
            if (!boot->get("absent").empty()) ++failures;
            // A second round overwrites a key.
            if (i == 0) boot->put("key-1", "new");
            boot->fence();
            if (boot->get("key-1") != "new") ++failures;
            boot->finalize();
        });
    }
    for (auto& t : threads) t.join();
    CHECK(failures == 0);
}

TEST_CASE("abort reaches mpcrun as an event with status and message", "[pmi2][server]") {
    ServerThread s(2);
    auto b0 = s.connect(0);
    auto b1 = s.connect(1);
    b1->abort(5, "boom; bad things");
    auto events = s.wait_events();
    REQUIRE(events.size() == 1);
    CHECK(events[0].kind == Pmi2Server::Event::Kind::kAbort);
    CHECK(events[0].client == 1);
    CHECK(events[0].status == 5);
    CHECK(events[0].message == "boom  bad things");
}

TEST_CASE("raw PMI-2: thrid is echoed, ';' escapes, unknown commands fail", "[pmi2][server]") {
    Pmi2Server server(1, "job-7", job_secret());
    std::vector<int> fds = open_raw(server);
    RawClient c{server, fds[0]};
    REQUIRE(pmi2::write_all(c.fd, "cmd=init pmi_version=2 pmi_subversion=0\n"));
    server.poll_once(1000);
    pmi2::Message hello;
    std::string error;
    REQUIRE(pmi2::read_v1_line(c.fd, &hello, &error));
    CHECK(hello.cmd() == "response_to_init");
    CHECK(hello.get("rc") == "0");

    pmi2::Message init("fullinit");
    init.add("pmirank", "0").add("threaded", "TRUE").add("thrid", "0x1234");
    pmi2::Message r = c.call(init);
    CHECK(r.cmd() == "fullinit-response");
    CHECK(r.get("thrid") == "0x1234");
    CHECK(r.get("rank") == "0");
    CHECK(r.get("size") == "1");

    CHECK(c.call(pmi2::Message("job-getid")).get("jobid") == "job-7");
    pmi2::Message put("kvs-put");
    put.add("key", "k").add("value", "a;b;;c");
    CHECK(c.call(put).get("rc") == "0");
    CHECK(c.call(pmi2::Message("kvs-fence")).get("rc") == "0");
    pmi2::Message get("kvs-get");
    get.add("jobid", "job-7").add("srcid", "-1").add("key", "k");
    r = c.call(get);
    CHECK(r.get("found") == "TRUE");
    CHECK(r.get("value") == "a;b;;c");

    r = c.call(pmi2::Message("name-publish"));
    CHECK(r.cmd() == "name-publish-response");
    CHECK(r.get("rc") != "0");
    CHECK(server.take_events().empty());
    close(c.fd);
}

TEST_CASE("a fence that cannot complete fails instead of hanging", "[pmi2][server]") {
    SECTION("the other client finalized") {
        Pmi2Server server(2, "j", job_secret());
        std::vector<int> fds = open_raw(server);
        RawClient a{server, fds[0]}, b{server, fds[1]};
        CHECK(b.call(pmi2::Message("finalize")).cmd() == "finalize-response");
        pmi2::Message r = a.call(pmi2::Message("kvs-fence"));
        CHECK(r.get("rc") != "0");
        CHECK(r.get("errmsg").find("node process 1 finalized") != std::string::npos);
        close(a.fd);
        close(b.fd);
    }
    SECTION("the other client ended") {
        Pmi2Server server(2, "j", job_secret());
        std::vector<int> fds = open_raw(server);
        RawClient a{server, fds[0]};
        a.send(pmi2::Message("kvs-fence"));
        close(fds[1]);
        server.client_exited(1, false);
        pmi2::Message r = a.receive();
        CHECK(r.get("rc") != "0");
        CHECK(r.get("errmsg").find("node process 1 ended") != std::string::npos);
        close(a.fd);
    }
    SECTION("a failed client does not fail the fence: the job is ending anyway") {
        Pmi2Server server(2, "j", job_secret());
        std::vector<int> fds = open_raw(server);
        RawClient a{server, fds[0]};
        a.send(pmi2::Message("kvs-fence"));
        close(fds[1]);
        server.client_exited(1, true);
        server.poll_once(50);
        pollfd p{a.fd, POLLIN, 0};
        CHECK(poll(&p, 1, 50) == 0);  // no answer yet
        close(a.fd);
    }
}

TEST_CASE("protocol errors become events and close the channel", "[pmi2][server]") {
    Pmi2Server server(2, "j", job_secret());
    std::vector<int> fds = open_raw(server);  // proven: the errors come after
    REQUIRE(pmi2::write_all(fds[0], "cmd=init pmi_version=1 pmi_subversion=1\n"));
    REQUIRE(pmi2::write_all(fds[1], "xx12  garbage"));
    server.poll_once(1000);
    server.poll_once(100);
    auto events = server.take_events();
    REQUIRE(events.size() == 2);
    for (const auto& e : events) CHECK(e.kind == Pmi2Server::Event::Kind::kProtocolError);
    CHECK(server.fd(0) < 0);
    CHECK(server.fd(1) < 0);
    pmi2::Message refused;
    std::string error;
    REQUIRE(pmi2::read_v1_line(fds[0], &refused, &error));
    CHECK(refused.get("rc") != "0");
    close(fds[0]);
    close(fds[1]);
}

TEST_CASE("TCP clients are known by their pmirank, in any order", "[pmi2][server][tcp]") {
    ServerThread s(3, true);
    std::vector<std::unique_ptr<Bootstrap>> boots(3);
    for (int i = 2; i >= 0; --i) boots[static_cast<size_t>(i)] = s.connect(i);
    for (int i = 0; i < 3; ++i) CHECK(boots[static_cast<size_t>(i)]->rank() == i);
    CHECK(boots[0]->job_attr("PMI_process_mapping") == "(vector,(0,3,1))");
    for (auto& b : boots) b->finalize();
    CHECK(s.wait_events(200).empty());  // finalized first: closing is no loss
}

TEST_CASE("TCP connections of another job or a taken rank are refused", "[pmi2][server][tcp]") {
    ServerThread s(2, true);
    std::string error;
    CHECK_FALSE(s.connect_tcp(0, "other-job", &error));
    CHECK(error.find("refused") != std::string::npos);
    CHECK(error.find("another job") != std::string::npos);
    CHECK_FALSE(s.connect_tcp(5, "test-job", &error));
    CHECK(error.find("pmirank") != std::string::npos);
    CHECK_FALSE(s.connect_tcp(-1, "test-job", &error));
    auto first = s.connect(1);
    CHECK_FALSE(s.connect_tcp(1, "test-job", &error));
    CHECK(error.find("node process 1 is connected already") != std::string::npos);
    // A connection that says nothing and leaves changes nothing.
    int silent = pmi2::connect_tcp(s.address(), &error);
    REQUIRE(silent >= 0);
    close(silent);
    auto second = s.connect(0);
    CHECK(second->rank() == 0);
    first->finalize();
    second->finalize();
}

TEST_CASE("a TCP client gone before finalize is reported lost", "[pmi2][server][tcp]") {
    ServerThread s(2, true);
    auto a = s.connect(0);
    auto b = s.connect(1);
    b.reset();  // closes its connection without finalize
    auto events = s.wait_events();
    REQUIRE(events.size() == 1);
    CHECK(events[0].kind == Pmi2Server::Event::Kind::kLost);
    CHECK(events[0].client == 1);
    a.reset();
}

TEST_CASE("connect_tcp explains what it cannot reach", "[pmi2][client][tcp]") {
    std::string error;
    CHECK(pmi2::connect_tcp("no-port-here", &error) < 0);
    CHECK(error.find("is not host:port") != std::string::npos);
    CHECK(pmi2::connect_tcp("host.invalid:1", &error) < 0);
    CHECK(error.find("cannot resolve") != std::string::npos);
}

TEST_CASE("a socketpair client that does not prove the secret is a protocol error",
          "[pmi2][server][auth]") {
    Pmi2Server server(3, "j", job_secret());
    std::vector<int> fds = open_raw(server, false);
    // 0 speaks PMI at once, 1 proves another secret, 2 proves to be node process 0.
    REQUIRE(pmi2::write_all(fds[0], "cmd=init pmi_version=2 pmi_subversion=0\n"));
    CHECK_FALSE(prove(fds[1], 1, auth::make_secret(), &server));
    CHECK_FALSE(prove(fds[2], 0, job_secret(), &server));
    server.poll_once(100);
    server.poll_once(100);
    auto events = server.take_events();
    REQUIRE(events.size() == 3);
    for (const auto& e : events) {
        CHECK(e.kind == Pmi2Server::Event::Kind::kProtocolError);
        CHECK(e.message.find("did not prove the job's secret") != std::string::npos);
    }
    for (int i = 0; i < 3; ++i) CHECK(server.fd(i) < 0);
    for (int fd : fds) close(fd);
}

TEST_CASE("TCP: a stranger is refused at once and the job goes on", "[pmi2][server][tcp][auth]") {
    ServerThread s(2, true);
    auto first = s.connect(0);
    std::string error;
    // Another secret: the client learns it was refused, mpcrun logs it.
    CHECK_FALSE(s.connect_tcp(1, "test-job", &error, auth::make_secret()));
    auto events = s.wait_events();
    REQUIRE(events.size() == 1);
    CHECK(events[0].kind == Pmi2Server::Event::Kind::kRefused);
    CHECK(events[0].message.find("refused a PMI connection from 127.0.0.1:") == 0);
    CHECK(events[0].message.find("proof of the job's secret is wrong") != std::string::npos);
    // Plain PMI without a proof: closed as soon as its first bytes show it.
    int plain = pmi2::connect_tcp(s.address(), &error);
    REQUIRE(plain >= 0);
    REQUIRE(pmi2::write_all(plain, "cmd=init pmi_version=2 pmi_subversion=0\n"));
    char buf[256];
    pollfd p{plain, POLLIN, 0};
    ssize_t n = 0;
    for (int round = 0; round < 2 && poll(&p, 1, 5000) == 1; ++round) {
        n = read(plain, buf, sizeof buf);  // the challenge, then end of stream
        if (n <= 0) break;
    }
    CHECK(n <= 0);
    close(plain);
    // The real node process 1 still joins, and the two fence together.
    auto second = s.connect(1);
    std::thread t([&] { first->fence(); });
    second->fence();
    t.join();
    first->finalize();
    second->finalize();
}

TEST_CASE("TCP: a proof replayed on another connection is refused", "[pmi2][server][tcp][auth]") {
    ServerThread s(1, true);
    std::string error;
    // Connection A: a proof made with the secret for A's challenge, never sent.
    int a = pmi2::connect_tcp(s.address(), &error), b = pmi2::connect_tcp(s.address(), &error);
    REQUIRE(a >= 0);
    REQUIRE(b >= 0);
    uint8_t challenge[auth::kChallengeBytes], proof[auth::kProofBytes];
    REQUIRE(read(a, challenge, sizeof challenge) == static_cast<ssize_t>(sizeof challenge));
    auth::Connector c(job_secret(), auth::Purpose::kPmi, 0, auth::kLauncherId);
    const char* why = nullptr;
    REQUIRE(c.answer(challenge, sizeof challenge, proof, &why));
    // Connection B gets it instead: refused.
    REQUIRE(read(b, challenge, sizeof challenge) == static_cast<ssize_t>(sizeof challenge));
    REQUIRE(pmi2::write_all(b, std::string(reinterpret_cast<char*>(proof), sizeof proof)));
    auto events = s.wait_events();
    REQUIRE(events.size() == 1);
    CHECK(events[0].message.find("proof of the job's secret is wrong") != std::string::npos);
    close(a);
    close(b);
    auto node = s.connect(0);  // the real one is not hindered
    node->finalize();
}

TEST_CASE("TCP: silent connections expire, and crowds make room", "[pmi2][server][tcp][auth]") {
    Pmi2Server server(1, "j", job_secret());
    std::string error;
    const int port = server.listen_tcp("127.0.0.1", &error);
    REQUIRE(port > 0);
    const std::string address = "127.0.0.1:" + std::to_string(port);
    std::vector<int> silent;
    for (int i = 0; i < Pmi2Server::kMaxPending + 3; ++i) {
        silent.push_back(pmi2::connect_tcp(address, &error));
        REQUIRE(silent.back() >= 0);
        server.accept_connections();
    }
    int open = 0;
    for (int slot = 0; slot < server.pending_slots(); ++slot) open += server.pending_fd(slot) >= 0;
    CHECK(open == Pmi2Server::kMaxPending);  // the 3 oldest went
    CHECK(server.refused() == 3);
    CHECK(server.next_deadline() != Pmi2Server::Clock::time_point::max());
    server.expire(Pmi2Server::Clock::now() + Pmi2Server::kHandshakeTimeout +
                  std::chrono::seconds(1));
    open = 0;
    for (int slot = 0; slot < server.pending_slots(); ++slot) open += server.pending_fd(slot) >= 0;
    CHECK(open == 0);
    CHECK(server.refused() == Pmi2Server::kMaxPending + 3);
    // Logged: the first few only.
    auto events = server.take_events();
    CHECK(events.size() == static_cast<size_t>(Pmi2Server::kLoggedRefusals));
    CHECK(events.back().message.find("only counted") != std::string::npos);
    for (int fd : silent) close(fd);
}

TEST_CASE("TCP: the port closes once every node process is connected", "[pmi2][server][tcp]") {
    ServerThread s(2, true);
    auto a = s.connect(0);
    auto b = s.connect(1);
    std::string error;
    CHECK(pmi2::connect_tcp(s.address(), &error) < 0);
    CHECK(error.find("refused") != std::string::npos);
    a->finalize();
    b->finalize();
}
