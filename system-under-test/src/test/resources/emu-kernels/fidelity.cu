// fidelity.cu: probe kernels of the emulator's device semantics (claim N4), in the kernel sources' dialect (dptr,
// SHARED_ARRAY) so that the same file builds with nvcc and through native/emu/cuda_emu.h. Built by native/emu/build.sh
// into libattnproof_cuda_emu_fidelity.so; EmulatorFidelityN4Test holds their outputs against plain Java arithmetic.

#ifndef ATTNPROOF_EMU
template <class T>
using dptr = T*;
#define SHARED_ARRAY(T, name, n) __shared__ T name[n]
#endif

// grid (1), block (128): four warps, warp w standing for query row w. Warps below q_len run a row loop of w + 1
// iterations, each a 32-lane butterfly sum of tile elements of region (w - it) mod 4; warps past q_len skip it;
// warp 0 alone runs one more max-butterfly (`if (t < 32)`); then a barrier, the tile rewritten with every thread's
// result, a barrier, and out[t] = tile[(t + 32) % 128] - acc. On a device the warps run different numbers of
// shuffles between the same two barriers: no warp may rewrite the tile while another still reads it. With
// early != 0 the barrier before the rewrite is left out: a real early-rewrite race the checker must report.
extern "C" __global__ void divergent_warps(dptr<const float> x, dptr<float> out, int q_len, int early) {
    SHARED_ARRAY(float, tile, 128);
    const int t = threadIdx.x;
    const int w = t / 32;
    const int lane = t % 32;
    tile[t] = x[t];
    __syncthreads();
    float acc = 0.f;
    if (w < q_len) {
        for (int it = 0; it <= w; ++it) {
            float v = tile[lane + 32 * ((w - it + 4) % 4)] * (float)(it + 1);
            for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffffu, v, m);
            acc += v;
        }
    }
    if (t < 32) {
        float mx = acc + tile[t];
        for (int m = 16; m > 0; m /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, m));
        acc += mx;
    }
    if (early == 0) __syncthreads();
    tile[t] = acc;
    __syncthreads();
    out[t] = tile[(t + 32) % 128] - acc;
}

// grid (1), block (64): the other warp operations, with partial masks. out[t * 6 + k]:
//   k 0: lanes 0-15 __shfl_down_sync(0x0000ffff, x, 1, 16); lanes 16-31 __shfl_up_sync(0xffff0000, x, 2, 16)
//   k 1: __shfl_sync(full, x, 5) (lane 5's value, per warp)
//   k 2: __shfl_xor_sync(full, x, 3, 8)
//   k 3: __ballot_sync(full, x > 0) as a float of its low 16 bits, and k 4 of its high 16 bits
//   k 5: x after __syncwarp(full) of the even lanes' and the odd lanes' own __syncwarp (two masks)
extern "C" __global__ void warp_ops(dptr<const float> x, dptr<float> out) {
    const int t = threadIdx.x;
    const int lane = t % 32;
    const float v = x[t];
    float a;
    if (lane < 16) {
        a = __shfl_down_sync(0x0000ffffu, v, 1, 16);
    } else {
        a = __shfl_up_sync(0xffff0000u, v, 2, 16);
    }
    out[t * 6 + 0] = a;
    out[t * 6 + 1] = __shfl_sync(0xffffffffu, v, 5);
    out[t * 6 + 2] = __shfl_xor_sync(0xffffffffu, v, 3, 8);
    const unsigned b = __ballot_sync(0xffffffffu, v > 0.f);
    out[t * 6 + 3] = (float)(b & 0xffffu);
    out[t * 6 + 4] = (float)(b >> 16);
    if (lane % 2 == 0) {
        __syncwarp(0x55555555u);
    } else {
        __syncwarp(0xaaaaaaaau);
    }
    __syncwarp();
    out[t * 6 + 5] = v;
}

// grid (1), block (64): deadlocks and what is not one. mode 0: warp 1 skips the first barrier (it waits at the
// second while warp 0 waits at the first); mode 1: warp 1 returns before the first barrier (exited threads drop
// out: no error); mode 2: lane 5 returns before a full-mask shuffle its warp waits at; mode 3: lane 3 waits at a
// barrier while its warp's other lanes wait at a full-mask shuffle.
extern "C" __global__ void deadlocks(dptr<float> out, int mode) {
    const int t = threadIdx.x;
    const int w = t / 32;
    const int lane = t % 32;
    if (mode == 1 && w == 1) return;
    if (mode == 2 && t == 5) return;
    if (mode == 3) {
        if (lane == 3) {
            __syncthreads();
        } else {
            out[t] = __shfl_xor_sync(0xffffffffu, (float)t, 1);
        }
        return;
    }
    if (mode == 2) out[t] = __shfl_xor_sync(0xffffffffu, (float)t, 1);
    if (!(mode == 0 && w == 1)) __syncthreads();
    out[t] = (float)t;
    __syncthreads();
}

// grid (1), block (32): a checked shared element has the device's type (claim N5). out[lane * 4 + k]: k 0
// `(lane < n) ? partial[lane] : 0` (a float: 2.75, not 2), k 1 `auto b = partial[lane]; b += 0.5f` (a float copy:
// 3.25, the element unchanged), k 2 `max(partial[lane], 0.f)`, k 3 the element read back through `&partial[lane]`.
extern "C" __global__ void checked_types(dptr<float> out, int n) {
    SHARED_ARRAY(float, partial, 32);
    const int lane = threadIdx.x;
    partial[lane] = 2.75f;
    __syncthreads();
    const auto a = (lane < n) ? partial[lane] : 0;
    auto b = partial[lane];
    b += 0.5f;
    const float c = max(partial[lane], 0.f);
    const float* p = &partial[lane];
    out[lane * 4 + 0] = a;
    out[lane * 4 + 1] = b;
    out[lane * 4 + 2] = c;
    out[lane * 4 + 3] = *p;
}

// grid (1), block (64): one race of each kind on shared memory, no barrier between the accesses (barrier != 0 puts
// one between them: no race). kind 0, write after write: thread t writes sh[t % 8] = t + 1 (8 writers per element);
// kind 1, read after write: thread 0 writes sh[3], threads 1-63 read it; kind 2, write after read: thread 0 reads
// sh[5], thread 63 writes it. out[t] keeps what a thread read.
extern "C" __global__ void race_kinds(dptr<float> out, int kind, int barrier) {
    SHARED_ARRAY(int, sh, 8);
    const int t = threadIdx.x;
    if (kind == 0) {
        if (barrier != 0) {
            for (int turn = 0; turn < 8; ++turn) {
                if (t / 8 == turn) sh[t % 8] = t + 1;
                __syncthreads();
            }
        } else {
            sh[t % 8] = t + 1;
        }
    } else if (kind == 1) {
        if (t == 0) sh[3] = 42;
        if (barrier != 0) __syncthreads();
        if (t != 0) out[t] = (float)sh[3];
    } else {
        if (t == 0) out[t] = (float)sh[5];
        if (barrier != 0) __syncthreads();
        if (t == 63) sh[5] = 42;
    }
}

// grid (1), block (32): one out-of-bounds access by thread 7. kind 0: a read of g[n] (g holds n floats); kind 1: a
// write of g[-1]; kind 2: a read of the shared sh[16] (16 floats); kind 3: a write of sh[16]; any other kind: every
// access in bounds (the control).
extern "C" __global__ void out_of_bounds(dptr<float> g, int n, int kind) {
    SHARED_ARRAY(float, sh, 16);
    const int t = threadIdx.x;
    if (t < 16) sh[t] = (float)t;
    __syncthreads();
    if (t != 7) return;
    if (kind == 0) g[0] = g[n];
    if (kind == 1) g[-1] = 1.f;
    if (kind == 2) g[0] = sh[16];
    if (kind == 3) sh[16] = 1.f;
}

// grid (1), block (32): warp operations the device leaves undefined. mode 0: a mask (lanes 1-31) that does not
// name the calling lane 0; mode 1: a width of 3; mode 2: lanes 0-15 (mask 0x0000ffff) read lane l ^ 16, which
// does not take part; mode 3: the same shuffle with every lane in its mask (the control: lane l gets lane l ^ 1's).
extern "C" __global__ void warp_misuse(dptr<float> out, int mode) {
    const int t = threadIdx.x;
    float v = (float)t;
    if (mode == 0) v = __shfl_xor_sync(0xfffffffeu, v, 1);
    if (mode == 1) v = __shfl_xor_sync(0xffffffffu, v, 1, 3);
    if (mode == 2 && t < 16) v = __shfl_xor_sync(0x0000ffffu, v, 16);
    if (mode == 3) v = __shfl_xor_sync(0xffffffffu, v, 1);
    out[t] = v;
}
