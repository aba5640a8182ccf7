// Private to the scheduler: telling AddressSanitizer and ThreadSanitizer about
// fiber switches. Both sanitizers track "the current stack" per OS thread; a
// Boost.Context jump changes it behind their backs, which makes ASan report
// stack accesses of the new fiber as wild (and its fake stacks leak) and TSan
// mix the histories of unrelated fibers. Without a sanitizer every function
// here is empty and inlines away.
#pragma once

#include <cstddef>

#include "runtime/sanitizers.hpp"

#ifdef MPC_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef MPC_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace mpc::sched {

// What the sanitizers need to know about one execution context (a task, or a
// VP's own thread stack).
struct FiberSanitizerState {
#ifdef MPC_ASAN
    void* fake_stack = nullptr;  // ASan's fake stack of the context while it is switched out
    const void* stack_bottom = nullptr;  // lowest address of the context's stack
    size_t stack_size = 0;               // (a VP's: learnt on its first switch to a task)
#endif
#ifdef MPC_TSAN
    void* tsan_fiber = nullptr;
#endif
};

// A task's context gets its stack; `own_thread` is true for a VP's idle
// context, which is the calling thread's own stack and TSan fiber.
inline void fiber_sanitizer_init(FiberSanitizerState& s, const void* stack_bottom, size_t size,
                                 bool own_thread) {
#ifdef MPC_ASAN
    s.stack_bottom = stack_bottom;
    s.stack_size = size;
#endif
#ifdef MPC_TSAN
    s.tsan_fiber = own_thread ? __tsan_get_current_fiber() : __tsan_create_fiber(0);
#endif
    (void)s, (void)stack_bottom, (void)size, (void)own_thread;
}

// Frees what init() created for a task's context; called from another context.
inline void fiber_sanitizer_destroy(FiberSanitizerState& s) {
#ifdef MPC_TSAN
    if (s.tsan_fiber) __tsan_destroy_fiber(s.tsan_fiber);
    s.tsan_fiber = nullptr;
#endif
    (void)s;
}

// Immediately before jumping from `from` to `to`. `leaving_for_good`: `from`
// will never run again (its fake stack is released).
inline void fiber_sanitizer_before_switch(FiberSanitizerState& from, FiberSanitizerState& to,
                                          bool leaving_for_good) {
#ifdef MPC_ASAN
    __sanitizer_start_switch_fiber(leaving_for_good ? nullptr : &from.fake_stack, to.stack_bottom,
                                   to.stack_size);
#endif
#ifdef MPC_TSAN
    // Synchronising (flags 0): the fibers of one VP do run one after the other.
    __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
    (void)from, (void)to, (void)leaving_for_good;
}

// First thing after `self` resumes (or starts). `prev` is the context the jump
// came from: its stack bounds are learnt here (a VP's own stack).
inline void fiber_sanitizer_after_switch(FiberSanitizerState& self, FiberSanitizerState& prev) {
#ifdef MPC_ASAN
    const void* bottom = nullptr;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(self.fake_stack, &bottom, &size);
    self.fake_stack = nullptr;
    if (!prev.stack_bottom) {
        prev.stack_bottom = bottom;
        prev.stack_size = size;
    }
#endif
    (void)self, (void)prev;
}

// A task's stack memory is about to be unmapped while ASan may still mark
// parts of it as redzones (a task that ended inside nested frames): clear them
// so that whatever is mapped there next starts clean.
inline void fiber_sanitizer_forget_stack(void* bottom, size_t size) {
#ifdef MPC_ASAN
    ASAN_UNPOISON_MEMORY_REGION(bottom, size);
#endif
    (void)bottom, (void)size;
}

}  // namespace mpc::sched
