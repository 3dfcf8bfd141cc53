// The cuda-emu fidelity probes (fidelity.cu) behind the emulated lanes' C entry point; built by native/emu/build.sh.
#include "cuda_emu.h"
#include "emu_host.h"

#include "fidelity.cu"

namespace {

using emu::Args;
using emu::dim3;

constexpr emu::Limits kLimits{"CUDA", 1024, {2147483647ULL, 65535ULL, 65535ULL}, 48 * 1024};

int launch_divergent_warps(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto x = a.f32_buf(0, "x"), out = a.f32_buf(1, "out");
    int q_len = a.i32(2), early = a.i32(3);
    if (!a.ok(4)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("divergent_warps", grid, block, kLimits, [=] { divergent_warps(x, out, q_len, early); },
                       error);
}

int launch_warp_ops(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto x = a.f32_buf(0, "x"), out = a.f32_buf(1, "out");
    if (!a.ok(2)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("warp_ops", grid, block, kLimits, [=] { warp_ops(x, out); }, error);
}

int launch_deadlocks(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto out = a.f32_buf(0, "out");
    int mode = a.i32(1);
    if (!a.ok(2)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("deadlocks", grid, block, kLimits, [=] { deadlocks(out, mode); }, error);
}

int launch_checked_types(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto out = a.f32_buf(0, "out");
    int n = a.i32(1);
    if (!a.ok(2)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("checked_types", grid, block, kLimits, [=] { checked_types(out, n); }, error);
}

int launch_race_kinds(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto out = a.f32_buf(0, "out");
    int kind = a.i32(1), barrier = a.i32(2);
    if (!a.ok(3)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("race_kinds", grid, block, kLimits, [=] { race_kinds(out, kind, barrier); }, error);
}

int launch_out_of_bounds(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto g = a.f32_buf(0, "g");
    int n = a.i32(1), kind = a.i32(2);
    if (!a.ok(3)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("out_of_bounds", grid, block, kLimits, [=] { out_of_bounds(g, n, kind); }, error);
}

int launch_race_probe(Args& a, dim3 grid, dim3 block, std::string& error) {
    return emu::launch_race_probe(a, grid, block, kLimits, error);
}

int launch_shared_probe(Args& a, dim3 grid, dim3 block, std::string& error) {
    return emu::launch_shared_probe(a, grid, block, kLimits, error);
}

int launch_warp_misuse(Args& a, dim3 grid, dim3 block, std::string& error) {
    auto out = a.f32_buf(0, "out");
    int mode = a.i32(1);
    if (!a.ok(2)) return (error = a.error(), emu::LAUNCH_BAD_SIGNATURE);
    return emu::launch("warp_misuse", grid, block, kLimits, [=] { warp_misuse(out, mode); }, error);
}

const std::map<std::string, emu::Launcher> kKernels = {
    {"warp_misuse", launch_warp_misuse},
    {"race_kinds", launch_race_kinds},
    {"out_of_bounds", launch_out_of_bounds},
    {"attnproof_race_probe", launch_race_probe},
    {"attnproof_shared_probe", launch_shared_probe},
    {"checked_types", launch_checked_types},
    {"divergent_warps", launch_divergent_warps},
    {"warp_ops", launch_warp_ops},
    {"deadlocks", launch_deadlocks},
};

}  // namespace

extern "C" ATTNPROOF_EXPORT int attnproof_emu_launch(const char* kernel_name, const long long* dims, int nargs, const int* kinds,
                                    const long long* values, const long long* lengths, char* err, long long errcap) {
    return emu::run_launch(kKernels, kernel_name, dims, nargs, kinds, values, lengths, err, errcap);
}

extern "C" ATTNPROOF_EXPORT int attnproof_emu_races(const char* kernel_name, long long* out, char* first, long long cap) {
    return emu::race_stats(kernel_name, out, first, cap);
}

extern "C" ATTNPROOF_EXPORT const char* attnproof_emu_lane() { return "cuda-emu-fidelity"; }
