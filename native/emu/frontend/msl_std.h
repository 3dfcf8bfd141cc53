// msl_std.h: the prelude of a standard MSL source rewritten by msl2emu.py: everything a header CAN provide, so the
// rewrite changes only threadgroup declarations, address-space pointers and the explicit instantiations. The
// <metal_stdlib> names (barriers, the SIMD-group functions scoped to their SIMD group) come from the metal-emu shim
// (native/emu/metal/metal_stdlib); half, bfloat, as_type, fast::/precise:: math, min/max from msl_types.h; the
// binder of the generated kernel table from msl_launch.h. `device` and `thread` name no storage on the host.
#pragma once

#include "../emu_host.h"  // before the shim: it names variables `kernel`, a keyword macro there
#include "../metal/metal_stdlib"
#include "msl_types.h"
#include "msl_launch.h"

#define device
#define thread
