// sinks_attn.cu: sinks attention on CUDA (SYSTEM.md §8).
//
//   flash_attn_sinks         fused: query-row tiles over key tiles staged in shared memory, an online softmax with
//                            a running max, the sink folded into the denominator after the last key tile, and
//                            bottom-right-aligned causality and window applied inside (kv_offset = tk - tq; row r
//                            sees j <= r + kv_offset and, with window > 0, j >= r + kv_offset - window + 1). Head
//                            dims {64, 80, 96, 112, 128, 192, 256, 512}. Its mask parameter exists only to refuse a
//                            non-null mask: the kernel then writes STATUS_MASK_REFUSED and computes nothing.
//   flash_attn_sinks_varlen  the same tiles over packed rows (cu_seqlens_q / cu_seqlens_k); rows past a sequence's
//                            q_len are zero up to max_q. Any head dim up to MAX_D.
//   sinks_scores, softmax_with_sinks, sinks_pv
//                            the unfused masked path: scores (q.k) * scale plus the causal/window rule (when asked)
//                            plus an additive mask broadcast over batch, head and row; softmax with the sink in the
//                            denominator only; P.V skipping -inf columns (a masked key is never read).
//   sinks_decode_splitk_partial, sinks_decode_splitk_reduce
//                            split-K (two-pass) decode of one query row per (b, h) over many keys: pass 1 gives each
//                            chunk of SPLIT_K_CHUNK keys its max m_c, sum of exponentials l_c and unnormalised P.V o_c
//                            (no sink); pass 2 combines the chunks by their log-sum-exp with the sink entering once,
//                            as one extra logit column: m = max(sink, max m_c), l = e^(sink-m) + sum e^(m_c-m) l_c,
//                            o = sum e^(m_c-m) o_c / l. Keys are admitted by the fused kernels' rule (causal, window;
//                            the sinks decode) and by an additive mask (the union decode). Any head dim up to MAX_D.
//
// Layouts (row-major f32): dense q [B,Hq,tq,D], k/v [B,Hkv,tk,D], out [B,Hq,tq,D]; packed q [total_q,Hq,D],
// k/v [total_k,Hkv,D], varlen out [nseq,Hq,max_q,D]. Query head h reads KV head h / (Hq / Hkv).
//
// Standard CUDA C++: the same file is what nvcc compiles to PTX (the cuda lane, loaded by JCuda) and what the
// emulator's front end (native/emu/frontend/cuda2emu.py) rewrites into host C++ for the cuda-emu lanes, where every
// pointer parameter is bounds-checked against its allocation and the __shared__ arrays are race-checked.

#define BLOCK_Q 8                    // query rows per block
#define BLOCK_K 16                   // keys per tile; also the lanes that share one query row
#define FUSED_THREADS (BLOCK_Q * BLOCK_K)
#define MAX_D 512
#define MAX_PER_LANE (MAX_D / BLOCK_K)
#define SPLIT_K_CHUNK 256            // split-K decode: keys per chunk (DispatchRegistry.SPLIT_K_CHUNK)
#define SPLIT_K_THREADS 128          // threads per split-K block; thread t owns output elements t, t + 128, ...
#define SPLIT_K_PER_THREAD (MAX_D / SPLIT_K_THREADS)

// Status words a kernel leaves in its status buffer (0: ran). The host maps them to errors.
#define STATUS_OK 0
#define STATUS_MASK_REFUSED 1
#define STATUS_HEAD_DIM 2
#define STATUS_LAUNCH_CONFIG 3
#define STATUS_BAD_SEQLENS 4

#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ bool flash_head_dim(int d) {
    return d == 64 || d == 80 || d == 96 || d == 112 || d == 128 || d == 192 || d == 256 || d == 512;
}

// One block's query-row tile. Row i of the tile (global row r = r0 + i) is served by BLOCK_K consecutive threads:
// in the score phase thread (i, kk) scores key c0 + kk into shared memory; in the P.V phase it owns output
// elements kk, kk + BLOCK_K, ... Four barriers and one shuffle reduction per key tile; every loop bound around them
// is uniform across the block, so every thread reaches every barrier and shuffle.
__device__ void sinks_rows(const float* __restrict__ q, long long q_base, long long q_stride,
                           const float* __restrict__ k, const float* __restrict__ v, long long kv_base,
                           long long kv_stride, float* __restrict__ out, long long o_base, long long o_stride,
                           int q_len, int kv_len, int rows_out, int D, int window, float sink, float scale, int r0,
                           float* __restrict__ tile, float* __restrict__ s_sh) {
    const int t = threadIdx.x;
    const int i = t / BLOCK_K;
    const int kk = t % BLOCK_K;
    const int r = r0 + i;
    const bool row_live = r < q_len;
    const long long kv_offset = (long long)kv_len - q_len;
    const long long diag = r + kv_offset;
    const int live_rows = q_len - r0 < BLOCK_Q ? q_len - r0 : BLOCK_Q;

    // Keys any row of this tile can see: tiles outside [lo, hi] are skipped, never loaded.
    long long lo = window == 0 ? 0 : r0 + kv_offset - window + 1;
    if (lo < 0) lo = 0;
    long long hi = (long long)r0 + live_rows - 1 + kv_offset;
    if (hi > kv_len - 1) hi = kv_len - 1;

    float m = NEG_INF;
    float l = 0.f;
    float acc[MAX_PER_LANE];  // this thread's output elements kk + u * BLOCK_K (fully unrolled: registers)
#pragma unroll
    for (int u = 0; u < MAX_PER_LANE; ++u) acc[u] = 0.f;

    for (long long c0 = lo / BLOCK_K * BLOCK_K; live_rows > 0 && c0 <= hi; c0 += BLOCK_K) {
        const int cols = kv_len - c0 < BLOCK_K ? (int)(kv_len - c0) : BLOCK_K;
        for (int idx = t; idx < BLOCK_K * D; idx += FUSED_THREADS) {
            const int j = idx / D;
            tile[idx] = j < cols ? k[kv_base + (c0 + j) * kv_stride + idx % D] : 0.f;
        }
        __syncthreads();

        const long long key = c0 + kk;
        const bool admitted = row_live && kk < cols && key <= diag && (window == 0 || key >= diag - window + 1);
        float s = NEG_INF;
        if (admitted) {
            float dot = 0.f;
            for (int e = 0; e < D; ++e) dot += q[q_base + r * q_stride + e] * tile[kk * D + e];
            s = dot * scale;
        }
        s_sh[i * BLOCK_K + kk] = s;
        __syncthreads();  // every score written; every thread is done with the K tile

        for (int idx = t; idx < BLOCK_K * D; idx += FUSED_THREADS) {
            const int j = idx / D;
            tile[idx] = j < cols ? v[kv_base + (c0 + j) * kv_stride + idx % D] : 0.f;
        }
        // The row's tile max and weights, from the scores its BLOCK_K threads left in shared memory (every thread
        // of the row computes the same values in the same order).
        float p[BLOCK_K];
        float tile_max = NEG_INF;
        for (int j = 0; j < BLOCK_K; ++j) tile_max = fmaxf(tile_max, s_sh[i * BLOCK_K + j]);
        const float m_new = fmaxf(m, tile_max);
        for (int j = 0; j < BLOCK_K; ++j) {
            const float sj = s_sh[i * BLOCK_K + j];
            p[j] = sj == NEG_INF ? 0.f : expf(sj - m_new);
        }
        // The row's weight sum: a butterfly over the row's BLOCK_K lanes (lane kk brings its own key's weight; the
        // xor partners stay inside the row's half-warp, and every lane ends with the same bits).
        float psum = p[kk];
        for (int lane_mask = BLOCK_K / 2; lane_mask > 0; lane_mask /= 2) {
            psum += __shfl_xor_sync(0xffffffffu, psum, lane_mask, BLOCK_K);
        }
        __syncthreads();  // the V tile is in place

        const float alpha = m == NEG_INF ? 0.f : expf(m - m_new);
        l = l * alpha + psum;
#pragma unroll
        for (int u = 0; u < MAX_PER_LANE; ++u) {
            const int e = kk + u * BLOCK_K;
            if (e < D) {
                float a = acc[u] * alpha;
                for (int j = 0; j < cols; ++j) {
                    if (p[j] != 0.f) a += p[j] * tile[j * D + e];  // a key with no weight is never read
                }
                acc[u] = a;
            }
        }
        m = m_new;
        __syncthreads();  // before the next tile overwrites tile and s_sh
    }

    if (r >= rows_out) return;
    // After the last key tile: fold the sink into the denominator only, then normalise.
    const float m_final = fmaxf(m, sink);
    const bool empty = !row_live || m_final == NEG_INF;  // no key admitted and no sink: zeros
    const float alpha = (empty || m == NEG_INF) ? 0.f : expf(m - m_final);
    const float denom = empty ? 1.f : l * alpha + (sink == NEG_INF ? 0.f : expf(sink - m_final));
#pragma unroll
    for (int u = 0; u < MAX_PER_LANE; ++u) {
        const int e = kk + u * BLOCK_K;
        if (e < D) out[o_base + r * o_stride + e] = empty ? 0.f : acc[u] * alpha / denom;
    }
}

// grid (ceil(tq / BLOCK_Q), Hq, B), block (FUSED_THREADS).
extern "C" __global__ void flash_attn_sinks(const float* __restrict__ q, const float* __restrict__ k,
                                            const float* __restrict__ v, const float* __restrict__ sinks,
                                            const float* __restrict__ mask, float* __restrict__ out,
                                            int* __restrict__ status, int B, int Hq, int Hkv, int tq, int tk, int D,
                                            int window, float scale) {
    // The guard: a fused kernel applies causality and the window itself and cannot honour a caller mask.
    if (mask != nullptr) {
        if (threadIdx.x == 0) status[0] = STATUS_MASK_REFUSED;
        return;
    }
    if (!flash_head_dim(D)) {
        if (threadIdx.x == 0) status[0] = STATUS_HEAD_DIM;
        return;
    }
    if (blockDim.x != FUSED_THREADS || blockDim.y != 1 || blockDim.z != 1 || Hkv < 1 || Hq % Hkv != 0 ||
        (int)gridDim.y != Hq || (int)gridDim.z != B) {
        if (threadIdx.x == 0) status[0] = STATUS_LAUNCH_CONFIG;
        return;
    }
    __shared__ float tile[BLOCK_K * MAX_D];
    __shared__ float s_sh[FUSED_THREADS];
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    const int kvh = h / (Hq / Hkv);
    const long long q_base = ((long long)b * Hq + h) * tq * D;
    const long long kv_base = ((long long)b * Hkv + kvh) * tk * D;
    sinks_rows(q, q_base, D, k, v, kv_base, D, out, q_base, D, tq, tk, tq, D, window, sinks[h], scale,
               blockIdx.x * BLOCK_Q, tile, s_sh);
}

// grid (ceil(max_q / BLOCK_Q), Hq, nseq), block (FUSED_THREADS). Sequence i owns packed query rows
// [cu_q[i], cu_q[i+1]) and keys [cu_k[i], cu_k[i+1]); its output rows [q_len, max_q) are zero.
extern "C" __global__ void flash_attn_sinks_varlen(const float* __restrict__ q, const float* __restrict__ k,
                                                   const float* __restrict__ v, const float* __restrict__ sinks,
                                                   const int* __restrict__ cu_q, const int* __restrict__ cu_k,
                                                   float* __restrict__ out, int* __restrict__ status, int nseq,
                                                   int max_q, int Hq, int Hkv, int D, int window, float scale) {
    if (D < 1 || D > MAX_D) {
        if (threadIdx.x == 0) status[0] = STATUS_HEAD_DIM;
        return;
    }
    if (blockDim.x != FUSED_THREADS || blockDim.y != 1 || blockDim.z != 1 || Hkv < 1 || Hq % Hkv != 0) {
        if (threadIdx.x == 0) status[0] = STATUS_LAUNCH_CONFIG;
        return;
    }
    const int seq = blockIdx.z;
    const int q_start = cu_q[seq];
    const int q_len = cu_q[seq + 1] - q_start;
    const int k_start = cu_k[seq];
    const int kv_len = cu_k[seq + 1] - k_start;
    if (seq >= nseq || q_len < 0 || kv_len < 0 || q_len > max_q) {
        if (threadIdx.x == 0) status[0] = STATUS_BAD_SEQLENS;
        return;
    }
    __shared__ float tile[BLOCK_K * MAX_D];
    __shared__ float s_sh[FUSED_THREADS];
    const int h = blockIdx.y;
    const int kvh = h / (Hq / Hkv);
    const long long q_base = ((long long)q_start * Hq + h) * D;
    const long long kv_base = ((long long)k_start * Hkv + kvh) * D;
    const long long o_base = ((long long)seq * Hq + h) * max_q * D;
    sinks_rows(q, q_base, (long long)Hq * D, k, v, kv_base, (long long)Hkv * D, out, o_base, D, q_len, kv_len,
               max_q, D, window, sinks[h], scale, blockIdx.x * BLOCK_Q, tile, s_sh);
}

// Offset of mask element (b, h, r, c) for a mask of shape [mb, mh, mq, tk], each of the first three 1 or full.
__device__ __forceinline__ long long mask_at(int b, int h, int r, int c, int mb, int mh, int mq, int tk) {
    return (((long long)(mb == 1 ? 0 : b) * mh + (mh == 1 ? 0 : h)) * mq + (mq == 1 ? 0 : r)) * tk + c;
}

// Grid-stride over B*Hq*tq*tk scores: (q . k) * scale + rule + mask, -inf where either removes the key.
extern "C" __global__ void sinks_scores(const float* __restrict__ q, const float* __restrict__ k,
                                        const float* __restrict__ mask, float* __restrict__ scores, int B, int Hq,
                                        int Hkv, int tq, int tk, int D, int mb, int mh, int mq, int causal, int window,
                                        float scale) {
    const long long total = (long long)B * Hq * tq * tk;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const int group = Hq / Hkv;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const int c = (int)(idx % tk);
        const int r = (int)(idx / tk % tq);
        const int h = (int)(idx / ((long long)tk * tq) % Hq);
        const int b = (int)(idx / ((long long)tk * tq * Hq));
        float add = 0.f;
        if (causal) {
            const long long diag = (long long)r + tk - tq;
            if (c > diag || (window > 0 && c < diag - window + 1)) add = NEG_INF;
        }
        if (mask != nullptr) add += mask[mask_at(b, h, r, c, mb, mh, mq, tk)];
        if (add == NEG_INF) {
            scores[idx] = NEG_INF;
            continue;
        }
        const long long q_off = (((long long)b * Hq + h) * tq + r) * D;
        const long long k_off = (((long long)b * Hkv + h / group) * tk + c) * D;
        float dot = 0.f;
        for (int e = 0; e < D; ++e) dot += q[q_off + e] * k[k_off + e];
        scores[idx] = dot * scale + add;
    }
}

// Grid-stride over the B*H*Q rows of logits [B,H,Q,K], one thread per row: the mask (may be null) is added first,
// m = max(sink, max x), y = e^(x-m) / (e^(sink-m) + sum e^(x-m)); a row with no sink and nothing admitted is zeros.
extern "C" __global__ void softmax_with_sinks(const float* __restrict__ logits, const float* __restrict__ sinks,
                                              const float* __restrict__ mask, float* __restrict__ probs, int B, int H,
                                              int Q, int K, int mb, int mh, int mq) {
    const long long rows = (long long)B * H * Q;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < rows; row += stride) {
        const int r = (int)(row % Q);
        const int h = (int)(row / Q % H);
        const int b = (int)(row / ((long long)Q * H));
        const float sink = sinks[h];
        const long long base = row * K;
        float m = sink;
        for (int c = 0; c < K; ++c) {
            const float x = logits[base + c] + (mask != nullptr ? mask[mask_at(b, h, r, c, mb, mh, mq, K)] : 0.f);
            m = fmaxf(m, x);
        }
        if (sink == NEG_INF && m == NEG_INF) {
            for (int c = 0; c < K; ++c) probs[base + c] = 0.f;
            continue;
        }
        float denom = expf(sink - m);
        for (int c = 0; c < K; ++c) {
            const float x = logits[base + c] + (mask != nullptr ? mask[mask_at(b, h, r, c, mb, mh, mq, K)] : 0.f);
            const float e = expf(x - m);
            probs[base + c] = e;
            denom += e;
        }
        for (int c = 0; c < K; ++c) probs[base + c] = probs[base + c] / denom;
    }
}

// Grid-stride over B*Hq*tq*D outputs: sum over admitted columns of p * v.
extern "C" __global__ void sinks_pv(const float* __restrict__ probs, const float* __restrict__ scores,
                                    const float* __restrict__ v, float* __restrict__ out, int B, int Hq, int Hkv,
                                    int tq, int tk, int D) {
    const long long total = (long long)B * Hq * tq * D;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const int group = Hq / Hkv;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const int e = (int)(idx % D);
        const long long row = idx / D;
        const int h = (int)(row / tq % Hq);
        const int b = (int)(row / ((long long)tq * Hq));
        const long long v_base = ((long long)b * Hkv + h / group) * tk * D;
        float acc = 0.f;
        for (int c = 0; c < tk; ++c) {
            if (scores[row * tk + c] != NEG_INF) acc += probs[row * tk + c] * v[v_base + (long long)c * D + e];
        }
        out[idx] = acc;
    }
}

// Split-K pass 1. grid (ceil(tk / SPLIT_K_CHUNK), Hq, B), block (SPLIT_K_THREADS). q [B,Hq,1,D], k/v [B,Hkv,tk,D];
// mask null or [mb, mh, 1, tk] (additive, -inf removes a key); with causal != 0 the fused kernels' rule for a single
// query row (kv_offset = tk - 1: every key up to the diagonal, and with window > 0 only keys >= tk - window).
// part [B, Hq, chunks, D + 2]: per chunk m_c, l_c, then o_c[D]; an empty chunk leaves m_c = -inf, l_c = 0, o_c = 0.
extern "C" __global__ void sinks_decode_splitk_partial(const float* __restrict__ q, const float* __restrict__ k,
                                                       const float* __restrict__ v, const float* __restrict__ mask,
                                                       float* __restrict__ part, int* __restrict__ status, int B,
                                                       int Hq, int Hkv, int tk, int D, int mb, int mh, int causal,
                                                       int window, float scale) {
    if (D < 1 || D > MAX_D) {
        if (threadIdx.x == 0) status[0] = STATUS_HEAD_DIM;
        return;
    }
    const int chunks = (tk + SPLIT_K_CHUNK - 1) / SPLIT_K_CHUNK;
    if (blockDim.x != SPLIT_K_THREADS || blockDim.y != 1 || blockDim.z != 1 || Hkv < 1 || Hq % Hkv != 0 ||
        tk < 1 || (int)gridDim.x != chunks || (int)gridDim.y != Hq || (int)gridDim.z != B) {
        if (threadIdx.x == 0) status[0] = STATUS_LAUNCH_CONFIG;
        return;
    }
    __shared__ float s_sh[SPLIT_K_CHUNK];
    const int t = threadIdx.x;
    const int c = blockIdx.x;
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    const int kvh = h / (Hq / Hkv);
    const long long c0 = (long long)c * SPLIT_K_CHUNK;
    const int cols = tk - c0 < SPLIT_K_CHUNK ? (int)(tk - c0) : SPLIT_K_CHUNK;
    const long long q_base = ((long long)b * Hq + h) * D;
    const long long kv_base = ((long long)b * Hkv + kvh) * tk * D;

    // The chunk's scores, one key per thread per step, into shared memory (-inf: not admitted).
    for (int j = t; j < SPLIT_K_CHUNK; j += SPLIT_K_THREADS) {
        const long long key = c0 + j;
        float s = NEG_INF;
        if (j < cols) {
            float add = 0.f;
            if (causal && window > 0 && key < (long long)tk - window) add = NEG_INF;
            if (mask != nullptr) add += mask[mask_at(b, h, 0, (int)key, mb, mh, 1, tk)];
            if (add != NEG_INF) {
                float dot = 0.f;
                for (int e = 0; e < D; ++e) dot += q[q_base + e] * k[kv_base + key * D + e];
                s = dot * scale + add;
            }
        }
        s_sh[j] = s;
    }
    __syncthreads();  // every score written; from here shared memory is only read

    // Every thread: the chunk's max and weight sum in key order (the same bits on every thread), and its own output
    // elements of the unnormalised P.V.
    float m = NEG_INF;
    for (int j = 0; j < cols; ++j) m = fmaxf(m, s_sh[j]);
    float l = 0.f;
    float acc[SPLIT_K_PER_THREAD];
#pragma unroll
    for (int u = 0; u < SPLIT_K_PER_THREAD; ++u) acc[u] = 0.f;
    if (m != NEG_INF) {
        for (int j = 0; j < cols; ++j) {
            const float sj = s_sh[j];
            if (sj == NEG_INF) continue;  // a key with no weight is never read
            const float p = expf(sj - m);
            l += p;
            const long long v_off = kv_base + (c0 + j) * D;
#pragma unroll
            for (int u = 0; u < SPLIT_K_PER_THREAD; ++u) {
                const int e = t + u * SPLIT_K_THREADS;
                if (e < D) acc[u] += p * v[v_off + e];
            }
        }
    }
    const long long at = (((long long)b * Hq + h) * chunks + c) * (D + 2);
    if (t == 0) {
        part[at] = m;
        part[at + 1] = l;
    }
#pragma unroll
    for (int u = 0; u < SPLIT_K_PER_THREAD; ++u) {
        const int e = t + u * SPLIT_K_THREADS;
        if (e < D) part[at + 2 + e] = acc[u];
    }
}

// Split-K pass 2. grid (1, Hq, B), block (SPLIT_K_THREADS): the chunks of row (b, h) combined in chunk order with the
// sink entering once; out [B, Hq, 1, D]; zeros when no key was admitted and there is no sink.
extern "C" __global__ void sinks_decode_splitk_reduce(const float* __restrict__ part, const float* __restrict__ sinks,
                                                      float* __restrict__ out, int* __restrict__ status, int B, int Hq,
                                                      int chunks, int D) {
    if (D < 1 || D > MAX_D) {
        if (threadIdx.x == 0) status[0] = STATUS_HEAD_DIM;
        return;
    }
    if (blockDim.x != SPLIT_K_THREADS || blockDim.y != 1 || blockDim.z != 1 || chunks < 1 || gridDim.x != 1 ||
        (int)gridDim.y != Hq || (int)gridDim.z != B) {
        if (threadIdx.x == 0) status[0] = STATUS_LAUNCH_CONFIG;
        return;
    }
    const int t = threadIdx.x;
    const int h = blockIdx.y;
    const int b = blockIdx.z;
    const long long row = ((long long)b * Hq + h) * chunks * (D + 2);
    const long long o_base = ((long long)b * Hq + h) * D;
    const float sink = sinks[h];
    float m = sink;
    for (int c = 0; c < chunks; ++c) m = fmaxf(m, part[row + c * (D + 2)]);
    if (m == NEG_INF) {
        for (int e = t; e < D; e += SPLIT_K_THREADS) out[o_base + e] = 0.f;
        return;
    }
    // The sink: one extra logit column, in the denominator only.
    float l = sink == NEG_INF ? 0.f : expf(sink - m);
    for (int c = 0; c < chunks; ++c) {
        const float mc = part[row + c * (D + 2)];
        if (mc != NEG_INF) l += expf(mc - m) * part[row + c * (D + 2) + 1];
    }
    for (int e = t; e < D; e += SPLIT_K_THREADS) {
        float o = 0.f;
        for (int c = 0; c < chunks; ++c) {
            const float mc = part[row + c * (D + 2)];
            if (mc != NEG_INF) o += expf(mc - m) * part[row + c * (D + 2) + 2 + e];
        }
        out[o_base + e] = o / l;
    }
}
