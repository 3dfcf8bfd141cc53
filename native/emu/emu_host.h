// emu_host.h: the one C entry point of an emulated lane's shared library, and the argument reader its kernel
// table uses. The Java host describes a launch as a kernel name, grid and block sizes and an argument list (as it
// would for cuLaunchKernel or a Metal compute encoder); the library checks the list against the kernel's signature,
// wraps each buffer in a bounds-checked pointer of the length the host gave, and runs the launch.
#pragma once

#include <map>
#include <string>

#include "emu_core.h"

namespace emu {

// Argument kinds of the C entry point.
enum ArgKind : int {
    ARG_I32 = 0,       // value: the int
    ARG_F32 = 1,       // value: the float's bits
    ARG_F32_BUF = 2,   // value: address, length: elements
    ARG_I32_BUF = 3,   // value: address, length: elements
    ARG_NULL = 4,      // a null pointer
    ARG_BYTES = 5,     // value: address, length: bytes (Metal setBytes)
};

class Args {
public:
    Args(const char* kernel, int n, const int* kinds, const long long* values, const long long* lengths)
        : kernel_(kernel), n_(n), kinds_(kinds), values_(values), lengths_(lengths) {}

    int i32(int at) { return want(at, ARG_I32, "int") ? static_cast<int>(values_[at]) : 0; }

    float f32(int at) {
        if (!want(at, ARG_F32, "float")) return 0.f;
        int bits = static_cast<int>(values_[at]);
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }

    // A float buffer (or null when the kernel accepts one: the fused kernels' mask).
    dptr<float> f32_buf(int at, const char* name) { return buf<float>(at, ARG_F32_BUF, name); }
    dptr<int> i32_buf(int at, const char* name) { return buf<int>(at, ARG_I32_BUF, name); }

    // A Metal setBytes binding copied into a T (the size must match).
    template <class T>
    T bytes(int at) {
        T out{};
        if (!want(at, ARG_BYTES, "bytes")) return out;
        if (lengths_[at] != static_cast<long long>(sizeof(T))) {
            mismatch(at, "bytes of size " + std::to_string(sizeof(T)) + ", got " + std::to_string(lengths_[at]));
            return out;
        }
        std::memcpy(&out, reinterpret_cast<const void*>(values_[at]), sizeof(T));
        return out;
    }

    // Call after reading every argument: the count must match too.
    bool ok(int expected) {
        if (error_.empty() && n_ != expected) {
            error_ = std::string(kernel_) + " takes " + std::to_string(expected) + " arguments, the host passed " +
                     std::to_string(n_);
        }
        return error_.empty();
    }
    const std::string& error() const { return error_; }

    // The raw bindings, for a binder generated from a source's attributes (frontend/msl_launch.h).
    int size() const { return n_; }
    int kind_at(int at) const { return kinds_[at]; }
    long long value_at(int at) const { return values_[at]; }
    long long length_at(int at) const { return lengths_[at]; }

private:
    template <class T>
    dptr<T> buf(int at, int kind, const char* name) {
        if (at < n_ && kinds_[at] == ARG_NULL) return dptr<T>(nullptr);
        if (!want(at, kind, kind == ARG_F32_BUF ? "float buffer" : "int buffer")) return dptr<T>(nullptr);
        return dptr<T>(reinterpret_cast<T*>(values_[at]), lengths_[at], name);
    }

    bool want(int at, int kind, const char* what) {
        if (at >= n_) {
            mismatch(at, std::string(what) + ", but the host passed only " + std::to_string(n_) + " arguments");
            return false;
        }
        if (kinds_[at] != kind) {
            mismatch(at, std::string(what) + ", got argument kind " + std::to_string(kinds_[at]));
            return false;
        }
        return true;
    }

    void mismatch(int at, const std::string& what) {
        if (error_.empty()) error_ = std::string(kernel_) + " argument " + std::to_string(at) + ": expected " + what;
    }

    const char* kernel_;
    int n_;
    const int* kinds_;
    const long long* values_;
    const long long* lengths_;
    std::string error_;
};

// A kernel's entry in a lane's table: reads its arguments, then launches (or returns LAUNCH_BAD_SIGNATURE).
using Launcher = int (*)(Args&, dim3 grid, dim3 block, std::string& error);

// The shim's own probe kernels (not kernel sources; the controls of claims N1 and N2), in every lane's table:
//   attnproof_race_probe(int* out, int barrier): thread t writes sh[t], then (when barrier != 0) waits at the block
//     barrier, then reads its neighbour's sh[(t + 1) % n] into out[block * n + t]. Without the barrier every read is
//     a race the checker must report.
//   attnproof_shared_probe(int* out, int floats): declares a static shared array of 12544 floats (49 KiB, over CUDA's
//     48 KiB and Metal's 32 KiB) after one of `floats` (<= 1024) floats: the launch must fail naming the limit.
inline int launch_race_probe(Args& a, dim3 grid, dim3 block, const Limits& limits, std::string& error) {
    dptr<int> out = a.i32_buf(0, "out");
    int barrier = a.i32(1);
    if (!a.ok(2)) return (error = a.error(), LAUNCH_BAD_SIGNATURE);
    return launch("attnproof_race_probe", grid, block, limits, [=] {
        static shared_array<int, 1024> sh{"sh"};
        declare_shared("sh", static_cast<long long>(sizeof(int)) * 1024);
        const int n = static_cast<int>(t_block_dim.x * t_block_dim.y * t_block_dim.z);
        const int t = t_tid;
        const long long b = t_block.x + static_cast<long long>(t_grid_dim.x) * (t_block.y + t_grid_dim.y * t_block.z);
        sh[t] = t + 1;
        if (barrier != 0) barrier_block("__syncthreads", __LINE__);
        out[b * n + t] = sh[(t + 1) % n];
    }, error);
}

inline int launch_shared_probe(Args& a, dim3 grid, dim3 block, const Limits& limits, std::string& error) {
    dptr<int> out = a.i32_buf(0, "out");
    int floats = a.i32(1);
    if (!a.ok(2)) return (error = a.error(), LAUNCH_BAD_SIGNATURE);
    return launch("attnproof_shared_probe", grid, block, limits, [=] {
        static shared_array<float, 1024> small{"small"};
        declare_shared("small", static_cast<long long>(sizeof(float)) * (floats < 1024 ? floats : 1024));
        if (t_tid == 0) out[0] = 1;
        if (floats > 0) {
            static shared_array<float, 12544> big{"big"};
            declare_shared("big", static_cast<long long>(sizeof(float)) * 12544);
            if (t_tid == 0) big[0] = 1.f;
        }
        (void)small;
    }, error);
}

inline void copy_error(const std::string& message, char* err, long long cap) {
    if (err == nullptr || cap <= 0) return;
    long long n = static_cast<long long>(message.size()) < cap - 1 ? static_cast<long long>(message.size()) : cap - 1;
    std::memcpy(err, message.data(), static_cast<size_t>(n));
    err[n] = '\0';
}

// The body of attnproof_emu_launch: one launch at a time per library (the shared arrays are static).
inline int run_launch(const std::map<std::string, Launcher>& table, const char* kernel, const long long* dims,
                      int nargs, const int* kinds, const long long* values, const long long* lengths, char* err,
                      long long errcap) {
    static std::mutex one_launch_at_a_time;
    std::lock_guard<std::mutex> lock(one_launch_at_a_time);
    std::string error;
    auto it = kernel == nullptr ? table.end() : table.find(kernel);
    if (it == table.end()) {
        std::string known;
        for (const auto& entry : table) known += (known.empty() ? "" : ", ") + entry.first;
        copy_error(std::string("no kernel named ") + (kernel ? kernel : "(null)") + " (this library has " + known +
                       ")",
                   err, errcap);
        return LAUNCH_UNKNOWN_KERNEL;
    }
    for (long long d = 0; d < 6; ++d) {
        if (dims[d] < 1 || dims[d] > 0x7fffffffLL) {
            copy_error(std::string("invalid launch configuration for ") + kernel + ": dimension " +
                           std::to_string(d) + " = " + std::to_string(dims[d]),
                       err, errcap);
            return LAUNCH_BAD_CONFIG;
        }
    }
    dim3 grid{static_cast<unsigned>(dims[0]), static_cast<unsigned>(dims[1]), static_cast<unsigned>(dims[2])};
    dim3 block{static_cast<unsigned>(dims[3]), static_cast<unsigned>(dims[4]), static_cast<unsigned>(dims[5])};
    {
        std::lock_guard<std::mutex> f(faults().mu);
        faults().first.clear();
        faults().count = 0;
    }
    Args args(kernel, nargs, kinds, values, lengths);
    int result = it->second(args, grid, block, error);
    if (result == LAUNCH_OK && faults().count > 0) {
        error = faults().first + (faults().count > 1 ? " (and " + std::to_string(faults().count - 1) + " more)" : "");
        result = LAUNCH_FAULT;
    }
    if (result != LAUNCH_OK) copy_error(error, err, errcap);
    return result;
}

inline int race_stats(const char* kernel, long long* out, char* first, long long cap) {
    RaceLog& log = race_log();
    std::lock_guard<std::mutex> lock(log.mu);
    auto it = kernel == nullptr ? log.kernels.end() : log.kernels.find(kernel);
    if (it == log.kernels.end()) {
        out[0] = out[1] = out[2] = 0;
        copy_error("", first, cap);
        return 1;
    }
    out[0] = it->second.races;
    out[1] = it->second.accesses;
    out[2] = it->second.launches;
    copy_error(it->second.first, first, cap);
    return 0;
}

}  // namespace emu
