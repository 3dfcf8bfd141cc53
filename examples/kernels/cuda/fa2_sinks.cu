// fa2_sinks.cu: an FA2-style fused sinks attention prefill and varlen kernel, written the way inference engines
// write theirs (standard CUDA C++: nvcc builds it as is; attnproof's emulator builds it unchanged through
// native/emu/frontend/cuda2emu.py). Semantics: SYSTEM.md §8 `sinks_attn` without a mask: scale D^-0.5,
// bottom-right-aligned causality (kv_offset = kv_len - q_len; row r sees j <= r + kv_offset and, with window > 0,
// j >= r + kv_offset - window + 1), query head h reads KV head h / (Hq / Hkv), and the per-head sink as one extra
// logit column in the softmax denominator (a row with no admitted key gives 0; sinks == nullptr: no sink column).
//
// One warp per query row, ROWS_PER_BLOCK rows per block; K/V tiles of KEY_TILE keys in dynamic shared memory
// (f32, converted once at the load), loaded by the whole block between two barriers; inside a tile each warp runs
// its own row's key loop (its trip count depends on the row; warps past q_len skip it) with a warp-shuffle
// reduction per key. Layouts: dense q/out [B, Hq, tq, D], k/v [B, Hkv, tk, D]; varlen q/out [total_q, Hq, D],
// k/v [total_k, Hkv, D] over cu_seqlens_q / cu_seqlens_k.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cfloat>

#define ROWS_PER_BLOCK 4
#define KEY_TILE 32
#define WARP 32

template <typename T> __device__ __forceinline__ float to_float(T x) { return static_cast<float>(x); }
template <> __device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T from_float(float x) { return static_cast<T>(x); }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = WARP / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// One block: rows r0 .. r0 + ROWS_PER_BLOCK - 1 of one (sequence, query head). Pointers are already offset to the
// sequence and head; q_stride / kv_stride / o_stride are the distances between consecutive rows / keys.
template <typename T, int D>
__device__ void attend_rows(const T* __restrict__ q, long long q_stride, const T* __restrict__ k,
                            const T* __restrict__ v, long long kv_stride, T* __restrict__ out, long long o_stride,
                            int q_len, int kv_len, int window, float sink, bool has_sink, float scale, int r0) {
    extern __shared__ float smem[];
    float* k_tile = smem;
    float* v_tile = smem + KEY_TILE * D;
    constexpr int PER_LANE = (D + WARP - 1) / WARP;
    const int warp = threadIdx.x / WARP;
    const int lane = threadIdx.x % WARP;
    const int r = r0 + warp;
    const bool live = r < q_len;
    const long long kv_offset = (long long)kv_len - q_len;
    const long long diag = (long long)r + kv_offset;
    long long row_lo = window > 0 ? diag - window + 1 : 0;
    if (row_lo < 0) row_lo = 0;
    const long long row_hi = diag < kv_len - 1 ? diag : kv_len - 1;

    // The keys any live row of the block admits: tiles outside are never loaded.
    const int last_row = (q_len - 1 < r0 + ROWS_PER_BLOCK - 1 ? q_len - 1 : r0 + ROWS_PER_BLOCK - 1);
    long long lo = window > 0 ? r0 + kv_offset - window + 1 : 0;
    if (lo < 0) lo = 0;
    long long hi = last_row + kv_offset;
    if (hi > kv_len - 1) hi = kv_len - 1;

    float q_reg[PER_LANE];
    float acc[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) {
        const int e = lane + i * WARP;
        q_reg[i] = (live && e < D) ? to_float(q[(long long)r * q_stride + e]) * scale : 0.f;
        acc[i] = 0.f;
    }
    float m = -INFINITY;
    float l = 0.f;

    for (long long t0 = lo - lo % KEY_TILE; t0 <= hi; t0 += KEY_TILE) {
        const int n = hi - t0 + 1 < KEY_TILE ? (int)(hi - t0 + 1) : KEY_TILE;
        for (int x = threadIdx.x; x < n * D; x += blockDim.x) {
            const int j = x / D, e = x % D;
            k_tile[j * D + e] = to_float(k[(t0 + j) * kv_stride + e]);
            v_tile[j * D + e] = to_float(v[(t0 + j) * kv_stride + e]);
        }
        __syncthreads();  // the tile is in place

        if (live) {
            const long long j_lo = row_lo > t0 ? row_lo : t0;
            const long long j_hi = row_hi < t0 + n - 1 ? row_hi : t0 + n - 1;
            for (long long j = j_lo; j <= j_hi; ++j) {
                const int jj = (int)(j - t0);
                float part = 0.f;
#pragma unroll
                for (int i = 0; i < PER_LANE; ++i) {
                    const int e = lane + i * WARP;
                    if (e < D) part += q_reg[i] * k_tile[jj * D + e];
                }
                const float s = warp_sum(part);
                const float m_new = fmaxf(m, s);
                const float alpha = expf(m - m_new);
                const float p = expf(s - m_new);
                l = l * alpha + p;
#pragma unroll
                for (int i = 0; i < PER_LANE; ++i) {
                    const int e = lane + i * WARP;
                    if (e < D) acc[i] = acc[i] * alpha + p * v_tile[jj * D + e];
                }
                m = m_new;
            }
        }
        __syncthreads();  // every warp is done with the tile before the next load overwrites it
    }

    if (!live) return;
    // The sink: one extra logit column in the denominator, never in the numerator.
    float m_fin = m;
    if (has_sink) m_fin = fmaxf(m, sink);
    const float alpha = m_fin == -INFINITY ? 0.f : expf(m - m_fin);
    float denom = l * alpha;
    if (has_sink) denom += expf(sink - m_fin);
    const float inv = denom > 0.f ? 1.f / denom : 0.f;
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) {
        const int e = lane + i * WARP;
        if (e < D) out[(long long)r * o_stride + e] = from_float<T>(acc[i] * alpha * inv);
    }
}

template <typename T, int D>
__global__ void __launch_bounds__(ROWS_PER_BLOCK * WARP)
fa2_sinks_fwd_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                     const float* __restrict__ sinks, T* __restrict__ out, int Hq, int Hkv, int tq, int tk,
                     int window, float scale) {
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    const int kvh = h / (Hq / Hkv);
    const long long qo = ((long long)b * Hq + h) * tq * D;
    const long long kvo = ((long long)b * Hkv + kvh) * tk * D;
    const float sink = sinks != nullptr ? sinks[h] : 0.f;
    attend_rows<T, D>(q + qo, D, k + kvo, v + kvo, D, out + qo, D, tq, tk, window, sink, sinks != nullptr, scale,
                      blockIdx.x * ROWS_PER_BLOCK);
}

template <typename T, int D>
__global__ void __launch_bounds__(ROWS_PER_BLOCK * WARP)
fa2_sinks_varlen_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                        const float* __restrict__ sinks, const int* __restrict__ cu_seqlens_q,
                        const int* __restrict__ cu_seqlens_k, T* __restrict__ out, int Hq, int Hkv, int window,
                        float scale) {
    const int h = blockIdx.y;
    const int s = blockIdx.z;
    const int kvh = h / (Hq / Hkv);
    const int q0 = cu_seqlens_q[s], q_len = cu_seqlens_q[s + 1] - q0;
    const int k0 = cu_seqlens_k[s], kv_len = cu_seqlens_k[s + 1] - k0;
    // Blocks past this sequence's q_len have no live row: every warp skips the key loop.
    const float sink = sinks != nullptr ? sinks[h] : 0.f;
    attend_rows<T, D>(q + ((long long)q0 * Hq + h) * D, (long long)Hq * D, k + ((long long)k0 * Hkv + kvh) * D,
                      v + ((long long)k0 * Hkv + kvh) * D, (long long)Hkv * D, out + ((long long)q0 * Hq + h) * D,
                      (long long)Hq * D, q_len, kv_len, window, sink, sinks != nullptr, scale,
                      blockIdx.x * ROWS_PER_BLOCK);
}

template <typename T, int D>
static cudaError_t launch_fwd(const T* q, const T* k, const T* v, const float* sinks, T* out, int B, int Hq,
                              int Hkv, int tq, int tk, int window, cudaStream_t stream) {
    const size_t smem = 2 * KEY_TILE * D * sizeof(float);
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(fa2_sinks_fwd_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess) return e;
    }
    dim3 grid((tq + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK, Hq, B);
    fa2_sinks_fwd_kernel<T, D><<<grid, ROWS_PER_BLOCK * WARP, smem, stream>>>(q, k, v, sinks, out, Hq, Hkv, tq, tk,
                                                                        window, rsqrtf((float)D));
    return cudaGetLastError();
}

template <typename T, int D>
static cudaError_t launch_varlen(const T* q, const T* k, const T* v, const float* sinks, const int* cu_q,
                                 const int* cu_k, T* out, int nseq, int max_q, int Hq, int Hkv, int window,
                                 cudaStream_t stream) {
    const size_t smem = 2 * KEY_TILE * D * sizeof(float);
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(fa2_sinks_varlen_kernel<T, D>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess) return e;
    }
    dim3 grid((max_q + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK, Hq, nseq);
    fa2_sinks_varlen_kernel<T, D><<<grid, ROWS_PER_BLOCK * WARP, smem, stream>>>(q, k, v, sinks, cu_q, cu_k, out,
                                                                                 Hq, Hkv, window,
                                                                                 rsqrtf((float)D));
    return cudaGetLastError();
}

#define FA2_DISPATCH(D_VAR, CALL)                                   \
    switch (D_VAR) {                                                \
        case 64: { constexpr int HD = 64; return CALL; }            \
        case 80: { constexpr int HD = 80; return CALL; }            \
        case 96: { constexpr int HD = 96; return CALL; }            \
        case 112: { constexpr int HD = 112; return CALL; }          \
        case 128: { constexpr int HD = 128; return CALL; }          \
        case 192: { constexpr int HD = 192; return CALL; }          \
        case 256: { constexpr int HD = 256; return CALL; }          \
        default: return cudaErrorInvalidValue;                      \
    }

static bool bad_heads(int Hq, int Hkv) { return Hq < 1 || Hkv < 1 || Hq % Hkv != 0; }

#define FA2_LAUNCHERS(SUFFIX, T)                                                                                     \
    extern "C" cudaError_t fa2_sinks_fwd_##SUFFIX(const T* q, const T* k, const T* v, const float* sinks, T* out,   \
                                                  int B, int Hq, int Hkv, int tq, int tk, int D, int window,        \
                                                  cudaStream_t stream) {                                            \
        if (bad_heads(Hq, Hkv) || B < 1 || tq < 1 || tk < 0 || window < 0) return cudaErrorInvalidValue;           \
        FA2_DISPATCH(D, (launch_fwd<T, HD>(q, k, v, sinks, out, B, Hq, Hkv, tq, tk, window, stream)))             \
    }                                                                                                                \
    extern "C" cudaError_t fa2_sinks_varlen_##SUFFIX(const T* q, const T* k, const T* v, const float* sinks,       \
                                                     const int* cu_seqlens_q, const int* cu_seqlens_k, T* out,      \
                                                     int nseq, int max_q, int Hq, int Hkv, int D, int window,       \
                                                     cudaStream_t stream) {                                         \
        if (bad_heads(Hq, Hkv) || nseq < 1 || max_q < 1 || window < 0) return cudaErrorInvalidValue;              \
        FA2_DISPATCH(D, (launch_varlen<T, HD>(q, k, v, sinks, cu_seqlens_q, cu_seqlens_k, out, nseq, max_q, Hq,   \
                                               Hkv, window, stream)))                                               \
    }

FA2_LAUNCHERS(f32, float)
FA2_LAUNCHERS(f16, __half)
FA2_LAUNCHERS(bf16, __nv_bfloat16)
