// fidelity.metal: probe kernels of the emulator's device semantics (claim N4) in the MSL dialect of
// native/metal/sinks_attn.metal, built through native/emu/metal/metal_stdlib into libattnproof_metal_emu_fidelity.so.
// EmulatorFidelityN4Test holds their outputs against plain Java arithmetic.

#include <metal_stdlib>
using namespace metal;

#ifndef DPTR
#define DPTR(T) device T*
#define TG_ARRAY(T, name, n) threadgroup T name[n]
#endif

// threadgroup (128): four SIMD groups, group w standing for query row w; as divergent_warps in fidelity.cu (early
// != 0 leaves out the barrier before the rewrite).
kernel void divergent_simdgroups(DPTR(const float) x [[buffer(0)]], DPTR(float) out [[buffer(1)]],
                                 constant int& q_len [[buffer(2)]], constant int& early [[buffer(3)]],
                                 uint t [[thread_index_in_threadgroup]]) {
    TG_ARRAY(float, tile, 128);
    const int w = int(t) / 32;
    const int lane = int(t) % 32;
    tile[t] = x[t];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0.0f;
    if (w < q_len) {
        for (int it = 0; it <= w; ++it) {
            float v = tile[lane + 32 * ((w - it + 4) % 4)] * float(it + 1);
            for (ushort m = 16; m > 0; m /= 2) v += simd_shuffle_xor(v, m);
            acc += v;
        }
    }
    if (t < 32) {
        float mx = acc + tile[t];
        for (ushort m = 16; m > 0; m /= 2) mx = fmax(mx, simd_shuffle_xor(mx, m));
        acc += mx;
    }
    if (early == 0) threadgroup_barrier(mem_flags::mem_threadgroup);
    tile[t] = acc;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t] = tile[(t + 32) % 128] - acc;
}

// threadgroup (64): the SIMD-group reductions and broadcasts. out[t * 6 + k]: k 0 simd_sum(x), 1 simd_max(x),
// 2 simd_min(x), 3 simd_broadcast(x, 7), 4 simd_shuffle_down(x, 3), 5 simd_sum(x) of SIMD group 1 only (group 0
// skips it; its lanes write -1).
kernel void simd_ops(DPTR(const float) x [[buffer(0)]], DPTR(float) out [[buffer(1)]],
                     uint t [[thread_index_in_threadgroup]]) {
    const float v = x[t];
    out[t * 6 + 0] = simd_sum(v);
    out[t * 6 + 1] = simd_max(v);
    out[t * 6 + 2] = simd_min(v);
    out[t * 6 + 3] = simd_broadcast(v, ushort(7));
    out[t * 6 + 4] = simd_shuffle_down(v, ushort(3));
    out[t * 6 + 5] = t >= 32 ? simd_sum(v) : -1.0f;
}

// threadgroup (64): mode 0: SIMD group 1 skips the first barrier (it waits at the second while group 0 waits at
// the first); mode 1: group 1 returns before it (no error).
kernel void barrier_skipped(DPTR(float) out [[buffer(0)]], constant int& mode [[buffer(1)]],
                            uint t [[thread_index_in_threadgroup]]) {
    const int w = int(t) / 32;
    if (mode == 1 && w == 1) return;
    if (!(mode == 0 && w == 1)) threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t] = float(t);
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

// threadgroup (32): a checked threadgroup element has the device's type (claim N5); as checked_types in fidelity.cu.
kernel void checked_types(DPTR(float) out [[buffer(0)]], constant int& n [[buffer(1)]],
                          uint lane [[thread_index_in_threadgroup]]) {
    TG_ARRAY(float, partial, 32);
    partial[lane] = 2.75f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const auto a = (int(lane) < n) ? partial[lane] : 0;
    auto b = partial[lane];
    b += 0.5f;
    const float c = max(partial[lane], 0.0f);
    threadgroup const float* p = &partial[lane];
    out[lane * 4 + 0] = a;
    out[lane * 4 + 1] = b;
    out[lane * 4 + 2] = c;
    out[lane * 4 + 3] = *p;
}

// threadgroup (32): 36 KiB of threadgroup memory: within CUDA's 48 KiB of static shared memory, over Metal's 32 KiB.
kernel void threadgroup_36k(DPTR(float) out [[buffer(0)]], uint t [[thread_index_in_threadgroup]]) {
    TG_ARRAY(float, big, 9216);
    big[t] = float(t);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[t] = big[(t + 1) % 32];
}
