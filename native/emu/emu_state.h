// emu_state.h: the emulated launch's position variables, the per-launch fault record and the launch result codes
// (what every other emu_*.h header reads or writes).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

// The libraries are built with hidden visibility (direct calls and local TLS inside them); their C entry points
// are the only exported symbols.
#define ATTNPROOF_EXPORT __attribute__((visibility("default")))

namespace emu {

// As CUDA declares it: dim3 g(n) and dim3 g(a, b, c) are constructor calls (clang before 16 has no parenthesised
// aggregate initialisation), and an unsigned converts to dim3 implicitly.
struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

// The launch's position variables, one copy per emulated thread: thread-locals of the launching thread, saved and
// restored by the fiber switch for the ones that differ between a block's threads (Fiber::State).
inline thread_local dim3 t_thread;
inline thread_local dim3 t_block;
inline thread_local dim3 t_block_dim;
inline thread_local dim3 t_grid_dim;
inline thread_local const char* t_kernel = "?";
// Race checker: the barrier interval this thread is in ((block serial + 1) << 20 | barriers passed in the block), its
// linear thread id, the shared elements it touched (summed per launch) and the static shared bytes its block declared.
inline thread_local std::uint64_t t_epoch = 0;
inline thread_local int t_tid = 0;
inline thread_local long long t_shared_accesses = 0;
inline thread_local long long t_shared_bytes = 0;

// Launch errors the host reports (kernel status words are separate: the kernel writes them to a buffer).
enum LaunchResult : int {
    LAUNCH_OK = 0,
    LAUNCH_UNKNOWN_KERNEL = 10,
    LAUNCH_BAD_SIGNATURE = 11,
    LAUNCH_FAULT = 12,          // an out-of-bounds access (or a host exception) inside the kernel
    LAUNCH_HOST_EXCEPTION = 13,
    LAUNCH_BAD_CONFIG = 14,
    LAUNCH_RACE = 15,           // the race checker saw two threads touch one shared element between barriers
    LAUNCH_DEADLOCK = 16,       // threads of a block wait at barriers / warp operations that can never complete
    LAUNCH_WARP_MISUSE = 17,    // a warp operation whose mask, width or source lane the device leaves undefined
};

// The first fault of a launch (later ones are counted).
struct Faults {
    std::mutex mu;
    std::string first;
    long long count = 0;
};

inline Faults& faults() {
    static Faults f;
    return f;
}

inline std::string block_name() {
    return "(" + std::to_string(t_block.x) + "," + std::to_string(t_block.y) + "," + std::to_string(t_block.z) + ")";
}

inline void fault(const std::string& what) {
    Faults& f = faults();
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.count++ == 0) {
        f.first = what + " in kernel " + t_kernel + ", block " + block_name() + " thread (" +
                  std::to_string(t_thread.x) + "," + std::to_string(t_thread.y) + "," + std::to_string(t_thread.z) +
                  ")";
    }
}

// The first synchronisation error of a launch (a deadlock or a warp operation the device leaves undefined): it ends
// the launch with its code.
struct SyncError {
    int code = LAUNCH_OK;
    std::string first;
};

inline SyncError& sync_error() {
    static SyncError e;
    return e;
}

inline void warp_misuse(const std::string& what) {
    SyncError& e = sync_error();
    if (e.code == LAUNCH_OK) {
        e.code = LAUNCH_WARP_MISUSE;
        e.first = what + " in kernel " + t_kernel + ", block " + block_name() + " thread " + std::to_string(t_tid);
    }
}

}  // namespace emu
