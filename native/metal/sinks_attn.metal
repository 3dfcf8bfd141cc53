// sinks_attn.metal: sinks attention on Metal (SYSTEM.md §8), the same algorithms as native/cuda/sinks_attn.cu.
//
//   flash_attn_sinks_metal         fused: query-row tiles over key tiles staged in threadgroup memory, an online
//                                  softmax with a running max, the sink folded into the denominator after the last
//                                  tile, bottom-right-aligned causality and window applied inside. Head dims
//                                  {64, 80, 96, 112, 128, 192, 256}. It takes a mask binding (with has_mask) only
//                                  to refuse one: it then writes STATUS_MASK_REFUSED and computes nothing.
//   flash_attn_sinks_varlen_metal  the same tiles over packed rows (cu_seqlens), zero rows up to max_q.
//   sinks_scores_metal, softmax_with_sinks_metal, sinks_pv_metal
//                                  the unfused masked path: scores + rule + additive mask, softmax with sinks, P.V.
//   sinks_decode_splitk_partial_metal, sinks_decode_splitk_reduce_metal
//                                  split-K (two-pass) decode of one query row per (b, h): per chunk of SPLIT_K_CHUNK
//                                  keys its max, sum of exponentials and unnormalised P.V (no sink), then the chunks
//                                  combined by their log-sum-exp with the sink entering once (one extra logit column).
//
// Buffers are bound in argument order from index 0; AttnParams is bound with setBytes after the last buffer.
// Compiled at run time by the metal lane (fast math off: the -inf logic needs IEEE semantics), and unchanged by the
// metal-emu lane through the MSL front end (native/emu/frontend/msl2emu.py), which checks every device and
// threadgroup access.

#include <metal_stdlib>
using namespace metal;

#define BLOCK_Q 8
#define BLOCK_K 16
#define FUSED_THREADS (BLOCK_Q * BLOCK_K)
#define MAX_D 256
#define MAX_PER_LANE (MAX_D / BLOCK_K)
#define SPLIT_K_CHUNK 256            // split-K decode: keys per chunk (DispatchRegistry.SPLIT_K_CHUNK)
#define SPLIT_K_THREADS 128          // threads per split-K threadgroup; thread t owns output elements t, t + 128, ...
#define SPLIT_K_PER_THREAD (MAX_D / SPLIT_K_THREADS)

#define STATUS_OK 0
#define STATUS_MASK_REFUSED 1
#define STATUS_HEAD_DIM 2
#define STATUS_LAUNCH_CONFIG 3
#define STATUS_BAD_SEQLENS 4

struct AttnParams {
    int B;
    int Hq;
    int Hkv;
    int tq;
    int tk;
    int D;
    int window;
    int has_mask;
    int nseq;
    int max_q;
    int mb;
    int mh;
    int mq;
    int causal;
    float scale;
    int chunks;  // split-K: the chunks of a row (sinks_decode_splitk_reduce_metal); 0 elsewhere
};

inline bool metal_head_dim(int d) {
    return d == 64 || d == 80 || d == 96 || d == 112 || d == 128 || d == 192 || d == 256;
}

// One threadgroup's query-row tile; thread (i, kk) scores key c0 + kk of row r0 + i into threadgroup memory, then
// owns output elements kk, kk + BLOCK_K, ... of that row. Four barriers and one simdgroup shuffle reduction per key
// tile, under uniform loop bounds.
inline void sinks_rows(device const float* q, long q_base, long q_stride, device const float* k, device const float* v,
                       long kv_base, long kv_stride, device float* out, long o_base, long o_stride, int q_len,
                       int kv_len, int rows_out, int D, int window, float sink, float scale, int r0, uint t,
                       threadgroup float* tile, threadgroup float* s_sh) {
    const int i = int(t) / BLOCK_K;
    const int kk = int(t) % BLOCK_K;
    const int r = r0 + i;
    const bool row_live = r < q_len;
    const long kv_offset = long(kv_len) - q_len;
    const long diag = r + kv_offset;
    const int live_rows = q_len - r0 < BLOCK_Q ? q_len - r0 : BLOCK_Q;
    const int per_lane = (D + BLOCK_K - 1) / BLOCK_K;

    long lo = window == 0 ? 0 : r0 + kv_offset - window + 1;
    if (lo < 0) lo = 0;
    long hi = long(r0) + live_rows - 1 + kv_offset;
    if (hi > kv_len - 1) hi = kv_len - 1;

    float m = -INFINITY;
    float l = 0.0f;
    float acc[MAX_PER_LANE];
    for (int u = 0; u < MAX_PER_LANE; ++u) acc[u] = 0.0f;

    for (long c0 = lo / BLOCK_K * BLOCK_K; live_rows > 0 && c0 <= hi; c0 += BLOCK_K) {
        const int cols = kv_len - c0 < BLOCK_K ? int(kv_len - c0) : BLOCK_K;
        for (int idx = int(t); idx < BLOCK_K * D; idx += FUSED_THREADS) {
            const int j = idx / D;
            tile[idx] = j < cols ? k[kv_base + (c0 + j) * kv_stride + idx % D] : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);

        const long key = c0 + kk;
        const bool admitted = row_live && kk < cols && key <= diag && (window == 0 || key >= diag - window + 1);
        float s = -INFINITY;
        if (admitted) {
            float dot = 0.0f;
            for (int e = 0; e < D; ++e) dot += q[q_base + r * q_stride + e] * tile[kk * D + e];
            s = dot * scale;
        }
        s_sh[i * BLOCK_K + kk] = s;
        threadgroup_barrier(mem_flags::mem_threadgroup);  // every score written; every thread is done with the K tile

        for (int idx = int(t); idx < BLOCK_K * D; idx += FUSED_THREADS) {
            const int j = idx / D;
            tile[idx] = j < cols ? v[kv_base + (c0 + j) * kv_stride + idx % D] : 0.0f;
        }
        // The row's tile max and weights, from the scores its BLOCK_K threads left in shared memory (every thread
        // of the row computes the same values in the same order).
        float p[BLOCK_K];
        float tile_max = -INFINITY;
        for (int j = 0; j < BLOCK_K; ++j) tile_max = fmax(tile_max, s_sh[i * BLOCK_K + j]);
        const float m_new = fmax(m, tile_max);
        for (int j = 0; j < BLOCK_K; ++j) {
            const float sj = s_sh[i * BLOCK_K + j];
            p[j] = sj == -INFINITY ? 0.0f : exp(sj - m_new);
        }
        // The row's weight sum: a butterfly over the row's BLOCK_K lanes of the 32-wide simdgroup (lane kk brings its
        // own key's weight; the xor partners stay inside the row's half, and every lane ends with the same bits).
        float psum = p[kk];
        for (ushort lane_mask = BLOCK_K / 2; lane_mask > 0; lane_mask /= 2) {
            psum += simd_shuffle_xor(psum, lane_mask);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);  // the V tile is in place

        const float alpha = m == -INFINITY ? 0.0f : exp(m - m_new);
        l = l * alpha + psum;
        for (int u = 0; u < per_lane; ++u) {
            const int e = kk + u * BLOCK_K;
            if (e < D) {
                float a = acc[u] * alpha;
                for (int j = 0; j < cols; ++j) {
                    if (p[j] != 0.0f) a += p[j] * tile[j * D + e];  // a key with no weight is never read
                }
                acc[u] = a;
            }
        }
        m = m_new;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    if (r >= rows_out) return;
    const float m_final = fmax(m, sink);
    const bool empty = !row_live || m_final == -INFINITY;
    const float alpha = (empty || m == -INFINITY) ? 0.0f : exp(m - m_final);
    const float denom = empty ? 1.0f : l * alpha + (sink == -INFINITY ? 0.0f : exp(sink - m_final));
    for (int u = 0; u < per_lane; ++u) {
        const int e = kk + u * BLOCK_K;
        if (e < D) out[o_base + r * o_stride + e] = empty ? 0.0f : acc[u] * alpha / denom;
    }
}

// threadgroups (ceil(tq / BLOCK_Q), Hq, B), threads per threadgroup (FUSED_THREADS).
kernel void flash_attn_sinks_metal(device const float* q [[buffer(0)]], device const float* k [[buffer(1)]],
                                   device const float* v [[buffer(2)]], device const float* sinks [[buffer(3)]],
                                   device const float* mask [[buffer(4)]], device float* out [[buffer(5)]],
                                   device int* status [[buffer(6)]], constant AttnParams& p [[buffer(7)]],
                                   uint3 tgpos [[threadgroup_position_in_grid]],
                                   uint3 tpos [[thread_position_in_threadgroup]],
                                   uint3 tpg [[threads_per_threadgroup]]) {
    // The guard: a fused kernel cannot honour a caller mask, so a bound mask is refused, never read.
    (void)mask;
    if (p.has_mask != 0) {
        if (tpos.x == 0) status[0] = STATUS_MASK_REFUSED;
        return;
    }
    if (!metal_head_dim(p.D)) {
        if (tpos.x == 0) status[0] = STATUS_HEAD_DIM;
        return;
    }
    if (tpg.x != FUSED_THREADS || tpg.y != 1 || tpg.z != 1 || p.Hkv < 1 || p.Hq % p.Hkv != 0) {
        if (tpos.x == 0) status[0] = STATUS_LAUNCH_CONFIG;
        return;
    }
    threadgroup float tile[BLOCK_K * MAX_D];
    threadgroup float s_sh[FUSED_THREADS];
    const int h = int(tgpos.y);
    const int b = int(tgpos.z);
    const int kvh = h / (p.Hq / p.Hkv);
    const long q_base = (long(b) * p.Hq + h) * p.tq * p.D;
    const long kv_base = (long(b) * p.Hkv + kvh) * p.tk * p.D;
    sinks_rows(q, q_base, p.D, k, v, kv_base, p.D, out, q_base, p.D, p.tq, p.tk, p.tq, p.D, p.window, sinks[h],
               p.scale, int(tgpos.x) * BLOCK_Q, tpos.x, tile, s_sh);
}

// threadgroups (ceil(max_q / BLOCK_Q), Hq, nseq), threads per threadgroup (FUSED_THREADS).
kernel void flash_attn_sinks_varlen_metal(device const float* q [[buffer(0)]], device const float* k [[buffer(1)]],
                                          device const float* v [[buffer(2)]], device const float* sinks [[buffer(3)]],
                                          device const int* cu_q [[buffer(4)]], device const int* cu_k [[buffer(5)]],
                                          device float* out [[buffer(6)]], device int* status [[buffer(7)]],
                                          constant AttnParams& p [[buffer(8)]],
                                          uint3 tgpos [[threadgroup_position_in_grid]],
                                          uint3 tpos [[thread_position_in_threadgroup]],
                                          uint3 tpg [[threads_per_threadgroup]]) {
    if (p.D < 1 || p.D > MAX_D) {
        if (tpos.x == 0) status[0] = STATUS_HEAD_DIM;
        return;
    }
    if (tpg.x != FUSED_THREADS || tpg.y != 1 || tpg.z != 1 || p.Hkv < 1 || p.Hq % p.Hkv != 0) {
        if (tpos.x == 0) status[0] = STATUS_LAUNCH_CONFIG;
        return;
    }
    const int seq = int(tgpos.z);
    const int q_start = cu_q[seq];
    const int q_len = cu_q[seq + 1] - q_start;
    const int k_start = cu_k[seq];
    const int kv_len = cu_k[seq + 1] - k_start;
    if (seq >= p.nseq || q_len < 0 || kv_len < 0 || q_len > p.max_q) {
        if (tpos.x == 0) status[0] = STATUS_BAD_SEQLENS;
        return;
    }
    threadgroup float tile[BLOCK_K * MAX_D];
    threadgroup float s_sh[FUSED_THREADS];
    const int h = int(tgpos.y);
    const int kvh = h / (p.Hq / p.Hkv);
    const long q_base = (long(q_start) * p.Hq + h) * p.D;
    const long kv_base = (long(k_start) * p.Hkv + kvh) * p.D;
    const long o_base = (long(seq) * p.Hq + h) * p.max_q * p.D;
    sinks_rows(q, q_base, long(p.Hq) * p.D, k, v, kv_base, long(p.Hkv) * p.D, out, o_base, p.D, q_len, kv_len,
               p.max_q, p.D, p.window, sinks[h], p.scale, int(tgpos.x) * BLOCK_Q, tpos.x, tile, s_sh);
}

inline long mask_at(int b, int h, int r, int c, int mb, int mh, int mq, int tk) {
    return ((long(mb == 1 ? 0 : b) * mh + (mh == 1 ? 0 : h)) * mq + (mq == 1 ? 0 : r)) * tk + c;
}

// One thread per score, striding over the grid: (q . k) * scale + rule + mask, -inf where either removes the key.
kernel void sinks_scores_metal(device const float* q [[buffer(0)]], device const float* k [[buffer(1)]],
                               device const float* mask [[buffer(2)]], device float* scores [[buffer(3)]],
                               constant AttnParams& p [[buffer(4)]], uint gid [[thread_position_in_grid]],
                               uint grid_size [[threads_per_grid]]) {
    const long total = long(p.B) * p.Hq * p.tq * p.tk;
    const int group = p.Hq / p.Hkv;
    for (long idx = gid; idx < total; idx += grid_size) {
        const int c = int(idx % p.tk);
        const int r = int(idx / p.tk % p.tq);
        const int h = int(idx / (long(p.tk) * p.tq) % p.Hq);
        const int b = int(idx / (long(p.tk) * p.tq * p.Hq));
        float add = 0.0f;
        if (p.causal != 0) {
            const long diag = long(r) + p.tk - p.tq;
            if (c > diag || (p.window > 0 && c < diag - p.window + 1)) add = -INFINITY;
        }
        if (p.has_mask != 0) add += mask[mask_at(b, h, r, c, p.mb, p.mh, p.mq, p.tk)];
        if (add == -INFINITY) {
            scores[idx] = -INFINITY;
            continue;
        }
        const long q_off = ((long(b) * p.Hq + h) * p.tq + r) * p.D;
        const long k_off = ((long(b) * p.Hkv + h / group) * p.tk + c) * p.D;
        float dot = 0.0f;
        for (int e = 0; e < p.D; ++e) dot += q[q_off + e] * k[k_off + e];
        scores[idx] = dot * p.scale + add;
    }
}

// One thread per row of logits [B, Hq, tq, tk]: mask added first, running max started at the sink.
kernel void softmax_with_sinks_metal(device const float* logits [[buffer(0)]], device const float* sinks [[buffer(1)]],
                                     device const float* mask [[buffer(2)]], device float* probs [[buffer(3)]],
                                     constant AttnParams& p [[buffer(4)]], uint gid [[thread_position_in_grid]],
                                     uint grid_size [[threads_per_grid]]) {
    const long rows = long(p.B) * p.Hq * p.tq;
    const int K = p.tk;
    for (long row = gid; row < rows; row += grid_size) {
        const int r = int(row % p.tq);
        const int h = int(row / p.tq % p.Hq);
        const int b = int(row / (long(p.tq) * p.Hq));
        const float sink = sinks[h];
        const long base = row * K;
        float m = sink;
        for (int c = 0; c < K; ++c) {
            const float x = logits[base + c] + (p.has_mask != 0 ? mask[mask_at(b, h, r, c, p.mb, p.mh, p.mq, K)] : 0.0f);
            m = fmax(m, x);
        }
        if (sink == -INFINITY && m == -INFINITY) {
            for (int c = 0; c < K; ++c) probs[base + c] = 0.0f;
            continue;
        }
        float denom = exp(sink - m);
        for (int c = 0; c < K; ++c) {
            const float x = logits[base + c] + (p.has_mask != 0 ? mask[mask_at(b, h, r, c, p.mb, p.mh, p.mq, K)] : 0.0f);
            const float e = exp(x - m);
            probs[base + c] = e;
            denom += e;
        }
        for (int c = 0; c < K; ++c) probs[base + c] = probs[base + c] / denom;
    }
}

// One thread per output element: sum over admitted columns of p * v.
kernel void sinks_pv_metal(device const float* probs [[buffer(0)]], device const float* scores [[buffer(1)]],
                           device const float* v [[buffer(2)]], device float* out [[buffer(3)]],
                           constant AttnParams& p [[buffer(4)]], uint gid [[thread_position_in_grid]],
                           uint grid_size [[threads_per_grid]]) {
    const long total = long(p.B) * p.Hq * p.tq * p.D;
    const int group = p.Hq / p.Hkv;
    for (long idx = gid; idx < total; idx += grid_size) {
        const int e = int(idx % p.D);
        const long row = idx / p.D;
        const int h = int(row / p.tq % p.Hq);
        const int b = int(row / (long(p.tq) * p.Hq));
        const long v_base = (long(b) * p.Hkv + h / group) * p.tk * p.D;
        float acc = 0.0f;
        for (int c = 0; c < p.tk; ++c) {
            if (scores[row * p.tk + c] != -INFINITY) acc += probs[row * p.tk + c] * v[v_base + long(c) * p.D + e];
        }
        out[idx] = acc;
    }
}

// Split-K pass 1. threadgroups (ceil(tk / SPLIT_K_CHUNK), Hq, B), threads per threadgroup (SPLIT_K_THREADS).
// q [B,Hq,1,D], k/v [B,Hkv,tk,D]; mask (when has_mask) [mb, mh, 1, tk] additive; with causal the fused kernels' rule
// for a single query row (every key up to the diagonal tk - 1; with window > 0 only keys >= tk - window).
// part [B, Hq, chunks, D + 2]: per chunk m_c, l_c, then o_c[D]; an empty chunk leaves -inf, 0, zeros.
kernel void sinks_decode_splitk_partial_metal(device const float* q [[buffer(0)]], device const float* k [[buffer(1)]],
                                              device const float* v [[buffer(2)]], device const float* mask [[buffer(3)]],
                                              device float* part [[buffer(4)]], device int* status [[buffer(5)]],
                                              constant AttnParams& p [[buffer(6)]],
                                              uint3 tgpos [[threadgroup_position_in_grid]],
                                              uint3 tpos [[thread_position_in_threadgroup]],
                                              uint3 tpg [[threads_per_threadgroup]],
                                              uint3 tgs [[threadgroups_per_grid]]) {
    if (p.D < 1 || p.D > MAX_D) {
        if (tpos.x == 0) status[0] = STATUS_HEAD_DIM;
        return;
    }
    const int chunks = (p.tk + SPLIT_K_CHUNK - 1) / SPLIT_K_CHUNK;
    if (tpg.x != SPLIT_K_THREADS || tpg.y != 1 || tpg.z != 1 || p.Hkv < 1 || p.Hq % p.Hkv != 0 || p.tk < 1 ||
        int(tgs.x) != chunks || int(tgs.y) != p.Hq || int(tgs.z) != p.B) {
        if (tpos.x == 0) status[0] = STATUS_LAUNCH_CONFIG;
        return;
    }
    threadgroup float s_sh[SPLIT_K_CHUNK];
    const int t = int(tpos.x);
    const int c = int(tgpos.x);
    const int h = int(tgpos.y);
    const int b = int(tgpos.z);
    const int D = p.D;
    const int tk = p.tk;
    const int kvh = h / (p.Hq / p.Hkv);
    const long c0 = long(c) * SPLIT_K_CHUNK;
    const int cols = tk - c0 < SPLIT_K_CHUNK ? int(tk - c0) : SPLIT_K_CHUNK;
    const long q_base = (long(b) * p.Hq + h) * D;
    const long kv_base = (long(b) * p.Hkv + kvh) * tk * D;

    for (int j = t; j < SPLIT_K_CHUNK; j += SPLIT_K_THREADS) {
        const long key = c0 + j;
        float s = -INFINITY;
        if (j < cols) {
            float add = 0.0f;
            if (p.causal != 0 && p.window > 0 && key < long(tk) - p.window) add = -INFINITY;
            if (p.has_mask != 0) add += mask[mask_at(b, h, 0, int(key), p.mb, p.mh, 1, tk)];
            if (add != -INFINITY) {
                float dot = 0.0f;
                for (int e = 0; e < D; ++e) dot += q[q_base + e] * k[kv_base + key * D + e];
                s = dot * p.scale + add;
            }
        }
        s_sh[j] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);  // every score written; from here only read

    float m = -INFINITY;
    for (int j = 0; j < cols; ++j) m = fmax(m, s_sh[j]);
    float l = 0.0f;
    float acc[SPLIT_K_PER_THREAD];
    for (int u = 0; u < SPLIT_K_PER_THREAD; ++u) acc[u] = 0.0f;
    if (m != -INFINITY) {
        for (int j = 0; j < cols; ++j) {
            const float sj = s_sh[j];
            if (sj == -INFINITY) continue;
            const float w = exp(sj - m);
            l += w;
            const long v_off = kv_base + (c0 + j) * D;
            for (int u = 0; u < SPLIT_K_PER_THREAD; ++u) {
                const int e = t + u * SPLIT_K_THREADS;
                if (e < D) acc[u] += w * v[v_off + e];
            }
        }
    }
    const long at = ((long(b) * p.Hq + h) * chunks + c) * (D + 2);
    if (t == 0) {
        part[at] = m;
        part[at + 1] = l;
    }
    for (int u = 0; u < SPLIT_K_PER_THREAD; ++u) {
        const int e = t + u * SPLIT_K_THREADS;
        if (e < D) part[at + 2 + e] = acc[u];
    }
}

// Split-K pass 2. threadgroups (1, Hq, B), threads per threadgroup (SPLIT_K_THREADS): the p.chunks chunks of row
// (b, h) combined in chunk order, the sink entering once; out [B, Hq, 1, D]; zeros when nothing and no sink.
kernel void sinks_decode_splitk_reduce_metal(device const float* part [[buffer(0)]], device const float* sinks [[buffer(1)]],
                                             device float* out [[buffer(2)]], device int* status [[buffer(3)]],
                                             constant AttnParams& p [[buffer(4)]],
                                             uint3 tgpos [[threadgroup_position_in_grid]],
                                             uint3 tpos [[thread_position_in_threadgroup]],
                                             uint3 tpg [[threads_per_threadgroup]],
                                             uint3 tgs [[threadgroups_per_grid]]) {
    if (p.D < 1 || p.D > MAX_D) {
        if (tpos.x == 0) status[0] = STATUS_HEAD_DIM;
        return;
    }
    if (tpg.x != SPLIT_K_THREADS || tpg.y != 1 || tpg.z != 1 || p.chunks < 1 || tgs.x != 1 || int(tgs.y) != p.Hq ||
        int(tgs.z) != p.B) {
        if (tpos.x == 0) status[0] = STATUS_LAUNCH_CONFIG;
        return;
    }
    const int t = int(tpos.x);
    const int h = int(tgpos.y);
    const int b = int(tgpos.z);
    const int D = p.D;
    const int chunks = p.chunks;
    const long row = (long(b) * p.Hq + h) * chunks * (D + 2);
    const long o_base = (long(b) * p.Hq + h) * D;
    const float sink = sinks[h];
    float m = sink;
    for (int c = 0; c < chunks; ++c) m = fmax(m, part[row + c * (D + 2)]);
    if (m == -INFINITY) {
        for (int e = t; e < D; e += SPLIT_K_THREADS) out[o_base + e] = 0.0f;
        return;
    }
    float l = sink == -INFINITY ? 0.0f : exp(sink - m);
    for (int c = 0; c < chunks; ++c) {
        const float mc = part[row + c * (D + 2)];
        if (mc != -INFINITY) l += exp(mc - m) * part[row + c * (D + 2) + 1];
    }
    for (int e = t; e < D; e += SPLIT_K_THREADS) {
        float o = 0.0f;
        for (int c = 0; c < chunks; ++c) {
            const float mc = part[row + c * (D + 2)];
            if (mc != -INFINITY) o += exp(mc - m) * part[row + c * (D + 2) + 2 + e];
        }
        out[o_base + e] = o / l;
    }
}
