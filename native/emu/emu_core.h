// emu_core.h: what the CUDA and Metal shims share. The kernel sources are compiled unchanged as host C++20. The
// shims replace what a GPU would provide:
//   - a launch runs the grid's blocks (threadgroups) one at a time; the block's threads are std::threads that
//     share a real std::barrier, so __shared__/threadgroup memory and barriers behave as on a device;
//   - a thread that returns early drops out of the block's barrier (what exited threads do on current GPUs);
//   - shuffles go through an exchange buffer between two barriers, so every thread of the block must reach them;
//   - every device pointer and shared array is a bounds-checked accessor: an out-of-bounds index records a fault
//     naming the buffer, the index, its length, the kernel, the block and the thread, and reads or writes a
//     scratch cell instead, so the launch finishes and the host reports the fault (never a crash, never UB);
//   - the race checker (claim N1): every shared/threadgroup element keeps, per barrier interval ("epoch") of its
//     block, its last writer and its reader(s); a write and a read or write of the same element by two threads of
//     one block in one epoch (no barrier between them) is a race, reported with the kernel, the array, the element,
//     both threads and the block. Shuffles do not end an epoch (they do not order shared memory on a GPU);
//   - launch limits: threads per block, grid extents and the static shared memory a block declares, each checked
//     against the lane's limit (CUDA: 1024 threads, grid.y/z <= 65535, 48 KiB static shared) with an error naming it.
#pragma once

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace emu {

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

// The launch's position variables, one copy per emulated thread.
inline thread_local dim3 t_thread;
inline thread_local dim3 t_block;
inline thread_local dim3 t_block_dim;
inline thread_local dim3 t_grid_dim;
inline thread_local const char* t_kernel = "?";
// Race checker: the barrier interval this thread is in ((block serial + 1) << 20 | barriers passed in the block), its
// linear thread id, the shared accesses it made (summed per launch) and the static shared bytes its block declared.
inline thread_local std::uint64_t t_epoch = 0;
inline thread_local int t_tid = 0;
inline thread_local long long t_shared_accesses = 0;
inline thread_local long long t_shared_bytes = 0;

// The first fault of a launch (later ones are counted).
struct Faults {
    std::mutex mu;
    std::string first;
    long long count = 0;
};

inline Faults& faults() {
    static Faults f;
    return f;
}

inline void fault(const std::string& what) {
    Faults& f = faults();
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.count++ == 0) {
        f.first = what + " in kernel " + t_kernel + ", block (" + std::to_string(t_block.x) + "," +
                  std::to_string(t_block.y) + "," + std::to_string(t_block.z) + ") thread (" +
                  std::to_string(t_thread.x) + "," + std::to_string(t_thread.y) + "," + std::to_string(t_thread.z) +
                  ")";
    }
}

// What the race checker found, per kernel, since the library was loaded (read by the host through
// attnproof_emu_races), and what the current launch found (it fails the launch with LAUNCH_RACE).
struct RaceLog {
    std::mutex mu;
    struct Kernel {
        long long races = 0;
        long long accesses = 0;
        long long launches = 0;
        std::string first;
    };
    std::map<std::string, Kernel> kernels;
    std::atomic<long long> launch_races{0};
    std::string launch_first;
};

inline RaceLog& race_log() {
    static RaceLog log;
    return log;
}

inline std::string block_name() {
    return "(" + std::to_string(t_block.x) + "," + std::to_string(t_block.y) + "," + std::to_string(t_block.z) + ")";
}

inline void report_race(const char* array, long long element, const std::string& earlier, int other,
                        const std::string& now) {
    RaceLog& log = race_log();
    if (log.launch_races.fetch_add(1) != 0) return;  // counted; only the first is worded
    std::lock_guard<std::mutex> lock(log.mu);
    {
        log.launch_first = std::string("shared-memory race in kernel ") + t_kernel + ", block " + block_name() +
                           ": " + array + "[" + std::to_string(element) + "] " + earlier +
                           (other < 0 ? std::string(" by several threads") : " by thread " + std::to_string(other)) +
                           " and " + now + " by thread " + std::to_string(t_tid) +
                           " with no barrier between them (barrier interval " +
                           std::to_string(t_epoch & 0xfffff) + " of the block)";
    }
}

// A launch limit the launch broke (the first one), set by a declaration inside the kernel (static shared memory).
struct LimitViolation {
    std::mutex mu;
    std::string first;
};

inline LimitViolation& limit_violation() {
    static LimitViolation v;
    return v;
}

inline thread_local long long t_max_shared_bytes = 0;
inline thread_local const char* t_lane_api = "";

// SHARED_ARRAY / TG_ARRAY: a block declares `bytes` of static shared memory; over the lane's limit, the launch fails.
inline void declare_shared(const char* name, long long bytes) {
    t_shared_bytes += bytes;
    if (t_max_shared_bytes > 0 && t_shared_bytes > t_max_shared_bytes) {
        LimitViolation& v = limit_violation();
        std::lock_guard<std::mutex> lock(v.mu);
        if (v.first.empty()) {
            v.first = std::string("invalid launch configuration for ") + t_kernel + ": its static shared memory is " +
                      std::to_string(t_shared_bytes) + " bytes (with " + name + "), over " + t_lane_api +
                      "'s limit of " + std::to_string(t_max_shared_bytes) + " bytes (" +
                      std::to_string(t_max_shared_bytes / 1024) + " KiB) of static shared memory per block";
        }
    }
}

// The race checker's per-element records: the last write (epoch << 11 | thread + 1) and the reads of the current
// epoch (epoch << 11 | thread + 1, or kMulti when several threads read). Cleared before every launch.
constexpr std::uint64_t kTidBits = 11;
constexpr std::uint64_t kTidMask = (1u << kTidBits) - 1;
constexpr std::uint64_t kMulti = kTidMask;

struct SharedTrack {
    std::atomic<std::uint64_t>* w = nullptr;
    std::atomic<std::uint64_t>* r = nullptr;
    long long n = 0;
    const char* name = "shared";
};

inline std::vector<SharedTrack*>& shared_registry() {
    static std::vector<SharedTrack*> all;
    return all;
}

inline std::mutex& shared_registry_mu() {
    static std::mutex mu;
    return mu;
}

inline void clear_shared_records() {
    std::lock_guard<std::mutex> lock(shared_registry_mu());
    for (SharedTrack* t : shared_registry()) {
        for (long long i = 0; i < t->n; ++i) {
            t->w[i].store(0, std::memory_order_relaxed);
            t->r[i].store(0, std::memory_order_relaxed);
        }
    }
}

// Store-then-check on both sides (seq_cst): of a concurrent write and read in one epoch, at least one sees the other.
inline void on_shared_write(const SharedTrack& t, long long i) {
    ++t_shared_accesses;
    const std::uint64_t me = (t_epoch << kTidBits) | static_cast<std::uint64_t>(t_tid + 1);
    const std::uint64_t old = t.w[i].exchange(me);
    if ((old >> kTidBits) == t_epoch && (old & kTidMask) != static_cast<std::uint64_t>(t_tid + 1)) {
        report_race(t.name, i, "written", static_cast<int>((old & kTidMask) - 1), "written");
    }
    const std::uint64_t rd = t.r[i].load();
    if ((rd >> kTidBits) == t_epoch && (rd & kTidMask) != static_cast<std::uint64_t>(t_tid + 1)) {
        if ((rd & kTidMask) == kMulti) {
            report_race(t.name, i, "read", -1, "written");
        } else {
            report_race(t.name, i, "read", static_cast<int>((rd & kTidMask) - 1), "written");
        }
    }
}

inline void on_shared_read(const SharedTrack& t, long long i) {
    ++t_shared_accesses;
    const std::uint64_t mine = static_cast<std::uint64_t>(t_tid + 1);
    std::uint64_t cur = t.r[i].load();
    for (;;) {
        std::uint64_t next;
        if ((cur >> kTidBits) == t_epoch) {
            if ((cur & kTidMask) == mine || (cur & kTidMask) == kMulti) break;
            next = (t_epoch << kTidBits) | kMulti;
        } else {
            next = (t_epoch << kTidBits) | mine;
        }
        if (t.r[i].compare_exchange_weak(cur, next)) break;
    }
    const std::uint64_t w = t.w[i].load();
    if ((w >> kTidBits) == t_epoch && (w & kTidMask) != mine) {
        report_race(t.name, i, "written", static_cast<int>((w & kTidMask) - 1), "read");
    }
}

// A reference to one element of a non-const buffer: reads and writes of a shared element go through the race
// checker; device elements pass straight through.
template <class T>
class elem_ref {
    T* p_;
    const SharedTrack* track_;
    long long i_;

public:
    elem_ref(T* p, const SharedTrack* track, long long i) : p_(p), track_(track), i_(i) {}
    operator T() const {
        if (track_ != nullptr) on_shared_read(*track_, i_);
        return *p_;
    }
    elem_ref& operator=(T v) {
        if (track_ != nullptr) on_shared_write(*track_, i_);
        *p_ = v;
        return *this;
    }
    elem_ref& operator=(const elem_ref& o) { return *this = static_cast<T>(o); }
    elem_ref& operator+=(T v) { return *this = static_cast<T>(*this) + v; }
    elem_ref& operator-=(T v) { return *this = static_cast<T>(*this) - v; }
    elem_ref& operator*=(T v) { return *this = static_cast<T>(*this) * v; }
    elem_ref& operator/=(T v) { return *this = static_cast<T>(*this) / v; }
};

// A cell an out-of-bounds access lands on instead of foreign memory.
template <class T>
inline T& scratch() {
    thread_local std::remove_const_t<T> cell{};
    return cell;
}

// A bounds-checked device pointer: base, length (elements), offset; pointer arithmetic moves the offset only.
template <class T>
class dptr {
    template <class U>
    friend class dptr;
    T* base_ = nullptr;
    long long len_ = 0;
    long long off_ = 0;
    const char* name_ = "null";
    const SharedTrack* track_ = nullptr;  // set for shared / threadgroup memory: the race checker's records

    T& at_checked(long long at) const {
        if (base_ == nullptr || at < 0 || at >= len_) {
            fault(std::string("out-of-bounds access ") + name_ + "[" + std::to_string(at) + "] (length " +
                  std::to_string(len_) + ")");
            return scratch<T>();
        }
        return base_[at];
    }

public:
    // Non-const elements come back as elem_ref (reads and writes of shared memory are checked for races); const
    // elements (kernel inputs) as plain references.
    using reference = std::conditional_t<std::is_const_v<T>, T&, elem_ref<T>>;

    dptr() = default;
    dptr(std::nullptr_t) {}
    dptr(T* base, long long len, const char* name, const SharedTrack* track = nullptr)
        : base_(base), len_(base ? len : 0), name_(name), track_(track) {}
    template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
    dptr(const dptr<U>& o) : base_(o.base_), len_(o.len_), off_(o.off_), name_(o.name_), track_(o.track_) {}

    reference operator[](long long i) const {
        long long at = off_ + i;
        if constexpr (std::is_const_v<T>) {
            return at_checked(at);
        } else {
            bool in = base_ != nullptr && at >= 0 && at < len_;
            return elem_ref<T>(&at_checked(at), in ? track_ : nullptr, at);
        }
    }
    reference operator*() const { return (*this)[0]; }
    dptr operator+(long long d) const {
        dptr r = *this;
        r.off_ += d;
        return r;
    }
    dptr operator-(long long d) const { return *this + (-d); }
    bool operator==(std::nullptr_t) const { return base_ == nullptr; }
    explicit operator bool() const { return base_ != nullptr; }
};

// Block-shared storage (__shared__ / threadgroup) with checked indexing; converts to a checked pointer.
// Its elements carry the race checker's records (registered once, cleared before every launch).
template <class T, long long N>
struct shared_array {
    T data[N];
    std::atomic<std::uint64_t> w[N];
    std::atomic<std::uint64_t> r[N];
    SharedTrack track;
    explicit shared_array(const char* name) : data{}, w{}, r{} {
        track.w = w;
        track.r = r;
        track.n = N;
        track.name = name;
        std::lock_guard<std::mutex> lock(shared_registry_mu());
        shared_registry().push_back(&track);
    }
#ifdef ATTNPROOF_NO_RACECHECK
    // A build without the race checker (to measure its cost): shared elements are not tracked.
    const SharedTrack* tracked() { return nullptr; }
#else
    const SharedTrack* tracked() { return &track; }
#endif
    typename dptr<T>::reference operator[](long long i) { return dptr<T>(data, N, track.name, tracked())[i]; }
    operator dptr<T>() { return dptr<T>(data, N, track.name, tracked()); }
    operator dptr<const T>() { return dptr<const T>(data, N, track.name, tracked()); }
};

// One launch's block-level synchronisation: the block barrier (re-made for every block) and the shuffle buffer.
struct BlockSync {
    explicit BlockSync(int n) : threads(n), exchange(n) {}
    int threads;
    std::unique_ptr<std::barrier<>> block;
    std::vector<std::uint64_t> exchange;
};

inline thread_local BlockSync* t_sync = nullptr;

inline int linear_thread() {
    return static_cast<int>(t_thread.x + t_block_dim.x * (t_thread.y + t_block_dim.y * t_thread.z));
}

// Every thread of the block still running arrives and waits (the shuffles' exchange: no new epoch).
inline void sync_block() { t_sync->block->arrive_and_wait(); }

// __syncthreads() / threadgroup_barrier(): the barrier, after which a new race-checker epoch starts.
inline void barrier_block() {
    t_sync->block->arrive_and_wait();
    ++t_epoch;
}

// __shfl_xor_sync / simd_shuffle_xor: the value of the thread whose lane differs by lane_mask within its warp.
template <class T>
inline T shuffle_xor(T value, unsigned lane_mask, unsigned width) {
    static_assert(sizeof(T) <= sizeof(std::uint64_t), "shuffle of a value wider than 64 bits");
    int me = linear_thread();
    std::uint64_t word = 0;
    std::memcpy(&word, &value, sizeof(T));
    t_sync->exchange[me] = word;
    sync_block();
    long long partner = me ^ static_cast<int>(lane_mask);
    T out = value;
    if (lane_mask >= width || partner >= t_sync->threads) {
        fault("shuffle_xor with lane mask " + std::to_string(lane_mask) + " leaves the warp of " +
              std::to_string(width) + " lanes (block of " + std::to_string(t_sync->threads) + " threads)");
    } else {
        std::memcpy(&out, &t_sync->exchange[partner], sizeof(T));
    }
    sync_block();
    return out;
}

// Launch errors the host reports (kernel status words are separate: the kernel writes them to a buffer).
enum LaunchResult : int {
    LAUNCH_OK = 0,
    LAUNCH_UNKNOWN_KERNEL = 10,
    LAUNCH_BAD_SIGNATURE = 11,
    LAUNCH_FAULT = 12,          // an out-of-bounds access (or a host exception) inside the kernel
    LAUNCH_HOST_EXCEPTION = 13,
    LAUNCH_BAD_CONFIG = 14,
    LAUNCH_RACE = 15,           // the race checker saw two threads touch one shared element between barriers
};

// A lane's launch limits (checked before a launch runs; the static shared memory while it runs).
struct Limits {
    const char* api;                  // "CUDA", "Metal": named in the error
    unsigned max_threads;             // threads per block
    unsigned long long max_grid[3];   // blocks per grid axis
    long long max_shared_bytes;       // static shared memory per block
};

// Runs body() once per (block, thread) of the grid: blocks one at a time, a block's threads concurrently.
// Returns LAUNCH_OK, LAUNCH_BAD_CONFIG (message in `error`) or LAUNCH_HOST_EXCEPTION.
template <class Body>
int launch(const char* kernel, dim3 grid, dim3 block, const Limits& limits, const Body& body, std::string& error) {
    long long n = static_cast<long long>(block.x) * block.y * block.z;
    long long blocks = static_cast<long long>(grid.x) * grid.y * grid.z;
    const std::string shape = std::string("invalid launch configuration for ") + kernel + ": grid (" +
                              std::to_string(grid.x) + "," + std::to_string(grid.y) + "," + std::to_string(grid.z) +
                              "), block (" + std::to_string(block.x) + "," + std::to_string(block.y) + "," +
                              std::to_string(block.z) + "): ";
    if (n < 1 || n > limits.max_threads || blocks < 1) {
        error = shape + "a block holds 1.." + std::to_string(limits.max_threads) + " threads (" + limits.api +
                "'s limit of " + std::to_string(limits.max_threads) + " threads per block) and a grid at least one block";
        return LAUNCH_BAD_CONFIG;
    }
    const unsigned g[3] = {grid.x, grid.y, grid.z};
    for (int axis = 0; axis < 3; ++axis) {
        if (g[axis] > limits.max_grid[axis]) {
            error = shape + "grid." + "xyz"[axis] + " = " + std::to_string(g[axis]) + " exceeds " + limits.api +
                    "'s limit of " + std::to_string(limits.max_grid[axis]) + " blocks on that axis";
            return LAUNCH_BAD_CONFIG;
        }
    }
    {
        std::lock_guard<std::mutex> lock(limit_violation().mu);
        limit_violation().first.clear();
    }
    {
        std::lock_guard<std::mutex> lock(race_log().mu);
        race_log().launch_races.store(0);
        race_log().launch_first.clear();
    }
    clear_shared_records();
    std::atomic<long long> accesses{0};
    int threads = static_cast<int>(n);
    BlockSync sync(threads);
    sync.block = std::make_unique<std::barrier<>>(threads);
    auto renew = [&sync, threads]() noexcept { sync.block = std::make_unique<std::barrier<>>(threads); };
    std::barrier<decltype(renew)> block_end(threads, renew);
    // Threads are parked until all of them exist: if one cannot be started, none runs and the launch fails.
    std::latch start(1);
    std::atomic<bool> abort{false};
    auto run = [&](int tid) {
        start.wait();
        if (abort) {
            return;
        }
        t_sync = &sync;
        t_kernel = kernel;
        t_block_dim = block;
        t_grid_dim = grid;
        t_tid = tid;
        t_shared_accesses = 0;
        t_max_shared_bytes = limits.max_shared_bytes;
        t_lane_api = limits.api;
        t_thread = dim3{static_cast<unsigned>(tid % block.x), static_cast<unsigned>((tid / block.x) % block.y),
                        static_cast<unsigned>(tid / (block.x * block.y))};
        std::uint64_t serial = 0;
        for (unsigned bz = 0; bz < grid.z; ++bz) {
            for (unsigned by = 0; by < grid.y; ++by) {
                for (unsigned bx = 0; bx < grid.x; ++bx) {
                    t_block = dim3{bx, by, bz};
                    t_epoch = (++serial) << 20;
                    t_shared_bytes = 0;
                    try {
                        body();
                    } catch (const std::exception& e) {
                        fault(std::string("host exception ") + e.what());
                    } catch (...) {
                        fault("unknown host exception");
                    }
                    sync.block->arrive_and_drop();
                    block_end.arrive_and_wait();
                }
            }
        }
        accesses += t_shared_accesses;
        t_sync = nullptr;
    };
    std::vector<std::thread> pool;
    pool.reserve(threads);
    try {
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back(run, t);
        }
    } catch (const std::exception& e) {
        error = std::string("could not start ") + std::to_string(threads) + " emulated threads for " + kernel +
                ": " + e.what();
        abort = true;
    }
    start.count_down();
    for (auto& t : pool) {
        t.join();
    }
    if (abort) return LAUNCH_HOST_EXCEPTION;
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
    k.accesses += accesses.load();
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
