// emu_limits.h: a lane's launch limits: threads per block and blocks per grid axis (checked before a launch runs)
// and the static shared / threadgroup memory a block declares (checked while it runs, at each declaration).
#pragma once

#include <mutex>
#include <string>

#include "emu_state.h"

namespace emu {

struct Limits {
    const char* api;                  // "CUDA", "Metal": named in the error
    unsigned max_threads;             // threads per block
    unsigned long long max_grid[3];   // blocks per grid axis
    long long max_shared_bytes;       // static shared memory per block
};

// A launch limit the launch broke (the first one), set by a declaration inside the kernel (static shared memory).
struct LimitViolation {
    std::mutex mu;
    std::string first;
};

inline LimitViolation& limit_violation() {
    static LimitViolation v;
    return v;
}

inline thread_local long long t_max_shared_bytes = 0;
inline thread_local const char* t_lane_api = "";

// SHARED_ARRAY / TG_ARRAY: a block declares `bytes` of static shared memory; over the lane's limit, the launch fails.
inline void declare_shared(const char* name, long long bytes) {
    t_shared_bytes += bytes;
    if (t_max_shared_bytes > 0 && t_shared_bytes > t_max_shared_bytes) {
        LimitViolation& v = limit_violation();
        std::lock_guard<std::mutex> lock(v.mu);
        if (v.first.empty()) {
            v.first = std::string("invalid launch configuration for ") + t_kernel + ": its static shared memory is " +
                      std::to_string(t_shared_bytes) + " bytes (with " + name + "), over " + t_lane_api +
                      "'s limit of " + std::to_string(t_max_shared_bytes) + " bytes (" +
                      std::to_string(t_max_shared_bytes / 1024) + " KiB) of static shared memory per block";
        }
    }
}

// The shape checks made before a launch runs: LAUNCH_OK, or LAUNCH_BAD_CONFIG with the limit named in `error`.
inline int check_launch_shape(const char* kernel, dim3 grid, dim3 block, const Limits& limits, std::string& error) {
    const long long n = static_cast<long long>(block.x) * block.y * block.z;
    const long long blocks = static_cast<long long>(grid.x) * grid.y * grid.z;
    const std::string shape = std::string("invalid launch configuration for ") + kernel + ": grid (" +
                              std::to_string(grid.x) + "," + std::to_string(grid.y) + "," + std::to_string(grid.z) +
                              "), block (" + std::to_string(block.x) + "," + std::to_string(block.y) + "," +
                              std::to_string(block.z) + "): ";
    if (n < 1 || n > limits.max_threads || blocks < 1) {
        error = shape + "a block holds 1.." + std::to_string(limits.max_threads) + " threads (" + limits.api +
                "'s limit of " + std::to_string(limits.max_threads) + " threads per block) and a grid at least one block";
        return LAUNCH_BAD_CONFIG;
    }
    const unsigned g[3] = {grid.x, grid.y, grid.z};
    for (int axis = 0; axis < 3; ++axis) {
        if (g[axis] > limits.max_grid[axis]) {
            error = shape + "grid." + "xyz"[axis] + " = " + std::to_string(g[axis]) + " exceeds " + limits.api +
                    "'s limit of " + std::to_string(limits.max_grid[axis]) + " blocks on that axis";
            return LAUNCH_BAD_CONFIG;
        }
    }
    return LAUNCH_OK;
}

}  // namespace emu
