#include <metal_stdlib>
using namespace metal;
kernel void count(device atomic_int* counter [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}
