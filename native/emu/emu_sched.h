// emu_sched.h: one block's threads as fibers and what synchronises them.
//   - Block barriers (__syncthreads, threadgroup_barrier) count generations: a thread waiting at a barrier is released
//     only when every live (not finished) thread of the block waits at the same barrier (same source line, same
//     generation); a thread that returned drops out, as exited threads do on current GPUs. A new race-checker epoch
//     starts after each release.
//   - Warp operations (CUDA __shfl*_sync, __ballot_sync, __syncwarp; Metal simd_*) synchronise the lanes of their own
//     warp only (warp = 32 consecutive linear thread ids; Metal's SIMD group, 32 wide): the lanes a CUDA mask names
//     (those the block has) rendezvous; a Metal SIMD-group function takes the group's lanes that have not returned.
//     The last lane to arrive computes every lane's result and goes on; the others are resumed by the scheduler.
//   - When no thread can run and nothing can be released (threads at different barriers, a barrier some live thread
//     never reaches because it waits at a warp operation, a warp operation a lane of its mask exited before or waits
//     elsewhere for), the launch fails with LAUNCH_DEADLOCK naming the kernel, the block and where each thread
//     waits: never a hang, never a release.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "emu_check.h"
#include "emu_fiber.h"
#include "emu_state.h"

namespace emu {

constexpr int kWarp = 32;

struct BlockSync;

// A lane's part in a warp operation: what it brings and what it gets back.
struct WarpOp {
    const char* name = "";
    unsigned line = 0;
    unsigned mask = 0;        // the lanes that take part (warp-relative bits), after dropping lanes the block lacks
    bool implicit = false;    // Metal: the SIMD group's lanes that have not returned (recomputed while waiting)
    int arg = 0;              // xor lane mask, delta or source lane
    int width = kWarp;
    std::uint64_t value = 0;  // the operand's bits
    std::uint64_t result = 0;
    // Computes the result of every lane of `members` (the same function for every lane of one operation).
    void (*compute)(BlockSync&, int base, unsigned members) = nullptr;
};

enum class Wait : unsigned char { Runnable, Barrier, Warp, Done };

// One emulated thread: a fiber with its own stack, the position variables that differ between a block's threads
// (saved when it switches out, restored when it is resumed) and where it waits.
struct Fiber {
    struct State {
        dim3 thread;
        std::uint64_t epoch = 0;
        int tid = 0;
        long long shared_bytes = 0;
    };
    void* sp = nullptr;
    State state;
    Wait wait = Wait::Runnable;
    const char* barrier_name = "";
    unsigned barrier_line = 0;
    std::uint64_t barrier_gen = 0;
    WarpOp op;
};

// One block's synchronisation: its fibers and the scheduler context they switch back to.
struct BlockSync {
    explicit BlockSync(int n) : threads(n), fibers(static_cast<std::size_t>(n)) {}
    int threads;
    std::vector<Fiber> fibers;
    void* scheduler = nullptr;
    Fiber* current = nullptr;
    void (*body)(const void*) = nullptr;
    const void* body_arg = nullptr;
};

inline thread_local BlockSync* t_sync = nullptr;

inline void load_state(const Fiber::State& s) {
    t_thread = s.thread;
    t_epoch = s.epoch;
    t_tid = s.tid;
    t_shared_bytes = s.shared_bytes;
}

// The running fiber switches back to the scheduler (its touches recorded first) and resumes here when released.
inline void park() {
    Fiber* f = t_sync->current;
    f->state = Fiber::State{t_thread, t_epoch, t_tid, t_shared_bytes};
    attnproof_emu_switch(&f->sp, t_sync->scheduler);
    load_state(f->state);
}

// __syncthreads() / threadgroup_barrier(): waits until every live thread of the block is at this barrier; a new
// race-checker epoch starts after it.
inline void barrier_block(const char* name, unsigned line) {
    flush_touches();
    Fiber* f = t_sync->current;
    f->wait = Wait::Barrier;
    f->barrier_name = name;
    f->barrier_line = line;
    f->barrier_gen = t_epoch & 0xfffff;
    park();
    ++t_epoch;
}

// The lanes of warp `base / 32` the block has.
inline unsigned existing_lanes(const BlockSync& s, int base) {
    const int n = s.threads - base < kWarp ? s.threads - base : kWarp;
    return n >= kWarp ? 0xffffffffu : ((1u << n) - 1u);
}

inline unsigned live_lanes(const BlockSync& s, int base) {
    unsigned m = 0;
    const unsigned have = existing_lanes(s, base);
    for (int l = 0; l < kWarp; ++l) {
        if ((have >> l & 1u) && s.fibers[static_cast<std::size_t>(base + l)].wait != Wait::Done) m |= 1u << l;
    }
    return m;
}

// Whether every lane of `op.mask` waits at the same operation (mask and function); if so, computes every lane's
// result and makes them runnable.
inline bool try_complete(BlockSync& s, int base, const WarpOp& op) {
    for (int l = 0; l < kWarp; ++l) {
        if (!(op.mask >> l & 1u)) continue;
        const Fiber& g = s.fibers[static_cast<std::size_t>(base + l)];
        if (g.wait != Wait::Warp || g.op.mask != op.mask || g.op.compute != op.compute) return false;
    }
    const unsigned members = op.mask;
    op.compute(s, base, members);
    for (int l = 0; l < kWarp; ++l) {
        if (members >> l & 1u) s.fibers[static_cast<std::size_t>(base + l)].wait = Wait::Runnable;
    }
    return true;
}

inline std::string hex_mask(unsigned m) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", m);
    return buf;
}

// A warp operation of the running lane: `mask` names the lanes that take part (CUDA), or implicit (Metal).
inline std::uint64_t warp_op(const char* name, unsigned line, unsigned mask, bool implicit, int arg, int width,
                             std::uint64_t value, void (*compute)(BlockSync&, int, unsigned)) {
    flush_touches();
    BlockSync& s = *t_sync;
    Fiber* f = s.current;
    const int lane = t_tid % kWarp;
    const int base = t_tid - lane;
    if (width < 1 || width > kWarp || (width & (width - 1)) != 0) {
        warp_misuse(std::string(name) + " at line " + std::to_string(line) + " with width " + std::to_string(width) +
                    ": the width must be a power of two from 1 to 32");
        return value;
    }
    unsigned m = implicit ? live_lanes(s, base) : (mask & existing_lanes(s, base));
    if (!(m >> lane & 1u)) {
        warp_misuse(std::string(name) + " at line " + std::to_string(line) + " with mask " + hex_mask(mask) +
                    ": the mask does not name the calling lane " + std::to_string(lane));
        return value;
    }
    f->op = WarpOp{name, line, m, implicit, arg, width, value, 0, compute};
    f->wait = Wait::Warp;
    if (!try_complete(s, base, f->op)) park();
    return f->op.result;
}

// The bits of lane `src` for lane `lane` of an operation, or a misuse when `src` does not take part.
inline std::uint64_t lane_value(BlockSync& s, int base, unsigned members, int lane, int src) {
    const Fiber& me = s.fibers[static_cast<std::size_t>(base + lane)];
    if (src < 0 || src >= kWarp || !(members >> src & 1u)) {
        warp_misuse(std::string(me.op.name) + " at line " + std::to_string(me.op.line) + ": lane " +
                    std::to_string(lane) + " (thread " + std::to_string(base + lane) + ") reads lane " +
                    std::to_string(src) + ", which does not take part (lanes " + hex_mask(members) +
                    "): the device leaves that value undefined");
        return me.op.value;
    }
    return s.fibers[static_cast<std::size_t>(base + src)].op.value;
}

enum class Shfl { Xor, Down, Up, Idx };

// CUDA's source lane within a width segment: a lane past the segment's end (xor, down) or before its start (up)
// gets its own value; an index is taken modulo the width.
template <Shfl K>
inline void compute_shfl(BlockSync& s, int base, unsigned members) {
    for (int l = 0; l < kWarp; ++l) {
        if (!(members >> l & 1u)) continue;
        WarpOp& op = s.fibers[static_cast<std::size_t>(base + l)].op;
        const int start = l / op.width * op.width;
        int src = l;
        if constexpr (K == Shfl::Xor) {
            src = l ^ op.arg;
            if (src >= start + op.width) src = l;
        } else if constexpr (K == Shfl::Down) {
            src = l + op.arg;
            if (src >= start + op.width) src = l;
        } else if constexpr (K == Shfl::Up) {
            src = l - op.arg;
            if (src < start) src = l;
        } else {
            src = start + ((op.arg % op.width) + op.width) % op.width;
        }
        op.result = src == l ? op.value : lane_value(s, base, members, l, src);
    }
}

inline void compute_ballot(BlockSync& s, int base, unsigned members) {
    unsigned bits = 0;
    for (int l = 0; l < kWarp; ++l) {
        if ((members >> l & 1u) && s.fibers[static_cast<std::size_t>(base + l)].op.value != 0) bits |= 1u << l;
    }
    for (int l = 0; l < kWarp; ++l) {
        if (members >> l & 1u) s.fibers[static_cast<std::size_t>(base + l)].op.result = bits;
    }
}

inline void compute_nothing(BlockSync&, int, unsigned) {}

enum class Reduce { Sum, Max, Min };

template <class T>
inline T from_bits(std::uint64_t b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}

template <class T>
inline std::uint64_t to_bits(T v) {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}

template <class T, Reduce R>
inline T combine(T a, T b) {
    if constexpr (R == Reduce::Sum) {
        return a + b;
    } else if constexpr (R == Reduce::Max) {
        if constexpr (std::is_floating_point_v<T>) return std::fmax(a, b);
        else return a > b ? a : b;
    } else {
        if constexpr (std::is_floating_point_v<T>) return std::fmin(a, b);
        else return a < b ? a : b;
    }
}

// simd_sum / simd_max / simd_min over the taking-part lanes, pairwise in lane order (lanes 2i and 2i+1, then pairs
// of pairs): one fixed order, the same bits on every lane.
template <class T, Reduce R>
inline void compute_reduce(BlockSync& s, int base, unsigned members) {
    T v[kWarp];
    bool has[kWarp];
    for (int l = 0; l < kWarp; ++l) {
        has[l] = members >> l & 1u;
        if (has[l]) v[l] = from_bits<T>(s.fibers[static_cast<std::size_t>(base + l)].op.value);
    }
    for (int step = 1; step < kWarp; step *= 2) {
        for (int l = 0; l + step < kWarp; l += 2 * step) {
            if (has[l] && has[l + step]) v[l] = combine<T, R>(v[l], v[l + step]);
            else if (has[l + step]) v[l] = v[l + step], has[l] = true;
        }
    }
    for (int l = 0; l < kWarp; ++l) {
        if (members >> l & 1u) s.fibers[static_cast<std::size_t>(base + l)].op.result = to_bits<T>(v[0]);
    }
}

// The threads of `tids` as ranges: "0-31, 64".
inline std::string thread_ranges(const std::vector<int>& tids) {
    std::string out;
    for (std::size_t i = 0; i < tids.size();) {
        std::size_t j = i;
        while (j + 1 < tids.size() && tids[j + 1] == tids[j] + 1) ++j;
        out += (out.empty() ? "" : ",") + std::to_string(tids[i]) + (j > i ? "-" + std::to_string(tids[j]) : "");
        i = j + 1;
    }
    return out;
}

// Where the block's stuck threads wait, and why the first unreleasable warp operation cannot complete.
inline std::string describe_deadlock(const BlockSync& s) {
    std::map<std::string, std::vector<int>> where;
    std::string why;
    for (int t = 0; t < s.threads; ++t) {
        const Fiber& f = s.fibers[static_cast<std::size_t>(t)];
        if (f.wait == Wait::Barrier) {
            where[std::string(f.barrier_name) + " at line " + std::to_string(f.barrier_line) + " (generation " +
                  std::to_string(f.barrier_gen) + ")"]
                .push_back(t);
        } else if (f.wait == Wait::Warp) {
            where[std::string(f.op.name) + " at line " + std::to_string(f.op.line) + " (warp " +
                  std::to_string(t / kWarp) + ", lanes " + hex_mask(f.op.mask) + ")"]
                .push_back(t);
            if (!why.empty()) continue;
            const int base = t - t % kWarp;
            for (int l = 0; l < kWarp && why.empty(); ++l) {
                if (!(f.op.mask >> l & 1u)) continue;
                const Fiber& g = s.fibers[static_cast<std::size_t>(base + l)];
                const std::string lane = "lane " + std::to_string(l) + " (thread " + std::to_string(base + l) + ")";
                if (g.wait == Wait::Done) {
                    why = lane + " of its mask has exited";
                } else if (g.wait == Wait::Barrier) {
                    why = lane + " of its mask waits at " + g.barrier_name + " at line " +
                          std::to_string(g.barrier_line);
                } else if (g.op.mask != f.op.mask || g.op.compute != f.op.compute) {
                    why = lane + " of its mask waits at " + g.op.name + " at line " + std::to_string(g.op.line) +
                          " with lanes " + hex_mask(g.op.mask);
                }
            }
            if (!why.empty()) why = "; " + std::string(f.op.name) + " at line " + std::to_string(f.op.line) +
                                    " of thread " + std::to_string(t) + " can never complete: " + why;
        }
    }
    std::string text;
    int done = 0;
    for (const Fiber& f : s.fibers) done += f.wait == Wait::Done ? 1 : 0;
    for (const auto& [place, tids] : where) {
        text += (text.empty() ? "" : "; ") + std::string("threads ") + thread_ranges(tids) + " wait at " + place;
    }
    return std::string("deadlock in kernel ") + t_kernel + ", block " + block_name() + ": " + text +
           (done > 0 ? "; " + std::to_string(done) + " threads have exited" : "") + why;
}

// Stuck: release Metal SIMD-group operations whose lanes returned meanwhile, else the barrier every live thread
// waits at. Returns false when nothing can be released (a deadlock).
inline bool release_stuck(BlockSync& s) {
    bool released = false;
    for (int base = 0; base < s.threads; base += kWarp) {
        const unsigned live = live_lanes(s, base);
        for (int l = 0; l < kWarp; ++l) {
            Fiber& f = s.fibers[static_cast<std::size_t>(base + l)];
            if ((live >> l & 1u) && f.wait == Wait::Warp && f.op.implicit) f.op.mask = live;
        }
        for (int l = 0; l < kWarp; ++l) {
            Fiber& f = s.fibers[static_cast<std::size_t>(base + l)];
            if ((live >> l & 1u) && f.wait == Wait::Warp && try_complete(s, base, f.op)) released = true;
        }
    }
    if (released) return true;
    const Fiber* first = nullptr;
    for (const Fiber& f : s.fibers) {
        if (f.wait == Wait::Done) continue;
        if (f.wait != Wait::Barrier) return false;
        if (first == nullptr) {
            first = &f;
        } else if (f.barrier_line != first->barrier_line || f.barrier_gen != first->barrier_gen) {
            return false;
        }
    }
    if (first == nullptr) return false;
    for (Fiber& f : s.fibers) {
        if (f.wait == Wait::Barrier) f.wait = Wait::Runnable;
    }
    return true;
}

// Runs one block to its end: LAUNCH_OK, LAUNCH_DEADLOCK (message in `error`), or the first warp misuse's code.
inline int run_block(BlockSync& s, std::string& error) {
    int live = s.threads;
    for (;;) {
        bool ran = false;
        for (Fiber& f : s.fibers) {
            if (f.wait != Wait::Runnable) continue;
            s.current = &f;
            attnproof_emu_switch(&s.scheduler, f.sp);
            ran = true;
            if (f.wait == Wait::Done) --live;
            if (sync_error().code != LAUNCH_OK) {
                error = sync_error().first;
                return sync_error().code;
            }
        }
        if (ran) continue;
        if (live == 0) return LAUNCH_OK;
        if (release_stuck(s)) continue;
        error = describe_deadlock(s) +
                ". A barrier releases when every live thread of the block waits at it; a warp operation when every "
                "lane of its mask does";
        return LAUNCH_DEADLOCK;
    }
}

}  // namespace emu
