// emu_core.h: what the CUDA and Metal shims share. The kernel sources are compiled unchanged as host C++20. The
// shims replace what a GPU would provide:
//   - a launch runs the grid's blocks (threadgroups) one at a time on the calling thread; each of the block's threads
//     is a fiber (its own stack; a dozen instructions switch between them) and a barrier is a switch back to the block's scheduler, which resumes
//     every fiber still running once all of them have arrived: __shared__/threadgroup memory and barriers behave as
//     on a device, and a barrier costs two user-space switches per thread instead of a futex wake-up per thread
//     (the lanes ran std::threads on a std::barrier before, ~0.35 s per 32-block launch of 128 threads here; glibc's
//     swapcontext, a signal-mask system call per switch, still spent 80 % of a launch switching);
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

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace emu {

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

// The launch's position variables, one copy per emulated thread: thread-locals of the launching thread, saved and
// restored by the fiber switch for the ones that differ between a block's threads (Fiber::State).
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

// Plain words: a block's threads are fibers of one launching thread and launches are serialised per library, so no
// two accesses to a record are ever concurrent.
struct SharedTrack {
    std::uint64_t* w = nullptr;
    std::uint64_t* r = nullptr;
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
            t->w[i] = 0;
            t->r[i] = 0;
        }
    }
}

// Whichever of two conflicting accesses in one epoch comes second sees the first one's record.
inline void on_shared_write(const SharedTrack& t, long long i) {
    ++t_shared_accesses;
    const std::uint64_t me = (t_epoch << kTidBits) | static_cast<std::uint64_t>(t_tid + 1);
    const std::uint64_t old = t.w[i];
    t.w[i] = me;
    if ((old >> kTidBits) == t_epoch && (old & kTidMask) != static_cast<std::uint64_t>(t_tid + 1)) {
        report_race(t.name, i, "written", static_cast<int>((old & kTidMask) - 1), "written");
    }
    const std::uint64_t rd = t.r[i];
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
    const std::uint64_t cur = t.r[i];
    if ((cur >> kTidBits) != t_epoch) {
        t.r[i] = (t_epoch << kTidBits) | mine;
    } else if ((cur & kTidMask) != mine) {
        t.r[i] = (t_epoch << kTidBits) | kMulti;
    }
    const std::uint64_t w = t.w[i];
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
    std::uint64_t w[N];
    std::uint64_t r[N];
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

// The fiber switch: saves the callee-saved registers on the current stack, stores its stack pointer in *save, and
// resumes the fiber whose stack pointer is `to` (saved by an earlier switch, or laid out by prepare_fiber).
// x86-64 (System V) and arm64 (AAPCS64, Linux and macOS): the two architectures the emulated lanes build on.
extern "C" void attnproof_emu_switch(void** save, void* to);
#if defined(__APPLE__)
#define ATTNPROOF_EMU_ASM_SYM "_attnproof_emu_switch"
#define ATTNPROOF_EMU_ASM_HIDE ".private_extern _attnproof_emu_switch\n"
#else
#define ATTNPROOF_EMU_ASM_SYM "attnproof_emu_switch"
#define ATTNPROOF_EMU_ASM_HIDE ".hidden attnproof_emu_switch\n"
#endif
#if defined(__x86_64__)
// Frame: r15 r14 r13 r12 rbx rbp, return address.
constexpr int kSwitchFrameWords = 6;
asm(".text\n.p2align 4\n.globl " ATTNPROOF_EMU_ASM_SYM "\n" ATTNPROOF_EMU_ASM_HIDE ATTNPROOF_EMU_ASM_SYM ":\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n");
#elif defined(__aarch64__)
// Frame: x19..x28, x29, x30 (the return address), d8..d15: 176 bytes.
constexpr int kSwitchFrameWords = 22;
asm(".text\n.p2align 4\n.globl " ATTNPROOF_EMU_ASM_SYM "\n" ATTNPROOF_EMU_ASM_HIDE ATTNPROOF_EMU_ASM_SYM ":\n"
    "  sub sp, sp, #176\n"
    "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n  stp x25, x26, [sp, #48]\n"
    "  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n"
    "  stp d12, d13, [sp, #128]\n  stp d14, d15, [sp, #144]\n"
    "  mov x9, sp\n  str x9, [x0]\n  mov sp, x1\n"
    "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n  ldp x25, x26, [sp, #48]\n"
    "  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n"
    "  ldp d12, d13, [sp, #128]\n  ldp d14, d15, [sp, #144]\n"
    "  add sp, sp, #176\n  ret\n");
#else
#error "the emulated lanes' fiber switch is written for x86-64 and arm64 only"
#endif

// One emulated thread: a fiber with its own stack, and the position variables that differ between a block's threads
// (saved when it switches out at a barrier, restored when it is resumed).
struct Fiber {
    struct State {
        dim3 thread;
        std::uint64_t epoch = 0;
        int tid = 0;
        long long shared_bytes = 0;
    };
    void* sp = nullptr;
    State state;
    bool done = false;
};

// Fiber stacks, mapped once per launching thread and reused by every later launch; each has a guard page below it,
// so an overflow faults loudly instead of writing into a neighbour.
class StackPool {
public:
    static constexpr std::size_t kStackBytes = 256 * 1024;
    ~StackPool() {
        for (void* m : maps_) munmap(m, kStackBytes + page());
    }
    // The usable stack of fiber i (mapping new ones as needed); nullptr when the system has no memory for it.
    char* stack(std::size_t i) {
        while (maps_.size() <= i) {
            void* m = mmap(nullptr, kStackBytes + page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return nullptr;
            mprotect(m, page(), PROT_NONE);
            maps_.push_back(m);
        }
        return static_cast<char*>(maps_[i]) + page();
    }

private:
    static std::size_t page() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
    std::vector<void*> maps_;
};

// Lays out a fresh switch frame at the top of a fiber's stack whose return address is `entry`: the first switch to
// the fiber "returns" into entry with the stack aligned as after a call.
inline void prepare_fiber(Fiber& f, char* stack, void (*entry)()) {
    auto top = reinterpret_cast<std::uintptr_t>(stack + StackPool::kStackBytes) & ~static_cast<std::uintptr_t>(15);
    void** frame = reinterpret_cast<void**>(top) - (kSwitchFrameWords + 2);
    for (int i = 0; i < kSwitchFrameWords + 2; ++i) frame[i] = nullptr;
#if defined(__x86_64__)
    frame[kSwitchFrameWords] = reinterpret_cast<void*>(entry);  // popped by ret; entry starts with rsp = 8 mod 16
#else
    frame[11] = reinterpret_cast<void*>(entry);  // x30, the link register ret jumps to
#endif
    f.sp = frame;
}

inline StackPool& stack_pool() {
    thread_local StackPool pool;
    return pool;
}

// One block's synchronisation: its fibers, the scheduler context they switch back to at a barrier, the body they
// run, and the shuffle buffer.
struct BlockSync {
    explicit BlockSync(int n) : threads(n), exchange(n), fibers(n) {}
    int threads;
    std::vector<std::uint64_t> exchange;
    std::vector<Fiber> fibers;
    void* scheduler = nullptr;
    Fiber* current = nullptr;
    void (*body)(const void*) = nullptr;
    const void* body_arg = nullptr;
};

inline thread_local BlockSync* t_sync = nullptr;

inline int linear_thread() {
    return static_cast<int>(t_thread.x + t_block_dim.x * (t_thread.y + t_block_dim.y * t_thread.z));
}

inline void load_state(const Fiber::State& s) {
    t_thread = s.thread;
    t_epoch = s.epoch;
    t_tid = s.tid;
    t_shared_bytes = s.shared_bytes;
}

// Every thread of the block still running arrives and waits (the shuffles' exchange: no new epoch): the fiber
// switches back to the scheduler, which resumes it once every other running fiber has arrived too.
inline void sync_block() {
    Fiber* f = t_sync->current;
    f->state = Fiber::State{t_thread, t_epoch, t_tid, t_shared_bytes};
    attnproof_emu_switch(&f->sp, t_sync->scheduler);
    load_state(f->state);
}

// __syncthreads() / threadgroup_barrier(): the barrier, after which a new race-checker epoch starts.
inline void barrier_block() {
    sync_block();
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

// Runs body() once per (block, thread) of the grid: blocks one at a time, a block's threads as fibers that meet at
// every barrier.
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
    StackPool& stacks = stack_pool();
    const int threads = static_cast<int>(n);
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
    // A fiber's entry: run the body for its (block, thread), then switch back to the scheduler for good.
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
        f->done = true;
        attnproof_emu_switch(&f->sp, s.scheduler);
        std::abort();  // a finished fiber is never resumed
    };
    std::uint64_t serial = 0;
    for (unsigned bz = 0; bz < grid.z; ++bz) {
        for (unsigned by = 0; by < grid.y; ++by) {
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                t_block = dim3{bx, by, bz};
                const std::uint64_t epoch = (++serial) << 20;
                for (int tid = 0; tid < threads; ++tid) {
                    Fiber& f = sync.fibers[static_cast<std::size_t>(tid)];
                    f.done = false;
                    f.state = Fiber::State{dim3{static_cast<unsigned>(tid % block.x),
                                                static_cast<unsigned>((tid / block.x) % block.y),
                                                static_cast<unsigned>(tid / (block.x * block.y))},
                                           epoch, tid, 0};
                    prepare_fiber(f, stacks.stack(static_cast<std::size_t>(tid)), entry);
                }
                // Each pass resumes every running fiber until it reaches a barrier or returns; a pass ends with every
                // running fiber at a barrier, so the next pass is the barrier's release.
                for (int running = threads; running > 0;) {
                    for (Fiber& f : sync.fibers) {
                        if (f.done) continue;
                        sync.current = &f;
                        attnproof_emu_switch(&sync.scheduler, f.sp);
                        if (f.done) --running;
                    }
                }
            }
        }
    }
    const long long accesses = t_shared_accesses;
    t_sync = outer_sync;
    load_state(outer_state);
    t_shared_accesses = outer_accesses;
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
