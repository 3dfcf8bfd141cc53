#include <metal_stdlib>
using namespace metal;
kernel void mm(device const float* a [[buffer(0)]], device float* c [[buffer(1)]]) {
    simdgroup_float8x8 m;
    simdgroup_load(m, a, 8);
    simdgroup_store(m, c, 8);
}
