// Listening addresses: see runtime/netif.hpp.
#include "runtime/netif.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/env.hpp"

namespace mpc::runtime::netif {

std::string job_address(std::string* error) {
    const char* wanted = env::get("MPC_NET_IF");
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) {
        *error = std::string("getifaddrs: ") + std::strerror(errno);
        return {};
    }
    std::string found;
    for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        if (wanted ? std::strcmp(i->ifa_name, wanted) != 0 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        char text[INET_ADDRSTRLEN];
        auto* in = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
        if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text)) found = text;
    }
    freeifaddrs(list);
    if (found.empty() && wanted) {
        *error = std::string("MPC_NET_IF=") + wanted + ": no such interface with an IPv4 address";
        return {};
    }
    return found.empty() ? kLoopback : found;
}

std::string local_address_of(const std::string& host, std::string* error) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
        *error = gai_strerror(rc);
        return {};
    }
    std::string chosen;
    for (addrinfo* a = found; a && chosen.empty(); a = a->ai_next) {
        const int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0) {
            char text[INET6_ADDRSTRLEN] = {};
            const void* where = a->ai_family == AF_INET
                                    ? static_cast<const void*>(
                                          &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
                                    : static_cast<const void*>(
                                          &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
            if (inet_ntop(a->ai_family, where, text, sizeof text)) chosen = text;
        }
        close(fd);
    }
    freeaddrinfo(found);
    if (chosen.empty()) *error = "not an address of this host";
    return chosen;
}

bool is_this_host(const std::string& name) {
    if (name == "localhost" || name == "localhost.localdomain" || name == "::1" ||
        name.rfind("127.", 0) == 0)
        return true;
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) return false;
    const std::string full = host;
    const std::string shortname = full.substr(0, full.find('.'));
    return name == full || name == shortname;
}

}  // namespace mpc::runtime::netif
