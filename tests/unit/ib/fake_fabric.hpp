// A driver for unit tests: several Driver instances in one process, connected
// through memory. It checks what a real NIC would not forgive: a send into a
// peer whose receive pool is empty (an overrun, which credits must prevent) and
// writes outside registered memory or with a stale key.
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "ib/driver.hpp"

namespace mpc::ib::test {

class FakeFabric;

class FakeDriver final : public Driver {
public:
    FakeDriver(FakeFabric* fabric, const DriverConfig& c);
    const char* name() const override { return "fake"; }
    std::string local_address() override { return "fake-" + std::to_string(config_.self); }
    Status connect_all(const std::vector<std::string>&) override { return Status::Ok; }
    Status register_memory(void* addr, size_t length, MemoryRegion* out) override;
    void deregister_memory(MemoryRegion& mr) override;
    void* recv_buffer(uint32_t index) override { return pool_[index].get(); }
    Status repost_recv(uint32_t index) override;
    Status post_send(int peer, const void* buf, size_t len, void*, uint64_t context) override;
    Status post_write(int peer, const void* buf, size_t len, void*, uint64_t remote_addr,
                      uint64_t remote_key, bool has_imm, uint32_t imm, uint64_t context) override;
    int poll_send_cq(Completion* out, int max) override { return drain(send_cq_, out, max); }
    int poll_recv_cq(Completion* out, int max) override { return drain(recv_cq_, out, max); }
    void wait(int) override {}
    void interrupt() override {}

    // Counters the tests check.
    int overruns = 0;
    int bad_writes = 0;
    int writes = 0;              // posted RDMA writes
    int writes_with_imm = 0;
    size_t largest_write = 0;
    int registrations = 0;
    int deregistrations = 0;
    bool refuse_registrations = false;  // a full NIC table / locked-memory limit
    int refused = 0;
    std::map<uint64_t, std::pair<uintptr_t, size_t>> regions;  // key -> range

private:
    friend class FakeFabric;
    int drain(std::deque<Completion>& q, Completion* out, int max) {
        std::lock_guard<std::mutex> g(mutex_);
        int n = 0;
        while (n < max && !q.empty()) {
            out[n++] = q.front();
            q.pop_front();
            if (&q == &send_cq_) --outstanding_;
        }
        return n;
    }
    FakeFabric* fabric_;
    DriverConfig config_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<char[]>> pool_;
    std::deque<uint32_t> posted_;  // receive buffers available
    std::deque<Completion> send_cq_, recv_cq_;
    int outstanding_ = 0;          // sends whose completion was not polled
    uint64_t next_key_ = 1;
};

class FakeFabric {
public:
    FakeDriver* node(int i) { return nodes_[static_cast<size_t>(i)]; }
    std::unique_ptr<FakeDriver> open(const DriverConfig& c) {
        auto d = std::make_unique<FakeDriver>(this, c);
        if (nodes_.size() <= static_cast<size_t>(c.self)) nodes_.resize(static_cast<size_t>(c.self) + 1);
        nodes_[static_cast<size_t>(c.self)] = d.get();
        return d;
    }

private:
    std::vector<FakeDriver*> nodes_;
};

inline FakeDriver::FakeDriver(FakeFabric* fabric, const DriverConfig& c) : fabric_(fabric), config_(c) {
    for (uint32_t i = 0; i < c.recv_buffers; ++i) {
        pool_.emplace_back(new char[c.recv_buffer_size]);
        posted_.push_back(i);
    }
}

inline Status FakeDriver::register_memory(void* addr, size_t length, MemoryRegion* out) {
    std::lock_guard<std::mutex> g(mutex_);
    if (refuse_registrations) {
        ++refused;
        return Status::Error;
    }
    out->addr = addr;
    out->length = length;
    out->remote_key = next_key_++;
    out->remote_base = reinterpret_cast<uint64_t>(addr);
    out->local_desc = nullptr;
    out->handle = reinterpret_cast<void*>(out->remote_key);
    regions[out->remote_key] = {reinterpret_cast<uintptr_t>(addr), length};
    ++registrations;
    return Status::Ok;
}

inline void FakeDriver::deregister_memory(MemoryRegion& mr) {
    std::lock_guard<std::mutex> g(mutex_);
    regions.erase(mr.remote_key);
    ++deregistrations;
}

inline Status FakeDriver::repost_recv(uint32_t index) {
    std::lock_guard<std::mutex> g(mutex_);
    posted_.push_back(index);
    return Status::Ok;
}

inline Status FakeDriver::post_send(int peer, const void* buf, size_t len, void*, uint64_t context) {
    {
        std::lock_guard<std::mutex> g(mutex_);
        if (outstanding_ >= static_cast<int>(config_.send_queue_depth)) return Status::Again;
        ++outstanding_;
    }
    FakeDriver* p = fabric_->node(peer);
    {
        std::lock_guard<std::mutex> g(p->mutex_);
        if (p->posted_.empty() || len > p->config_.recv_buffer_size) {
            ++p->overruns;
        } else {
            uint32_t b = p->posted_.front();
            p->posted_.pop_front();
            memcpy(p->pool_[b].get(), buf, len);
            Completion c;
            c.type = Completion::Type::Recv;
            c.buffer = b;
            c.length = len;
            p->recv_cq_.push_back(c);
        }
    }
    std::lock_guard<std::mutex> g(mutex_);
    Completion c;
    c.type = Completion::Type::Send;
    c.context = context;
    send_cq_.push_back(c);
    return Status::Ok;
}

inline Status FakeDriver::post_write(int peer, const void* buf, size_t len, void*, uint64_t remote_addr,
                                     uint64_t remote_key, bool has_imm, uint32_t imm, uint64_t context) {
    {
        std::lock_guard<std::mutex> g(mutex_);
        if (outstanding_ >= static_cast<int>(config_.send_queue_depth)) return Status::Again;
        ++outstanding_;
        ++writes;
        writes_with_imm += has_imm;
        largest_write = std::max(largest_write, len);
    }
    FakeDriver* p = fabric_->node(peer);
    bool ok = true;
    {
        std::lock_guard<std::mutex> g(p->mutex_);
        auto it = p->regions.find(remote_key);
        if (it == p->regions.end() || remote_addr < it->second.first ||
            remote_addr + len > it->second.first + it->second.second) {
            ++p->bad_writes;
            ok = false;
        } else {
            memcpy(reinterpret_cast<void*>(remote_addr), buf, len);
            if (has_imm) {
                Completion c;
                c.type = Completion::Type::WriteImm;
                c.imm = imm;
                p->recv_cq_.push_back(c);
            }
        }
    }
    std::lock_guard<std::mutex> g(mutex_);
    Completion c;
    c.type = Completion::Type::Write;
    c.context = context;
    c.ok = ok;
    if (!ok) c.error = "write outside registered memory";
    send_cq_.push_back(c);
    return Status::Ok;
}

}  // namespace mpc::ib::test
