// A page-aligned, zeroed block of memory owned by a driver (the receive pool).
//
// Zeroing commits every page before registration, which providers asking
// for FI_MR_ALLOCATED require and which keeps first-touch faults off the
// receive path.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace mpc::ib {

class BufferBlock {
  public:
    BufferBlock() = default;
    explicit BufferBlock(size_t bytes) {
        const size_t page = 4096;
        size_ = (bytes + page - 1) / page * page;
        data_ = static_cast<char*>(std::aligned_alloc(page, size_));
        if (data_) std::memset(data_, 0, size_);
    }
    ~BufferBlock() { std::free(data_); }
    BufferBlock(const BufferBlock&) = delete;
    BufferBlock& operator=(const BufferBlock&) = delete;
    BufferBlock(BufferBlock&& o) noexcept : data_(o.data_), size_(o.size_) {
        o.data_ = nullptr;
        o.size_ = 0;
    }
    BufferBlock& operator=(BufferBlock&& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        return *this;
    }

    char* data() const { return data_; }
    size_t size() const { return size_; }
    explicit operator bool() const { return data_ != nullptr; }

  private:
    char* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace mpc::ib
