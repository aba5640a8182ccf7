// The verbs driver: reliable-connected queue pairs set up through rdma_cm,
// one shared receive queue holding the receive pool, one send CQ and one
// receive CQ shared by every queue pair, and a completion channel for wait().
//
// The device is the one behind the local IP address the driver binds to
// (MPC_VERBS_ADDR, else the first address of an RDMA-capable interface).
// A write with immediate consumes a receive of the SRQ: the driver reposts
// that buffer itself before reporting the WriteImm. Without an RDMA device
// open() fails and says so.
#pragma once

#include <string>
#include <vector>

#include "../buffer_block.hpp"
#include "../send_slots.hpp"
#include "../wakeup_set.hpp"
#include "ib/driver.hpp"
#include "verbs_resources.hpp"

namespace mpc::ib::verbs {

// RDMA devices libibverbs can see.
int device_count();

class VerbsDriver final : public Driver {
  public:
    static std::unique_ptr<Driver> open(const DriverConfig& config, std::string* error);
    ~VerbsDriver() override;

    const char* name() const override { return "verbs"; }
    std::string local_address() override { return local_address_; }
    Status connect_all(const std::vector<std::string>& addresses) override;

    Status register_memory(void* addr, size_t length, MemoryRegion* out) override;
    void deregister_memory(MemoryRegion& mr) override;

    void* recv_buffer(uint32_t index) override {
        return pool_.data() + static_cast<size_t>(index) * config_.recv_buffer_size;
    }
    Status repost_recv(uint32_t index) override;

    Status post_send(int peer, const void* buf, size_t len, void* desc, uint64_t context) override;
    Status post_write(int peer, const void* buf, size_t len, void* desc, uint64_t remote_addr,
                      uint64_t remote_key, bool has_imm, uint32_t imm, uint64_t context) override;

    bool supports_read() const override { return true; }
    Status post_read(int peer, void* buf, size_t len, void* desc, uint64_t remote_addr,
                     uint64_t remote_key, uint64_t context) override;
    // The NIC's atomics are atomic among themselves only (IBV_ATOMIC_HCA) and
    // run when they arrive, not after the messages before them were handled:
    // atomics_with_cpu() stays false, and one-sided communication does its
    // atomics with messages on this driver.
    Status post_atomic(int peer, AtomicOp op, uint64_t operand, uint64_t compare, uint64_t* result,
                       void* desc, uint64_t remote_addr, uint64_t remote_key,
                       uint64_t context) override;

    int poll_send_cq(Completion* out, int max) override;
    int poll_recv_cq(Completion* out, int max) override;

    void wait(int timeout_ms) override;
    void interrupt() override { wakeup_.interrupt(); }

  private:
    struct Connection {
        int peer = -1;
        VerbsPtr<rdma_cm_id> id;  // owns the queue pair
        std::unique_ptr<SendSlots> slots;
        bool connected = false;
    };

    explicit VerbsDriver(const DriverConfig& config) : config_(config) {}
    bool init(std::string* error);
    bool listen(std::string* error);
    bool open_queues(std::string* error);
    bool create_qp(rdma_cm_id* id, std::string* error);
    Status connect_loop(int expected, std::string* error);
    Status post(Connection& conn, ibv_send_wr& wr, SendSlot* slot);

    DriverConfig config_;
    // Teardown runs bottom-up: queue pairs, then queues, then the listener.
    VerbsPtr<rdma_event_channel> cm_channel_;
    VerbsPtr<rdma_cm_id> listen_id_;
    ibv_context* context_ = nullptr;  // owned by librdmacm
    VerbsPtr<ibv_pd> pd_;
    VerbsPtr<ibv_comp_channel> comp_channel_;
    VerbsPtr<ibv_cq> send_cq_;
    VerbsPtr<ibv_cq> recv_cq_;
    VerbsPtr<ibv_srq> srq_;
    BufferBlock pool_;
    VerbsPtr<ibv_mr> pool_mr_;
    std::vector<Connection> connections_;
    WakeupSet wakeup_;
    std::string local_address_;
    uint32_t max_inline_ = 0;
};

}  // namespace mpc::ib::verbs
