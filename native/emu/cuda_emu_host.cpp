// The cuda-emu lane: native/cuda/sinks_attn.cu built as host C++ through cuda_emu.h, behind one C entry point.
#include "cuda_emu.h"
#include "emu_host.h"

#ifndef ATTNPROOF_KERNEL_SOURCE
#define ATTNPROOF_KERNEL_SOURCE "../cuda/sinks_attn.cu"
#endif
#ifndef ATTNPROOF_LANE_NAME
#define ATTNPROOF_LANE_NAME "cuda-emu"
#endif

// The kernel source: native/cuda/sinks_attn.cu, or a mutant's patched copy (build.sh passes its path).
#include ATTNPROOF_KERNEL_SOURCE

namespace {

using emu::Args;
using emu::dim3;

// CUDA's launch limits: threads per block, blocks per grid axis (x: 2^31 - 1, y and z: 65535), static shared
// memory per block (48 KiB).
constexpr emu::Limits kLimits{"CUDA", 1024, {2147483647ULL, 65535ULL, 65535ULL}, 48 * 1024};

int launch_flash_attn_sinks(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(0, "q"), k = a.f32_buf(1, "k"), v = a.f32_buf(2, "v"), sinks = a.f32_buf(3, "sinks");
    auto mask = a.f32_buf(4, "mask"), out = a.f32_buf(5, "out");
    auto status = a.i32_buf(6, "status");
    int B = a.i32(7), Hq = a.i32(8), Hkv = a.i32(9), tq = a.i32(10), tk = a.i32(11), D = a.i32(12),
        window = a.i32(13);
    float scale = a.f32(14);
    if (!a.ok(15)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("flash_attn_sinks", grid, block, kLimits, [=] {
        flash_attn_sinks(q, k, v, sinks, mask, out, status, B, Hq, Hkv, tq, tk, D, window, scale);
    }, error);
}

int launch_flash_attn_sinks_varlen(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(0, "q"), k = a.f32_buf(1, "k"), v = a.f32_buf(2, "v"), sinks = a.f32_buf(3, "sinks");
    auto cu_q = a.i32_buf(4, "cu_seqlens_q"), cu_k = a.i32_buf(5, "cu_seqlens_k");
    auto out = a.f32_buf(6, "out");
    auto status = a.i32_buf(7, "status");
    int nseq = a.i32(8), max_q = a.i32(9), Hq = a.i32(10), Hkv = a.i32(11), D = a.i32(12), window = a.i32(13);
    float scale = a.f32(14);
    if (!a.ok(15)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("flash_attn_sinks_varlen", grid, block, kLimits, [=] {
        flash_attn_sinks_varlen(q, k, v, sinks, cu_q, cu_k, out, status, nseq, max_q, Hq, Hkv, D, window, scale);
    }, error);
}

int launch_sinks_scores(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(0, "q"), k = a.f32_buf(1, "k"), mask = a.f32_buf(2, "mask"), scores = a.f32_buf(3, "scores");
    int B = a.i32(4), Hq = a.i32(5), Hkv = a.i32(6), tq = a.i32(7), tk = a.i32(8), D = a.i32(9), mb = a.i32(10),
        mh = a.i32(11), mq = a.i32(12), causal = a.i32(13), window = a.i32(14);
    float scale = a.f32(15);
    if (!a.ok(16)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_scores", grid, block, kLimits, [=] {
        sinks_scores(q, k, mask, scores, B, Hq, Hkv, tq, tk, D, mb, mh, mq, causal, window, scale);
    }, error);
}

int launch_softmax_with_sinks(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto logits = a.f32_buf(0, "logits"), sinks = a.f32_buf(1, "sinks"), mask = a.f32_buf(2, "mask");
    auto probs = a.f32_buf(3, "probs");
    int B = a.i32(4), H = a.i32(5), Q = a.i32(6), K = a.i32(7), mb = a.i32(8), mh = a.i32(9), mq = a.i32(10);
    if (!a.ok(11)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("softmax_with_sinks", grid, block, kLimits, [=] {
        softmax_with_sinks(logits, sinks, mask, probs, B, H, Q, K, mb, mh, mq);
    }, error);
}

int launch_sinks_pv(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto probs = a.f32_buf(0, "probs"), scores = a.f32_buf(1, "scores"), v = a.f32_buf(2, "v");
    auto out = a.f32_buf(3, "out");
    int B = a.i32(4), Hq = a.i32(5), Hkv = a.i32(6), tq = a.i32(7), tk = a.i32(8), D = a.i32(9);
    if (!a.ok(10)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_pv", grid, block, kLimits, [=] {
        sinks_pv(probs, scores, v, out, B, Hq, Hkv, tq, tk, D);
    }, error);
}

int launch_sinks_decode_splitk_partial(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(0, "q"), k = a.f32_buf(1, "k"), v = a.f32_buf(2, "v"), mask = a.f32_buf(3, "mask");
    auto part = a.f32_buf(4, "part");
    auto status = a.i32_buf(5, "status");
    int B = a.i32(6), Hq = a.i32(7), Hkv = a.i32(8), tk = a.i32(9), D = a.i32(10), mb = a.i32(11), mh = a.i32(12),
        causal = a.i32(13), window = a.i32(14);
    float scale = a.f32(15);
    if (!a.ok(16)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_decode_splitk_partial", grid, block, kLimits, [=] {
        sinks_decode_splitk_partial(q, k, v, mask, part, status, B, Hq, Hkv, tk, D, mb, mh, causal, window, scale);
    }, error);
}

int launch_sinks_decode_splitk_reduce(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto part = a.f32_buf(0, "part"), sinks = a.f32_buf(1, "sinks"), out = a.f32_buf(2, "out");
    auto status = a.i32_buf(3, "status");
    int B = a.i32(4), Hq = a.i32(5), chunks = a.i32(6), D = a.i32(7);
    if (!a.ok(8)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_decode_splitk_reduce", grid, block, kLimits, [=] {
        sinks_decode_splitk_reduce(part, sinks, out, status, B, Hq, chunks, D);
    }, error);
}

int launch_race_probe(Args& a, dim3 grid, dim3 block, std::string& error) {
    return emu::launch_race_probe(a, grid, block, kLimits, error);
}

int launch_shared_probe(Args& a, dim3 grid, dim3 block, std::string& error) {
    return emu::launch_shared_probe(a, grid, block, kLimits, error);
}

const std::map<std::string, emu::Launcher> kKernels = {
    {"attnproof_race_probe", launch_race_probe},
    {"attnproof_shared_probe", launch_shared_probe},
    {"flash_attn_sinks", launch_flash_attn_sinks},
    {"flash_attn_sinks_varlen", launch_flash_attn_sinks_varlen},
    {"sinks_scores", launch_sinks_scores},
    {"softmax_with_sinks", launch_softmax_with_sinks},
    {"sinks_pv", launch_sinks_pv},
    {"sinks_decode_splitk_partial", launch_sinks_decode_splitk_partial},
    {"sinks_decode_splitk_reduce", launch_sinks_decode_splitk_reduce},
};

}  // namespace

extern "C" ATTNPROOF_EXPORT int attnproof_emu_launch(const char* kernel_name, const long long* dims, int nargs, const int* kinds,
                                    const long long* values, const long long* lengths, char* err, long long errcap) {
    return emu::run_launch(kKernels, kernel_name, dims, nargs, kinds, values, lengths, err, errcap);
}

// The race checker's totals for `kernel_name` since the library was loaded: out[0] races, out[1] shared accesses checked,
// out[2] launches; the first race report goes to `first`. Returns 0, or 1 when the kernel never ran.
extern "C" ATTNPROOF_EXPORT int attnproof_emu_races(const char* kernel_name, long long* out, char* first, long long cap) {
    return emu::race_stats(kernel_name, out, first, cap);
}

extern "C" ATTNPROOF_EXPORT const char* attnproof_emu_lane() { return ATTNPROOF_LANE_NAME; }
