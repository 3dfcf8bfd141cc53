#include <metal_stdlib>
using namespace metal;

struct SumParams {
    uint n;
    float scale;
};

// Threadgroup g sums in[g * n, g * n + n) times scale: strided per thread, simd_sum per SIMD group, the groups'
// partials in dynamic threadgroup memory, then SIMD group 0 adds them.
template <typename T>
kernel void block_sum(device const T* in [[buffer(0)]], device float* out [[buffer(1)]],
                      device uint* out_bits [[buffer(2)]], constant SumParams& p [[buffer(3)]],
                      threadgroup float* partial [[threadgroup(0)]],
                      uint tg [[threadgroup_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                      ushort lane [[thread_index_in_simdgroup]], ushort sg [[simdgroup_index_in_threadgroup]],
                      uint3 tpg [[threads_per_threadgroup]]) {
    threadgroup float peak[32];
    in += tg * p.n;
    float acc = 0.0f;
    float hi = -INFINITY;
    for (uint i = tid; i < p.n; i += tpg.x) {
        acc += float(in[i]);
        hi = max(hi, float(in[i]));
    }
    acc = simd_sum(acc);
    hi = simd_max(hi);
    if (lane == 0) {
        partial[sg] = acc;
        peak[sg] = hi;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint groups = min((tpg.x + 31) / 32, 32u);
    if (sg == 0) {
        float v = lane < groups ? partial[lane] : 0.0f;
        float m = lane < groups ? peak[lane] : -INFINITY;
        v = simd_sum(v);
        m = simd_max(m);
        if (lane == 0) {
            const float s = v * p.scale * fast::exp(0.0f);
            out[2 * tg] = s;
            out[2 * tg + 1] = m;
            out_bits[tg] = as_type<uint>(s);
        }
    }
}

template [[host_name("block_sum_f32")]] kernel void block_sum<float>(device const float* in [[buffer(0)]],
        device float* out [[buffer(1)]], device uint* out_bits [[buffer(2)]], constant SumParams& p [[buffer(3)]],
        threadgroup float* partial [[threadgroup(0)]], uint tg [[threadgroup_position_in_grid]],
        uint tid [[thread_index_in_threadgroup]], ushort lane [[thread_index_in_simdgroup]],
        ushort sg [[simdgroup_index_in_threadgroup]], uint3 tpg [[threads_per_threadgroup]]);
template [[host_name("block_sum_f16")]] kernel decltype(block_sum<half>) block_sum<half>;
template [[host_name("block_sum_bf16")]] kernel decltype(block_sum<bfloat>) block_sum<bfloat>;
