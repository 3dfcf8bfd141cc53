// msl_parse.h: what msl2emu.py gives clang (C++17, -x c++) so that a standard .metal file parses into a complete
// AST: the address spaces (`device`, `constant`, `threadgroup`, `thread`) and `kernel` as annotations the AST carries
// on each declaration; the binding and position attributes as annotations on each kernel parameter (msl2emu.py has
// clang's lexer rename the `threadgroup` of `[[threadgroup(n)]]` to __msl_tgidx, which a macro here can name, and
// reads `[[host_name("...")]]` from the tokens of an explicit instantiation, where C++ allows no attribute); the
// <metal_stdlib> functions a kernel calls; and the constructs the emulator refuses, each declared with an
// `attnproof-refused:` annotation the front end reports at every use. Parse only: nothing here is built; the emulator
// build uses msl_std.h (both share msl_types.h).
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
struct uint3 { uint x, y, z; };

namespace metal {
enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
void threadgroup_barrier(mem_flags);
void simdgroup_barrier(mem_flags);
template <class T> T simd_sum(T);
template <class T> T simd_max(T);
template <class T> T simd_min(T);
template <class T> T simd_shuffle_xor(T, ushort);
template <class T> T simd_shuffle_down(T, ushort);
template <class T> T simd_shuffle_up(T, ushort);
template <class T> T simd_shuffle(T, ushort);
template <class T> T simd_broadcast(T, ushort);
float exp(float);
float fmax(float, float);
float fmin(float, float);
float max(float, float);
float min(float, float);
int max(int, int);
int min(int, int);
}  // namespace metal

#include "msl_types.h"

#define ATTNPROOF_MSL_REFUSED(why) __attribute__((annotate("attnproof-refused:" why)))

namespace metal {
// simdgroup matrices: 8x8 tiles spread over a SIMD group's lanes in an undocumented layout.
template <class T, int R, int C>
struct ATTNPROOF_MSL_REFUSED("simdgroup_matrix (8x8 matrix tiles in an undocumented lane layout)") simdgroup_matrix {};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;
template <class... A> void simdgroup_load(A...) ATTNPROOF_MSL_REFUSED("simdgroup_load (simdgroup_matrix)");
template <class... A> void simdgroup_store(A...) ATTNPROOF_MSL_REFUSED("simdgroup_store (simdgroup_matrix)");
template <class... A> void simdgroup_multiply_accumulate(A...)
    ATTNPROOF_MSL_REFUSED("simdgroup_multiply_accumulate (simdgroup_matrix)");
template <class... A> void simdgroup_multiply(A...) ATTNPROOF_MSL_REFUSED("simdgroup_multiply (simdgroup_matrix)");
// Textures and samplers: no texture memory model.
enum class access { read, write, read_write, sample };
template <class T, access A = access::sample>
struct ATTNPROOF_MSL_REFUSED("texture (no texture memory in the emulator)") texture1d {};
template <class T, access A = access::sample>
struct ATTNPROOF_MSL_REFUSED("texture (no texture memory in the emulator)") texture2d {};
template <class T, access A = access::sample>
struct ATTNPROOF_MSL_REFUSED("texture (no texture memory in the emulator)") texture3d {};
template <class T, access A = access::sample>
struct ATTNPROOF_MSL_REFUSED("texture (no texture memory in the emulator)") texture2d_array {};
struct ATTNPROOF_MSL_REFUSED("sampler (no texture memory in the emulator)") sampler {};
// Image blocks (tile memory of the render pipeline).
template <class T>
struct ATTNPROOF_MSL_REFUSED("imageblock (tile memory the emulator does not model)") imageblock {};
// Atomics: the shim has no Metal atomic type (a block's interleavings are not explored either).
enum memory_order { memory_order_relaxed };
template <class T>
struct ATTNPROOF_MSL_REFUSED("atomic (Metal atomics are not supported by the emulator)") atomic {};
typedef atomic<int> atomic_int;
typedef atomic<uint> atomic_uint;
typedef atomic<float> atomic_float;
template <class... A> int atomic_fetch_add_explicit(A...) ATTNPROOF_MSL_REFUSED("atomic_fetch_add_explicit (Metal atomics)");
template <class... A> int atomic_fetch_max_explicit(A...) ATTNPROOF_MSL_REFUSED("atomic_fetch_max_explicit (Metal atomics)");
template <class... A> int atomic_fetch_min_explicit(A...) ATTNPROOF_MSL_REFUSED("atomic_fetch_min_explicit (Metal atomics)");
template <class... A> int atomic_exchange_explicit(A...) ATTNPROOF_MSL_REFUSED("atomic_exchange_explicit (Metal atomics)");
template <class... A> int atomic_load_explicit(A...) ATTNPROOF_MSL_REFUSED("atomic_load_explicit (Metal atomics)");
template <class... A> void atomic_store_explicit(A...) ATTNPROOF_MSL_REFUSED("atomic_store_explicit (Metal atomics)");
template <class... A> bool atomic_compare_exchange_weak_explicit(A...)
    ATTNPROOF_MSL_REFUSED("atomic_compare_exchange_weak_explicit (Metal atomics)");
}  // namespace metal

// The address spaces and `kernel`: annotations on the declaration they start (a pointer's pointee space).
#define kernel __attribute__((annotate("msl:kernel")))
#define device __attribute__((annotate("msl:as:device")))
#define constant __attribute__((annotate("msl:as:constant"))) const
#define threadgroup __attribute__((annotate("msl:as:threadgroup")))
#define thread __attribute__((annotate("msl:as:thread")))

// The attributes of kernel parameters, as annotations naming the attribute (an index as its spelled expression).
#define ATTNPROOF_MSL_STR(x) #x
#define ATTNPROOF_MSL_POS(name) clang::annotate("msl:pos:" #name)
#define buffer(n) clang::annotate("msl:buffer:" ATTNPROOF_MSL_STR(n))
#define __msl_tgidx(n) clang::annotate("msl:threadgroup:" ATTNPROOF_MSL_STR(n))
#define thread_position_in_grid ATTNPROOF_MSL_POS(thread_position_in_grid)
#define threadgroup_position_in_grid ATTNPROOF_MSL_POS(threadgroup_position_in_grid)
#define thread_position_in_threadgroup ATTNPROOF_MSL_POS(thread_position_in_threadgroup)
#define thread_index_in_threadgroup ATTNPROOF_MSL_POS(thread_index_in_threadgroup)
#define threads_per_threadgroup ATTNPROOF_MSL_POS(threads_per_threadgroup)
#define dispatch_threads_per_threadgroup ATTNPROOF_MSL_POS(dispatch_threads_per_threadgroup)
#define threads_per_grid ATTNPROOF_MSL_POS(threads_per_grid)
#define threadgroups_per_grid ATTNPROOF_MSL_POS(threadgroups_per_grid)
#define simdgroup_index_in_threadgroup ATTNPROOF_MSL_POS(simdgroup_index_in_threadgroup)
#define thread_index_in_simdgroup ATTNPROOF_MSL_POS(thread_index_in_simdgroup)
#define threads_per_simdgroup ATTNPROOF_MSL_POS(threads_per_simdgroup)
#define thread_execution_width ATTNPROOF_MSL_POS(thread_execution_width)
#define simdgroups_per_threadgroup ATTNPROOF_MSL_POS(simdgroups_per_threadgroup)
#define dispatch_simdgroups_per_threadgroup ATTNPROOF_MSL_POS(dispatch_simdgroups_per_threadgroup)
// Attributes the emulator refuses.
#define raster_order_group(n) clang::annotate("attnproof-refused:raster_order_group (fragment ordering the emulator does not model)")
#define texture(n) clang::annotate("attnproof-refused:[[texture(n)]] (no texture memory in the emulator)")
#define stage_in clang::annotate("attnproof-refused:[[stage_in]] (vertex/fragment input)")
#define imageblock_data(...) clang::annotate("attnproof-refused:[[imageblock_data]] (tile memory)")
#define quadgroup_index_in_threadgroup clang::annotate("attnproof-refused:[[quadgroup_index_in_threadgroup]] (quad-group functions are not modelled)")
#define thread_index_in_quadgroup clang::annotate("attnproof-refused:[[thread_index_in_quadgroup]] (quad-group functions are not modelled)")
