#include <cuda_pipeline.h>
__global__ void k(const float* in, float* out) {
    __shared__ float tile[32];
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[threadIdx.x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[threadIdx.x] = tile[threadIdx.x];
}
