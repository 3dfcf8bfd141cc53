#include <metal_stdlib>
using namespace metal;
kernel void tile2d(device float* out [[buffer(0)]], uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float tile[8][8];
    tile[tid / 8][tid % 8] = 1.0f;
    out[tid] = tile[0][0];
}
