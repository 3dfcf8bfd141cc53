#include <metal_stdlib>
using namespace metal;
struct Px { float v; };
kernel void ib(imageblock<Px> blk, device float* out [[buffer(0)]]) {
    out[0] = 1.0f;
}
