// mpcrun --info: see info.hpp.
#include "info.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include "runtime/netif.hpp"

#if MPC_BUILD_OFI
#include <rdma/fabric.h>
#endif

namespace mpc::launcher {
namespace {

const char* yes_no(bool b) {
    return b ? "yes" : "no";
}

std::string env_or(const char* name, const char* fallback) {
    const char* v = getenv(name);
    return v && *v ? v : fallback;
}

// Up IPv4 interfaces: name and address.
void print_interfaces(FILE* out) {
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return;
    for (ifaddrs* i = list; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        char text[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text,
                  sizeof text);
        fprintf(out, "                 interface %-10s %s%s\n", i->ifa_name, text,
                (i->ifa_flags & IFF_LOOPBACK) ? " (loopback)" : "");
    }
    freeifaddrs(list);
}

// RDMA devices as the kernel lists them (what libibverbs would open).
std::string rdma_devices() {
    std::string names;
    if (DIR* d = opendir("/sys/class/infiniband")) {
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] == '.') continue;
            names += (names.empty() ? "" : ", ") + std::string(e->d_name);
        }
        closedir(d);
    }
    return names.empty() ? "none" : names;
}

#if MPC_BUILD_OFI
// libfabric providers offering what the ofi driver needs (connected
// endpoints, messages, RMA writes): provider and domain, once each.
void print_providers(FILE* out) {
    void* lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(out, "                 libfabric.so.1 cannot be loaded: %s\n", dlerror());
        return;
    }
    using GetInfo =
        int (*)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**);
    using DupInfo = fi_info* (*)(const fi_info*);
    using FreeInfo = void (*)(fi_info*);
    using Version = uint32_t (*)();
    auto get = reinterpret_cast<GetInfo>(dlsym(lib, "fi_getinfo"));
    auto dup = reinterpret_cast<DupInfo>(dlsym(lib, "fi_dupinfo"));
    auto release = reinterpret_cast<FreeInfo>(dlsym(lib, "fi_freeinfo"));
    auto version = reinterpret_cast<Version>(dlsym(lib, "fi_version"));
    if (!get || !dup || !release || !version) {
        fprintf(out, "                 libfabric.so.1 lacks fi_getinfo\n");
        return;
    }
    const uint32_t v = version();
    fprintf(out, "                 libfabric %u.%u; providers with connected endpoints and RMA:\n",
            FI_MAJOR(v), FI_MINOR(v));
    fi_info* hints = dup(nullptr);
    fi_info* found = nullptr;
    std::set<std::pair<std::string, std::string>> seen;
    if (hints) {
        hints->caps = FI_MSG | FI_RMA;
        hints->ep_attr->type = FI_EP_MSG;
        if (get(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &found) == 0) {
            for (fi_info* i = found; i; i = i->next) {
                const std::string prov =
                    i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "?";
                const std::string dom = i->domain_attr->name ? i->domain_attr->name : "?";
                if (seen.insert({prov, dom}).second)
                    fprintf(out, "                   %s (domain %s)\n", prov.c_str(), dom.c_str());
            }
            release(found);
        }
        release(hints);
    }
    if (seen.empty()) fprintf(out, "                   none\n");
    // Not closed: mpcrun ends right after, and what libfabric keeps (its
    // providers' state) stays attributable to it (LeakSanitizer's suppressions).
}
#endif

}  // namespace

int print_info(FILE* out) {
    fprintf(out, "fibermpi %s: a thread-based MPI (ranks are fibers of one process per node)\n",
            FIBERMPI_VERSION_STRING);
    fprintf(out, "build:           %s; link-time optimized: %s; sanitizers: %s; Fortran: %s\n",
            MPC_BUILD_TYPE, yes_no(MPC_BUILD_LTO), MPC_BUILD_SANITIZE, yes_no(MPC_BUILD_FORTRAN));
    fprintf(out, "MPI:             3.1 (C, mpif.h, use mpi)\n");
    fprintf(out,
            "launch:          fork on this host; ssh to --hosts (MPC_SSH=%s); srun inside a "
            "Slurm allocation (MPC_SRUN=%s)%s\n",
            env_or("MPC_SSH", "ssh").c_str(), env_or("MPC_SRUN", "srun").c_str(),
            getenv("SLURM_JOB_ID") ? " [inside one now]" : "");
    fprintf(out, "bootstrap:       PMI-2 (mpcrun, srun --mpi=pmi2, hydra)\n");
    std::string error;
    const std::string address = runtime::netif::job_address(&error);
    fprintf(out, "network drivers:\n");
    fprintf(out,
            "  tcp            built; binds %s for a job on one host, else %s (MPC_NET_IF=%s)\n",
            runtime::netif::kLoopback, address.empty() ? error.c_str() : address.c_str(),
            env_or("MPC_NET_IF", "unset: the first interface up, not loopback").c_str());
    print_interfaces(out);
#if MPC_BUILD_OFI
    fprintf(out, "  ofi            built (--net ofi; provider MPC_OFI_PROVIDER=%s)\n",
            env_or("MPC_OFI_PROVIDER", "tcp").c_str());
    print_providers(out);
#else
    fprintf(out, "  ofi            not built (libfabric-dev missing at build time)\n");
#endif
    const std::string devices = rdma_devices();
    fprintf(out, "  verbs          %s; RDMA devices: %s\n", MPC_BUILD_VERBS ? "built" : "not built",
            devices.c_str());
    fprintf(out, "  auto           %s\n",
            MPC_BUILD_VERBS && devices != "none" ? "verbs (a device is present)" : "tcp");
    fprintf(out,
            "progress modes:  collaborative (default), wait, thread (thread-poll, "
            "thread-block)\n");
    fprintf(out,
            "security:        a 256-bit secret per job; HMAC-SHA-256 challenge-response on "
            "every PMI, tcp and ofi connection\n");
    return 0;
}

}  // namespace mpc::launcher
