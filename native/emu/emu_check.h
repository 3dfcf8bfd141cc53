// emu_check.h: the checked accesses. Every device pointer (dptr<T>) and shared/threadgroup array is indexed through
// a bounds check that returns a real T& (the type the device access has: `c ? smem[i] : 0`, `auto x = smem[i]`,
// `max(smem[i], 0.f)` and `&smem[i]` deduce exactly as on the device). An out-of-bounds index records a fault naming
// the buffer, the index, its length, the kernel, the block and the thread, and yields a scratch cell instead (the
// launch finishes and the host reports the fault: never a crash, never UB).
//
// The race checker (claim N1) tells reads from writes without a proxy, by shadow memory: indexing a shared element
// marks it touched by the running thread and snapshots its bits; at the thread's next switch point (a barrier, a
// warp operation, its exit: the only places another emulated thread can run) every touched element whose bits
// changed is recorded as a write, the others as reads. A write of the value the element already held is recorded
// as a read (it is invisible to every later reader); shared memory is poisoned at every block start so that a
// block's first write of an element always shows. Per element the checker keeps the last write (epoch, thread) and
// the reads of the current epoch; a write and a read or write of one element by two threads of one block in one
// barrier interval ("epoch") is a race, reported with the kernel, the array, the element, both threads and the block.
// Warp operations do not end an epoch (they do not order shared memory on a GPU).
//
// ATTNPROOF_EMU_PLAIN builds neither the bounds checks nor the race records (the plain build: same bits expected);
// ATTNPROOF_NO_RACECHECK keeps the bounds checks and drops the race records.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "emu_state.h"

namespace emu {

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

inline void report_race(const char* array, long long element, const std::string& earlier, int other,
                        const std::string& now) {
    RaceLog& log = race_log();
    if (log.launch_races.fetch_add(1) != 0) return;  // counted; only the first is worded
    std::lock_guard<std::mutex> lock(log.mu);
    log.launch_first = std::string("shared-memory race in kernel ") + t_kernel + ", block " + block_name() + ": " +
                       array + "[" + std::to_string(element) + "] " + earlier +
                       (other < 0 ? std::string(" by several threads") : " by thread " + std::to_string(other)) +
                       " and " + now + " by thread " + std::to_string(t_tid) +
                       " with no barrier between them (barrier interval " + std::to_string(t_epoch & 0xfffff) +
                       " of the block)";
}

// The race checker's per-element records: the last write (epoch << 11 | thread + 1) and the reads of the current
// epoch (epoch << 11 | thread + 1, or kMulti when several threads read); the shadow of the running thread's touches
// (stamp: the touch interval that snapshotted the element; snap: its bits then). Cleared before every launch.
constexpr std::uint64_t kTidBits = 11;
constexpr std::uint64_t kTidMask = (1u << kTidBits) - 1;
constexpr std::uint64_t kMulti = kTidMask;

// Plain words: a block's threads are fibers of one launching thread and launches are serialised per library, so no
// two accesses to a record are ever concurrent.
struct SharedTrack {
    std::uint64_t* w = nullptr;
    std::uint64_t* r = nullptr;
    std::uint64_t* stamp = nullptr;
    std::uint64_t* snap = nullptr;
    unsigned char* data = nullptr;
    std::size_t elem = 0;
    long long n = 0;
    const char* name = "shared";
};

// Every shared array of the library (checked and plain builds): poisoned at block starts; records cleared per launch.
struct SharedArea {
    unsigned char* data;
    std::size_t bytes;
    SharedTrack* track;  // null in the plain build
};

inline std::vector<SharedArea>& shared_registry() {
    static std::vector<SharedArea> all;
    return all;
}

inline std::mutex& shared_registry_mu() {
    static std::mutex mu;
    return mu;
}

// The bits shared memory holds at a block start (a quiet NaN as a float; undefined on a device). Both builds poison,
// so a kernel that reads an element it never wrote gives the same bits in both.
constexpr unsigned char kPoisonByte = 0xff;

inline void poison_shared() {
    std::lock_guard<std::mutex> lock(shared_registry_mu());
    for (const SharedArea& a : shared_registry()) std::memset(a.data, kPoisonByte, a.bytes);
}

// The touches of the running thread since its last switch point (one launch at a time per library: plain globals).
struct Touch {
    SharedTrack* track;
    long long i;
};

inline std::vector<Touch> g_touched;
inline std::uint64_t g_touch_serial = 1;

inline std::vector<Touch>& touched() { return g_touched; }
inline std::uint64_t& touch_serial() { return g_touch_serial; }

inline void clear_shared_records() {
    std::lock_guard<std::mutex> lock(shared_registry_mu());
    for (const SharedArea& a : shared_registry()) {
        SharedTrack* t = a.track;
        if (t == nullptr) continue;
        for (long long i = 0; i < t->n; ++i) {
            t->w[i] = 0;
            t->r[i] = 0;
        }
    }
    touched().clear();
    ++touch_serial();
}

inline std::uint64_t element_bits(const SharedTrack& t, long long i) {
    const unsigned char* at = t.data + static_cast<std::size_t>(i) * t.elem;
    switch (t.elem) {  // fixed-size copies: no library call on the hot path
        case 4: {
            std::uint32_t v;
            std::memcpy(&v, at, 4);
            return v;
        }
        case 8: {
            std::uint64_t v;
            std::memcpy(&v, at, 8);
            return v;
        }
        default: {
            std::uint64_t v = 0;
            std::memcpy(&v, at, t.elem);
            return v;
        }
    }
}

// Marks element i of `t` touched by the running thread, snapshotting its bits at the first touch of this run.
template <class T>
[[gnu::always_inline]] inline void touch(SharedTrack& t, long long i, const T& element) {
    if (t.stamp[i] == g_touch_serial) [[likely]] return;  // already snapshotted in this run of the thread
    t.stamp[i] = g_touch_serial;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &element, sizeof(T));
    t.snap[i] = bits;
    g_touched.push_back(Touch{&t, i});
}

// Whichever of two conflicting accesses in one epoch is recorded second sees the first one's record. `epoch` and
// `tid` are the running thread's (t_epoch, t_tid: passed in, read once per flush).
inline void record_write(const SharedTrack& t, long long i, std::uint64_t epoch, int tid) {
    const std::uint64_t mine = static_cast<std::uint64_t>(tid + 1);
    const std::uint64_t old = t.w[i];
    t.w[i] = (epoch << kTidBits) | mine;
    if ((old >> kTidBits) == epoch && (old & kTidMask) != mine) [[unlikely]] {
        report_race(t.name, i, "written", static_cast<int>((old & kTidMask) - 1), "written");
    }
    const std::uint64_t rd = t.r[i];
    if ((rd >> kTidBits) == epoch && (rd & kTidMask) != mine) [[unlikely]] {
        report_race(t.name, i, "read", (rd & kTidMask) == kMulti ? -1 : static_cast<int>((rd & kTidMask) - 1),
                    "written");
    }
}

inline void record_read(const SharedTrack& t, long long i, std::uint64_t epoch, int tid) {
    const std::uint64_t mine = static_cast<std::uint64_t>(tid + 1);
    const std::uint64_t cur = t.r[i];
    if ((cur >> kTidBits) != epoch) {
        t.r[i] = (epoch << kTidBits) | mine;
    } else if ((cur & kTidMask) != mine) {
        t.r[i] = (epoch << kTidBits) | kMulti;
    }
    const std::uint64_t w = t.w[i];
    if ((w >> kTidBits) == epoch && (w & kTidMask) != mine) [[unlikely]] {
        report_race(t.name, i, "written", static_cast<int>((w & kTidMask) - 1), "read");
    }
}

// At a switch point of the running thread: its touches become reads and writes (bits changed: a write).
inline void flush_touches() {
    std::vector<Touch>& list = g_touched;
    if (list.empty()) return;
    const std::uint64_t epoch = t_epoch;
    const int tid = t_tid;
    for (const Touch& x : list) {
        if (element_bits(*x.track, x.i) != x.track->snap[x.i]) {
            record_write(*x.track, x.i, epoch, tid);
        } else {
            record_read(*x.track, x.i, epoch, tid);
        }
    }
    t_shared_accesses += static_cast<long long>(list.size());
    list.clear();
    ++g_touch_serial;
}

// A cell an out-of-bounds access lands on instead of foreign memory.
template <class T>
inline T& scratch() {
    thread_local std::remove_const_t<T> cell{};
    return cell;
}

// A bounds-checked device pointer: base, length (elements), offset; pointer arithmetic moves the offset only.
// Indexing yields T& (const T& for a const element): the device access's own type.
template <class T>
class dptr {
    template <class U>
    friend class dptr;
    T* base_ = nullptr;
    long long len_ = 0;
    long long off_ = 0;
    const char* name_ = "null";
    SharedTrack* track_ = nullptr;  // set for shared / threadgroup memory: the race checker's records

public:
    using reference = T&;

    dptr() = default;
    dptr(std::nullptr_t) {}
    dptr(T* base, long long len, const char* name, SharedTrack* track = nullptr)
        : base_(base), len_(base ? len : 0), name_(name), track_(track) {}
    template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
    dptr(const dptr<U>& o) : base_(o.base_), len_(o.len_), off_(o.off_), name_(o.name_), track_(o.track_) {}

    [[gnu::always_inline]] T& operator[](long long i) const {
        const long long at = off_ + i;
#ifdef ATTNPROOF_EMU_PLAIN
        return base_[at];
#else
        if (base_ == nullptr || at < 0 || at >= len_) {
            fault(std::string("out-of-bounds access ") + name_ + "[" + std::to_string(at) + "] (length " +
                  std::to_string(len_) + ")");
            return scratch<T>();
        }
        if (track_ != nullptr) touch(*track_, at, base_[at]);
        return base_[at];
#endif
    }
    T& operator*() const { return (*this)[0]; }
    dptr operator+(long long d) const {
        dptr r = *this;
        r.off_ += d;
        return r;
    }
    dptr operator-(long long d) const { return *this + (-d); }
    dptr& operator+=(long long d) {
        off_ += d;
        return *this;
    }
    dptr& operator-=(long long d) {
        off_ -= d;
        return *this;
    }
    bool operator==(std::nullptr_t) const { return base_ == nullptr; }
    explicit operator bool() const { return base_ != nullptr; }
};

// Block-shared storage (__shared__ / threadgroup) with checked indexing; converts to a checked pointer. Its elements
// carry the race checker's records (registered once; records cleared before every launch, bits poisoned before every
// block).
template <class T, long long N>
struct shared_array {
    static_assert(sizeof(T) <= sizeof(std::uint64_t), "the race checker snapshots elements of up to 8 bytes");
    T data[N];
#ifndef ATTNPROOF_EMU_PLAIN
    std::uint64_t w[N];
    std::uint64_t r[N];
    std::uint64_t stamp[N];
    std::uint64_t snap[N];
    SharedTrack track;
#endif
    const char* name;
    explicit shared_array(const char* array_name) : data{}, name(array_name) {
        SharedTrack* t = nullptr;
#ifndef ATTNPROOF_EMU_PLAIN
        for (long long i = 0; i < N; ++i) w[i] = r[i] = stamp[i] = snap[i] = 0;
        track.w = w;
        track.r = r;
        track.stamp = stamp;
        track.snap = snap;
        track.data = reinterpret_cast<unsigned char*>(data);
        track.elem = sizeof(T);
        track.n = N;
        track.name = array_name;
        t = &track;
#endif
        std::memset(static_cast<void*>(data), kPoisonByte, sizeof data);  // a block start: as poison_shared()
        std::lock_guard<std::mutex> lock(shared_registry_mu());
        shared_registry().push_back(SharedArea{reinterpret_cast<unsigned char*>(data), sizeof data, t});
    }
    SharedTrack* tracked() {
#if defined(ATTNPROOF_EMU_PLAIN) || defined(ATTNPROOF_NO_RACECHECK)
        return nullptr;  // ATTNPROOF_NO_RACECHECK: bounds checked, no race records (to measure the records' cost)
#else
        return &track;
#endif
    }
    T& operator[](long long i) { return dptr<T>(data, N, name, tracked())[i]; }
    operator dptr<T>() { return dptr<T>(data, N, name, tracked()); }
    operator dptr<const T>() { return dptr<const T>(data, N, name, tracked()); }
};

}  // namespace emu
