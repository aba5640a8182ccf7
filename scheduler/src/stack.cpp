#include "stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <utility>

#include "runtime/log.hpp"
#include "sanitizer_fiber.hpp"

namespace mpc::sched {

Stack::Stack(size_t size) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_ = (size + page - 1) / page * page;
    guard_ = page;
    // MAP_NORESERVE: the stack is committed page by page as the task touches it.
    void* p = mmap(nullptr, size_ + guard_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        runtime::fatal("cannot reserve a %zu-byte task stack (MPC_STACK_SIZE)", size_);
    if (mprotect(p, guard_, PROT_NONE) != 0) runtime::fatal("cannot protect a stack guard page");
    base_ = p;
}

Stack::~Stack() {
    if (!base_) return;
    fiber_sanitizer_forget_stack(static_cast<char*>(base_) + guard_, size_);
    munmap(base_, size_ + guard_);
}

void Stack::swap(Stack& o) noexcept {
    std::swap(base_, o.base_);
    std::swap(size_, o.size_);
    std::swap(guard_, o.guard_);
}

}  // namespace mpc::sched
