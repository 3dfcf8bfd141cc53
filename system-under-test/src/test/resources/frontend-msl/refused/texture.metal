#include <metal_stdlib>
using namespace metal;
kernel void tex(texture2d<float> t, device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    out[gid] = 0.0f;
}
