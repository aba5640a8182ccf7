#include "verbs_driver.hpp"

#include <arpa/inet.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/log.hpp"

namespace mpc::ib::verbs {

namespace {

constexpr int kBatch = 32;
constexpr uint32_t kWantedInline = 64;  // small sends skip the DMA read of the payload

std::string errno_text(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

int device_count() {
    int count = 0;
    ibv_device** list = ibv_get_device_list(&count);
    if (!list) return 0;
    ibv_free_device_list(list);
    return count;
}

std::unique_ptr<Driver> VerbsDriver::open(const DriverConfig& config, std::string* error) {
    if (device_count() == 0) {
        *error = "verbs: no RDMA device found (libibverbs lists none); use MPC_NET=ofi";
        return nullptr;
    }
    if (!config.valid()) {
        *error = "verbs: invalid driver configuration";
        return nullptr;
    }
    std::unique_ptr<VerbsDriver> driver(new VerbsDriver(config));
    if (!driver->init(error)) {
        *error = "verbs: " + *error;
        return nullptr;
    }
    return driver;
}

VerbsDriver::~VerbsDriver() = default;

bool VerbsDriver::init(std::string* error) {
    if (!listen(error) || !open_queues(error)) return false;
    connections_.resize(static_cast<size_t>(config_.num_peers));
    for (int i = 0; i < config_.num_peers; ++i) {
        connections_[i].peer = i;
        if (i != config_.self)
            connections_[i].slots = std::make_unique<SendSlots>(config_.send_queue_depth);
    }
    return true;
}

bool VerbsDriver::open_queues(std::string* error) {
    pd_.reset(ibv_alloc_pd(context_));
    comp_channel_.reset(ibv_create_comp_channel(context_));
    if (!pd_ || !comp_channel_) {
        *error = errno_text("protection domain / completion channel");
        return false;
    }
    // Nonblocking: wait() drains events after epoll says the fd is readable.
    int flags = fcntl(comp_channel_->fd, F_GETFL);
    fcntl(comp_channel_->fd, F_SETFL, flags | O_NONBLOCK);

    int peers = std::max(config_.num_peers - 1, 1);
    int send_size = peers * static_cast<int>(config_.send_queue_depth);
    int recv_size = static_cast<int>(config_.recv_buffers);
    send_cq_.reset(ibv_create_cq(context_, send_size, nullptr, comp_channel_.get(), 0));
    recv_cq_.reset(ibv_create_cq(context_, recv_size, nullptr, comp_channel_.get(), 0));
    if (!send_cq_ || !recv_cq_) {
        *error = errno_text("ibv_create_cq");
        return false;
    }
    // Armed from the start and re-armed by every wait() that consumes an
    // event, so a completion after the caller's last poll always wakes it.
    if (ibv_req_notify_cq(send_cq_.get(), 0) || ibv_req_notify_cq(recv_cq_.get(), 0)) {
        *error = "ibv_req_notify_cq failed";
        return false;
    }
    if (!wakeup_.open(error) || !wakeup_.add(comp_channel_->fd, error)) return false;

    ibv_srq_init_attr srq_attr{};
    srq_attr.attr.max_wr = config_.recv_buffers;
    srq_attr.attr.max_sge = 1;
    srq_.reset(ibv_create_srq(pd_.get(), &srq_attr));
    if (!srq_) {
        *error = errno_text("ibv_create_srq");
        return false;
    }
    pool_ = BufferBlock(static_cast<size_t>(config_.recv_buffers) * config_.recv_buffer_size);
    if (!pool_) {
        *error = "cannot allocate the receive pool";
        return false;
    }
    pool_mr_.reset(ibv_reg_mr(pd_.get(), pool_.data(), pool_.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!pool_mr_) {
        *error = errno_text("ibv_reg_mr of the receive pool");
        return false;
    }
    for (uint32_t i = 0; i < config_.recv_buffers; ++i) {
        if (repost_recv(i) != Status::Ok) {
            *error = "cannot post the receive pool to the SRQ";
            return false;
        }
    }
    return true;
}

bool VerbsDriver::create_qp(rdma_cm_id* id, std::string* error) {
    ibv_qp_init_attr attr{};
    attr.send_cq = send_cq_.get();
    attr.recv_cq = recv_cq_.get();
    attr.srq = srq_.get();
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 1;
    attr.cap.max_send_wr = config_.send_queue_depth;
    attr.cap.max_send_sge = 1;
    attr.cap.max_inline_data = kWantedInline;
    if (rdma_create_qp(id, pd_.get(), &attr) != 0) {
        attr.cap.max_inline_data = 0;  // some devices have no inline sends
        if (rdma_create_qp(id, pd_.get(), &attr) != 0) {
            *error = errno_text("rdma_create_qp");
            return false;
        }
    }
    max_inline_ = attr.cap.max_inline_data;
    return true;
}

Status VerbsDriver::register_memory(void* addr, size_t length, MemoryRegion* out) {
    ibv_mr* mr = ibv_reg_mr(pd_.get(), addr, length,
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
    if (!mr) {
        runtime::warn("verbs: cannot register %zu bytes at %p: %s", length, addr,
                      std::strerror(errno));
        return errno == ENOMEM ? Status::Again : Status::Error;
    }
    out->addr = addr;
    out->length = length;
    out->remote_key = mr->rkey;
    out->remote_base = reinterpret_cast<uint64_t>(addr);
    out->local_desc = mr;
    out->handle = mr;
    return Status::Ok;
}

void VerbsDriver::deregister_memory(MemoryRegion& mr) {
    if (mr.handle) ibv_dereg_mr(static_cast<ibv_mr*>(mr.handle));
    mr = MemoryRegion{};
}

Status VerbsDriver::repost_recv(uint32_t index) {
    if (index >= config_.recv_buffers) return Status::Error;
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uint64_t>(recv_buffer(index));
    sge.length = static_cast<uint32_t>(config_.recv_buffer_size);
    sge.lkey = pool_mr_->lkey;
    ibv_recv_wr wr{};
    wr.wr_id = index;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    int ret = ibv_post_srq_recv(srq_.get(), &wr, &bad);
    if (ret == 0) return Status::Ok;
    return ret == ENOMEM ? Status::Again : Status::Error;
}

Status VerbsDriver::post(Connection& conn, ibv_send_wr& wr, SendSlot* slot) {
    wr.wr_id = reinterpret_cast<uint64_t>(slot);
    ibv_send_wr* bad = nullptr;
    int ret = ibv_post_send(conn.id->qp, &wr, &bad);
    if (ret == 0) return Status::Ok;
    slot->owner->release(slot);
    if (ret == ENOMEM) return Status::Again;
    runtime::warn("verbs: ibv_post_send to node %d: %s", conn.peer, std::strerror(ret));
    return Status::Error;
}

Status VerbsDriver::post_send(int peer, const void* buf, size_t len, void* desc, uint64_t context) {
    if (peer < 0 || peer >= config_.num_peers || len > config_.recv_buffer_size)
        return Status::Error;
    Connection& conn = connections_[peer];
    if (!conn.connected) return Status::Error;
    bool inline_send = len <= max_inline_;
    if (!inline_send && !desc && len > 0) return Status::Error;  // unregistered memory
    SendSlot* slot = conn.slots->acquire(Completion::Type::Send, context);
    if (!slot) return Status::Again;
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uint64_t>(buf);
    sge.length = static_cast<uint32_t>(len);
    sge.lkey = desc ? static_cast<ibv_mr*>(desc)->lkey : 0;
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = len > 0 ? 1 : 0;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED | (inline_send ? IBV_SEND_INLINE : 0);
    return post(conn, wr, slot);
}

Status VerbsDriver::post_write(int peer, const void* buf, size_t len, void* desc,
                               uint64_t remote_addr, uint64_t remote_key, bool has_imm,
                               uint32_t imm, uint64_t context) {
    if (peer < 0 || peer >= config_.num_peers || len > UINT32_MAX) return Status::Error;
    Connection& conn = connections_[peer];
    if (!conn.connected || (!desc && len > 0)) return Status::Error;
    SendSlot* slot = conn.slots->acquire(Completion::Type::Write, context);
    if (!slot) return Status::Again;
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uint64_t>(buf);
    sge.length = static_cast<uint32_t>(len);
    sge.lkey = desc ? static_cast<ibv_mr*>(desc)->lkey : 0;
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = len > 0 ? 1 : 0;
    wr.opcode = has_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(imm);
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = static_cast<uint32_t>(remote_key);
    return post(conn, wr, slot);
}

Status VerbsDriver::post_read(int peer, void* buf, size_t len, void* desc, uint64_t remote_addr,
                              uint64_t remote_key, uint64_t context) {
    if (peer < 0 || peer >= config_.num_peers || len > UINT32_MAX) return Status::Error;
    Connection& conn = connections_[peer];
    if (!conn.connected || (!desc && len > 0)) return Status::Error;
    SendSlot* slot = conn.slots->acquire(Completion::Type::Read, context);
    if (!slot) return Status::Again;
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uint64_t>(buf);
    sge.length = static_cast<uint32_t>(len);
    sge.lkey = desc ? static_cast<ibv_mr*>(desc)->lkey : 0;
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = len > 0 ? 1 : 0;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = static_cast<uint32_t>(remote_key);
    return post(conn, wr, slot);
}

Status VerbsDriver::post_atomic(int peer, AtomicOp op, uint64_t operand, uint64_t compare,
                                uint64_t* result, void* desc, uint64_t remote_addr,
                                uint64_t remote_key, uint64_t context) {
    if (peer < 0 || peer >= config_.num_peers || remote_addr % 8 != 0 || !desc)
        return Status::Error;
    Connection& conn = connections_[peer];
    if (!conn.connected) return Status::Error;
    SendSlot* slot = conn.slots->acquire(Completion::Type::Atomic, context);
    if (!slot) return Status::Again;
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uint64_t>(result);
    sge.length = sizeof(uint64_t);
    sge.lkey = static_cast<ibv_mr*>(desc)->lkey;
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.atomic.remote_addr = remote_addr;
    wr.wr.atomic.rkey = static_cast<uint32_t>(remote_key);
    if (op == AtomicOp::FetchAdd) {
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
        wr.wr.atomic.compare_add = operand;
    } else {
        wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
        wr.wr.atomic.compare_add = compare;
        wr.wr.atomic.swap = operand;
    }
    return post(conn, wr, slot);
}

int VerbsDriver::poll_send_cq(Completion* out, int max) {
    ibv_wc wc[kBatch];
    int done = 0;
    while (done < max) {
        int want = std::min(max - done, kBatch);
        int n = ibv_poll_cq(send_cq_.get(), want, wc);
        if (n <= 0) break;
        for (int i = 0; i < n; ++i) {
            auto* slot = reinterpret_cast<SendSlot*>(wc[i].wr_id);
            Completion& c = out[done++];
            c.type = slot->type;  // wc.opcode is undefined for failed requests
            c.context = slot->context;
            c.buffer = 0;
            c.length = 0;
            c.imm = 0;
            c.ok = wc[i].status == IBV_WC_SUCCESS;
            c.error.clear();
            if (!c.ok)
                c.error = std::string(ibv_wc_status_str(wc[i].status)) + " (vendor error " +
                          std::to_string(wc[i].vendor_err) + ")";
            slot->owner->release(slot);
        }
        if (n < want) break;
    }
    return done;
}

int VerbsDriver::poll_recv_cq(Completion* out, int max) {
    ibv_wc wc[kBatch];
    int done = 0;
    while (done < max) {
        int want = std::min(max - done, kBatch);
        int n = ibv_poll_cq(recv_cq_.get(), want, wc);
        if (n <= 0) break;
        for (int i = 0; i < n; ++i) {
            Completion& c = out[done++];
            auto index = static_cast<uint32_t>(wc[i].wr_id);
            c.context = 0;
            c.ok = wc[i].status == IBV_WC_SUCCESS;
            c.error.clear();
            if (c.ok && wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
                // The write consumed a receive but put nothing in its buffer.
                c.type = Completion::Type::WriteImm;
                c.imm = ntohl(wc[i].imm_data);
                c.length = wc[i].byte_len;
                c.buffer = 0;
                if (repost_recv(index) != Status::Ok)
                    runtime::fatal("verbs: cannot repost SRQ buffer %u", index);
                continue;
            }
            // Failed receives carry no reliable opcode: report the buffer,
            // which the caller reposts.
            c.type = Completion::Type::Recv;
            c.buffer = index;
            c.length = c.ok ? wc[i].byte_len : 0;
            c.imm = 0;
            if (!c.ok)
                c.error = std::string(ibv_wc_status_str(wc[i].status)) + " (vendor error " +
                          std::to_string(wc[i].vendor_err) + ")";
        }
        if (n < want) break;
    }
    return done;
}

void VerbsDriver::wait(int timeout_ms) {
    wakeup_.wait(timeout_ms);
    ibv_cq* cq = nullptr;
    void* cq_context = nullptr;
    while (ibv_get_cq_event(comp_channel_.get(), &cq, &cq_context) == 0) {
        ibv_ack_cq_events(cq, 1);
        ibv_req_notify_cq(cq, 0);
    }
}

}  // namespace mpc::ib::verbs
