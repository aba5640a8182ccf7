// One-sided communication over the network: the engine's messages, RDMA
// writes, reads and atomics on registered memory, and their completions.
// Every operation goes through its connection's queue, so all of them keep
// one order per connection (what the engine relies on for flushes).
#include <algorithm>
#include <cstring>

#include "network_impl.hpp"
#include "runtime/log.hpp"

namespace mpc::ib {

bool NetworkImpl::init_rma(std::string* error) {
    atomic_slab_.reset(new uint64_t[kAtomicSlots]());
    if (driver_->register_memory(atomic_slab_.get(), kAtomicSlots * sizeof(uint64_t),
                                 &atomic_mr_) != Status::Ok) {
        *error = "cannot register the one-sided atomics' result slots";
        return false;
    }
    for (uint32_t i = kAtomicSlots; i > 0; --i) atomic_free_.push_back(i - 1);
    return true;
}

void NetworkImpl::rma_send(int node, const void* head, size_t head_len, const void* data,
                           size_t data_len, bool lazy) {
    const size_t len = head_len + data_len;
    if (len > rma_message_max())
        runtime::fatal("network: a one-sided message of %zu bytes exceeds the %zu allowed", len,
                       rma_message_max());
    OutMsg m;
    m.header.type = MsgType::Rma;
    m.header.src_node = static_cast<uint32_t>(layout_.node_id);
    m.header.src_world = -1;
    m.header.dst_world = -1;
    m.header.bytes = len;
    m.data_len = len;
    m.owned.reset(new char[std::max<size_t>(len, 1)]);
    if (head_len) memcpy(m.owned.get(), head, head_len);
    if (data_len) memcpy(m.owned.get() + head_len, data, data_len);
    m.lazy = lazy;
    post_or_queue(node, std::move(m));
}

void* NetworkImpl::rma_register(void* addr, size_t len, uint64_t* remote_addr) {
    RegistrationCache::Entry* e = rcache_->acquire(addr, std::max<size_t>(len, 1));
    if (!e) return nullptr;
    const MemoryRegion& mr = RegistrationCache::region(e);
    *remote_addr = mr.remote_base +
                   static_cast<uint64_t>(static_cast<char*>(addr) - static_cast<char*>(mr.addr));
    return e;
}

uint64_t NetworkImpl::rma_key_for(void* registration, int node) const {
    return driver_->remote_key_for(
        RegistrationCache::region(static_cast<RegistrationCache::Entry*>(registration)), node);
}

void NetworkImpl::rma_deregister(void* registration) {
    if (registration) rcache_->release(static_cast<RegistrationCache::Entry*>(registration));
}

bool NetworkImpl::rma_transfer(int node, char* local, size_t len, uint64_t remote_addr,
                               uint64_t key, RmaDone done, bool read) {
    if (len == 0) {
        if (done.fn) done.fn(done.ctx, true);
        return true;
    }
    RegistrationCache::Entry* reg = rcache_->acquire(local, len);
    if (!reg) return false;
    const MemoryRegion& mr = RegistrationCache::region(reg);
    auto* op = new RmaOp();
    op->done = done;
    op->reg = reg;
    // One value for the whole operation (an MPI_T tool may change it meanwhile).
    const size_t chunk = write_chunk_.load(std::memory_order_relaxed);
    const size_t chunks = (len + chunk - 1) / chunk;
    op->left.store(static_cast<int>(chunks), std::memory_order_relaxed);
    op->id = rma_ops_.add(op);
    const uint64_t context = kCtxRma | OpTable<RmaOp>::compact(op->id);
    for (size_t i = 0; i < chunks; ++i) {
        OutMsg m;
        const size_t off = i * chunk;
        m.data_len = std::min(chunk, len - off);
        m.local_desc = mr.local_desc;
        m.remote_addr = remote_addr + off;
        m.remote_key = key;
        m.context = context;
        if (read) {
            m.read = true;
            m.local_dest = local + off;
        } else {
            m.write = true;
            m.local = local + off;
        }
        // (Once the last chunk is posted, op may be gone.)
        post_or_queue(node, std::move(m));
    }
    return true;
}

bool NetworkImpl::rma_write(int node, const void* local, size_t len, uint64_t remote_addr,
                            uint64_t key, RmaDone done) {
    return rma_transfer(node, const_cast<char*>(static_cast<const char*>(local)), len, remote_addr,
                        key, done, false);
}

bool NetworkImpl::rma_read(int node, void* local, size_t len, uint64_t remote_addr, uint64_t key,
                           RmaDone done) {
    return driver_->supports_read() &&
           rma_transfer(node, static_cast<char*>(local), len, remote_addr, key, done, true);
}

bool NetworkImpl::rma_atomic(int node, AtomicOp aop, uint64_t operand, uint64_t compare,
                             uint64_t* result, uint64_t remote_addr, uint64_t key, RmaDone done) {
    uint32_t slot;
    {
        std::lock_guard<runtime::SpinLock> g(atomic_free_lock_);
        if (atomic_free_.empty()) return false;
        slot = atomic_free_.back();
        atomic_free_.pop_back();
    }
    auto* op = new RmaOp();
    op->done = done;
    op->result_slot = slot;
    op->user_result = result;
    op->left.store(1, std::memory_order_relaxed);
    op->id = rma_ops_.add(op);
    OutMsg m;
    m.atomic = true;
    m.atomic_op = aop;
    m.operand = operand;
    m.compare = compare;
    m.result = &atomic_slab_[slot];
    m.local_desc = atomic_mr_.local_desc;
    m.remote_addr = remote_addr;
    m.remote_key = key;
    m.context = kCtxRma | OpTable<RmaOp>::compact(op->id);
    post_or_queue(node, std::move(m));
    return true;
}

// A write, read or atomic of a one-sided transfer completed (send CQ).
void NetworkImpl::rma_completion(const Completion& c) {
    writes_inflight_.fetch_sub(1, std::memory_order_relaxed);
    const uint64_t id = rma_ops_.expand(static_cast<uint32_t>(c.context));
    RmaOp* op = id ? rma_ops_.find(id) : nullptr;
    if (!op) {
        runtime::warn("network: a completion for an unknown one-sided transfer");
        return;
    }
    if (op->left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    rma_ops_.remove(id);
    if (op->result_slot != UINT32_MAX) {
        *op->user_result = atomic_slab_[op->result_slot];
        std::lock_guard<runtime::SpinLock> g(atomic_free_lock_);
        atomic_free_.push_back(op->result_slot);
    }
    if (op->reg) rcache_->release(op->reg);
    RmaDone done = op->done;
    delete op;
    if (done.fn) done.fn(done.ctx, c.ok);
}

}  // namespace mpc::ib
