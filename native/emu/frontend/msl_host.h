// msl_host.h: the C entry points of a library msl2emu.py generated (emu_host.h's API): the generated table
// (attnproof_msl_kernels(), one entry per kernel and per [[host_name]] instantiation) and the shim's probe kernels.
#pragma once

#include "msl_launch.h"

namespace {

const std::map<std::string, emu::Launcher>& attnproof_msl_table() {
    static const std::map<std::string, emu::Launcher> table = [] {
        std::map<std::string, emu::Launcher> t = attnproof_msl_kernels();
        t["attnproof_race_probe"] = +[](emu::Args& a, emu::dim3 g, emu::dim3 b, std::string& e) {
            return emu::launch_race_probe(a, g, b, emu::msl::kLimits, e);
        };
        t["attnproof_shared_probe"] = +[](emu::Args& a, emu::dim3 g, emu::dim3 b, std::string& e) {
            return emu::launch_shared_probe(a, g, b, emu::msl::kLimits, e);
        };
        return t;
    }();
    return table;
}

}  // namespace

extern "C" ATTNPROOF_EXPORT int attnproof_emu_launch(const char* kernel_name, const long long* dims, int nargs,
                                                     const int* kinds, const long long* values,
                                                     const long long* lengths, char* err, long long errcap) {
    return emu::run_launch(attnproof_msl_table(), kernel_name, dims, nargs, kinds, values, lengths, err, errcap);
}

extern "C" ATTNPROOF_EXPORT int attnproof_emu_races(const char* kernel_name, long long* out, char* first, long long cap) {
    return emu::race_stats(kernel_name, out, first, cap);
}

#ifndef ATTNPROOF_LANE_NAME
#define ATTNPROOF_LANE_NAME "metal-emu"
#endif

extern "C" ATTNPROOF_EXPORT const char* attnproof_emu_lane() { return ATTNPROOF_LANE_NAME; }
