// msl_launch.h: the kernel binder msl2emu.py's generated table uses. Each kernel parameter comes with what its
// attributes say (read from the AST): [[buffer(n)]] binds the host's buffer at index n (a device/constant pointer:
// a bounds-checked pointer over the buffer's length; a `constant T&`: the bytes of a setBytes binding, which must be
// exactly sizeof(T)), [[threadgroup(n)]] the dynamic threadgroup memory the host sized at index n, a position
// attribute the running thread's position. Parameter types come from the kernel's own signature (C++ deduces
// them from the instantiation), so a table entry is the same for every [[host_name]] instantiation of a template.
//
// The host's argument list (emu_host.h): position n is the binding of [[buffer(n)]] (ARG_F32_BUF / ARG_I32_BUF:
// length in elements of a float / int buffer; ARG_BYTES: length in bytes, any element type; ARG_NULL: nil), then
// any number of ARG_THREADGROUP (value: the [[threadgroup(n)]] index, length: bytes; Metal's
// setThreadgroupMemoryLength:atIndex:).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../emu_host.h"

namespace emu::msl {

constexpr int ARG_THREADGROUP = 6;

// Metal's limits on Apple GPUs: 1024 threads per threadgroup, 32 KiB of threadgroup memory (static and dynamic
// together); threadgroups per grid axis are bounded by the 32-bit grid size.
constexpr Limits kLimits{"Metal", 1024, {4294967295ULL, 4294967295ULL, 4294967295ULL}, 32 * 1024};
constexpr long long kThreadgroupBytes = 32 * 1024;

enum Kind { BUFFER = 0, THREADGROUP = 1, POSITION = 2 };
enum Pos {
    thread_position_in_grid, threadgroup_position_in_grid, thread_position_in_threadgroup,
    thread_index_in_threadgroup, threads_per_threadgroup, dispatch_threads_per_threadgroup, threads_per_grid,
    threadgroups_per_grid, simdgroup_index_in_threadgroup, thread_index_in_simdgroup, threads_per_simdgroup,
    thread_execution_width, simdgroups_per_threadgroup, dispatch_simdgroups_per_threadgroup
};

struct Param {
    int kind;
    long long index;  // buffer or threadgroup index, or the Pos
    const char* name;
};

constexpr unsigned kSimdWidth = 32;

inline uint3 position(long long p) {
    const unsigned n = t_block_dim.x * t_block_dim.y * t_block_dim.z;
    switch (p) {
        case thread_position_in_grid:
            return uint3{t_block.x * t_block_dim.x + t_thread.x, t_block.y * t_block_dim.y + t_thread.y,
                         t_block.z * t_block_dim.z + t_thread.z};
        case threadgroup_position_in_grid: return uint3{t_block.x, t_block.y, t_block.z};
        case thread_position_in_threadgroup: return uint3{t_thread.x, t_thread.y, t_thread.z};
        case thread_index_in_threadgroup: return uint3{static_cast<unsigned>(t_tid), 0, 0};
        case threads_per_threadgroup:
        case dispatch_threads_per_threadgroup: return uint3{t_block_dim.x, t_block_dim.y, t_block_dim.z};
        case threads_per_grid:
            return uint3{t_grid_dim.x * t_block_dim.x, t_grid_dim.y * t_block_dim.y, t_grid_dim.z * t_block_dim.z};
        case threadgroups_per_grid: return uint3{t_grid_dim.x, t_grid_dim.y, t_grid_dim.z};
        case simdgroup_index_in_threadgroup: return uint3{static_cast<unsigned>(t_tid) / kSimdWidth, 0, 0};
        case thread_index_in_simdgroup: return uint3{static_cast<unsigned>(t_tid) % kSimdWidth, 0, 0};
        case threads_per_simdgroup:
        case thread_execution_width: return uint3{kSimdWidth, 0, 0};
        case simdgroups_per_threadgroup:
        case dispatch_simdgroups_per_threadgroup: return uint3{(n + kSimdWidth - 1) / kSimdWidth, 0, 0};
        default: return uint3{};
    }
}

template <class V>
constexpr bool is_position_type = std::is_arithmetic_v<V> || std::is_same_v<V, uint3> || std::is_same_v<V, uint2> ||
                                  std::is_same_v<V, ushort2> || std::is_same_v<V, ushort3>;

template <class V>
V position_as(uint3 v) {
    if constexpr (std::is_same_v<V, uint3>) return v;
    else if constexpr (std::is_same_v<V, uint2>) return uint2{v.x, v.y};
    else if constexpr (std::is_same_v<V, ushort2>) return ushort2{static_cast<unsigned short>(v.x), static_cast<unsigned short>(v.y)};
    else if constexpr (std::is_same_v<V, ushort3>)
        return ushort3{static_cast<unsigned short>(v.x), static_cast<unsigned short>(v.y), static_cast<unsigned short>(v.z)};
    else return static_cast<V>(v.x);
}

template <class T>
struct is_dptr : std::false_type {};
template <class T>
struct is_dptr<dptr<T>> : std::true_type {
    using elem = T;
};

// Dynamic threadgroup memory: static storage of Metal's whole 32 KiB per (element type, parameter name), bounded by
// the host's length, race-recorded and poisoned at every block start as static threadgroup arrays are.
template <class E>
dptr<E> threadgroup_memory(const char* name, long long bytes) {
    using Store = shared_array<E, kThreadgroupBytes / static_cast<long long>(sizeof(E))>;
    static std::map<std::string, std::unique_ptr<Store>> stores;
    std::unique_ptr<Store>& s = stores[name];
    if (!s) s = std::make_unique<Store>(name);
    return dptr<E>(s->data, bytes / static_cast<long long>(sizeof(E)), name, s->tracked());
}

// One parameter's binding: the bound value (a buffer, the bytes of a constant), or the position it reads.
template <class P>
struct Held {
    using V = std::remove_cv_t<std::remove_reference_t<P>>;
    V value{};
    long long pos = -1;
    long long threadgroup_bytes = 0;

    decltype(auto) get() {
        if constexpr (is_position_type<V>) {
            if (pos >= 0) return position_as<V>(position(pos));
            return value;
        } else if constexpr (std::is_reference_v<P>) {
            return static_cast<const V&>(value);
        } else {
            return value;
        }
    }
};

inline std::string where(const char* kname, const Param& p) {
    return std::string(kname) + " parameter " + p.name + " [[" + (p.kind == BUFFER ? "buffer(" : "threadgroup(") +
           std::to_string(p.index) + ")]]";
}

template <class P>
bool bind(Held<P>& h, const Param& p, Args& a, const char* kname, std::string& error) {
    using V = typename Held<P>::V;
    if constexpr (std::is_lvalue_reference_v<P> && !std::is_const_v<std::remove_reference_t<P>>) {
        error = std::string(kname) + " parameter " + p.name + ": a non-const reference parameter is not supported";
        return false;
    }
    if (p.kind == POSITION) {
        if constexpr (is_position_type<V>) {
            h.pos = p.index;
            return true;
        } else {
            error = std::string(kname) + " parameter " + p.name + ": a position attribute on a type that is not a "
                    "scalar or a uint2/uint3/ushort2/ushort3";
            return false;
        }
    }
    if (p.kind == THREADGROUP) {
        if constexpr (is_dptr<V>::value) {
            using E = std::remove_const_t<typename is_dptr<V>::elem>;
            for (int i = 0; i < a.size(); ++i) {
                if (a.kind_at(i) != ARG_THREADGROUP || a.value_at(i) != p.index) continue;
                const long long bytes = a.length_at(i);
                if (bytes < 0 || bytes % 16 != 0 || bytes > kThreadgroupBytes) {
                    error = where(kname, p) + ": threadgroup memory length " + std::to_string(bytes) +
                            " (Metal takes a multiple of 16 bytes, at most " + std::to_string(kThreadgroupBytes) + ")";
                    return false;
                }
                h.value = threadgroup_memory<E>(p.name, bytes);
                h.threadgroup_bytes = bytes;
                return true;
            }
            error = where(kname, p) + ": the host set no threadgroup memory length at index " +
                    std::to_string(p.index);
        } else {
            error = where(kname, p) + ": a [[threadgroup(n)]] parameter must be a threadgroup pointer";
        }
        return false;
    }
    const int at = static_cast<int>(p.index);
    if (at < 0 || at >= a.size() || a.kind_at(at) == ARG_THREADGROUP) {
        error = where(kname, p) + ": the host bound nothing at buffer index " + std::to_string(p.index);
        return false;
    }
    const int kind = a.kind_at(at);
    if constexpr (is_dptr<V>::value) {
        using T = typename is_dptr<V>::elem;
        using E = std::remove_const_t<T>;
        long long n = -1;
        if (kind == ARG_NULL) {
            h.value = V(nullptr);
            return true;
        } else if (kind == ARG_F32_BUF && std::is_same_v<E, float>) {
            n = a.length_at(at);
        } else if (kind == ARG_I32_BUF && (std::is_same_v<E, int> || std::is_same_v<E, unsigned>)) {
            n = a.length_at(at);
        } else if (kind == ARG_BYTES && a.length_at(at) % static_cast<long long>(sizeof(E)) == 0) {
            n = a.length_at(at) / static_cast<long long>(sizeof(E));
        }
        if (n < 0) {
            const std::string want = std::is_same_v<E, float> ? "float buffer"
                                     : (std::is_same_v<E, int> || std::is_same_v<E, unsigned>)
                                         ? "int buffer"
                                         : "buffer of " + std::to_string(sizeof(E)) + "-byte elements";
            error = std::string(kname) + " argument " + std::to_string(at) + ": expected " + want + " for parameter " +
                    p.name + " [[buffer(" + std::to_string(at) + ")]], got argument kind " + std::to_string(kind) +
                    " of length " + std::to_string(a.length_at(at));
            return false;
        }
        h.value = V(reinterpret_cast<T*>(a.value_at(at)), n, p.name);
        return true;
    } else {
        if (kind == ARG_BYTES && a.length_at(at) == static_cast<long long>(sizeof(V))) {
            std::memcpy(static_cast<void*>(&h.value), reinterpret_cast<const void*>(a.value_at(at)), sizeof(V));
            return true;
        }
        if constexpr (std::is_same_v<V, int> || std::is_same_v<V, unsigned> || std::is_same_v<V, float>) {
            if (kind == (std::is_same_v<V, float> ? ARG_F32 : ARG_I32)) {
                const int bits = static_cast<int>(a.value_at(at));
                std::memcpy(&h.value, &bits, sizeof bits);
                return true;
            }
        }
        error = std::string(kname) + " argument " + std::to_string(at) + ": expected " + std::to_string(sizeof(V)) +
                " bytes (setBytes) for parameter " + p.name + " [[buffer(" + std::to_string(at) + ")]], got argument "
                "kind " + std::to_string(kind) + " of length " + std::to_string(a.length_at(at));
        return false;
    }
}

template <class... P, std::size_t N, std::size_t... I>
int run(const char* kname, void (*fn)(P...), const Param (&params)[N], Args& a, dim3 grid, dim3 block,
        std::string& error, std::index_sequence<I...>) {
    std::tuple<Held<P>...> held;
    if (!(bind(std::get<I>(held), params[I], a, kname, error) && ...)) return LAUNCH_BAD_SIGNATURE;
    long long buffers = 0;
    long long threadgroup_bytes = 0;
    for (const Param& p : params) {
        if (p.kind == BUFFER && p.index + 1 > buffers) buffers = p.index + 1;
    }
    ((threadgroup_bytes += std::get<I>(held).threadgroup_bytes), ...);
    long long passed = 0;
    for (int i = 0; i < a.size(); ++i) passed += a.kind_at(i) == ARG_THREADGROUP ? 0 : 1;
    if (passed != buffers) {
        error = std::string(kname) + " takes " + std::to_string(buffers) + " buffer bindings, the host passed " +
                std::to_string(passed);
        return LAUNCH_BAD_SIGNATURE;
    }
    return launch(kname, grid, block, kLimits, [&] {
        if (threadgroup_bytes > 0) declare_shared("[[threadgroup(n)]] memory", threadgroup_bytes);
        fn(std::get<I>(held).get()...);
    }, error);
}

// A generated table entry: kname `fn` (an instantiation, for a [[host_name]] one) with its parameters' attributes.
template <class... P, std::size_t N>
int run(const char* kname, void (*fn)(P...), const Param (&params)[N], Args& a, dim3 grid, dim3 block,
        std::string& error) {
    static_assert(N == sizeof...(P), "one attribute record per kname parameter");
    return run(kname, fn, params, a, grid, block, error, std::index_sequence_for<P...>{});
}

}  // namespace emu::msl
