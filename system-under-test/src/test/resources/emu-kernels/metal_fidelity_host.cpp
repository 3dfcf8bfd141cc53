// The metal-emu fidelity probes (fidelity.metal) behind the emulated lanes' C entry point; built by
// native/emu/build.sh. Buffers are bound by position (the probes' [[buffer(n)]] are 0, 1, 2 in order).
#include "emu_host.h"

#include "fidelity.metal"

namespace {

using emu::Args;
using emu::dim3;

constexpr emu::Limits kLimits{"Metal", 1024, {4294967295ULL, 4294967295ULL, 4294967295ULL}, 32 * 1024};

int launch_divergent_simdgroups(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto x = a.f32_buf(0, "x"), out = a.f32_buf(1, "out");
    int q_len = a.i32(2), early = a.i32(3);
    if (!a.ok(4)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("divergent_simdgroups", grid, block, kLimits,
                       [=] { divergent_simdgroups(x, out, q_len, early, static_cast<uint>(emu::t_tid)); }, error);
}

int launch_simd_ops(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto x = a.f32_buf(0, "x"), out = a.f32_buf(1, "out");
    if (!a.ok(2)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("simd_ops", grid, block, kLimits, [=] { simd_ops(x, out, static_cast<uint>(emu::t_tid)); },
                       error);
}

int launch_barrier_skipped(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto out = a.f32_buf(0, "out");
    int mode = a.i32(1);
    if (!a.ok(2)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("barrier_skipped", grid, block, kLimits,
                       [=] { barrier_skipped(out, mode, static_cast<uint>(emu::t_tid)); }, error);
}

int launch_checked_types(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto out = a.f32_buf(0, "out");
    int n = a.i32(1);
    if (!a.ok(2)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("checked_types", grid, block, kLimits, [=] { checked_types(out, n, static_cast<uint>(emu::t_tid)); }, error);
}

int launch_threadgroup_36k(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto out = a.f32_buf(0, "out");
    if (!a.ok(1)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("threadgroup_36k", grid, block, kLimits,
                       [=] { threadgroup_36k(out, static_cast<uint>(emu::t_tid)); }, error);
}

const std::map<std::string, emu::Launcher> kKernels = {
    {"threadgroup_36k", launch_threadgroup_36k},
    {"checked_types", launch_checked_types},
    {"divergent_simdgroups", launch_divergent_simdgroups},
    {"simd_ops", launch_simd_ops},
    {"barrier_skipped", launch_barrier_skipped},
};

}  // namespace

extern "C" ATTNPROOF_EXPORT int attnproof_emu_launch(const char* kernel_name, const long long* dims, int nargs, const int* kinds,
                                    const long long* values, const long long* lengths, char* err, long long errcap) {
    return emu::run_launch(kKernels, kernel_name, dims, nargs, kinds, values, lengths, err, errcap);
}

extern "C" ATTNPROOF_EXPORT int attnproof_emu_races(const char* kernel_name, long long* out, char* first, long long cap) {
    return emu::race_stats(kernel_name, out, first, cap);
}

extern "C" ATTNPROOF_EXPORT const char* attnproof_emu_lane() { return "metal-emu-fidelity"; }
