// cuda_emu.h: the CUDA names a kernel uses, mapped onto emu_core.h. frontend/cuda_std.h (the prelude of a source the
// front end rewrote, native/cuda/*.cu included) builds on it.
#pragma once

#include <cmath>

#include "emu_core.h"

#define ATTNPROOF_EMU 1

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__

using emu::dim3;

// threadIdx, blockIdx, blockDim and gridDim are per-thread variables of the emulated launch.
#define threadIdx (::emu::t_thread)
#define blockIdx (::emu::t_block)
#define blockDim (::emu::t_block_dim)
#define gridDim (::emu::t_grid_dim)

// The emulator dialect (dptr<T>, SHARED_ARRAY), kept only for the fidelity probes of the test resources
// (system-under-test/src/test/resources/emu-kernels/fidelity.cu), which exercise the scheduler and the checkers
// directly. Kernel sources are standard CUDA, built through frontend/cuda2emu.py, and never use it.
template <class T>
using dptr = emu::dptr<T>;
#define SHARED_ARRAY(T, name, n)                   \
    static emu::shared_array<T, (n)> name{#name}; \
    ::emu::declare_shared(#name, static_cast<long long>(sizeof(T)) * (n))

// Barriers and warp operations: the call's source line names it in a deadlock report.
inline void __syncthreads(unsigned line = __builtin_LINE()) { emu::barrier_block("__syncthreads", line); }

inline void __syncwarp(unsigned mask = 0xffffffffu, unsigned line = __builtin_LINE()) {
    emu::warp_op("__syncwarp", line, mask, false, 0, 32, 0, emu::compute_nothing);
}

template <class T>
inline T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32, unsigned line = __builtin_LINE()) {
    return emu::from_bits<T>(emu::warp_op("__shfl_xor_sync", line, mask, false, lane_mask, width, emu::to_bits(value),
                                          emu::compute_shfl<emu::Shfl::Xor>));
}

template <class T>
inline T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32, unsigned line = __builtin_LINE()) {
    return emu::from_bits<T>(emu::warp_op("__shfl_down_sync", line, mask, false, static_cast<int>(delta), width,
                                          emu::to_bits(value), emu::compute_shfl<emu::Shfl::Down>));
}

template <class T>
inline T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32, unsigned line = __builtin_LINE()) {
    return emu::from_bits<T>(emu::warp_op("__shfl_up_sync", line, mask, false, static_cast<int>(delta), width,
                                          emu::to_bits(value), emu::compute_shfl<emu::Shfl::Up>));
}

template <class T>
inline T __shfl_sync(unsigned mask, T value, int src_lane, int width = 32, unsigned line = __builtin_LINE()) {
    return emu::from_bits<T>(emu::warp_op("__shfl_sync", line, mask, false, src_lane, width, emu::to_bits(value),
                                          emu::compute_shfl<emu::Shfl::Idx>));
}

inline unsigned __ballot_sync(unsigned mask, int predicate, unsigned line = __builtin_LINE()) {
    return static_cast<unsigned>(emu::warp_op("__ballot_sync", line, mask, false, 0, 32, predicate != 0 ? 1u : 0u,
                                              emu::compute_ballot));
}

inline float __int_as_float(int x) {
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
// CUDA's float and double overloads (fminf / fmaxf semantics).
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
