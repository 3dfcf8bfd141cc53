__global__ void k(cudaSurfaceObject_t surf, const float* in) {
    surf2Dwrite(in[threadIdx.x], surf, threadIdx.x * 4, 0);
}
