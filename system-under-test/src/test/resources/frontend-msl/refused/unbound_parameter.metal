#include <metal_stdlib>
using namespace metal;
kernel void unbound(device float* out [[buffer(0)]], device float* scratch, uint gid [[thread_position_in_grid]]) {
    out[gid] = scratch[gid];
}
