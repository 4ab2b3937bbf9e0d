// Cooperative user-space contexts on one OS thread. A Fiber runs a function on
// its own stack (256 KiB + guard page); resume() runs it until it calls
// Fiber::yield() or returns. The first entry goes through makecontext/
// swapcontext, every later switch through _setjmp/_longjmp (no signal-mask
// syscall). An exception escaping the function is captured, never unwound
// across the stack boundary.
#pragma once

#include <ucontext.h>
#include <csetjmp>
#include <cstddef>
#include <exception>
#include <functional>

namespace ttnn_moe::emu {

class Fiber {
public:
    static constexpr size_t STACK_SIZE = 256 * 1024;

    explicit Fiber(std::function<void()> body);
    ~Fiber();
    Fiber(const Fiber&) = delete;
    Fiber& operator=(const Fiber&) = delete;

    // Runs the fiber until it yields or finishes. Must not be called from a fiber.
    void resume();
    // Called from inside the running fiber: back to the resume() caller.
    static void yield();
    // The fiber currently running on this thread, or nullptr.
    static Fiber* current();

    bool finished() const { return finished_; }
    // The exception that escaped the body, if any.
    std::exception_ptr error() const { return error_; }

private:
    static void trampoline(unsigned lo, unsigned hi);

    std::function<void()> body_;
    void* stack_ = nullptr;  // mapping base (guard page first)
    ucontext_t context_{};
    jmp_buf fiber_jmp_{};
    jmp_buf* return_jmp_ = nullptr;
    bool started_ = false;
    bool finished_ = false;
    // AddressSanitizer's view of the stack switches (TTNN_MOE_SANITIZE builds only): the fake
    // stacks of both sides and the scheduler's stack the fiber returns to.
    void* scheduler_fake_stack_ = nullptr;
    void* fiber_fake_stack_ = nullptr;
    const void* scheduler_stack_bottom_ = nullptr;
    size_t scheduler_stack_size_ = 0;
    std::exception_ptr error_;
};

}  // namespace ttnn_moe::emu
