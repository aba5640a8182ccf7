// mpcrun's PMI-2 server with the runtime's client, in one process: clients in
// threads over socketpairs, and raw clients speaking the wire by hand.
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
#include "runtime/pmi2_client.hpp"
#include "runtime/pmi2_wire.hpp"

using mpc::launcher::Pmi2Server;
using mpc::runtime::Bootstrap;
namespace pmi2 = mpc::runtime::pmi2;

namespace {

// A server polled by its own thread; events are collected for the test.
// With tcp, clients connect to its port instead of using socketpairs.
class ServerThread {
  public:
    explicit ServerThread(int size, bool tcp = false) : server_(size, "test-job") {
        if (tcp) {
            std::string error;
            port_ = server_.listen_tcp(&error);
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
        return pmi2::connect({fds_[static_cast<size_t>(i)], "test-job", i}, error);
    }
    // As a node process on another host would: PMI_PORT, PMI_JOBID, PMI_RANK.
    std::unique_ptr<Bootstrap> connect_tcp(int rank, const std::string& jobid, std::string* error) {
        int fd = pmi2::connect_tcp("localhost:" + std::to_string(port_), error);
        if (fd < 0) return nullptr;
        return pmi2::connect({fd, jobid, rank}, error);
    }

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

std::vector<int> open_raw(Pmi2Server& server) {
    std::vector<int> fds;
    for (int i = 0; i < server.size(); ++i) {
        std::string error;
        int child = server.open_channel(i, &error);
        REQUIRE(child >= 0);
        fds.push_back(dup(child));
        server.close_child_end(i);
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
    Pmi2Server server(1, "job-7");
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
        Pmi2Server server(2, "j");
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
        Pmi2Server server(2, "j");
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
        Pmi2Server server(2, "j");
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
    Pmi2Server server(2, "j");
    std::vector<int> fds = open_raw(server);
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
    int silent = pmi2::connect_tcp("localhost:" + std::to_string(s.port()), &error);
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
