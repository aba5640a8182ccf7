// Opening the ofi driver: provider selection, queues, the receive pool.
// The data path is in ofi_driver.cpp, connections in ofi_connect.cpp.
#include <cstdlib>

#include "ofi_driver.hpp"
#include "runtime/log.hpp"
#include "runtime/netif.hpp"

namespace mpc::ib::ofi {

namespace {

// Every transfer is a send, a receive, a write or a read (one-sided
// communication): requesting exactly these lets the provider skip what
// atomics would need (the tcp provider has none; one-sided atomics go as
// messages on this driver).
constexpr uint64_t kCaps = FI_MSG | FI_RMA | FI_SEND | FI_RECV | FI_WRITE | FI_REMOTE_WRITE |
                           FI_READ | FI_REMOTE_READ;

}  // namespace

std::unique_ptr<Driver> OfiDriver::open(const DriverConfig& config, std::string* error) {
    if (!config.valid()) {
        *error = "ofi: invalid driver configuration";
        return nullptr;
    }
    std::unique_ptr<OfiDriver> driver(new OfiDriver(config));
    if (!driver->init(error)) return nullptr;
    return driver;
}

OfiDriver::~OfiDriver() = default;

bool OfiDriver::init(std::string* error) {
    provider_ = config_.provider;
    if (provider_.empty()) {
        const char* env = std::getenv("MPC_OFI_PROVIDER");
        provider_ = env && *env ? env : "tcp";
    }
    // Its connection manager stops taking requests after a rejection
    // (libfabric 1.17), and the handshake begins with one: connections that
    // cannot prove the job's secret are not offered.
    if (provider_ == "sockets") {
        *error =
            "ofi (sockets): this provider cannot carry the job's connection handshake "
            "(its connection manager stops after a rejection); use tcp";
        return false;
    }
    if (!open_fabric(error) || !open_queues(error) || !open_pool(error) || !listen(error)) {
        *error = "ofi (" + provider_ + "): " + *error;
        return false;
    }
    connections_.resize(static_cast<size_t>(config_.num_peers));
    for (int i = 0; i < config_.num_peers; ++i) {
        connections_[i].peer = i;
        if (i != config_.self)
            connections_[i].slots = std::make_unique<SendSlots>(config_.send_queue_depth);
    }
    return true;
}

bool OfiDriver::open_fabric(std::string* error) {
    if (!lib::load(error)) return false;
    InfoPtr hints(lib::dupinfo(nullptr));
    if (!hints) {
        *error = "fi_allocinfo failed";
        return false;
    }
    hints->caps = kCaps;
    hints->ep_attr->type = FI_EP_MSG;
    // We can live with remote CQ data consuming a posted receive; we cannot
    // give per-operation fi_context storage (FI_CONTEXT).
    hints->mode = FI_RX_CQ_DATA;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->tx_attr->size = config_.send_queue_depth;
    hints->rx_attr->size = config_.recv_buffers;  // the shared receive context holds the pool
    hints->fabric_attr->prov_name = strdup(provider_.c_str());
    // The passive endpoint binds where the job needs it only: loopback for a
    // job on one host, else the job's interface (a provider that cannot take
    // an address, as some fabrics' own naming, gets none).
    std::string where_error;
    const std::string where =
        config_.one_host ? runtime::netif::kLoopback : runtime::netif::job_address(&where_error);
    fi_info* list = nullptr;
    int ret = where.empty() ? -FI_ENODATA
                            : lib::getinfo(FI_VERSION(1, 17), where.c_str(), nullptr, FI_SOURCE,
                                           hints.get(), &list);
    if (ret == -FI_ENODATA) {
        runtime::debug("ofi: provider %s cannot listen on %s only; it listens where it chooses",
                       provider_.c_str(), where.empty() ? where_error.c_str() : where.c_str());
        ret = lib::getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &list);
    }
    if (ret == -FI_ENODATA) {
        // Say whether the provider is missing or only our queue sizes are too big.
        hints->rx_attr->size = 0;
        hints->tx_attr->size = 0;
        if (lib::getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &list) == 0) {
            *error = "queues too large for the provider (at most " +
                     std::to_string(list->rx_attr->size) + " receives, " +
                     std::to_string(list->tx_attr->size) + " sends by default; asked for " +
                     std::to_string(config_.recv_buffers) + " and " +
                     std::to_string(config_.send_queue_depth) + ")";
            lib::freeinfo(list);
            return false;
        }
    }
    if (ret != 0) {
        *error =
            fi_error("no provider offers connected endpoints with messages and RMA writes", ret);
        return false;
    }
    InfoPtr all(list);
    if (list->domain_attr->cq_data_size < sizeof(uint32_t)) {
        *error = "provider cannot carry 4 bytes of remote CQ data (write with immediate)";
        return false;
    }
    info_.reset(lib::dupinfo(list));  // the first match: the provider's preferred interface
    uint64_t mr_mode = static_cast<uint64_t>(info_->domain_attr->mr_mode);
    need_desc_ = mr_mode & FI_MR_LOCAL;
    virt_addr_ = mr_mode & FI_MR_VIRT_ADDR;
    prov_key_ = mr_mode & FI_MR_PROV_KEY;
    imm_takes_buffer_ = (info_->mode | info_->rx_attr->mode) & FI_RX_CQ_DATA;

    fid_fabric* fabric = nullptr;
    if ((ret = lib::fabric(info_->fabric_attr, &fabric, nullptr)) != 0) {
        *error = fi_error("fi_fabric", ret);
        return false;
    }
    fabric_.reset(fabric);
    fid_domain* domain = nullptr;
    if ((ret = fi_domain(fabric_.get(), info_.get(), &domain, nullptr)) != 0) {
        *error = fi_error("fi_domain", ret);
        return false;
    }
    domain_.reset(domain);
    runtime::debug("ofi: provider %s, domain %s, mr_mode%s%s%s, remote CQ data %s",
                   provider_.c_str(), info_->domain_attr->name, need_desc_ ? " local" : "",
                   virt_addr_ ? " virt_addr" : " offsets", prov_key_ ? " prov_key" : "",
                   imm_takes_buffer_ ? "consumes a receive" : "needs no receive");
    return true;
}

bool OfiDriver::open_queues(std::string* error) {
    if (!wakeup_.open(error)) return false;
    fi_eq_attr eq_attr{};
    eq_attr.size = 64;
    // connect_all blocks in fi_eq_sread; later, wait() sleeps on the fd too,
    // so that a connection breaking wakes the node process.
    eq_attr.wait_obj = FI_WAIT_FD;
    fid_eq* eq = nullptr;
    int ret = fi_eq_open(fabric_.get(), &eq_attr, &eq, nullptr);
    if (ret != 0) {
        *error = fi_error("fi_eq_open", ret);
        return false;
    }
    eq_.reset(eq);
    int eq_fd = -1;
    if ((ret = fi_control(&eq->fid, FI_GETWAIT, &eq_fd)) != 0) {
        *error = fi_error("fi_control(FI_GETWAIT) on the event queue", ret);
        return false;
    }
    if (!wakeup_.add(eq_fd, error)) return false;

    // Sized for every operation that can be outstanding, so that a full CQ
    // never stalls the provider.
    size_t peers = static_cast<size_t>(std::max(config_.num_peers - 1, 1));
    size_t sizes[2] = {peers * config_.send_queue_depth + 64,
                       static_cast<size_t>(config_.recv_buffers) * 2 + 64};
    FidPtr<fid_cq>* cqs[2] = {&send_cq_, &recv_cq_};
    for (int i = 0; i < 2; ++i) {
        fi_cq_attr attr{};
        attr.format = FI_CQ_FORMAT_DATA;
        attr.wait_obj = FI_WAIT_FD;  // wait() sleeps on it
        attr.size = sizes[i];
        fid_cq* cq = nullptr;
        if ((ret = fi_cq_open(domain_.get(), &attr, &cq, nullptr)) != 0) {
            *error = fi_error("fi_cq_open with an fd wait object", ret);
            return false;
        }
        cqs[i]->reset(cq);
        int fd = -1;
        if ((ret = fi_control(&cq->fid, FI_GETWAIT, &fd)) != 0) {
            *error = fi_error("fi_control(FI_GETWAIT) on a CQ", ret);
            return false;
        }
        if (!wakeup_.add(fd, error)) return false;
    }
    return true;
}

bool OfiDriver::open_pool(std::string* error) {
    fi_rx_attr attr = *info_->rx_attr;
    attr.size = config_.recv_buffers;
    fid_ep* srx = nullptr;
    int ret = fi_srx_context(domain_.get(), &attr, &srx, nullptr);
    if (ret != 0) {
        *error = fi_error("fi_srx_context (shared receive context)", ret);
        return false;
    }
    srx_.reset(srx);
    pool_ = BufferBlock(static_cast<size_t>(config_.recv_buffers) * config_.recv_buffer_size);
    if (!pool_) {
        *error = "cannot allocate the receive pool";
        return false;
    }
    fid_mr* mr = nullptr;
    ret = fi_mr_reg(domain_.get(), pool_.data(), pool_.size(), FI_RECV, 0, next_key_.fetch_add(1),
                    0, &mr, nullptr);
    if (ret != 0) {
        *error = fi_error("fi_mr_reg of the receive pool", ret);
        return false;
    }
    pool_mr_.reset(mr);
    pool_desc_ = fi_mr_desc(mr);
    for (uint32_t i = 0; i < config_.recv_buffers; ++i) {
        if (repost_recv(i) != Status::Ok) {
            *error = "cannot post the receive pool (" + std::to_string(i) + " of " +
                     std::to_string(config_.recv_buffers) + " buffers posted)";
            return false;
        }
    }
    return true;
}

}  // namespace mpc::ib::ofi
