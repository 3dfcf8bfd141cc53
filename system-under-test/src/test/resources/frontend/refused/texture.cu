__global__ void k(cudaTextureObject_t tex, float* out) {
    out[threadIdx.x] = tex1Dfetch<float>(tex, threadIdx.x);
}
