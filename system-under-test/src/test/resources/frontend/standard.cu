// A standard CUDA source for the front end's tests: file- and block-scope __shared__, extern __shared__ sized by the
// launch, a deduced template launch, a block reduction with __syncthreads and a warp shuffle.
#include <cuda_runtime.h>

__shared__ float file_tile[64];

template <typename T>
__global__ void block_sum(const T* __restrict__ in, T* out, int n) {
    __shared__ float partial[64];
    extern __shared__ float staged[];
    const int t = threadIdx.x;
    staged[t] = t < n ? (float)in[t] : 0.f;
    __syncthreads();
    float v = staged[t] + staged[(t + 32) % blockDim.x];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    partial[t] = v;
    file_tile[t] = v;
    __syncthreads();
    if (t == 0) out[0] = (T)(partial[0] + partial[32]) * 0.5f;
}

extern "C" cudaError_t run_block_sum(const float* in, float* out, int n) {
    block_sum<<<1, 64, 64 * sizeof(float)>>>(in, out, n);
    return cudaGetLastError();
}
