// emu_fiber.h: the emulated threads' execution contexts: a register switch (x86-64, arm64), stacks with guard pages,
// and the frame a fresh fiber starts from. Knows nothing of blocks or barriers (emu_sched.h).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace emu {

// The fiber switch: saves the callee-saved registers on the current stack, stores its stack pointer in *save, and
// resumes the fiber whose stack pointer is `to` (saved by an earlier switch, or laid out by prepare_fiber).
// x86-64 (System V) and arm64 (AAPCS64, Linux and macOS): the two architectures the emulated lanes build on.
extern "C" void attnproof_emu_switch(void** save, void* to);
#if defined(__APPLE__)
#define ATTNPROOF_EMU_ASM_SYM "_attnproof_emu_switch"
#define ATTNPROOF_EMU_ASM_HIDE ".private_extern _attnproof_emu_switch\n"
#else
#define ATTNPROOF_EMU_ASM_SYM "attnproof_emu_switch"
#define ATTNPROOF_EMU_ASM_HIDE ".hidden attnproof_emu_switch\n"
#endif
#if defined(__x86_64__)
// Frame: r15 r14 r13 r12 rbx rbp, return address.
constexpr int kSwitchFrameWords = 6;
asm(".text\n.p2align 4\n.globl " ATTNPROOF_EMU_ASM_SYM "\n" ATTNPROOF_EMU_ASM_HIDE ATTNPROOF_EMU_ASM_SYM ":\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n");
#elif defined(__aarch64__)
// Frame: x19..x28, x29, x30 (the return address), d8..d15: 176 bytes.
constexpr int kSwitchFrameWords = 22;
asm(".text\n.p2align 4\n.globl " ATTNPROOF_EMU_ASM_SYM "\n" ATTNPROOF_EMU_ASM_HIDE ATTNPROOF_EMU_ASM_SYM ":\n"
    "  sub sp, sp, #176\n"
    "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n  stp x25, x26, [sp, #48]\n"
    "  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n"
    "  stp d12, d13, [sp, #128]\n  stp d14, d15, [sp, #144]\n"
    "  mov x9, sp\n  str x9, [x0]\n  mov sp, x1\n"
    "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n  ldp x25, x26, [sp, #48]\n"
    "  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n"
    "  ldp d12, d13, [sp, #128]\n  ldp d14, d15, [sp, #144]\n"
    "  add sp, sp, #176\n  ret\n");
#else
#error "the emulated lanes' fiber switch is written for x86-64 and arm64 only"
#endif

// Fiber stacks, mapped once per launching thread and reused by every later launch; each has a guard page below it,
// so an overflow faults loudly instead of writing into a neighbour.
class StackPool {
public:
    static constexpr std::size_t kStackBytes = 256 * 1024;
    ~StackPool() {
        for (void* m : maps_) munmap(m, kStackBytes + page());
    }
    // The usable stack of fiber i (mapping new ones as needed); nullptr when the system has no memory for it.
    char* stack(std::size_t i) {
        while (maps_.size() <= i) {
            void* m = mmap(nullptr, kStackBytes + page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return nullptr;
            mprotect(m, page(), PROT_NONE);
            maps_.push_back(m);
        }
        return static_cast<char*>(maps_[i]) + page();
    }

private:
    static std::size_t page() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
    std::vector<void*> maps_;
};

// Lays out a fresh switch frame at the top of a fiber's stack whose return address is `entry`: the first switch to
// the fiber "returns" into entry with the stack aligned as after a call.
inline void prepare_fiber(void*& sp, char* stack, void (*entry)()) {
    auto top = reinterpret_cast<std::uintptr_t>(stack + StackPool::kStackBytes) & ~static_cast<std::uintptr_t>(15);
    void** frame = reinterpret_cast<void**>(top) - (kSwitchFrameWords + 2);
    for (int i = 0; i < kSwitchFrameWords + 2; ++i) frame[i] = nullptr;
#if defined(__x86_64__)
    frame[kSwitchFrameWords] = reinterpret_cast<void*>(entry);  // popped by ret; entry starts with rsp = 8 mod 16
#else
    frame[11] = reinterpret_cast<void*>(entry);  // x30, the link register ret jumps to
#endif
    sp = frame;
}

inline StackPool& stack_pool() {
    thread_local StackPool pool;
    return pool;
}

}  // namespace emu
