// msl_types.h: the value types and math of the Metal Shading Language that plain C++ can stand in for, shared by the
// MSL front end's parse (msl_parse.h: clang, C++17) and the emulator build (msl_std.h: host C++20 over the metal-emu
// shim, native/emu/metal/metal_stdlib). `half` and `bfloat` convert from float with round-to-nearest-even; an
// operation on two halves (two bfloats) is done in float and rounded back, which is the correctly rounded result, as
// MSL computes it in that type; a half mixed with a float is promoted to float, as MSL promotes it. fast:: and
// precise:: math are the host's correctly rounded functions: the device's fast-math approximations are not modelled
// (native/README.md).
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda_types.h"  // attnproof_fp: the round-to-nearest-even conversions

namespace attnproof_msl {

// One storage type per 16-bit float format; arithmetic on two of the same format rounds back to it.
template <int Format>  // 0: IEEE binary16 (half), 1: bfloat16 (bfloat)
struct f16 {
    std::uint16_t bits;
    f16() = default;
    static std::uint16_t round(float f) {
        return Format == 0 ? attnproof_fp::float_to_half_rn(f) : attnproof_fp::float_to_bf16_rn(f);
    }
    f16(float f) : bits(round(f)) {}
    f16(double d) : bits(round(static_cast<float>(d))) {}
    f16(int i) : bits(round(static_cast<float>(i))) {}
    f16(unsigned i) : bits(round(static_cast<float>(i))) {}
    f16(long i) : bits(round(static_cast<float>(i))) {}
    operator float() const {
        return Format == 0 ? attnproof_fp::half_to_float(bits) : attnproof_fp::bf16_to_float(bits);
    }
    f16& operator+=(f16 o) { return *this = f16(float(*this) + float(o)); }
    f16& operator-=(f16 o) { return *this = f16(float(*this) - float(o)); }
    f16& operator*=(f16 o) { return *this = f16(float(*this) * float(o)); }
    f16& operator/=(f16 o) { return *this = f16(float(*this) / float(o)); }
    f16 operator-() const { return f16(-float(*this)); }
};

// Templates, so that a half mixed with a float takes the built-in float operator (no conversion to half).
template <class A, class B>
using same_f16 = std::enable_if_t<std::is_same_v<A, B> && (std::is_same_v<A, f16<0>> || std::is_same_v<A, f16<1>>), A>;
template <class A, class B> same_f16<A, B> operator+(A a, B b) { return A(float(a) + float(b)); }
template <class A, class B> same_f16<A, B> operator-(A a, B b) { return A(float(a) - float(b)); }
template <class A, class B> same_f16<A, B> operator*(A a, B b) { return A(float(a) * float(b)); }
template <class A, class B> same_f16<A, B> operator/(A a, B b) { return A(float(a) / float(b)); }

}  // namespace attnproof_msl

typedef attnproof_msl::f16<0> half;
typedef attnproof_msl::f16<1> bfloat;

struct uint2 { unsigned x, y; };
struct ushort2 { unsigned short x, y; };
struct ushort3 { unsigned short x, y, z; };

namespace metal {

// as_type<T>(x): the bits of x as a T of the same size.
template <class T, class U>
inline T as_type(U x) {
    static_assert(sizeof(T) == sizeof(U), "as_type needs types of the same size");
    T out;
    std::memcpy(&out, &x, sizeof out);
    return out;
}

// Unqualified min/max/clamp of any arithmetic type (the float and int overloads come from the shim or the parse
// prelude; a template loses to an exact non-template match).
template <class T> inline T max(T a, T b) { return a > b ? a : b; }
template <class T> inline T min(T a, T b) { return a < b ? a : b; }
template <class T> inline T clamp(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }
inline half max(half a, half b) { return half(std::fmax(float(a), float(b))); }
inline half min(half a, half b) { return half(std::fmin(float(a), float(b))); }
inline half exp(half x) { return half(std::exp(float(x))); }
inline float exp2(float x) { return std::exp2(x); }
inline float log(float x) { return std::log(x); }
inline float sqrt(float x) { return std::sqrt(x); }
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline float abs(float x) { return std::fabs(x); }
inline float fabs(float x) { return std::fabs(x); }
inline bool isinf(float x) { return std::isinf(x); }
inline bool isnan(float x) { return std::isnan(x); }
inline bool isfinite(float x) { return std::isfinite(x); }
template <class T> inline T select(T a, T b, bool c) { return c ? b : a; }

// metal::fast and metal::precise: the same correctly rounded functions (no fast-math approximation model).
#define ATTNPROOF_MSL_MATH                                                   \
    inline float exp(float x) { return std::exp(x); }                        \
    inline float exp2(float x) { return std::exp2(x); }                      \
    inline float log(float x) { return std::log(x); }                        \
    inline float sqrt(float x) { return std::sqrt(x); }                      \
    inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }              \
    inline float max(float a, float b) { return std::fmax(a, b); }           \
    inline float min(float a, float b) { return std::fmin(a, b); }           \
    inline float fmax(float a, float b) { return std::fmax(a, b); }          \
    inline float fmin(float a, float b) { return std::fmin(a, b); }          \
    inline float divide(float a, float b) { return a / b; }
namespace fast { ATTNPROOF_MSL_MATH }
namespace precise { ATTNPROOF_MSL_MATH }
#undef ATTNPROOF_MSL_MATH

}  // namespace metal

#ifndef MAXHALF
#define MAXHALF 65504.0f
#endif
