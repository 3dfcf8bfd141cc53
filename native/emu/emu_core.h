// emu_core.h: what the CUDA and Metal shims share, one header per responsibility. The kernel sources are compiled
// unchanged as host C++20; the shims replace what a GPU would provide:
//   emu_state.h   the launch's position variables (threadIdx & co. per emulated thread), faults, result codes
//   emu_fiber.h   fibers: a register switch (x86-64, arm64) and stacks with guard pages
//   emu_sched.h   a block's scheduler: barriers counted per generation, warp-scoped shuffles/ballots/reductions,
//                 deadlocks named (never a hang)
//   emu_check.h   checked accesses returning real references (bounds), and the race checker (shadow memory)
//   emu_limits.h  the lane's launch limits (threads per block, grid axes, static shared memory)
//   emu_launch.h  one launch: blocks one at a time, each block's threads as fibers
#pragma once

#include "emu_state.h"
#include "emu_fiber.h"
#include "emu_limits.h"
#include "emu_check.h"
#include "emu_sched.h"
#include "emu_launch.h"
