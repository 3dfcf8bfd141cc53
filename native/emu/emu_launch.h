// emu_launch.h: one launch: the shape checked against the lane's limits, then the grid's blocks run one at a time on
// the calling thread, each block's threads as fibers (emu_sched.h) on stacks reused between launches (emu_fiber.h).
#pragma once

#include <exception>
#include <mutex>
#include <string>

#include "emu_check.h"
#include "emu_fiber.h"
#include "emu_limits.h"
#include "emu_sched.h"
#include "emu_state.h"

namespace emu {

// Runs body() once per (block, thread) of the grid. Returns LAUNCH_OK, LAUNCH_BAD_CONFIG, LAUNCH_DEADLOCK,
// LAUNCH_WARP_MISUSE, LAUNCH_RACE (message in `error`) or LAUNCH_HOST_EXCEPTION; faults are the caller's to read.
template <class Body>
int launch(const char* kernel, dim3 grid, dim3 block, const Limits& limits, const Body& body, std::string& error) {
    if (int shape = check_launch_shape(kernel, grid, block, limits, error); shape != LAUNCH_OK) return shape;
    const int threads = static_cast<int>(static_cast<long long>(block.x) * block.y * block.z);
    {
        std::lock_guard<std::mutex> lock(limit_violation().mu);
        limit_violation().first.clear();
    }
    {
        std::lock_guard<std::mutex> lock(race_log().mu);
        race_log().launch_races.store(0);
        race_log().launch_first.clear();
    }
    sync_error() = SyncError{};
    clear_shared_records();
    StackPool& stacks = stack_pool();
    for (int t = 0; t < threads; ++t) {
        if (stacks.stack(static_cast<std::size_t>(t)) == nullptr) {
            error = std::string("could not map ") + std::to_string(threads) + " fiber stacks of " +
                    std::to_string(StackPool::kStackBytes / 1024) + " KiB for " + kernel;
            return LAUNCH_HOST_EXCEPTION;
        }
    }
    BlockSync sync(threads);
    sync.body = [](const void* b) { (*static_cast<const Body*>(b))(); };
    sync.body_arg = &body;
    // The launch's constant position variables live in the launching thread's thread-locals, shared by its fibers;
    // the calling thread's own values come back after the launch (a launch may run inside another's host code).
    BlockSync* const outer_sync = t_sync;
    const Fiber::State outer_state{t_thread, t_epoch, t_tid, t_shared_bytes};
    const long long outer_accesses = t_shared_accesses;
    t_sync = &sync;
    t_kernel = kernel;
    t_block_dim = block;
    t_grid_dim = grid;
    t_shared_accesses = 0;
    t_max_shared_bytes = limits.max_shared_bytes;
    t_lane_api = limits.api;
    // A fiber's entry: run the body for its (block, thread), record its last touches, then switch back for good.
    auto entry = +[]() {
        BlockSync& s = *t_sync;
        Fiber* f = s.current;
        load_state(f->state);
        try {
            s.body(s.body_arg);
        } catch (const std::exception& e) {
            fault(std::string("host exception ") + e.what());
        } catch (...) {
            fault("unknown host exception");
        }
        flush_touches();
        f->wait = Wait::Done;
        attnproof_emu_switch(&f->sp, s.scheduler);
        std::abort();  // a finished fiber is never resumed
    };
    int result = LAUNCH_OK;
    std::uint64_t serial = 0;
    for (unsigned bz = 0; bz < grid.z && result == LAUNCH_OK; ++bz) {
        for (unsigned by = 0; by < grid.y && result == LAUNCH_OK; ++by) {
            for (unsigned bx = 0; bx < grid.x && result == LAUNCH_OK; ++bx) {
                t_block = dim3{bx, by, bz};
                poison_shared();
                const std::uint64_t epoch = (++serial) << 20;
                for (int tid = 0; tid < threads; ++tid) {
                    Fiber& f = sync.fibers[static_cast<std::size_t>(tid)];
                    f.wait = Wait::Runnable;
                    f.state = Fiber::State{dim3{static_cast<unsigned>(tid % block.x),
                                                static_cast<unsigned>((tid / block.x) % block.y),
                                                static_cast<unsigned>(tid / (block.x * block.y))},
                                           epoch, tid, 0};
                    prepare_fiber(f.sp, stacks.stack(static_cast<std::size_t>(tid)), entry);
                }
                result = run_block(sync, error);
                // A block abandoned mid-way leaves touches of the fiber that stopped it: not this launch's records.
                touched().clear();
            }
        }
    }
    const long long accesses = t_shared_accesses;
    t_sync = outer_sync;
    load_state(outer_state);
    t_shared_accesses = outer_accesses;
    if (result != LAUNCH_OK) return result;
    {
        std::lock_guard<std::mutex> lock(limit_violation().mu);
        if (!limit_violation().first.empty()) {
            error = limit_violation().first;
            return LAUNCH_BAD_CONFIG;
        }
    }
    RaceLog& log = race_log();
    std::lock_guard<std::mutex> lock(log.mu);
    RaceLog::Kernel& k = log.kernels[kernel];
    k.launches += 1;
    k.accesses += accesses;
    const long long races = log.launch_races.load();
    k.races += races;
    if (races > 0) {
        if (k.first.empty()) k.first = log.launch_first;
        error = log.launch_first + (races > 1 ? " (and " + std::to_string(races - 1) + " more in this launch)" : "");
        return LAUNCH_RACE;
    }
    return LAUNCH_OK;
}

}  // namespace emu
