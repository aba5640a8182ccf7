// runtime/netif: where a job's listeners bind. Loopback names are this host,
// an address of another host is not one a listener can take, and MPC_NET_IF
// picks the interface (a name that is none is an error, not a silent choice).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "runtime/netif.hpp"

using namespace mpc::runtime;

TEST_CASE("this host's names", "[netif]") {
    CHECK(netif::is_this_host("localhost"));
    CHECK(netif::is_this_host("127.0.0.1"));
    CHECK(netif::is_this_host("127.0.1.1"));
    char name[256] = {};
    REQUIRE(gethostname(name, sizeof name - 1) == 0);
    const std::string full = name;
    CHECK(netif::is_this_host(full));
    CHECK(netif::is_this_host(full.substr(0, full.find('.'))));
    CHECK_FALSE(netif::is_this_host("elsewhere.invalid"));
    CHECK_FALSE(netif::is_this_host(""));
}

TEST_CASE("an address to bind: this host's only", "[netif]") {
    std::string error;
    CHECK(netif::local_address_of("127.0.0.1", &error) == "127.0.0.1");
    CHECK_FALSE(netif::local_address_of("localhost", &error).empty());
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this host.
    CHECK(netif::local_address_of("192.0.2.1", &error).empty());
    CHECK(error == "not an address of this host");
    CHECK(netif::local_address_of("nowhere.invalid", &error).empty());
}

TEST_CASE("MPC_NET_IF chooses the interface", "[netif]") {
    std::string error;
    setenv("MPC_NET_IF", "lo", 1);
    CHECK(netif::job_address(&error) == "127.0.0.1");
    setenv("MPC_NET_IF", "no-such-if0", 1);
    CHECK(netif::job_address(&error).empty());
    CHECK(error.find("MPC_NET_IF=no-such-if0") == 0);
    unsetenv("MPC_NET_IF");
    CHECK_FALSE(netif::job_address(&error).empty());  // some interface, or 127.0.0.1
}
