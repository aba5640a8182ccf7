// The data path of the ofi driver: registration, posting, completions, wait.
#include "ofi_driver.hpp"

#include <rdma/fi_rma.h>

#include <algorithm>

#include "runtime/auth.hpp"
#include "runtime/log.hpp"

namespace mpc::ib::ofi {

namespace {

constexpr uint64_t kMrAccess =
    FI_SEND | FI_RECV | FI_WRITE | FI_REMOTE_WRITE | FI_READ | FI_REMOTE_READ;
constexpr int kBatch = 32;

}  // namespace

Status OfiDriver::register_memory(void* addr, size_t length, MemoryRegion* out) {
    fid_mr* mr = nullptr;
    int ret = -FI_ENOKEY;
    // Where the provider lets us choose keys: random ones (within its key
    // size), drawn again if one is taken. Otherwise the provider's.
    for (int attempt = 0; attempt < 4 && ret == -FI_ENOKEY; ++attempt) {
        uint64_t key = 0;
        if (!prov_key_) {
            runtime::auth::random_bytes(&key, sizeof key);
            const size_t bytes = info_->domain_attr->mr_key_size;
            if (bytes > 0 && bytes < sizeof key) key &= (uint64_t{1} << (8 * bytes)) - 1;
        }
        ret = fi_mr_reg(domain_.get(), addr, length, kMrAccess, 0, key, 0, &mr, nullptr);
    }
    if (ret != 0) {
        // Said once: the network copes (rendezvous falls back to copies), and
        // a limit that is reached once is usually reached again and again.
        static std::atomic<bool> said{false};
        if (!said.exchange(true))
            runtime::warn("ofi: cannot register %zu bytes at %p: %s", length, addr,
                          fi_error("fi_mr_reg", ret).c_str());
        return ret == -FI_EAGAIN ? Status::Again : Status::Error;
    }
    out->addr = addr;
    out->length = length;
    out->remote_key = fi_mr_key(mr);
    out->remote_base = virt_addr_ ? reinterpret_cast<uint64_t>(addr) : 0;
    out->local_desc = fi_mr_desc(mr);
    out->handle = mr;
    return Status::Ok;
}

void OfiDriver::deregister_memory(MemoryRegion& mr) {
    if (mr.handle) fi_close(&static_cast<fid_mr*>(mr.handle)->fid);
    mr = MemoryRegion{};
}

Status OfiDriver::repost_recv(uint32_t index) {
    if (index >= config_.recv_buffers) return Status::Error;
    ssize_t ret = fi_recv(srx_.get(), recv_buffer(index), config_.recv_buffer_size, pool_desc_,
                          FI_ADDR_UNSPEC, buffer_context(index));
    if (ret == 0) return Status::Ok;
    if (ret == -FI_EAGAIN) return Status::Again;
    runtime::warn("ofi: %s", fi_error("fi_recv on the shared receive context", ret).c_str());
    return Status::Error;
}

Status OfiDriver::post_status(SendSlot* slot, ssize_t ret, const char* what) {
    if (ret == 0) return Status::Ok;
    slot->owner->release(slot);
    if (ret == -FI_EAGAIN) return Status::Again;
    runtime::warn("ofi: %s", fi_error(what, ret).c_str());
    return Status::Error;
}

Status OfiDriver::post_send(int peer, const void* buf, size_t len, void* desc, uint64_t context) {
    // A message larger than the peer's buffers would be truncated there, and
    // the tcp provider tears the connection down on truncation.
    if (peer < 0 || peer >= config_.num_peers || len > config_.recv_buffer_size)
        return Status::Error;
    Connection& conn = connections_[peer];
    if (!conn.connected) return Status::Error;
    SendSlot* slot = conn.slots->acquire(Completion::Type::Send, context);
    if (!slot) return Status::Again;
    return post_status(slot, fi_send(conn.ep.get(), buf, len, need_desc_ ? desc : nullptr, 0, slot),
                       "fi_send");
}

Status OfiDriver::post_write(int peer, const void* buf, size_t len, void* desc,
                             uint64_t remote_addr, uint64_t remote_key, bool has_imm, uint32_t imm,
                             uint64_t context) {
    if (peer < 0 || peer >= config_.num_peers) return Status::Error;
    Connection& conn = connections_[peer];
    if (!conn.connected) return Status::Error;
    SendSlot* slot = conn.slots->acquire(Completion::Type::Write, context);
    if (!slot) return Status::Again;
    void* d = need_desc_ ? desc : nullptr;
    ssize_t ret =
        has_imm ? fi_writedata(conn.ep.get(), buf, len, d, imm, 0, remote_addr, remote_key, slot)
                : fi_write(conn.ep.get(), buf, len, d, 0, remote_addr, remote_key, slot);
    return post_status(slot, ret, has_imm ? "fi_writedata" : "fi_write");
}

Status OfiDriver::post_read(int peer, void* buf, size_t len, void* desc, uint64_t remote_addr,
                            uint64_t remote_key, uint64_t context) {
    if (peer < 0 || peer >= config_.num_peers) return Status::Error;
    Connection& conn = connections_[peer];
    if (!conn.connected) return Status::Error;
    SendSlot* slot = conn.slots->acquire(Completion::Type::Read, context);
    if (!slot) return Status::Again;
    return post_status(slot,
                       fi_read(conn.ep.get(), buf, len, need_desc_ ? desc : nullptr, 0,
                               remote_addr, remote_key, slot),
                       "fi_read");
}

int OfiDriver::poll_send_cq(Completion* out, int max) {
    fi_cq_data_entry entries[kBatch];
    int done = 0;
    while (done < max) {
        size_t want = static_cast<size_t>(std::min(max - done, kBatch));
        ssize_t n = fi_cq_read(send_cq_.get(), entries, want);
        if (n == -FI_EAVAIL) {
            int got = read_send_error(out + done);
            if (got == 0) break;
            done += got;
            continue;
        }
        if (n <= 0) {
            if (n != -FI_EAGAIN) runtime::warn("ofi: %s", fi_error("fi_cq_read (send)", n).c_str());
            break;
        }
        for (ssize_t i = 0; i < n; ++i) {
            auto* slot = static_cast<SendSlot*>(entries[i].op_context);
            Completion& c = out[done++];
            c.type = slot->type;
            c.ok = true;
            c.context = slot->context;
            c.buffer = 0;
            c.length = 0;
            c.imm = 0;
            c.error.clear();
            slot->owner->release(slot);
        }
        if (static_cast<size_t>(n) < want) break;
    }
    return done;
}

int OfiDriver::read_send_error(Completion* out) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(send_cq_.get(), &err, 0) != 1) return 0;
    char text[256];
    const char* detail =
        fi_cq_strerror(send_cq_.get(), err.prov_errno, err.err_data, text, sizeof text);
    Completion& c = *out;
    c.ok = false;
    c.buffer = 0;
    c.length = 0;
    c.imm = 0;
    c.error = std::string(lib::strerror(err.err)) + (detail ? std::string(" / ") + detail : "");
    if (auto* slot = static_cast<SendSlot*>(err.op_context)) {
        c.type = slot->type;
        c.context = slot->context;
        slot->owner->release(slot);
    } else {
        c.type = (err.flags & FI_RMA) ? Completion::Type::Write : Completion::Type::Send;
        c.context = 0;
    }
    return 1;
}

bool OfiDriver::is_buffer_context(void* context, uint32_t* index) const {
    auto value = reinterpret_cast<uintptr_t>(context);
    if (value == 0 || value > config_.recv_buffers) return false;
    *index = static_cast<uint32_t>(value - 1);
    return true;
}

void OfiDriver::fill_recv(Completion& c, uint64_t flags, void* context, size_t len, uint64_t data) {
    uint32_t index = 0;
    bool has_buffer = is_buffer_context(context, &index);
    c.context = 0;
    c.error.clear();
    if (flags & FI_REMOTE_WRITE) {
        c.type = Completion::Type::WriteImm;
        c.imm = static_cast<uint32_t>(data);
        c.length = len;
        c.buffer = 0;
        // FI_RX_CQ_DATA providers took a pool buffer for the data: give it
        // back now, the caller never sees it.
        if (has_buffer && repost_recv(index) != Status::Ok)
            runtime::fatal("ofi: cannot repost receive buffer %u after a write with immediate",
                           index);
        return;
    }
    MPC_CHECK(has_buffer);
    c.type = Completion::Type::Recv;
    c.buffer = index;
    c.length = len;
    c.imm = 0;
}

int OfiDriver::poll_recv_cq(Completion* out, int max) {
    fi_cq_data_entry entries[kBatch];
    int done = 0;
    while (done < max) {
        size_t want = static_cast<size_t>(std::min(max - done, kBatch));
        ssize_t n = fi_cq_read(recv_cq_.get(), entries, want);
        if (n == -FI_EAVAIL) {
            int got = read_recv_error(out + done);
            if (got == 0) break;
            done += got;
            continue;
        }
        if (n <= 0) {
            if (n != -FI_EAGAIN) runtime::warn("ofi: %s", fi_error("fi_cq_read (recv)", n).c_str());
            break;
        }
        for (ssize_t i = 0; i < n; ++i) {
            Completion& c = out[done++];
            c.ok = true;
            c.error.clear();
            fill_recv(c, entries[i].flags, entries[i].op_context, entries[i].len, entries[i].data);
        }
        if (static_cast<size_t>(n) < want) break;
    }
    return done;
}

int OfiDriver::read_recv_error(Completion* out) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(recv_cq_.get(), &err, 0) != 1) return 0;
    char text[256];
    const char* detail =
        fi_cq_strerror(recv_cq_.get(), err.prov_errno, err.err_data, text, sizeof text);
    Completion& c = *out;
    uint32_t index = 0;
    if (is_buffer_context(err.op_context, &index) && !(err.flags & FI_REMOTE_WRITE)) {
        c.type = Completion::Type::Recv;  // the caller reposts it
        c.buffer = index;
    } else {
        fill_recv(c, err.flags | FI_REMOTE_WRITE, err.op_context, 0, err.data);
    }
    c.ok = false;
    c.length = 0;
    c.error = std::string(lib::strerror(err.err)) + (detail ? std::string(" / ") + detail : "");
    return 1;
}

void OfiDriver::wait(int timeout_ms) {
    // fi_trywait fails when completions may be pending or the provider still
    // has work to do; sleeping then could miss them.
    // The event queue is among them: a broken connection must wake a
    // sleeping node process, whose ranks may wait for that peer alone.
    fid* fids[3] = {&send_cq_->fid, &recv_cq_->fid, &eq_->fid};
    if (fi_trywait(fabric_.get(), fids, 3) != FI_SUCCESS) return;
    wakeup_.wait(timeout_ms);
}

}  // namespace mpc::ib::ofi
