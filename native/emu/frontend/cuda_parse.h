// cuda_parse.h: what cuda2emu.py gives clang's CUDA mode (-x cuda --cuda-host-only -nocudainc -nocudalib) so that a
// standard .cu file parses into a complete AST: the CUDA keywords as clang's own attributes, the declarations
// <cuda_runtime.h> and the device headers would give, and the constructs the emulator refuses, each declared with
// an `attnproof-refused:` annotation the front end reports at every use. Parse only: nothing here is built; the
// emulator build uses cuda_std.h, which defines the same names (both share cuda_types.h).
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __restrict__ __restrict
#define ATTNPROOF_HD __host__ __device__

#include "cuda_types.h"

struct uint3 { unsigned x, y, z; };
struct dim3 {
    unsigned x, y, z;
    ATTNPROOF_HD dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
static constexpr int warpSize = 32;

__device__ void __syncthreads();
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ void __threadfence_block();
template <class T> __device__ T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32);
template <class T> __device__ T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32);
template <class T> __device__ T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32);
template <class T> __device__ T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32);
__device__ unsigned __ballot_sync(unsigned mask, int predicate);
template <class T> __device__ T __ldg(const T* p);
__device__ float __int_as_float(int x);
__device__ int __float_as_int(float x);

__device__ float expf(float);
__device__ float logf(float);
__device__ float sqrtf(float);
__device__ float fabsf(float);
__device__ float fmaxf(float, float);
__device__ float fminf(float, float);
__device__ float exp2f(float);
__device__ int min(int, int);
__device__ int max(int, int);
__device__ long long min(long long, long long);
__device__ long long max(long long, long long);
__device__ float min(float, float);
__device__ float max(float, float);

__device__ int atomicAdd(int* p, int v);
__device__ unsigned atomicAdd(unsigned* p, unsigned v);
__device__ float atomicAdd(float* p, float v);
__device__ int atomicMax(int* p, int v);
__device__ int atomicMin(int* p, int v);
__device__ int atomicExch(int* p, int v);
__device__ int atomicCAS(int* p, int compare, int v);

// The runtime a launcher uses.
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
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t);
cudaError_t cudaMalloc(void** p, unsigned long size);
template <class T> cudaError_t cudaMalloc(T** p, unsigned long size);
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, unsigned long n, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, unsigned long n, cudaMemcpyKind kind, cudaStream_t s = 0);
cudaError_t cudaMemset(void* p, int value, unsigned long n);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaStreamSynchronize(cudaStream_t);
template <class F> cudaError_t cudaFuncSetAttribute(F* f, cudaFuncAttribute attr, int value);
// What clang's CUDA mode lowers `k<<<grid, block, smem, stream>>>(args)` to (never called: the front end rewrites it).
extern "C" int __cudaPushCallConfiguration(dim3 grid, dim3 block, unsigned long long smem = 0, cudaStream_t s = 0);

// Refused: the emulator cannot run these faithfully. The front end reports `file:line: refused: <construct> (<why>)`
// at every use and exits non-zero.
#define ATTNPROOF_REFUSED(what, why) __attribute__((annotate("attnproof-refused:" what " (" why ")")))
namespace nvcuda {
namespace wmma {
struct ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") matrix_a;
struct ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") matrix_b;
struct ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") accumulator;
struct ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") row_major;
struct ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") col_major;
template <class Use, int M, int N, int K, class T, class Layout = void>
struct ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") fragment {};
template <class... A>
__device__ ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") void load_matrix_sync(A...);
template <class... A>
__device__ ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") void store_matrix_sync(A...);
template <class... A>
__device__ ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") void mma_sync(A...);
template <class... A>
__device__ ATTNPROOF_REFUSED("wmma", "tensor-core matrix fragments are not emulated") void fill_fragment(A...);
}  // namespace wmma
}  // namespace nvcuda
template <class... A>
__device__ ATTNPROOF_REFUSED("cp.async", "asynchronous global-to-shared copies and their pipeline stages are not emulated")
void __pipeline_memcpy_async(A...);
__device__ ATTNPROOF_REFUSED("cp.async", "asynchronous global-to-shared copies and their pipeline stages are not emulated")
void __pipeline_commit();
__device__ ATTNPROOF_REFUSED("cp.async", "asynchronous global-to-shared copies and their pipeline stages are not emulated")
void __pipeline_wait_prior(int);
namespace cooperative_groups {
struct ATTNPROOF_REFUSED("cooperative groups beyond a warp", "grid-wide synchronisation: the emulator runs one block at a time") grid_group {
    __device__ void sync();
};
__device__ ATTNPROOF_REFUSED("cooperative groups beyond a warp", "grid-wide synchronisation: the emulator runs one block at a time")
grid_group this_grid();
struct ATTNPROOF_REFUSED("cooperative groups beyond a warp", "thread-block groups are not emulated, use __syncthreads") thread_block {
    __device__ void sync();
};
__device__ ATTNPROOF_REFUSED("cooperative groups beyond a warp", "thread-block groups are not emulated, use __syncthreads")
thread_block this_thread_block();
// A tile of a thread block: its collectives span the tile, which the scheduler does not model (a tile wider than a
// warp spans several warps; a narrower one is what the __shfl_*_sync intrinsics with a width express).
template <unsigned Size, class Parent = void>
struct ATTNPROOF_REFUSED("cooperative groups beyond a warp", "thread-block tiles are not emulated, use __shfl_*_sync with a width") thread_block_tile {
    __device__ unsigned thread_rank() const;
    __device__ void sync();
};
template <unsigned Size, class Parent>
__device__ ATTNPROOF_REFUSED("cooperative groups beyond a warp", "thread-block tiles are not emulated, use __shfl_*_sync with a width")
thread_block_tile<Size, Parent> tiled_partition(const Parent&);
template <class... A>
__device__ ATTNPROOF_REFUSED("cooperative groups beyond a warp", "grid-wide synchronisation: the emulator runs one block at a time")
void sync(A...);
}  // namespace cooperative_groups
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
template <class T, class... A>
__device__ ATTNPROOF_REFUSED("texture fetch", "textures and their sampling hardware are not emulated") T tex1Dfetch(A...);
template <class T, class... A>
__device__ ATTNPROOF_REFUSED("texture fetch", "textures and their sampling hardware are not emulated") T tex2D(A...);
template <class T, class... A>
__device__ ATTNPROOF_REFUSED("surface access", "surfaces are not emulated") void surf2Dwrite(A...);
