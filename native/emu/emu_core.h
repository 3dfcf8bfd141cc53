// emu_core.h: what the CUDA and Metal shims share. The kernel sources are compiled unchanged as host C++20. The
// shims replace what a GPU would provide:
//   - a launch runs the grid's blocks (threadgroups) one at a time; the block's threads are std::threads that
//     share a real std::barrier, so __shared__/threadgroup memory and barriers behave as on a device;
//   - a thread that returns early drops out of the block's barrier (what exited threads do on current GPUs);
//   - shuffles go through an exchange buffer between two barriers, so every thread of the block must reach them;
//   - every device pointer and shared array is a bounds-checked accessor: an out-of-bounds index records a fault
//     naming the buffer, the index, its length, the kernel, the block and the thread, and reads or writes a
//     scratch cell instead, so the launch finishes and the host reports the fault (never a crash, never UB).
#pragma once

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace emu {

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

// The launch's position variables, one copy per emulated thread.
inline thread_local dim3 t_thread;
inline thread_local dim3 t_block;
inline thread_local dim3 t_block_dim;
inline thread_local dim3 t_grid_dim;
inline thread_local const char* t_kernel = "?";

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

inline void fault(const std::string& what) {
    Faults& f = faults();
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.count++ == 0) {
        f.first = what + " in kernel " + t_kernel + ", block (" + std::to_string(t_block.x) + "," +
                  std::to_string(t_block.y) + "," + std::to_string(t_block.z) + ") thread (" +
                  std::to_string(t_thread.x) + "," + std::to_string(t_thread.y) + "," + std::to_string(t_thread.z) +
                  ")";
    }
}

// A cell an out-of-bounds access lands on instead of foreign memory.
template <class T>
inline T& scratch() {
    thread_local std::remove_const_t<T> cell{};
    return cell;
}

// A bounds-checked device pointer: base, length (elements), offset; pointer arithmetic moves the offset only.
template <class T>
class dptr {
    template <class U>
    friend class dptr;
    T* base_ = nullptr;
    long long len_ = 0;
    long long off_ = 0;
    const char* name_ = "null";

public:
    dptr() = default;
    dptr(std::nullptr_t) {}
    dptr(T* base, long long len, const char* name) : base_(base), len_(base ? len : 0), name_(name) {}
    template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
    dptr(const dptr<U>& o) : base_(o.base_), len_(o.len_), off_(o.off_), name_(o.name_) {}

    T& operator[](long long i) const {
        long long at = off_ + i;
        if (base_ == nullptr || at < 0 || at >= len_) {
            fault(std::string("out-of-bounds access ") + name_ + "[" + std::to_string(at) + "] (length " +
                  std::to_string(len_) + ")");
            return scratch<T>();
        }
        return base_[at];
    }
    T& operator*() const { return (*this)[0]; }
    dptr operator+(long long d) const {
        dptr r = *this;
        r.off_ += d;
        return r;
    }
    dptr operator-(long long d) const { return *this + (-d); }
    bool operator==(std::nullptr_t) const { return base_ == nullptr; }
    explicit operator bool() const { return base_ != nullptr; }
};

// Block-shared storage (__shared__ / threadgroup) with checked indexing; converts to a checked pointer.
template <class T, long long N>
struct shared_array {
    T data[N];
    const char* name = "shared";
    T& operator[](long long i) {
        if (i < 0 || i >= N) {
            fault(std::string("out-of-bounds access to shared array ") + name + "[" + std::to_string(i) +
                  "] (length " + std::to_string(N) + ")");
            return scratch<T>();
        }
        return data[i];
    }
    operator dptr<T>() { return dptr<T>(data, N, name); }
    operator dptr<const T>() { return dptr<const T>(data, N, name); }
};

// One launch's block-level synchronisation: the block barrier (re-made for every block) and the shuffle buffer.
struct BlockSync {
    explicit BlockSync(int n) : threads(n), exchange(n) {}
    int threads;
    std::unique_ptr<std::barrier<>> block;
    std::vector<std::uint64_t> exchange;
};

inline thread_local BlockSync* t_sync = nullptr;

inline int linear_thread() {
    return static_cast<int>(t_thread.x + t_block_dim.x * (t_thread.y + t_block_dim.y * t_thread.z));
}

// __syncthreads() / threadgroup_barrier(): every thread of the block still running arrives and waits.
inline void sync_block() { t_sync->block->arrive_and_wait(); }

// __shfl_xor_sync / simd_shuffle_xor: the value of the thread whose lane differs by lane_mask within its warp.
template <class T>
inline T shuffle_xor(T value, unsigned lane_mask, unsigned width) {
    static_assert(sizeof(T) <= sizeof(std::uint64_t), "shuffle of a value wider than 64 bits");
    int me = linear_thread();
    std::uint64_t word = 0;
    std::memcpy(&word, &value, sizeof(T));
    t_sync->exchange[me] = word;
    sync_block();
    long long partner = me ^ static_cast<int>(lane_mask);
    T out = value;
    if (lane_mask >= width || partner >= t_sync->threads) {
        fault("shuffle_xor with lane mask " + std::to_string(lane_mask) + " leaves the warp of " +
              std::to_string(width) + " lanes (block of " + std::to_string(t_sync->threads) + " threads)");
    } else {
        std::memcpy(&out, &t_sync->exchange[partner], sizeof(T));
    }
    sync_block();
    return out;
}

// Launch errors the host reports (kernel status words are separate: the kernel writes them to a buffer).
enum LaunchResult : int {
    LAUNCH_OK = 0,
    LAUNCH_UNKNOWN_KERNEL = 10,
    LAUNCH_BAD_SIGNATURE = 11,
    LAUNCH_FAULT = 12,          // an out-of-bounds access (or a host exception) inside the kernel
    LAUNCH_HOST_EXCEPTION = 13,
    LAUNCH_BAD_CONFIG = 14,
};

// Runs body() once per (block, thread) of the grid: blocks one at a time, a block's threads concurrently.
// Returns LAUNCH_OK, LAUNCH_BAD_CONFIG (message in `error`) or LAUNCH_HOST_EXCEPTION.
template <class Body>
int launch(const char* kernel, dim3 grid, dim3 block, unsigned max_threads, const Body& body, std::string& error) {
    long long n = static_cast<long long>(block.x) * block.y * block.z;
    long long blocks = static_cast<long long>(grid.x) * grid.y * grid.z;
    if (n < 1 || n > max_threads || blocks < 1) {
        error = std::string("invalid launch configuration for ") + kernel + ": grid (" + std::to_string(grid.x) +
                "," + std::to_string(grid.y) + "," + std::to_string(grid.z) + "), block (" +
                std::to_string(block.x) + "," + std::to_string(block.y) + "," + std::to_string(block.z) +
                "): a block holds 1.." + std::to_string(max_threads) + " threads and a grid at least one block";
        return LAUNCH_BAD_CONFIG;
    }
    int threads = static_cast<int>(n);
    BlockSync sync(threads);
    sync.block = std::make_unique<std::barrier<>>(threads);
    auto renew = [&sync, threads]() noexcept { sync.block = std::make_unique<std::barrier<>>(threads); };
    std::barrier<decltype(renew)> block_end(threads, renew);
    // Threads are parked until all of them exist: if one cannot be started, none runs and the launch fails.
    std::latch start(1);
    std::atomic<bool> abort{false};
    auto run = [&](int tid) {
        start.wait();
        if (abort) {
            return;
        }
        t_sync = &sync;
        t_kernel = kernel;
        t_block_dim = block;
        t_grid_dim = grid;
        t_thread = dim3{static_cast<unsigned>(tid % block.x), static_cast<unsigned>((tid / block.x) % block.y),
                        static_cast<unsigned>(tid / (block.x * block.y))};
        for (unsigned bz = 0; bz < grid.z; ++bz) {
            for (unsigned by = 0; by < grid.y; ++by) {
                for (unsigned bx = 0; bx < grid.x; ++bx) {
                    t_block = dim3{bx, by, bz};
                    try {
                        body();
                    } catch (const std::exception& e) {
                        fault(std::string("host exception ") + e.what());
                    } catch (...) {
                        fault("unknown host exception");
                    }
                    sync.block->arrive_and_drop();
                    block_end.arrive_and_wait();
                }
            }
        }
        t_sync = nullptr;
    };
    std::vector<std::thread> pool;
    pool.reserve(threads);
    try {
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back(run, t);
        }
    } catch (const std::exception& e) {
        error = std::string("could not start ") + std::to_string(threads) + " emulated threads for " + kernel +
                ": " + e.what();
        abort = true;
    }
    start.count_down();
    for (auto& t : pool) {
        t.join();
    }
    return abort ? LAUNCH_HOST_EXCEPTION : LAUNCH_OK;
}

}  // namespace emu
