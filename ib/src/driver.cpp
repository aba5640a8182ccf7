// Driver selection: "tcp", "ofi", "verbs", or "auto" (verbs when an RDMA
// device is visible, otherwise our tcp sockets: on a TCP network they beat
// libfabric's tcp provider, see tcp/tcp_driver.hpp; "ofi" reaches the other
// fabrics libfabric knows).
#include "ib/driver.hpp"

#include "tcp/tcp_driver.hpp"

#ifdef MPC_HAVE_OFI
#include "ofi/ofi_driver.hpp"
#endif
#ifdef MPC_HAVE_VERBS
#include "verbs/verbs_driver.hpp"
#endif

namespace mpc::ib {

bool rdma_device_present() {
#ifdef MPC_HAVE_VERBS
    return verbs::device_count() > 0;
#else
    return false;
#endif
}

std::unique_ptr<Driver> open_driver(const std::string& kind, const DriverConfig& config,
                                    std::string* error) {
    std::string chosen = kind;
    if (chosen.empty() || chosen == "auto") chosen = rdma_device_present() ? "verbs" : "tcp";
    if (chosen == "tcp") return tcp::TcpDriver::open(config, error);
    if (chosen == "ofi") {
#ifdef MPC_HAVE_OFI
        return ofi::OfiDriver::open(config, error);
#else
        *error = "ofi: driver not built (libfabric was not found when the build was configured)";
        return nullptr;
#endif
    }
    if (chosen == "verbs") {
#ifdef MPC_HAVE_VERBS
        return verbs::VerbsDriver::open(config, error);
#else
        *error =
            "verbs: driver not built (libibverbs and librdmacm were not found when the "
            "build was configured)";
        return nullptr;
#endif
    }
    *error = "unknown network driver '" + kind + "' (MPC_NET accepts auto, verbs, ofi, tcp)";
    return nullptr;
}

}  // namespace mpc::ib
