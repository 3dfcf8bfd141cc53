// The metal-emu lane: native/metal/sinks_attn.metal built as host C++ through the stub metal/metal_stdlib, behind
// one C entry point. Kernel arguments arrive in [[buffer(n)]] order; the position attributes come from the launch.
#include "emu_host.h"

#include "../metal/sinks_attn.metal"

namespace {

using emu::Args;
using emu::dim3;

// Metal's usual limit on threads per threadgroup.
constexpr unsigned kMaxThreads = 1024;

uint3 u3(dim3 d) { return uint3{d.x, d.y, d.z}; }

// thread_position_in_grid and threads_per_grid of a one-dimensional dispatch.
uint grid_position() { return emu::t_block.x * emu::t_block_dim.x + emu::t_thread.x; }
uint grid_threads() { return emu::t_grid_dim.x * emu::t_block_dim.x; }

int launch_flash_attn_sinks_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(0, "q"), k = a.f32_buf(1, "k"), v = a.f32_buf(2, "v"), sinks = a.f32_buf(3, "sinks");
    auto mask = a.f32_buf(4, "mask"), out = a.f32_buf(5, "out");
    auto status = a.i32_buf(6, "status");
    AttnParams p = a.bytes<AttnParams>(7);
    if (!a.ok(8)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("flash_attn_sinks_metal", grid, block, kMaxThreads, [=] {
        flash_attn_sinks_metal(q, k, v, sinks, mask, out, status, p, u3(emu::t_block), u3(emu::t_thread),
                               u3(emu::t_block_dim));
    }, error);
}

int launch_flash_attn_sinks_varlen_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(0, "q"), k = a.f32_buf(1, "k"), v = a.f32_buf(2, "v"), sinks = a.f32_buf(3, "sinks");
    auto cu_q = a.i32_buf(4, "cu_seqlens_q"), cu_k = a.i32_buf(5, "cu_seqlens_k");
    auto out = a.f32_buf(6, "out");
    auto status = a.i32_buf(7, "status");
    AttnParams p = a.bytes<AttnParams>(8);
    if (!a.ok(9)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("flash_attn_sinks_varlen_metal", grid, block, kMaxThreads, [=] {
        flash_attn_sinks_varlen_metal(q, k, v, sinks, cu_q, cu_k, out, status, p, u3(emu::t_block),
                                      u3(emu::t_thread), u3(emu::t_block_dim));
    }, error);
}

int launch_sinks_scores_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto q = a.f32_buf(0, "q"), k = a.f32_buf(1, "k"), mask = a.f32_buf(2, "mask"), scores = a.f32_buf(3, "scores");
    AttnParams p = a.bytes<AttnParams>(4);
    if (!a.ok(5)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_scores_metal", grid, block, kMaxThreads, [=] {
        sinks_scores_metal(q, k, mask, scores, p, grid_position(), grid_threads());
    }, error);
}

int launch_softmax_with_sinks_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto logits = a.f32_buf(0, "logits"), sinks = a.f32_buf(1, "sinks"), mask = a.f32_buf(2, "mask");
    auto probs = a.f32_buf(3, "probs");
    AttnParams p = a.bytes<AttnParams>(4);
    if (!a.ok(5)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("softmax_with_sinks_metal", grid, block, kMaxThreads, [=] {
        softmax_with_sinks_metal(logits, sinks, mask, probs, p, grid_position(), grid_threads());
    }, error);
}

int launch_sinks_pv_metal(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto probs = a.f32_buf(0, "probs"), scores = a.f32_buf(1, "scores"), v = a.f32_buf(2, "v");
    auto out = a.f32_buf(3, "out");
    AttnParams p = a.bytes<AttnParams>(4);
    if (!a.ok(5)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("sinks_pv_metal", grid, block, kMaxThreads, [=] {
        sinks_pv_metal(probs, scores, v, out, p, grid_position(), grid_threads());
    }, error);
}

const std::map<std::string, emu::Launcher> kKernels = {
    {"flash_attn_sinks_metal", launch_flash_attn_sinks_metal},
    {"flash_attn_sinks_varlen_metal", launch_flash_attn_sinks_varlen_metal},
    {"sinks_scores_metal", launch_sinks_scores_metal},
    {"softmax_with_sinks_metal", launch_softmax_with_sinks_metal},
    {"sinks_pv_metal", launch_sinks_pv_metal},
};

}  // namespace

extern "C" int attnproof_emu_launch(const char* kernel_name, const long long* dims, int nargs, const int* kinds,
                                    const long long* values, const long long* lengths, char* err, long long errcap) {
    return emu::run_launch(kKernels, kernel_name, dims, nargs, kinds, values, lengths, err, errcap);
}

extern "C" const char* attnproof_emu_lane() { return "metal-emu"; }
