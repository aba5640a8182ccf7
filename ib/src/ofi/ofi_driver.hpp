// The libfabric driver: FI_EP_MSG connections to every other node process,
// one shared receive context holding the receive pool, one send CQ and one
// receive CQ bound to every endpoint.
//
// Provider: DriverConfig::provider, else MPC_OFI_PROVIDER, else "tcp" (runs
// on any host). Memory registration follows the provider's mr_mode:
// descriptors only when it wants FI_MR_LOCAL, keys chosen here unless
// FI_MR_PROV_KEY, regions addressed by offset unless FI_MR_VIRT_ADDR (see
// MemoryRegion::remote_base). Remote CQ data rides on fi_writedata; when the
// provider sets FI_RX_CQ_DATA it consumes a pool buffer, which this driver
// reposts itself (tcp does not consume one).
//
// Connections open with the job's handshake carried in the connection
// manager's private data (ofi_connect.cpp): a connect request asks for a
// challenge, which comes back in the rejection; a second request carries the
// challenge and the proof, and the acceptance carries the confirm. The
// passive endpoint takes loopback for a job on one host, else the job's
// interface. Registration keys are random where the provider lets us choose
// them (not FI_MR_PROV_KEY).
#pragma once

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../buffer_block.hpp"
#include "../connection_watch.hpp"
#include "../send_slots.hpp"
#include "../wakeup_set.hpp"
#include "ib/driver.hpp"
#include "ofi_fid.hpp"
#include "runtime/handshake.hpp"

namespace mpc::ib::ofi {

class OfiDriver final : public Driver, public ConnectionWatch {
  public:
    // Null with *error set when the provider or a resource is unavailable.
    static std::unique_ptr<Driver> open(const DriverConfig& config, std::string* error);
    ~OfiDriver() override;

    const char* name() const override { return "ofi"; }
    std::string local_address() override { return local_address_; }
    Status connect_all(const std::vector<std::string>& addresses) override;

    Status register_memory(void* addr, size_t length, MemoryRegion* out) override;
    void deregister_memory(MemoryRegion& mr) override;

    void* recv_buffer(uint32_t index) override {
        return pool_.data() + static_cast<size_t>(index) * config_.recv_buffer_size;
    }
    Status repost_recv(uint32_t index) override;

    Status post_send(int peer, const void* buf, size_t len, void* desc, uint64_t context) override;
    // Stream-socket providers move one huge write much slower than a few
    // pipelined ones: on loopback tcp a 1 MiB write ran at 3 GB/s, two of
    // 512 KiB at 7.5 (README, MPC_NET_WRITE_CHUNK).
    size_t write_chunk() const override {
        return provider_ == "tcp" || provider_ == "sockets" ? size_t{512} << 10 : 0;
    }
    Status post_write(int peer, const void* buf, size_t len, void* desc, uint64_t remote_addr,
                      uint64_t remote_key, bool has_imm, uint32_t imm, uint64_t context) override;

    bool supports_read() const override { return true; }
    Status post_read(int peer, void* buf, size_t len, void* desc, uint64_t remote_addr,
                     uint64_t remote_key, uint64_t context) override;
    int poll_send_cq(Completion* out, int max) override;
    int poll_recv_cq(Completion* out, int max) override;

    bool connection_lost(int* peer, std::string* why) override;
    void wait(int timeout_ms) override;
    void interrupt() override { wakeup_.interrupt(); }

  private:
    // One per remote node process; the endpoint's fid context points here.
    struct Connection {
        int peer = -1;
        FidPtr<fid_ep> ep;
        std::unique_ptr<SendSlots> slots;
        bool connected = false;
        // Ours to a higher node: its address and our side of the handshake
        // (answered: the second request, with the proof, is out).
        std::vector<uint8_t> address;
        std::optional<runtime::auth::Connector> connector;
        bool answered = false;
    };

    explicit OfiDriver(const DriverConfig& config) : config_(config) {}
    bool init(std::string* error);
    bool open_fabric(std::string* error);
    bool open_queues(std::string* error);
    bool open_pool(std::string* error);
    bool listen(std::string* error);
    bool make_endpoint(Connection& conn, fi_info* info, std::string* error);
    Status connect_loop(int expected, std::string* error);
    // ofi_connect.cpp: the steps of the handshake.
    bool request(Connection& conn, const void* data, size_t len, std::string* error);
    bool on_connreq(fi_info* info, const uint8_t* data, size_t len, std::string* error);
    bool on_refused(Connection& conn, const uint8_t* data, size_t len, std::string* error);
    void refuse(fi_info* info, const std::string& why);

    // Pool buffers travel as context index+1, so that a null context (tcp's
    // WriteImm) never names a buffer.
    static void* buffer_context(uint32_t index) {
        return reinterpret_cast<void*>(static_cast<uintptr_t>(index) + 1);
    }
    bool is_buffer_context(void* context, uint32_t* index) const;
    void fill_recv(Completion& c, uint64_t flags, void* context, size_t len, uint64_t data);
    int read_send_error(Completion* out);
    int read_recv_error(Completion* out);
    Status post_status(SendSlot* slot, ssize_t ret, const char* what);

    DriverConfig config_;
    std::string provider_;
    InfoPtr info_;
    // Declaration order is teardown order reversed: endpoints go first, the
    // fabric last.
    FidPtr<fid_fabric> fabric_;
    FidPtr<fid_domain> domain_;
    FidPtr<fid_eq> eq_;
    FidPtr<fid_cq> send_cq_;
    FidPtr<fid_cq> recv_cq_;
    BufferBlock pool_;
    FidPtr<fid_mr> pool_mr_;
    void* pool_desc_ = nullptr;
    FidPtr<fid_ep> srx_;
    FidPtr<fid_pep> pep_;
    std::vector<Connection> connections_;  // indexed by node; never resized after open
    WakeupSet wakeup_;

    std::string local_address_;
    // Challenges sent in rejections, each good for one proof (oldest dropped
    // beyond kIssued: a flood of requests cannot grow it).
    std::deque<runtime::auth::Acceptor> issued_;
    int refused_ = 0;
    bool need_desc_ = false;         // FI_MR_LOCAL
    bool virt_addr_ = false;         // FI_MR_VIRT_ADDR
    bool prov_key_ = false;          // FI_MR_PROV_KEY
    bool imm_takes_buffer_ = false;  // FI_RX_CQ_DATA
    std::atomic<uint64_t> next_key_{1};
};

}  // namespace mpc::ib::ofi
