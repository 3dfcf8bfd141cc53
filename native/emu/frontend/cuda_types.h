// cuda_types.h: the value types and device math a standard CUDA source uses, as plain C++ shared by the front end's
// parse (cuda_parse.h: clang's CUDA mode, where ATTNPROOF_HD is __host__ __device__) and the emulator build
// (cuda_std.h: host C++20, where it is empty). __half and __nv_bfloat16 convert from float with round-to-nearest-even
// (cuda_fp16.h's __float2half / __float2bfloat16 and the converting constructors do the same); their arithmetic is
// done in float and rounded back, as the device's half arithmetic gives the correctly rounded result.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef ATTNPROOF_HD
#define ATTNPROOF_HD
#endif

namespace attnproof_fp {
ATTNPROOF_HD inline std::uint32_t f2u(float f) { std::uint32_t u; std::memcpy(&u, &f, 4); return u; }
ATTNPROOF_HD inline float u2f(std::uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// float -> IEEE binary16, round to nearest even (NaN stays NaN, overflow gives infinity).
ATTNPROOF_HD inline std::uint16_t float_to_half_rn(float f) {
    const std::uint32_t u = f2u(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
    if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: rounds to infinity
    if (a < 0x38800000u) {                                                   // below 2^-14: subnormal half or zero
        // value * 2^24 rounded to an integer, half-even: the subnormal's mantissa.
        const float scaled = u2f(a) * 16777216.0f;  // exact: a power-of-two scale of a float in range
        const float r = std::nearbyint(scaled);     // default rounding mode: to nearest even
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(r));
    }
    const std::uint32_t mant = a & 0x7fffffu;
    const std::uint32_t exp = (a >> 23) - 127 + 15;
    std::uint32_t h = (exp << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carries into the exponent correctly
    return static_cast<std::uint16_t>(sign | h);
}

ATTNPROOF_HD inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24, exact
        return sign ? -v : v;
    }
    if (exp == 31) return u2f(sign | 0x7f800000u | (mant << 13));
    return u2f(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// float -> bfloat16, round to nearest even (NaN kept quiet).
ATTNPROOF_HD inline std::uint16_t float_to_bf16_rn(float f) {
    const std::uint32_t u = f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

ATTNPROOF_HD inline float bf16_to_float(std::uint16_t b) { return u2f(static_cast<std::uint32_t>(b) << 16); }
}  // namespace attnproof_fp

struct __half {
    std::uint16_t __x;
    __half() = default;
    ATTNPROOF_HD __half(float f) : __x(attnproof_fp::float_to_half_rn(f)) {}
    ATTNPROOF_HD __half(double d) : __half(static_cast<float>(d)) {}
    ATTNPROOF_HD __half(int i) : __half(static_cast<float>(i)) {}
    ATTNPROOF_HD operator float() const { return attnproof_fp::half_to_float(__x); }
};

struct __nv_bfloat16 {
    std::uint16_t __x;
    __nv_bfloat16() = default;
    ATTNPROOF_HD __nv_bfloat16(float f) : __x(attnproof_fp::float_to_bf16_rn(f)) {}
    ATTNPROOF_HD __nv_bfloat16(double d) : __nv_bfloat16(static_cast<float>(d)) {}
    ATTNPROOF_HD __nv_bfloat16(int i) : __nv_bfloat16(static_cast<float>(i)) {}
    ATTNPROOF_HD operator float() const { return attnproof_fp::bf16_to_float(__x); }
};

struct __half2 {
    __half x, y;
};

ATTNPROOF_HD inline __half __float2half(float f) { return __half(f); }
ATTNPROOF_HD inline __half __float2half_rn(float f) { return __half(f); }
ATTNPROOF_HD inline float __half2float(__half h) { return static_cast<float>(h); }
ATTNPROOF_HD inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
ATTNPROOF_HD inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
ATTNPROOF_HD inline float __bfloat162float(__nv_bfloat16 b) { return static_cast<float>(b); }
ATTNPROOF_HD inline __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }

struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };
ATTNPROOF_HD inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
ATTNPROOF_HD inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
ATTNPROOF_HD inline float2 make_float2(float x, float y) { return float2{x, y}; }

// Device math: the host's correctly rounded functions (the device's approximate intrinsics such as __expf give
// other bits; see native/README).
// glibc declares __expf / __logf itself: macros, so neither declaration is redefined.
#define __expf(x) expf(x)
#define __logf(x) logf(x)
ATTNPROOF_HD inline float rsqrtf(float x) { return 1.0f / ::sqrtf(x); }
ATTNPROOF_HD inline float __fdividef(float a, float b) { return a / b; }
ATTNPROOF_HD inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
