#include "emu/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "emu/error.hpp"

#ifdef TTNN_MOE_SANITIZE
#include <sanitizer/common_interface_defs.h>
// Tell AddressSanitizer about every jump between the scheduler's stack and a fiber's.
#define TTNN_MOE_START_SWITCH(save, bottom, size) __sanitizer_start_switch_fiber(save, bottom, size)
#define TTNN_MOE_FINISH_SWITCH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#define TTNN_MOE_START_SWITCH(save, bottom, size) ((void)0)
#define TTNN_MOE_FINISH_SWITCH(save, bottom, size) ((void)0)
#endif

namespace ttnn_moe::emu {

namespace {
// Initial-exec, as the services' thread-locals (emu/services.cpp): read at every switch.
[[gnu::tls_model("initial-exec")]] thread_local Fiber* t_current = nullptr;

size_t page_size() {
    static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return size;
}

// Stacks are reused across program runs: mapping and guarding them costs syscalls per launch.
// Per thread, so no locking; a stack never migrates between threads.
struct StackPool {
    std::vector<void*> free;
    ~StackPool() {
        for (void* s : free) munmap(s, Fiber::STACK_SIZE + page_size());
    }
};
thread_local StackPool t_stacks;

void* take_stack() {
    if (!t_stacks.free.empty()) {
        void* s = t_stacks.free.back();
        t_stacks.free.pop_back();
        return s;
    }
    const size_t size = Fiber::STACK_SIZE + page_size();
    void* s = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED) throw EmuError("cannot map a kernel stack");
    // Stacks grow down: the lowest page is the guard.
    mprotect(s, page_size(), PROT_NONE);
    return s;
}
}  // namespace

Fiber::Fiber(std::function<void()> body) : body_(std::move(body)) {
    stack_ = take_stack();
}

Fiber::~Fiber() {
    t_stacks.free.push_back(stack_);
}

Fiber* Fiber::current() {
    return t_current;
}

void Fiber::trampoline(unsigned lo, unsigned hi) {
    Fiber* self = reinterpret_cast<Fiber*>((static_cast<uintptr_t>(hi) << 32) | static_cast<uintptr_t>(lo));
    TTNN_MOE_FINISH_SWITCH(nullptr, &self->scheduler_stack_bottom_, &self->scheduler_stack_size_);
    try {
        self->body_();
    } catch (...) {
        self->error_ = std::current_exception();
    }
    self->finished_ = true;
    TTNN_MOE_START_SWITCH(nullptr, self->scheduler_stack_bottom_, self->scheduler_stack_size_);  // never back
    _longjmp(*self->return_jmp_, 1);
}

// noinline: the jmp_buf lives in this frame, which stays valid until the fiber jumps back.
__attribute__((noinline)) void Fiber::resume() {
    if (finished_) return;
    jmp_buf back;
    Fiber* previous = t_current;
    return_jmp_ = &back;
    t_current = this;
    if (_setjmp(back) == 0) {
        TTNN_MOE_START_SWITCH(&scheduler_fake_stack_, static_cast<char*>(stack_) + page_size(), STACK_SIZE);
        if (!started_) {
            started_ = true;
            getcontext(&context_);
            context_.uc_stack.ss_sp = static_cast<char*>(stack_) + page_size();
            context_.uc_stack.ss_size = STACK_SIZE;
            context_.uc_link = nullptr;
            const uintptr_t self = reinterpret_cast<uintptr_t>(this);
            makecontext(&context_, reinterpret_cast<void (*)()>(&Fiber::trampoline), 2,
                        static_cast<unsigned>(self & 0xffffffffu), static_cast<unsigned>(self >> 32));
            ucontext_t caller;
            swapcontext(&caller, &context_);  // never returns here: the fiber longjmps to `back`
        } else {
            _longjmp(fiber_jmp_, 1);
        }
    }
    TTNN_MOE_FINISH_SWITCH(scheduler_fake_stack_, nullptr, nullptr);
    t_current = previous;
}

__attribute__((noinline)) void Fiber::yield() {
    Fiber* self = t_current;
    if (_setjmp(self->fiber_jmp_) == 0) {
        TTNN_MOE_START_SWITCH(&self->fiber_fake_stack_, self->scheduler_stack_bottom_, self->scheduler_stack_size_);
        _longjmp(*self->return_jmp_, 1);
    }
    TTNN_MOE_FINISH_SWITCH(self->fiber_fake_stack_, &self->scheduler_stack_bottom_, &self->scheduler_stack_size_);
}

}  // namespace ttnn_moe::emu
