// The metal-emu lane: native/metal/sinks_attn.metal built as host C++ through the stub metal/metal_stdlib, behind
// one C entry point. The host's arguments are its buffer bindings by index (setBuffer:atIndex: / setBytes:atIndex:);
// each kernel parameter is bound from the index its [[buffer(n)]] attribute names, read from the table build.sh
// generates from the source (metal_bindings.h), never from its position, as Metal binds them. The position
// attributes come from the launch.
#include "emu_host.h"

#ifndef ATTNPROOF_KERNEL_SOURCE
#define ATTNPROOF_KERNEL_SOURCE "../metal/sinks_attn.metal"
#endif
#include ATTNPROOF_KERNEL_SOURCE

#include "metal_bindings.h"

// The buffer index of parameter `param` of kernel `fn`, and the number of bindings `fn` takes.
#define BUF(fn, param) ATTNPROOF_BUFFER_##fn##_##param
#define BUFFERS(fn) ATTNPROOF_BUFFERS_##fn

namespace {

using emu::Args;
using emu::dim3;

// Metal's limits on Apple GPUs: 1024 threads per threadgroup, 32 KiB of threadgroup memory; threadgroups per grid
// axis are bounded by the 32-bit grid size.
constexpr emu::Limits kLimits{"Metal", 1024, {4294967295ULL, 4294967295ULL, 4294967295ULL}, 32 * 1024};

uint3 u3(dim3 d) { return uint3{d.x, d.y, d.z}; }

// thread_position_in_grid and threads_per_grid of a one-dimensional dispatch.
uint grid_position() { return emu::t_block.x * emu::t_block_dim.x + emu::t_thread.x; }
uint grid_threads() { return emu::t_grid_dim.x * emu::t_block_dim.x; }

int launch_flash_attn_sinks_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(BUF(flash_attn_sinks_metal, q), "q"), k = a.f32_buf(BUF(flash_attn_sinks_metal, k), "k"), v = a.f32_buf(BUF(flash_attn_sinks_metal, v), "v"), sinks = a.f32_buf(BUF(flash_attn_sinks_metal, sinks), "sinks");
    auto mask = a.f32_buf(BUF(flash_attn_sinks_metal, mask), "mask"), out = a.f32_buf(BUF(flash_attn_sinks_metal, out), "out");
    auto status = a.i32_buf(BUF(flash_attn_sinks_metal, status), "status");
    AttnParams p = a.bytes<AttnParams>(BUF(flash_attn_sinks_metal, p));
    if (!a.ok(BUFFERS(flash_attn_sinks_metal))) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("flash_attn_sinks_metal", grid, block, kLimits, [=] {
        flash_attn_sinks_metal(q, k, v, sinks, mask, out, status, p, u3(emu::t_block), u3(emu::t_thread),
                               u3(emu::t_block_dim));
    }, error);
}

int launch_flash_attn_sinks_varlen_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(BUF(flash_attn_sinks_varlen_metal, q), "q"), k = a.f32_buf(BUF(flash_attn_sinks_varlen_metal, k), "k"), v = a.f32_buf(BUF(flash_attn_sinks_varlen_metal, v), "v"), sinks = a.f32_buf(BUF(flash_attn_sinks_varlen_metal, sinks), "sinks");
    auto cu_q = a.i32_buf(BUF(flash_attn_sinks_varlen_metal, cu_q), "cu_seqlens_q"), cu_k = a.i32_buf(BUF(flash_attn_sinks_varlen_metal, cu_k), "cu_seqlens_k");
    auto out = a.f32_buf(BUF(flash_attn_sinks_varlen_metal, out), "out");
    auto status = a.i32_buf(BUF(flash_attn_sinks_varlen_metal, status), "status");
    AttnParams p = a.bytes<AttnParams>(BUF(flash_attn_sinks_varlen_metal, p));
    if (!a.ok(BUFFERS(flash_attn_sinks_varlen_metal))) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("flash_attn_sinks_varlen_metal", grid, block, kLimits, [=] {
        flash_attn_sinks_varlen_metal(q, k, v, sinks, cu_q, cu_k, out, status, p, u3(emu::t_block),
                                      u3(emu::t_thread), u3(emu::t_block_dim));
    }, error);
}

int launch_sinks_scores_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(BUF(sinks_scores_metal, q), "q"), k = a.f32_buf(BUF(sinks_scores_metal, k), "k"), mask = a.f32_buf(BUF(sinks_scores_metal, mask), "mask"), scores = a.f32_buf(BUF(sinks_scores_metal, scores), "scores");
    AttnParams p = a.bytes<AttnParams>(BUF(sinks_scores_metal, p));
    if (!a.ok(BUFFERS(sinks_scores_metal))) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_scores_metal", grid, block, kLimits, [=] {
        sinks_scores_metal(q, k, mask, scores, p, grid_position(), grid_threads());
    }, error);
}

int launch_softmax_with_sinks_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto logits = a.f32_buf(BUF(softmax_with_sinks_metal, logits), "logits"), sinks = a.f32_buf(BUF(softmax_with_sinks_metal, sinks), "sinks"), mask = a.f32_buf(BUF(softmax_with_sinks_metal, mask), "mask");
    auto probs = a.f32_buf(BUF(softmax_with_sinks_metal, probs), "probs");
    AttnParams p = a.bytes<AttnParams>(BUF(softmax_with_sinks_metal, p));
    if (!a.ok(BUFFERS(softmax_with_sinks_metal))) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("softmax_with_sinks_metal", grid, block, kLimits, [=] {
        softmax_with_sinks_metal(logits, sinks, mask, probs, p, grid_position(), grid_threads());
    }, error);
}

int launch_sinks_pv_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto probs = a.f32_buf(BUF(sinks_pv_metal, probs), "probs"), scores = a.f32_buf(BUF(sinks_pv_metal, scores), "scores"), v = a.f32_buf(BUF(sinks_pv_metal, v), "v");
    auto out = a.f32_buf(BUF(sinks_pv_metal, out), "out");
    AttnParams p = a.bytes<AttnParams>(BUF(sinks_pv_metal, p));
    if (!a.ok(BUFFERS(sinks_pv_metal))) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_pv_metal", grid, block, kLimits, [=] {
        sinks_pv_metal(probs, scores, v, out, p, grid_position(), grid_threads());
    }, error);
}

int launch_sinks_decode_splitk_partial_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(BUF(sinks_decode_splitk_partial_metal, q), "q"), k = a.f32_buf(BUF(sinks_decode_splitk_partial_metal, k), "k"), v = a.f32_buf(BUF(sinks_decode_splitk_partial_metal, v), "v");
    auto mask = a.f32_buf(BUF(sinks_decode_splitk_partial_metal, mask), "mask"), part = a.f32_buf(BUF(sinks_decode_splitk_partial_metal, part), "part");
    auto status = a.i32_buf(BUF(sinks_decode_splitk_partial_metal, status), "status");
    AttnParams p = a.bytes<AttnParams>(BUF(sinks_decode_splitk_partial_metal, p));
    if (!a.ok(BUFFERS(sinks_decode_splitk_partial_metal))) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_decode_splitk_partial_metal", grid, block, kLimits, [=] {
        sinks_decode_splitk_partial_metal(q, k, v, mask, part, status, p, u3(emu::t_block), u3(emu::t_thread),
                                          u3(emu::t_block_dim), u3(emu::t_grid_dim));
    }, error);
}

int launch_sinks_decode_splitk_reduce_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto part = a.f32_buf(BUF(sinks_decode_splitk_reduce_metal, part), "part"), sinks = a.f32_buf(BUF(sinks_decode_splitk_reduce_metal, sinks), "sinks");
    auto out = a.f32_buf(BUF(sinks_decode_splitk_reduce_metal, out), "out");
    auto status = a.i32_buf(BUF(sinks_decode_splitk_reduce_metal, status), "status");
    AttnParams p = a.bytes<AttnParams>(BUF(sinks_decode_splitk_reduce_metal, p));
    if (!a.ok(BUFFERS(sinks_decode_splitk_reduce_metal))) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_decode_splitk_reduce_metal", grid, block, kLimits, [=] {
        sinks_decode_splitk_reduce_metal(part, sinks, out, status, p, u3(emu::t_block), u3(emu::t_thread),
                                         u3(emu::t_block_dim), u3(emu::t_grid_dim));
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
    {"flash_attn_sinks_metal", launch_flash_attn_sinks_metal},
    {"flash_attn_sinks_varlen_metal", launch_flash_attn_sinks_varlen_metal},
    {"sinks_scores_metal", launch_sinks_scores_metal},
    {"softmax_with_sinks_metal", launch_softmax_with_sinks_metal},
    {"sinks_pv_metal", launch_sinks_pv_metal},
    {"sinks_decode_splitk_partial_metal", launch_sinks_decode_splitk_partial_metal},
    {"sinks_decode_splitk_reduce_metal", launch_sinks_decode_splitk_reduce_metal},
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

#ifndef ATTNPROOF_LANE_NAME
#define ATTNPROOF_LANE_NAME "metal-emu"
#endif

extern "C" ATTNPROOF_EXPORT const char* attnproof_emu_lane() { return ATTNPROOF_LANE_NAME; }
