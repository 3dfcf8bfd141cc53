// cuda_emu.h: the CUDA names a kernel source uses, mapped onto emu_core.h, so that native/cuda/*.cu compiles as
// host C++20 (g++ -std=c++20 -pthread) unchanged. Include it before the kernel source.
#pragma once

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

// Device pointers and __shared__ arrays are bounds-checked accessors.
template <class T>
using dptr = emu::dptr<T>;
#define SHARED_ARRAY(T, name, n)                   \
    static emu::shared_array<T, (n)> name{#name}; \
    ::emu::declare_shared(#name, static_cast<long long>(sizeof(T)) * (n))

inline void __syncthreads() { emu::barrier_block(); }

template <class T>
inline T __shfl_xor_sync(unsigned /*mask*/, T value, int lane_mask, int width = 32) {
    return emu::shuffle_xor(value, static_cast<unsigned>(lane_mask), static_cast<unsigned>(width));
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
