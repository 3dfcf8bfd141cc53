// cuda_std.h: the prelude of a standard CUDA source rewritten by cuda2emu.py: everything a header CAN provide, so the
// rewrite changes only shared declarations, kernel pointers and launches. The device names come from cuda_emu.h
// (threadIdx & co., __syncthreads, the warp-scoped shuffles) and cuda_types.h (__half, __nv_bfloat16, float4, math);
// this file adds __ldg, atomics, the dynamic shared array, the argument conversion of a launch, and the runtime a
// launcher uses: cudaMalloc/cudaFree register every allocation with its length, so that each kernel pointer argument
// becomes a checked pointer bounded by the allocation it points into (a pointer into no allocation faults at its
// first access, as memcheck reports an invalid address).
#pragma once

#include <math.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "cuda_emu.h"
#include "cuda_types.h"

#define __shared__ static_assert(false, "cuda2emu rewrites every __shared__ declaration")
#define __constant__
#define __noinline__
#define __launch_bounds__(...)
static constexpr int warpSize = 32;

inline int __float_as_int(float x) {
    int i;
    std::memcpy(&i, &x, sizeof i);
    return i;
}
inline void __threadfence_block() {}

template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T>
inline T __ldg(emu::dptr<const T> p) { return p[0]; }
template <class T>
inline T __ldg(emu::dptr<T> p) { return p[0]; }

// Atomics: a block's threads are fibers that never run at once, so a read-modify-write is atomic. On shared memory
// each one is recorded as the thread's access by the race checker (two threads' atomics on one element between two
// barriers are reported: a known false positive, native/README).
template <class T>
inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
inline int atomicMax(int* p, int v) { int old = *p; if (v > old) *p = v; return old; }
inline int atomicMin(int* p, int v) { int old = *p; if (v < old) *p = v; return old; }
inline int atomicExch(int* p, int v) { int old = *p; *p = v; return old; }
inline int atomicCAS(int* p, int compare, int v) { int old = *p; if (old == compare) *p = v; return old; }

// ---- the runtime ----
typedef struct CUstream_st* cudaStream_t;
enum cudaError_t {
    cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorInvalidConfiguration = 9,
    cudaErrorIllegalAddress = 700, cudaErrorLaunchFailure = 719
};
typedef cudaError_t cudaError;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

namespace emu {

// sm_80's limits: 48 KiB of shared memory per block without opt-in, 163 KiB (166912 bytes) with
// cudaFuncAttributeMaxDynamicSharedMemorySize.
constexpr long long kDefaultSharedBytes = 48 * 1024;
constexpr long long kMaxDynSharedBytes = 166912;

struct Allocation {
    std::size_t bytes;
    std::string name;
};

struct CudaRuntime {
    std::mutex mu;
    std::map<std::uintptr_t, Allocation> allocs;  // base -> allocation
    long long serial = 0;
    cudaError_t last = cudaSuccess;
    std::string message;                          // the last failed launch's report
    std::map<const void*, long long> max_dyn;     // cudaFuncAttributeMaxDynamicSharedMemorySize per kernel
};

inline CudaRuntime& runtime() {
    static CudaRuntime r;
    return r;
}

inline long long g_dyn_shared_bytes = 0;  // the running launch's dynamic shared memory (one launch at a time)

// extern __shared__ T name[]: static storage for the largest dynamic size, bounded by the running launch's bytes.
template <class T>
struct dyn_shared_array {
    static constexpr long long kCap = kMaxDynSharedBytes / static_cast<long long>(sizeof(T));
    shared_array<T, kCap> a;
    explicit dyn_shared_array(const char* n) : a(n) {}
    dptr<T> ptr() { return dptr<T>(a.data, g_dyn_shared_bytes / static_cast<long long>(sizeof(T)), a.name, a.tracked()); }
    T& operator[](long long i) { return ptr()[i]; }
    operator dptr<T>() { return ptr(); }
    operator dptr<const T>() { return ptr(); }
    dptr<T> operator+(long long d) { return ptr() + d; }
};

template <class T, long long N>
dptr<T> operator+(shared_array<T, N>& a, long long d) { return dptr<T>(a) + d; }

// A launch argument, converted once: a pointer becomes a checked pointer over the registered allocation it points
// into (named by the kernel's parameter); anything else passes unchanged.
template <class T>
dptr<T> arg(T* p, const char* param) {
    if (p == nullptr) return dptr<T>(nullptr);
    CudaRuntime& r = runtime();
    std::lock_guard<std::mutex> lock(r.mu);
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    auto it = r.allocs.upper_bound(at);
    if (it != r.allocs.begin()) {
        --it;
        if (at < it->first + it->second.bytes) {
            const long long len = static_cast<long long>(it->second.bytes / sizeof(T));
            return dptr<T>(reinterpret_cast<T*>(it->first), len, param) +
                   static_cast<long long>((at - it->first) / sizeof(T));
        }
    }
    // Not device memory: every access through it faults, naming the parameter (length 0).
    return dptr<T>(p, 0, param);
}
template <class T>
T arg(T v, const char*) { return v; }
inline std::nullptr_t arg(std::nullptr_t, const char*) { return nullptr; }

inline cudaError_t set_last(cudaError_t e, const std::string& message = "") {
    CudaRuntime& r = runtime();
    std::lock_guard<std::mutex> lock(r.mu);
    if (e != cudaSuccess) {
        r.last = e;
        r.message = message;
    }
    return e;
}

inline std::mutex& cuda_launch_mu() {
    static std::mutex mu;
    return mu;
}

// k<<<grid, block, smem, stream>>>(args): checks the configuration as the device does, runs the grid, and leaves
// the result in cudaGetLastError (an out-of-bounds access: cudaErrorIllegalAddress; a race, deadlock or warp misuse
// found by the emulator: cudaErrorLaunchFailure; the report in attnproof_cuda_last_message).
inline dim3 to_dim3(dim3 d) { return d; }
inline dim3 to_dim3(unsigned long long n) { return dim3{static_cast<unsigned>(n), 1, 1}; }

template <class G, class B, class F, class... A>
cudaError_t cuda_launch(const char* kernel, const void* fn, G grid_in, B block_in, unsigned long long smem,
                        cudaStream_t, F f, A... args) {
    const dim3 grid = to_dim3(grid_in), block = to_dim3(block_in);
    std::lock_guard<std::mutex> one(cuda_launch_mu());
    long long limit = kDefaultSharedBytes;
    {
        CudaRuntime& r = runtime();
        std::lock_guard<std::mutex> lock(r.mu);
        auto it = r.max_dyn.find(fn);
        if (it != r.max_dyn.end() && it->second > limit) limit = it->second;
    }
    if (static_cast<long long>(smem) > limit) {
        return set_last(cudaErrorInvalidValue,
                        std::string("invalid launch of ") + kernel + ": " + std::to_string(smem) +
                            " bytes of dynamic shared memory, over the kernel's limit of " + std::to_string(limit) +
                            " (cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) raises it up to " +
                            std::to_string(kMaxDynSharedBytes) + ")");
    }
    {
        Faults& fl = faults();
        std::lock_guard<std::mutex> lock(fl.mu);
        fl.first.clear();
        fl.count = 0;
    }
    const Limits limits{"CUDA", 1024, {2147483647ULL, 65535ULL, 65535ULL}, limit - static_cast<long long>(smem)};
    g_dyn_shared_bytes = static_cast<long long>(smem);
    std::tuple<A...> held(args...);
    std::string error;
    const int result = launch(kernel, grid, block, limits, [&] { std::apply(f, held); }, error);
    g_dyn_shared_bytes = 0;
    if (result == LAUNCH_OK && faults().count > 0) {
        return set_last(cudaErrorIllegalAddress,
                        faults().first + (faults().count > 1 ? " (and " + std::to_string(faults().count - 1) + " more)" : ""));
    }
    switch (result) {
        case LAUNCH_OK: return cudaSuccess;
        case LAUNCH_BAD_CONFIG: return set_last(cudaErrorInvalidConfiguration, error);
        default: return set_last(cudaErrorLaunchFailure, error);
    }
}

}  // namespace emu

extern "C" {
ATTNPROOF_EXPORT cudaError_t cudaGetLastError() {
    emu::CudaRuntime& r = emu::runtime();
    std::lock_guard<std::mutex> lock(r.mu);
    cudaError_t e = r.last;
    r.last = cudaSuccess;
    return e;
}
ATTNPROOF_EXPORT cudaError_t cudaPeekAtLastError() {
    std::lock_guard<std::mutex> lock(emu::runtime().mu);
    return emu::runtime().last;
}
ATTNPROOF_EXPORT const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
        case cudaSuccess: return "no error";
        case cudaErrorInvalidValue: return "invalid argument";
        case cudaErrorMemoryAllocation: return "out of memory";
        case cudaErrorInvalidConfiguration: return "invalid configuration argument";
        case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
        case cudaErrorLaunchFailure: return "unspecified launch failure";
    }
    return "unrecognized error code";
}
// The emulator's report of the last failed launch (the fault, race or deadlock, with kernel, block and thread).
ATTNPROOF_EXPORT const char* attnproof_cuda_last_message() { return emu::runtime().message.c_str(); }
ATTNPROOF_EXPORT cudaError_t cudaMalloc(void** p, std::size_t bytes) {
    if (p == nullptr) return emu::set_last(cudaErrorInvalidValue, "cudaMalloc: devPtr is null");
    void* m = std::calloc(bytes == 0 ? 1 : bytes, 1);
    if (m == nullptr) return emu::set_last(cudaErrorMemoryAllocation, "cudaMalloc: out of memory");
    emu::CudaRuntime& r = emu::runtime();
    std::lock_guard<std::mutex> lock(r.mu);
    r.allocs[reinterpret_cast<std::uintptr_t>(m)] = emu::Allocation{bytes, "cudaMalloc#" + std::to_string(++r.serial)};
    *p = m;
    return cudaSuccess;
}
ATTNPROOF_EXPORT cudaError_t cudaFree(void* p) {
    if (p == nullptr) return cudaSuccess;
    emu::CudaRuntime& r = emu::runtime();
    {
        std::lock_guard<std::mutex> lock(r.mu);
        if (r.allocs.erase(reinterpret_cast<std::uintptr_t>(p)) == 0) {
            r.last = cudaErrorInvalidValue;
            r.message = "cudaFree: not an allocation's base pointer";
            return cudaErrorInvalidValue;
        }
    }
    std::free(p);
    return cudaSuccess;
}
ATTNPROOF_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t n, cudaMemcpyKind) {
    if (n > 0 && (dst == nullptr || src == nullptr)) return emu::set_last(cudaErrorInvalidValue, "cudaMemcpy: null pointer");
    std::memmove(dst, src, n);
    return cudaSuccess;
}
ATTNPROOF_EXPORT cudaError_t cudaMemset(void* p, int value, std::size_t n) {
    if (n > 0 && p == nullptr) return emu::set_last(cudaErrorInvalidValue, "cudaMemset: null pointer");
    std::memset(p, value, n);
    return cudaSuccess;
}
ATTNPROOF_EXPORT cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t n, cudaMemcpyKind k, cudaStream_t = nullptr) {
    return cudaMemcpy(dst, src, n, k);
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
template <class T>
inline cudaError_t cudaMalloc(T** p, std::size_t bytes) { return cudaMalloc(reinterpret_cast<void**>(p), bytes); }
template <class F>
inline cudaError_t cudaFuncSetAttribute(F* f, cudaFuncAttribute attr, int value) {
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 || value > emu::kMaxDynSharedBytes) {
        return emu::set_last(cudaErrorInvalidValue, "cudaFuncSetAttribute: value " + std::to_string(value) +
                                                        " outside 0.." + std::to_string(emu::kMaxDynSharedBytes));
    }
    emu::CudaRuntime& r = emu::runtime();
    std::lock_guard<std::mutex> lock(r.mu);
    r.max_dyn[reinterpret_cast<const void*>(f)] = value;
    return cudaSuccess;
}
