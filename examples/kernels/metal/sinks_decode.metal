// sinks_decode.metal: attention with per-head sinks for Metal, written the way engines write it (a second kernel
// family, independent of native/metal/sinks_attn.metal): templates over the element type (float, half, bfloat)
// instantiated with [[host_name]], one SIMD group per key stream or per query row, simd_sum / simd_max reductions,
// dynamic threadgroup memory sized by the host, grouped-query attention (query head h reads KV head h / (Hq / Hkv)),
// a sliding window and optional sinks (has_sinks = 0: no sink at all, the sinks binding may be nil).
//
//   sinks_decode_<t>           one-pass decode of one query row per (head, batch): SIMD group g scores keys
//                              g, g + G, ... with an online softmax; the G partial states meet in threadgroup memory.
//   sinks_decode_partials_<t>  two-pass decode, pass 1: the same over one chunk of `chunk` keys per threadgroup,
//   sinks_decode_reduce_<t>    pass 2: one SIMD group combines the chunks of a row by their maxima, the sink once.
//   sinks_prefill_<t>          prefill: SIMD group g of threadgroup x owns query row x * G + g; K/V tiles of `tile`
//                              keys staged in threadgroup memory; each row's key loop (and its simd_sum) runs only
//                              over the keys its causal/window rule admits.
//
// Layouts: q/out [B, Hq, q_len, D], k/v [B, Hkv, kv_len, D] (elements of T), sinks [Hq] float, partials
// [B, Hq, chunks, D + 2] float (max, sum of weights, unnormalised output). Causality is bottom-right aligned: row r
// sits at key position r + kv_len - q_len and admits keys up to it, and with window > 0 only the last `window` of
// them. A row that admits no key and has no sink is zero.

#include <metal_stdlib>
using namespace metal;

#define MAX_D 256
#define PER_LANE (MAX_D / 32)

struct SinksParams {
    int B;
    int Hq;
    int Hkv;
    int q_len;
    int kv_len;
    int D;
    int window;
    int has_sinks;
    float scale;
    int chunk;
    int chunks;
    int tile;
};

inline float sink_logit(device const float* sinks, constant SinksParams& p, int b, int h) {
    return p.has_sinks != 0 ? sinks[h] : -INFINITY;
}

// One online-softmax step of a SIMD group: key row kr (D elements of T) scored against the query qr; lane owns
// output elements lane, lane + 32, ...
template <typename T>
inline void online_step(device const T* qr, device const T* kr, device const T* vr, int D, float scale, ushort lane,
                        thread float& m, thread float& l, thread float* acc) {
    float dot = 0.0f;
    for (int d = lane; d < D; d += 32) dot += float(qr[d]) * float(kr[d]);
    const float s = simd_sum(dot) * scale;
    const float m_new = max(m, s);
    const float alpha = exp(m - m_new);
    const float w = exp(s - m_new);
    l = l * alpha + w;
    for (int u = 0; u * 32 + lane < D; ++u) acc[u] = acc[u] * alpha + w * float(vr[u * 32 + lane]);
    m = m_new;
}

// The G SIMD groups' states (m, l, acc) in threadgroup memory, then combined by SIMD group 0 (lanes own elements):
// returns through m_out / l_out / acc the combined state, rescaled to its own max.
inline void combine_groups(threadgroup float* smem, int D, ushort lane, ushort sg, ushort groups, thread float& m,
                           thread float& l, thread float* acc) {
    threadgroup float* mine = smem + sg * (D + 2);
    if (lane == 0) {
        mine[0] = m;
        mine[1] = l;
    }
    for (int u = 0; u * 32 + lane < D; ++u) mine[2 + u * 32 + lane] = acc[u];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float mm = -INFINITY;
    for (int g = 0; g < groups; ++g) mm = max(mm, smem[g * (D + 2)]);
    float ll = 0.0f;
    for (int u = 0; u < PER_LANE; ++u) acc[u] = 0.0f;
    for (int g = 0; g < groups; ++g) {
        const float mg = smem[g * (D + 2)];
        if (mg == -INFINITY) continue;
        const float f = exp(mg - mm);
        ll += smem[g * (D + 2) + 1] * f;
        for (int u = 0; u * 32 + lane < D; ++u) acc[u] += smem[g * (D + 2) + 2 + u * 32 + lane] * f;
    }
    m = mm;
    l = ll;
}

// The sink enters once; a row with nothing (no admitted key, no sink) is zero.
template <typename T>
inline void write_row(device T* o, int D, ushort lane, float m, float l, thread float* acc, float sink) {
    const float mx = max(m, sink);
    if (mx == -INFINITY) {
        for (int d = lane; d < D; d += 32) o[d] = T(0.0f);
        return;
    }
    const float alpha = exp(m - mx);
    const float denom = l * alpha + exp(sink - mx);
    for (int u = 0; u * 32 + lane < D; ++u) o[u * 32 + lane] = T(acc[u] * alpha / denom);
}

// threadgroups (Hq, B, 1), 32 * G threads; [[threadgroup(0)]]: G * (D + 2) floats.
template <typename T>
kernel void sinks_decode(device const T* q [[buffer(0)]], device const T* k [[buffer(1)]],
                         device const T* v [[buffer(2)]], device const float* sinks [[buffer(3)]],
                         device T* out [[buffer(4)]], constant SinksParams& p [[buffer(5)]],
                         threadgroup float* smem [[threadgroup(0)]],
                         uint3 tg [[threadgroup_position_in_grid]], ushort lane [[thread_index_in_simdgroup]],
                         ushort sg [[simdgroup_index_in_threadgroup]],
                         ushort groups [[simdgroups_per_threadgroup]]) {
    const int h = int(tg.x);
    const int b = int(tg.y);
    const int kvh = h / (p.Hq / p.Hkv);
    const long kv = (long(b) * p.Hkv + kvh) * p.kv_len * p.D;
    q += (long(b) * p.Hq + h) * p.D;
    const int lo = p.window > 0 ? max(0, p.kv_len - p.window) : 0;
    float m = -INFINITY;
    float l = 0.0f;
    float acc[PER_LANE];
    for (int u = 0; u < PER_LANE; ++u) acc[u] = 0.0f;
    for (int j = lo + sg; j < p.kv_len; j += groups) {
        online_step(q, k + kv + long(j) * p.D, v + kv + long(j) * p.D, p.D, p.scale, lane, m, l, acc);
    }
    combine_groups(smem, p.D, lane, sg, groups, m, l, acc);
    if (sg == 0) write_row(out + (long(b) * p.Hq + h) * p.D, p.D, lane, m, l, acc, sink_logit(sinks, p, b, h));
}

// threadgroups (chunks, Hq, B), 32 * G threads; [[threadgroup(0)]]: G * (D + 2) floats.
template <typename T>
kernel void sinks_decode_partials(device const T* q [[buffer(0)]], device const T* k [[buffer(1)]],
                                  device const T* v [[buffer(2)]], device float* part [[buffer(3)]],
                                  constant SinksParams& p [[buffer(4)]],
                                  threadgroup float* smem [[threadgroup(0)]],
                                  uint3 tg [[threadgroup_position_in_grid]],
                                  ushort lane [[thread_index_in_simdgroup]],
                                  ushort sg [[simdgroup_index_in_threadgroup]],
                                  ushort groups [[simdgroups_per_threadgroup]]) {
    const int c = int(tg.x);
    const int h = int(tg.y);
    const int b = int(tg.z);
    const int kvh = h / (p.Hq / p.Hkv);
    const long kv = (long(b) * p.Hkv + kvh) * p.kv_len * p.D;
    q += (long(b) * p.Hq + h) * p.D;
    const int lo = p.window > 0 ? max(0, p.kv_len - p.window) : 0;
    const int j0 = max(lo, c * p.chunk);
    const int j1 = min(p.kv_len, (c + 1) * p.chunk);
    float m = -INFINITY;
    float l = 0.0f;
    float acc[PER_LANE];
    for (int u = 0; u < PER_LANE; ++u) acc[u] = 0.0f;
    for (int j = j0 + sg; j < j1; j += groups) {
        online_step(q, k + kv + long(j) * p.D, v + kv + long(j) * p.D, p.D, p.scale, lane, m, l, acc);
    }
    combine_groups(smem, p.D, lane, sg, groups, m, l, acc);
    if (sg == 0) {
        device float* row = part + ((long(b) * p.Hq + h) * p.chunks + c) * (p.D + 2);
        if (lane == 0) {
            row[0] = m;
            row[1] = l;
        }
        for (int u = 0; u * 32 + lane < p.D; ++u) row[2 + u * 32 + lane] = acc[u];
    }
}

// threadgroups (Hq, B, 1), 32 threads (one SIMD group).
template <typename T>
kernel void sinks_decode_reduce(device const float* part [[buffer(0)]], device const float* sinks [[buffer(1)]],
                                device T* out [[buffer(2)]], constant SinksParams& p [[buffer(3)]],
                                uint3 tg [[threadgroup_position_in_grid]],
                                ushort lane [[thread_index_in_simdgroup]]) {
    const int h = int(tg.x);
    const int b = int(tg.y);
    const int stride = p.D + 2;
    device const float* row = part + (long(b) * p.Hq + h) * p.chunks * stride;
    float m = -INFINITY;
    for (int c = lane; c < p.chunks; c += 32) m = max(m, row[c * stride]);
    m = simd_max(m);
    float l = 0.0f;
    for (int c = lane; c < p.chunks; c += 32) {
        const float mc = row[c * stride];
        if (mc != -INFINITY) l += row[c * stride + 1] * exp(mc - m);
    }
    l = simd_sum(l);
    float acc[PER_LANE];
    for (int u = 0; u < PER_LANE; ++u) acc[u] = 0.0f;
    for (int c = 0; c < p.chunks; ++c) {
        const float mc = row[c * stride];
        if (mc == -INFINITY) continue;
        const float f = exp(mc - m);
        for (int u = 0; u * 32 + lane < p.D; ++u) acc[u] += row[c * stride + 2 + u * 32 + lane] * f;
    }
    write_row(out + (long(b) * p.Hq + h) * p.D, p.D, lane, m, l, acc, sink_logit(sinks, p, b, h));
}

// threadgroups (ceil(q_len / G), Hq, B), 32 * G threads; [[threadgroup(0)]]: 2 * tile * D floats (K, then V).
template <typename T>
kernel void sinks_prefill(device const T* q [[buffer(0)]], device const T* k [[buffer(1)]],
                          device const T* v [[buffer(2)]], device const float* sinks [[buffer(3)]],
                          device T* out [[buffer(4)]], constant SinksParams& p [[buffer(5)]],
                          threadgroup float* smem [[threadgroup(0)]],
                          uint3 tg [[threadgroup_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
                          uint threads [[threads_per_threadgroup]], ushort lane [[thread_index_in_simdgroup]],
                          ushort sg [[simdgroup_index_in_threadgroup]],
                          ushort groups [[simdgroups_per_threadgroup]]) {
    const int h = int(tg.y);
    const int b = int(tg.z);
    const int D = p.D;
    const int kvh = h / (p.Hq / p.Hkv);
    const int offset = p.kv_len - p.q_len;
    const int r0 = int(tg.x) * groups;
    const int r = r0 + sg;
    const bool live = r < p.q_len;
    const int last = min(p.q_len, r0 + groups) - 1;
    // The keys any row of this threadgroup admits (the tile loop is the same for every thread).
    const int block_hi = min(last + offset, p.kv_len - 1);
    const int block_lo = p.window > 0 ? max(0, r0 + offset - p.window + 1) : 0;
    const int row_hi = min(r + offset, p.kv_len - 1);
    const int row_lo = p.window > 0 ? max(0, r + offset - p.window + 1) : 0;
    device const T* kb = k + (long(b) * p.Hkv + kvh) * p.kv_len * D;
    device const T* vb = v + (long(b) * p.Hkv + kvh) * p.kv_len * D;
    device const T* qr = q + ((long(b) * p.Hq + h) * p.q_len + r) * D;
    threadgroup float* ks = smem;
    threadgroup float* vs = smem + p.tile * D;
    float m = -INFINITY;
    float l = 0.0f;
    float acc[PER_LANE];
    for (int u = 0; u < PER_LANE; ++u) acc[u] = 0.0f;
    for (int t0 = block_lo / p.tile * p.tile; t0 <= block_hi; t0 += p.tile) {
        const int n = min(p.tile, p.kv_len - t0);
        for (int i = int(tid); i < n * D; i += int(threads)) {
            ks[i] = float(kb[long(t0) * D + i]);
            vs[i] = float(vb[long(t0) * D + i]);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);  // the tile is in place
        if (live) {
            const int j_lo = max(row_lo, t0);
            const int j_hi = min(row_hi, t0 + n - 1);
            for (int j = j_lo; j <= j_hi; ++j) {
                float dot = 0.0f;
                for (int d = lane; d < D; d += 32) dot += float(qr[d]) * ks[(j - t0) * D + d];
                const float s = simd_sum(dot) * p.scale;
                const float m_new = max(m, s);
                const float alpha = exp(m - m_new);
                const float w = exp(s - m_new);
                l = l * alpha + w;
                for (int u = 0; u * 32 + lane < D; ++u) acc[u] = acc[u] * alpha + w * vs[(j - t0) * D + u * 32 + lane];
                m = m_new;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);  // every SIMD group is done with the tile
    }
    if (live) write_row(out + ((long(b) * p.Hq + h) * p.q_len + r) * D, D, lane, m, l, acc, sink_logit(sinks, p, b, h));
}

typedef decltype(sinks_decode<float>) decode_f32_t;
template [[host_name("sinks_decode_f32")]] kernel decode_f32_t sinks_decode<float>;
template [[host_name("sinks_decode_f16")]] kernel decltype(sinks_decode<half>) sinks_decode<half>;
template [[host_name("sinks_decode_bf16")]] kernel decltype(sinks_decode<bfloat>) sinks_decode<bfloat>;
template [[host_name("sinks_decode_partials_f32")]] kernel decltype(sinks_decode_partials<float>) sinks_decode_partials<float>;
template [[host_name("sinks_decode_partials_f16")]] kernel decltype(sinks_decode_partials<half>) sinks_decode_partials<half>;
template [[host_name("sinks_decode_partials_bf16")]] kernel decltype(sinks_decode_partials<bfloat>) sinks_decode_partials<bfloat>;
template [[host_name("sinks_decode_reduce_f32")]] kernel decltype(sinks_decode_reduce<float>) sinks_decode_reduce<float>;
template [[host_name("sinks_decode_reduce_f16")]] kernel decltype(sinks_decode_reduce<half>) sinks_decode_reduce<half>;
template [[host_name("sinks_decode_reduce_bf16")]] kernel decltype(sinks_decode_reduce<bfloat>) sinks_decode_reduce<bfloat>;
template [[host_name("sinks_prefill_f32")]] kernel decltype(sinks_prefill<float>) sinks_prefill<float>;
template [[host_name("sinks_prefill_f16")]] kernel decltype(sinks_prefill<half>) sinks_prefill<half>;
template [[host_name("sinks_prefill_bf16")]] kernel decltype(sinks_prefill<bfloat>) sinks_prefill<bfloat>;
