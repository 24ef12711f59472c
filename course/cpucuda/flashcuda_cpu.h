// flashcourse CPU execution layer for CUDA cells (correctness only, nothing is timed).
// Every CUDA thread of a block is a fiber; blocks run one after another on one OS thread.
// Fibers switch only at __syncthreads, __syncwarp and warp intrinsics, which are real
// barriers honouring their masks; threads that return drop out. A barrier nobody can pass
// is reported as a deadlock that names the block and what its threads wait on.
// Shared-memory races are detected as compute-sanitizer's racecheck does: the cell is compiled
// with GCC's -fsanitize=thread instrumentation, whose hooks (__tsan_read4 etc., defined at the
// end of this file, no TSan runtime) see every load and store; those that fall in shared memory
// are checked against the last write and the reads of their bytes since the last __syncthreads().
// __shared__ variables live in one pool (course/cpucuda/__init__.py rewrites their declarations).
// Built with -DFC_TRAFFIC, the same hooks also count memory traffic (course.cuda.traffic).
#pragma once
#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <string>
#include <type_traits>
#include <sys/mman.h>
#include <ucontext.h>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static  // declarations the translator cannot read stay plain statics (not checked)
#define __constant__ static
#define warpSize 32
// The scheduler and the race checker are not instrumented (their own loads and stores are not
// the kernel's); GCC inlines across this attribute only into functions that share it.
#define FC_NOSAN __attribute__((no_sanitize_thread))
#define FC_HOT FC_NOSAN __attribute__((always_inline)) inline

struct uint3 { unsigned x, y, z; };
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

namespace fc {

enum State { RUN, BAR, WARP, DONE };
enum WarpOp { W_SYNC, W_SHFL_IDX, W_SHFL_XOR, W_SHFL_DOWN, W_SHFL_UP, W_BALLOT };

struct Fiber {
  jmp_buf env;
  ucontext_t uc;
  bool started = false;
  uint3 tid;
  int linear = 0;
  State state = RUN;
  int bar_line = 0;
  // pending warp operation
  WarpOp op = W_SYNC;
  unsigned mask = 0;
  int arg = 0, width = 32, line = 0;
  uint64_t value = 0, result = 0;
  // race detection: warp operations completed, and the count at the last one that included all
  // lanes of the warp / each lane (accesses before it are ordered before the other lanes' after it)
  uint32_t ws = 0, full_ws = 0;
  uint32_t lane_ws[32] = {};
};

struct Ctx {
  std::vector<Fiber> fibers;
  char* stacks = nullptr;
  size_t stack_size = 256 * 1024, nstacks = 0;
  jmp_buf sched;
  Fiber* cur = nullptr;
  uint3 blockIdx{0, 0, 0};
  dim3 blockDim, gridDim;
  std::function<void()> body;
  std::string error;
};
inline Ctx the_ctx;  // not a function-local static: no guard to test on every threadIdx
inline Ctx& ctx() { return the_ctx; }

FC_NOSAN inline void yield_to_scheduler() {
  Fiber* f = the_ctx.cur;
  if (!_setjmp(f->env)) _longjmp(the_ctx.sched, 1);
}

[[noreturn]] inline void fail(const std::string& msg) {
  ctx().error = msg;
  ctx().cur->state = DONE;
  _longjmp(ctx().sched, 2);
  __builtin_unreachable();
}

inline void trampoline() {
  ctx().body();
  ctx().cur->state = DONE;
  _longjmp(ctx().sched, 1);
}

// ---- shared memory and its race detection -----------------------------------------------------
// Static __shared__ variables are carved out of one pool (shared_var, called by the rewritten
// declarations), dynamic shared memory is one mapping per launch; both have shadow cells, one per
// 4-byte word: the last write (thread, barrier epoch, warp-sync count, code address, which bytes)
// and up to two reads since. A write and a read, or two writes, of a byte by different threads in
// one epoch (no __syncthreads() between) are a race unless a warp operation that both joined lies
// between (a __syncwarp() or a shuffle naming both lanes). Atomics do not race with atomics.
// What a cell forgets (an older access to other bytes of its word, a third reader) can only hide a
// race, never make one up: a correct kernel is never reported.

enum AccKind : uint8_t { A_NONE, A_READ, A_WRITE, A_ATOMIC };
struct Acc { uint32_t epoch; uint16_t tid; uint8_t kind, mask; uint32_t ws, pc; };  // mask: bytes of the word
struct Cell { Acc w, r1, r2; };
struct VarInfo { size_t off, size, elem; int rank; size_t ext[4]; const char* name; };
constexpr size_t STATIC_SMEM_CAP = size_t(1) << 20, MAX_SHARED_VARS = 1024;

struct Track {
  uintptr_t s_lo = 0, s_span = 0, d_lo = 0, d_span = 0;  // static pool (bytes handed out), dynamic
  Cell* s_cells = nullptr;
  Cell* d_cells = nullptr;
  size_t d_cap = 0;
  uint32_t epoch = 1;
  bool on = false;  // a fiber runs, outside an atomic
  bool race = true;  // a traffic build checks races only if FLASHCOURSE_CPU_RACECHECK is not 0
  uintptr_t base = 0;  // load address of this library: code addresses are reported relative to it
  Fiber* fibers = nullptr;
  const char* dyn_name = nullptr;
  size_t dyn_elem = 1;
  const char* load_error = nullptr;
  size_t nvars = 0;
  VarInfo vars[MAX_SHARED_VARS] = {};
};
inline Track trk;
alignas(4096) inline char static_smem[STATIC_SMEM_CAP];

template <class T> inline void extents_of(size_t* e) {
  if constexpr (std::rank<T>::value > 0) {
    e[0] = std::extent<T>::value;
    extents_of<typename std::remove_extent<T>::type>(e + 1);
  }
}

// `__shared__ float buf[256];` becomes `static float (&buf)[256] = *fc::shared_var<float[256]>("buf", 0);`
template <class T> inline T* shared_var(const char* name, size_t align) {
  Track& K = trk;
  size_t a = alignof(T) > align ? alignof(T) : align;
  size_t off = (K.s_span + a - 1) / a * a;
  if (off + sizeof(T) > STATIC_SMEM_CAP || K.nvars == MAX_SHARED_VARS) {
    static const char* msg = "the __shared__ variables of this cell exceed the CPU layer's 1 MiB";
    if (ctx().cur) fail(msg);
    K.load_error = msg;
    return reinterpret_cast<T*>(static_smem);
  }
  VarInfo& v = K.vars[K.nvars++];
  v.off = off; v.size = sizeof(T); v.elem = sizeof(typename std::remove_all_extents<T>::type); v.name = name;
  v.rank = std::rank<T>::value <= 4 ? (int)std::rank<T>::value : 0;
  if constexpr (std::rank<T>::value <= 4) extents_of<T>(v.ext);
  K.s_lo = (uintptr_t)static_smem;
  K.s_span = off + sizeof(T);
  return reinterpret_cast<T*>(static_smem + off);
}

// `extern __shared__ float buf[];` becomes `float* buf = fc::dynamic_smem<float>("buf");`
template <class T> inline T* dynamic_smem(const char* name) {
  trk.dyn_name = name;
  trk.dyn_elem = sizeof(T);
  return reinterpret_cast<T*>(trk.d_lo);
}
inline void* dynamic_smem() { return reinterpret_cast<void*>(trk.d_lo); }

FC_NOSAN inline void next_epoch() {  // a barrier passed, or a new block: earlier accesses are ordered before
  if (++trk.epoch < 0xfffffff0u) return;
  if (trk.s_cells) madvise(trk.s_cells, STATIC_SMEM_CAP / 4 * sizeof(Cell), MADV_DONTNEED);  // zero-fills
  if (trk.d_cells) madvise(trk.d_cells, trk.d_cap / 4 * sizeof(Cell), MADV_DONTNEED);
  trk.epoch = 1;
}

FC_HOT bool ordered(const Acc& x, const Fiber* f) {  // x by another thread, ordered before f's access?
  if ((x.tid >> 5) != (f->linear >> 5)) return false;
  const Fiber& o = trk.fibers[x.tid];
  return o.full_ws > x.ws || o.lane_ws[f->linear & 31] > x.ws;
}

inline std::string describe_byte(uintptr_t a) {
  char buf[200];
  const Track& K = trk;
  if (a - K.d_lo < K.d_span) {
    size_t o = a - K.d_lo, e = K.dyn_elem ? K.dyn_elem : 1;
    if (K.dyn_name) std::snprintf(buf, sizeof buf, "%s[%zu]", K.dyn_name, o / e);
    else std::snprintf(buf, sizeof buf, "byte %zu of the dynamic shared memory", o);
    return buf;
  }
  size_t o = a - K.s_lo;
  for (size_t i = 0; i < K.nvars; ++i) {
    const VarInfo& v = K.vars[i];
    if (o < v.off || o >= v.off + v.size) continue;
    std::string s = v.name;
    size_t idx = (o - v.off) / (v.elem ? v.elem : 1);
    if (v.rank > 0) {
      size_t ix[4];
      for (int k = v.rank - 1; k >= 0; --k) { ix[k] = idx % v.ext[k]; idx /= v.ext[k]; }
      for (int k = 0; k < v.rank; ++k) s += "[" + std::to_string(ix[k]) + "]";
    } else if (v.size > 1 && o != v.off) {
      s += " (byte " + std::to_string(o - v.off) + ")";
    }
    return s;
  }
  std::snprintf(buf, sizeof buf, "byte %zu of static shared memory", o);
  return buf;
}

[[noreturn]] inline void report_race(Acc first, Acc second, uintptr_t a) {
  trk.on = false;
  const Ctx& C = ctx();
  auto who = [&](unsigned t) {
    char b[64];
    std::snprintf(b, sizeof b, "thread (%u, %u, %u)", t % C.blockDim.x, t / C.blockDim.x % C.blockDim.y,
                  t / (C.blockDim.x * C.blockDim.y));
    return std::string(b);
  };
  auto verb = [](int k) { return k == A_READ ? "read" : k == A_WRITE ? "wrote" : "updated"; };
  auto at = [](uint32_t pc) {  // the parent turns @L<address>@ into "line N" (addr2line)
    char b[32];
    std::snprintf(b, sizeof b, "@L%x@", pc);
    return std::string(b);
  };
  char block[80];
  std::snprintf(block, sizeof block, " of block (%u, %u, %u)", C.blockIdx.x, C.blockIdx.y, C.blockIdx.z);
  std::string s = "shared-memory race: " + who(first.tid) + block + " " + verb(first.kind) + " " + describe_byte(a) +
                  (first.kind == A_ATOMIC ? " atomically" : "") + " at " + at(first.pc) + " and " + who(second.tid) +
                  " " + verb(second.kind) + " it" + (second.kind == A_ATOMIC ? " atomically" : "") + " at " +
                  at(second.pc) + " with no __syncthreads() between";
  if ((first.tid >> 5) == (second.tid >> 5))
    s += " (nor a __syncwarp() or shuffle that both join: they are lanes " + std::to_string(first.tid & 31) +
         " and " + std::to_string(second.tid & 31) + " of one warp)";
  fail(s);
}

// The access of bytes [off, off + n) of a region (base: its address, c: its cells).
FC_NOSAN __attribute__((noinline)) inline void check(Cell* c, uintptr_t base, uintptr_t off, unsigned n, uint8_t kind,
                                                     uintptr_t pc) {
  const Fiber* f = the_ctx.cur;
  const uint16_t me = (uint16_t)f->linear;
  const uint32_t E = trk.epoch;
  Acc now{E, me, kind, 0, f->ws, (uint32_t)(pc - trk.base)};
  for (uintptr_t b = off, end = off + n; b < end; b = (b | 3) + 1) {
    const uintptr_t w0 = b & ~uintptr_t(3);
    const unsigned lo = unsigned(b - w0), hi = end - w0 < 4 ? unsigned(end - w0) : 4u;
    const uint8_t m = (uint8_t)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
    now.mask = m;
    Cell& x = c[b >> 2];
    auto byte = [&](unsigned both) { return base + w0 + __builtin_ctz(both); };
    if (x.w.epoch == E && x.w.tid != me && (x.w.mask & m) && !(kind == A_ATOMIC && x.w.kind == A_ATOMIC) &&
        !ordered(x.w, f))
      report_race(x.w, now, byte(x.w.mask & m));
    if (kind == A_READ) {
      if (x.r1.epoch != E) { x.r1 = now; x.r2.epoch = 0; }
      else if (x.r1.tid == me) x.r1 = now;  // its latest read is the one to order
      else if (x.r2.epoch != E || x.r2.tid == me) x.r2 = now;
    } else {
      bool k1 = x.r1.epoch == E, k2 = k1 && x.r2.epoch == E;
      if (k1 && (x.r1.mask & m)) {
        if (x.r1.tid != me && !ordered(x.r1, f)) report_race(x.r1, now, byte(x.r1.mask & m));
        k1 = false;
      }
      if (k2 && (x.r2.mask & m)) {
        if (x.r2.tid != me && !ordered(x.r2, f)) report_race(x.r2, now, byte(x.r2.mask & m));
        k2 = false;
      }
      if (!k1 && k2) { x.r1 = x.r2; k1 = true; k2 = false; }  // keep the reads of other bytes
      if (!k1) x.r1.epoch = 0;
      if (!k2) x.r2.epoch = 0;
      x.w = now;
    }
  }
}

// ---- memory traffic (course.cuda.traffic) -------------------------------------------------------
// Compiled only into a traffic build (-DFC_TRAFFIC, a library of its own), so that other cells
// neither compile nor run any of it.
#ifdef FC_TRAFFIC
// With trk.traffic on, every load and store of a launch's tensors (global memory) or of shared memory
// is logged: address, bytes, thread, code address. A warp is 32 consecutive threads of the block
// (x-major); the k-th execution of one instruction by each of its lanes is one warp-wide request
// (fibers do not run in lockstep, so lanes are matched by instruction and count). At each
// __syncthreads() and at the end of each block the log is folded into requests: for global memory
// the distinct 32-byte sectors a request touches (ideal: its distinct bytes / 32, rounded up), for
// shared memory the largest number of distinct 4-byte words that fall in one of the 32 banks (the
// wavefronts, i.e. the replays; the same word is a broadcast; ideal: distinct words / 32, rounded up).
struct TEntry { uintptr_t a; uint32_t pc, n; uint16_t tid; uint8_t kind, buf; };  // buf 255: shared
struct TBuf { uintptr_t lo, hi; uint64_t read, written, atomic; };
// per instruction: ideal sectors (global) or wavefronts (shared, counted in sectors); name: shared variable
struct TStat { uint64_t key, requests, lanes, bytes, sectors, ideal; const char* name; };
struct TKey { uint64_t k1, k2; uint32_t i; };
struct TSpan { uint64_t lo, hi; };
constexpr uint8_t T_SHARED = 255;
constexpr size_t T_MAX_BUFS = 64, T_FLUSH_AT = size_t(1) << 23;
// Plain arrays, not std::vector: GCC does not inline the (instrumented) members of a container into
// these uninstrumented functions, and every call would run the hooks.
template <class T> struct TArr {
  T* p = nullptr;
  size_t n = 0, cap = 0;
  FC_NOSAN T* reserve(size_t want) {
    if (want > cap) {
      size_t c = cap ? cap : 256;
      while (c < want) c *= 2;
      T* q = (T*)std::realloc(p, c * sizeof(T));
      if (!q) std::abort();
      p = q;
      cap = c;
    }
    return p;
  }
  FC_NOSAN void push(const T& v) {
    if (n == cap) reserve(n + 1);
    p[n++] = v;
  }
};
struct Traffic {
  int nbuf = 0;
  TBuf bufs[T_MAX_BUFS] = {};
  uintptr_t lo = UINTPTR_MAX, hi = 0;  // the tensors' span, a first quick test
  TArr<TEntry> log;
  TArr<TStat> stats;  // key: code address << 16 | buf << 8 | kind
  TArr<TKey> key;  // scratch of traffic_flush
  TArr<uint64_t> slot_key, units;
  TArr<uint32_t> slot_count;
  TArr<TSpan> spans;
  std::string out;
};
inline Traffic trf;
FC_NOSAN inline void traffic_flush();

FC_NOSAN __attribute__((noinline)) inline void traffic_log(uintptr_t a, unsigned n, uint8_t kind, void* pc, int buf) {
  if (buf < 0) {  // global memory: one of the launch's tensors, else not counted (the stack, the layer)
    if (a < trf.lo || a >= trf.hi) return;
    for (int i = 0; i < trf.nbuf; ++i)
      if (a - trf.bufs[i].lo < trf.bufs[i].hi - trf.bufs[i].lo) { buf = i; break; }
    if (buf < 0) return;
    TBuf& b = trf.bufs[buf];
    (kind == A_READ ? b.read : kind == A_WRITE ? b.written : b.atomic) += n;
  }
  trf.log.push(TEntry{a, (uint32_t)((uintptr_t)pc - 1 - trk.base), n, (uint16_t)the_ctx.cur->linear, kind,
                      (uint8_t)buf});
  if (trf.log.n >= T_FLUSH_AT) traffic_flush();  // bounded memory (a request may then count twice; rare)
}

FC_NOSAN inline TStat& traffic_stat(uint64_t key) {
  for (size_t i = trf.stats.n; i-- > 0;) if (trf.stats.p[i].key == key) return trf.stats.p[i];
  trf.stats.push(TStat{key, 0, 0, 0, 0, 0, nullptr});
  return trf.stats.p[trf.stats.n - 1];
}

FC_NOSAN inline const char* shared_name(uintptr_t a) {  // the __shared__ variable holding address a
  const Track& K = trk;
  if (a - K.d_lo < K.d_span) return K.dyn_name;
  for (size_t i = 0; i < K.nvars; ++i)
    if (a - K.s_lo - K.vars[i].off < K.vars[i].size) return K.vars[i].name;
  return nullptr;
}

// Sorting with qsort: cheaper to compile than std::sort's instantiations (this is built per cell).
FC_NOSAN inline int tkey_cmp(const void* x, const void* y) {
  const TKey& a = *(const TKey*)x;
  const TKey& b = *(const TKey*)y;
  if (a.k1 != b.k1) return a.k1 < b.k1 ? -1 : 1;
  if (a.k2 != b.k2) return a.k2 < b.k2 ? -1 : 1;
  return a.i < b.i ? -1 : a.i > b.i;
}
FC_NOSAN inline int u64_cmp(const void* x, const void* y) {  // also orders spans {lo, hi} by lo
  const uint64_t a = *(const uint64_t*)x, b = *(const uint64_t*)y;
  return a < b ? -1 : a > b;
}

FC_NOSAN inline void traffic_flush() {
  const size_t n = trf.log.n;
  if (!n) return;
  const TEntry* L = trf.log.p;
  TKey* key = trf.key.reserve(n);
  // instance: how many times this thread executed this instruction before (program order is log
  // order); counted in an open-addressing table keyed by (thread, instruction)
  size_t cap = 64;
  unsigned bits = 6;
  while (cap < 2 * n) { cap <<= 1; ++bits; }
  uint64_t* slot_key = trf.slot_key.reserve(cap);
  uint32_t* slot_count = trf.slot_count.reserve(cap);
  std::memset(slot_key, 0xff, cap * sizeof(uint64_t));
  std::memset(slot_count, 0, cap * sizeof(uint32_t));
  for (size_t i = 0; i < n; ++i) {
    const TEntry& e = L[i];
    const uint64_t k = (uint64_t)e.tid << 32 | e.pc;
    size_t h = (size_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - bits));  // the top bits: all of k mixes in
    while (slot_key[h] != k && slot_key[h] != ~uint64_t(0)) h = (h + 1) & (cap - 1);
    slot_key[h] = k;
    const uint32_t inst = slot_count[h]++;
    // a request: one warp, one instruction, one instance (and one space and kind)
    key[i] = TKey{(uint64_t)(e.tid >> 5) << 32 | e.pc,
                  (uint64_t)inst << 16 | (uint64_t)(e.buf == T_SHARED) << 8 | e.kind, (uint32_t)i};
  }
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i) sorted = tkey_cmp(&key[i - 1], &key[i]) < 0;
  if (!sorted) std::qsort(key, n, sizeof(TKey), tkey_cmp);
  for (size_t j = 0; j < n;) {
    size_t g = j + 1;
    while (g < n && key[g].k1 == key[j].k1 && key[g].k2 == key[j].k2) ++g;
    const TEntry& first = L[key[j].i];
    const bool shared = first.buf == T_SHARED;
    const unsigned shift = shared ? 2 : 5;  // 4-byte words, 32-byte sectors
    trf.units.n = trf.spans.n = 0;
    uint64_t bytes = 0;
    for (size_t k = j; k < g; ++k) {
      const TEntry& e = L[key[k].i];
      bytes += e.n;
      const uint64_t end = e.a + (e.n ? e.n : 1);
      for (uint64_t u = e.a >> shift; u <= (end - 1) >> shift; ++u) trf.units.push(u);
      trf.spans.push(TSpan{e.a, end});
    }
    uint64_t* units = trf.units.p;
    const size_t nu = trf.units.n;
    bool ascending = true;  // the usual case: lanes in address order
    for (size_t k = 1; k < nu && ascending; ++k) ascending = units[k - 1] <= units[k];
    if (!ascending) std::qsort(units, nu, sizeof(uint64_t), u64_cmp);
    size_t distinct_units = 0;
    for (size_t k = 0; k < nu; ++k)
      if (!k || units[k] != units[k - 1]) units[distinct_units++] = units[k];
    TStat& s = traffic_stat((uint64_t)first.pc << 16 | (uint64_t)first.buf << 8 | first.kind);
    if (shared && !s.name) s.name = shared_name(first.a);
    s.requests += 1;
    s.lanes += g - j;
    s.bytes += bytes;
    if (shared) {
      unsigned per_bank[32] = {}, most = 0;
      for (size_t k = 0; k < distinct_units; ++k) {
        const unsigned c = ++per_bank[units[k] & 31];
        most = c > most ? c : most;
      }
      s.sectors += most;  // wavefronts
      s.ideal += (distinct_units + 31) / 32;
    } else {  // distinct bytes: the union of [lo, hi) over the lanes
      TSpan* spans = trf.spans.p;
      const size_t ns = trf.spans.n;
      bool in_order = true;
      for (size_t k = 1; k < ns && in_order; ++k) in_order = spans[k - 1].lo <= spans[k].lo;
      if (!in_order) std::qsort(spans, ns, sizeof(TSpan), u64_cmp);
      uint64_t distinct = 0, covered_to = 0;
      for (size_t k = 0; k < ns; ++k) {
        const uint64_t lo = spans[k].lo > covered_to ? spans[k].lo : covered_to;
        if (spans[k].hi > lo) { distinct += spans[k].hi - lo; covered_to = spans[k].hi; }
      }
      s.sectors += distinct_units;
      s.ideal += (distinct + 31) / 32;
    }
    j = g;
  }
  trf.log.n = 0;
}

// The report the parent reads: one line per instruction, one per tensor.
FC_NOSAN inline const char* traffic_report() {
  traffic_flush();
  std::string& o = trf.out;
  o.clear();
  char b[256];
  for (size_t i = 0; i < trf.stats.n; ++i) {
    const TStat& s = trf.stats.p[i];
    std::snprintf(b, sizeof b, "I %llx %u %u %llu %llu %llu %llu %llu %.100s\n", (unsigned long long)(s.key >> 16),
                  (unsigned)(s.key >> 8 & 255), (unsigned)(s.key & 255), (unsigned long long)s.requests,
                  (unsigned long long)s.lanes, (unsigned long long)s.bytes, (unsigned long long)s.sectors,
                  (unsigned long long)s.ideal, s.name ? s.name : "-");
    o += b;
  }
  for (int i = 0; i < trf.nbuf; ++i) {
    const TBuf& t = trf.bufs[i];
    std::snprintf(b, sizeof b, "B %d %llu %llu %llu\n", i, (unsigned long long)t.read, (unsigned long long)t.written,
                  (unsigned long long)t.atomic);
    o += b;
  }
  return o.c_str();
}
#endif  // FC_TRAFFIC

// Every instrumented load and store comes here: two range tests for memory that is not shared.
FC_HOT void on_access(uintptr_t a, unsigned n, uint8_t kind, void* pc) {
  const Track& K = trk;
  uintptr_t o = a - K.s_lo, span;
  Cell* c;
  if (o < K.s_span) { c = K.s_cells; span = K.s_span; }
  else if ((o = a - K.d_lo) < K.d_span) { c = K.d_cells; span = K.d_span; }
  else {
#ifdef FC_TRAFFIC
    if (K.on) traffic_log(a, n, kind, pc, -1);
#endif
    return;
  }
  if (!K.on) return;
  if (n > span - o) n = (unsigned)(span - o);
#ifdef FC_TRAFFIC
  traffic_log(a, n, kind, pc, T_SHARED);
  if (!K.race) return;
#endif
  check(c, a - o, o, n, kind, (uintptr_t)pc - 1);
}

// Atomics: one atomic access, then the plain read-modify-write is not watched.
FC_NOSAN __attribute__((noinline)) inline bool atomic_begin(void* p, unsigned n, void* pc) {
  bool was = trk.on;
  on_access((uintptr_t)p, n, A_ATOMIC, pc);
  trk.on = false;
  return was;
}
FC_NOSAN __attribute__((noinline)) inline void atomic_end(bool was) { trk.on = was; }

// Shadow memory for this launch; dynamic shared memory zeroed as before.
inline bool prepare_smem(size_t smem) {
  Track& K = trk;
  if (!K.s_cells) {
    void* p = mmap(nullptr, STATIC_SMEM_CAP / 4 * sizeof(Cell), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return false;
    K.s_cells = (Cell*)p;
    K.s_lo = (uintptr_t)static_smem;
  }
  size_t need = (smem + 16 + 4095) / 4096 * 4096;
  if (need > K.d_cap) {
    if (K.d_cap) { munmap((void*)K.d_lo, K.d_cap); munmap(K.d_cells, K.d_cap / 4 * sizeof(Cell)); }
    void* m = mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* c = mmap(nullptr, need / 4 * sizeof(Cell), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED || c == MAP_FAILED) { K.d_cap = 0; K.d_lo = K.d_span = 0; return false; }
    K.d_lo = (uintptr_t)m; K.d_cells = (Cell*)c; K.d_cap = need;
  }
  std::memset((void*)K.d_lo, 0, smem + 16);
  K.d_span = smem + 16;
  Dl_info info;
  if (!K.base && dladdr((void*)&trk, &info)) K.base = (uintptr_t)info.dli_fbase;
  return true;
}


FC_NOSAN inline void syncthreads(int line) {
  Fiber* f = the_ctx.cur;
  f->state = BAR;
  f->bar_line = line;
  yield_to_scheduler();
}

template <class T> inline uint64_t bits(T v) {
  static_assert(sizeof(T) <= 8, "warp intrinsics take values of at most 8 bytes");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T> inline T unbits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

FC_NOSAN inline uint64_t warp_op(WarpOp op, unsigned mask, uint64_t value, int arg, int width, int line) {
  Fiber* f = the_ctx.cur;
  int lane = f->linear % 32;
  if (!(mask >> lane & 1u)) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "line %d: lane %d calls a warp intrinsic with mask 0x%08x, which leaves "
                  "the lane itself out", line, lane, mask);
    fail(buf);
  }
  f->op = op; f->mask = mask; f->value = value; f->arg = arg; f->width = width; f->line = line;
  f->state = WARP;
  yield_to_scheduler();
  return f->result;
}

inline std::string lanes_str(unsigned m) {
  std::string s;
  for (int i = 0; i < 32;) {
    if (!(m >> i & 1u)) { ++i; continue; }
    int j = i;
    while (j + 1 < 32 && (m >> (j + 1) & 1u)) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(i) + (j > i ? "-" + std::to_string(j) : "");
    i = j + 1;
  }
  return s.empty() ? "none" : s;
}

// Resolve the warp operations whose participants have all arrived. Returns true on progress.
FC_NOSAN inline bool resolve_warps(int nthreads) {
  Fiber* F = trk.fibers;
  bool progress = false;
  for (int base = 0; base < nthreads; base += 32) {
    int n = std::min(32, nthreads - base);
    for (int l = 0; l < n; ++l) {
      Fiber& a = F[base + l];
      if (a.state != WARP) continue;
      bool ready = true;
      for (int k = 0; k < 32; ++k) {
        if (!(a.mask >> k & 1u)) continue;
        if (k >= n) {
          char buf[200];
          std::snprintf(buf, sizeof buf, "line %d: mask 0x%08x names lane %d, which does not exist "
                        "(the block has %d threads)", a.line, a.mask, k, nthreads);
          ctx().error = buf;
          return false;
        }
        Fiber& b = F[base + k];
        if (b.state == DONE) {
          char buf[240];
          std::snprintf(buf, sizeof buf, "line %d: warp %d: lanes %s wait in a warp intrinsic with mask "
                        "0x%08x, but lane %d has already returned", a.line, base / 32,
                        lanes_str(a.mask).c_str(), a.mask, k);
          ctx().error = buf;
          return false;
        }
        if (b.state != WARP || b.mask != a.mask || b.op != a.op) { ready = false; break; }
      }
      if (!ready) continue;
      unsigned ballot = 0;
      for (int k = 0; k < 32; ++k)
        if ((a.mask >> k & 1u) && F[base + k].value) ballot |= 1u << k;
      const unsigned lanes = n == 32 ? 0xffffffffu : (1u << n) - 1u;
      const bool full = (a.mask & lanes) == lanes;
      for (int k = 0; k < 32; ++k) {
        if (!(a.mask >> k & 1u)) continue;
        Fiber& t = F[base + k];
        int w = t.width, seg = k & ~(w - 1), src = k;
        switch (t.op) {
          case W_SHFL_IDX: src = seg + (t.arg % w); break;
          case W_SHFL_XOR: src = k ^ t.arg; if (src >= seg + w || src < seg) src = k; break;
          case W_SHFL_DOWN: src = k + t.arg; if (src >= seg + w) src = k; break;
          case W_SHFL_UP: src = k - t.arg; if (src < seg) src = k; break;
          default: break;
        }
        if (t.op == W_BALLOT) t.result = ballot;
        else if (t.op == W_SYNC) t.result = 0;
        else t.result = (a.mask >> src & 1u) && src < n ? F[base + src].value : t.value;
        t.state = RUN;
        ++t.ws;  // a convergence point of these lanes: orders their shared-memory accesses
        if (full) t.full_ws = t.ws;
        else for (int l = 0; l < 32; ++l) if (a.mask >> l & 1u) t.lane_ws[l] = t.ws;
      }
      progress = true;
    }
  }
  return progress;
}

inline std::string describe_deadlock(int nthreads) {
  auto& F = ctx().fibers;
  std::string s;
  char buf[300];
  std::snprintf(buf, sizeof buf, "deadlock in block (%u, %u, %u): ", ctx().blockIdx.x, ctx().blockIdx.y,
                ctx().blockIdx.z);
  s += buf;
  // group threads by what they wait on
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (int i = 0; i < nthreads; ++i) {
    const Fiber& f = F[i];
    std::string what;
    if (f.state == BAR) what = "__syncthreads() at line " + std::to_string(f.bar_line);
    else if (f.state == WARP) {
      std::snprintf(buf, sizeof buf, "a warp intrinsic (mask 0x%08x) at line %d", f.mask, f.line);
      what = buf;
    } else continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == what; });
    if (it == groups.end()) groups.push_back({what, {i}}); else it->second.push_back(i);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    auto& ids = groups[g].second;
    std::snprintf(buf, sizeof buf, "%s%zu thread(s) (first %d, last %d) wait in %s", g ? "; " : "", ids.size(),
                  ids.front(), ids.back(), groups[g].first.c_str());
    s += buf;
  }
  int done = 0;
  for (int i = 0; i < nthreads; ++i) done += F[i].state == DONE;
  if (done) s += "; " + std::to_string(done) + " thread(s) have returned";
  s += ". A __syncthreads() inside a branch that not all threads take, or a full-mask warp "
       "intrinsic reached by only part of a warp, never completes.";
  return s;
}

// Run one block to completion. Returns false (and sets error) on a deadlock or fault.
FC_NOSAN inline bool run_block(int nthreads) {
  Ctx& C = the_ctx;
  Fiber* F = trk.fibers;
  ucontext_t proto;
  getcontext(&proto);
  for (int i = 0; i < nthreads; ++i) {
    Fiber& f = F[i];
    f = Fiber();
    f.linear = i;
    f.tid = uint3{(unsigned)(i % C.blockDim.x), (unsigned)(i / C.blockDim.x % C.blockDim.y),
                  (unsigned)(i / (C.blockDim.x * C.blockDim.y))};
    f.uc = proto;
    f.uc.uc_stack.ss_sp = C.stacks + (size_t)i * C.stack_size;
    f.uc.uc_stack.ss_size = C.stack_size;
    f.uc.uc_link = nullptr;
    makecontext(&f.uc, (void (*)())trampoline, 0);
  }
  next_epoch();  // blocks have their own shared memory: nothing of the last block conflicts
  int live = nthreads;
  while (live > 0) {
    bool progress = false;
    for (int i = 0; i < nthreads; ++i) {
      Fiber& f = F[i];
      if (f.state != RUN) continue;
      C.cur = &f;
      int r = _setjmp(C.sched);
      if (r == 0) {
        trk.on = true;
        if (!f.started) { f.started = true; setcontext(&f.uc); }
        else _longjmp(f.env, 1);
      }
      trk.on = false;
      if (r == 2) return false;  // fail() inside the kernel
      progress = true;
      if (f.state == DONE) --live;
    }
    if (live == 0) break;
    if (resolve_warps(nthreads)) progress = true;
    else if (!C.error.empty()) return false;
    // block barrier: every thread still running waits at one; all at the same line
    int at_bar = 0, line = -1;
    bool same = true;
    for (int i = 0; i < nthreads; ++i) {
      if (F[i].state == BAR) {
        ++at_bar;
        if (line < 0) line = F[i].bar_line; else if (F[i].bar_line != line) same = false;
      }
    }
    if (at_bar == live && same) {
      for (int i = 0; i < nthreads; ++i) if (F[i].state == BAR) F[i].state = RUN;
#ifdef FC_TRAFFIC
      traffic_flush();  // requests do not span a barrier
#endif
      next_epoch();
      progress = true;
    }
    if (!progress) { C.error = describe_deadlock(nthreads); return false; }
  }
#ifdef FC_TRAFFIC
  traffic_flush();
#endif
  return true;
}

inline int launch(std::function<void()> body, dim3 grid, dim3 block, size_t smem) {
  auto& C = ctx();
  int nthreads = (int)(block.x * block.y * block.z);
  if (nthreads < 1 || nthreads > 1024) { C.error = "a block holds 1 to 1024 threads"; return 1; }
  C.body = std::move(body);
  C.gridDim = grid; C.blockDim = block;
  C.error.clear();
  if (trk.load_error) { C.error = trk.load_error; return 1; }
  if (!prepare_smem(smem)) { C.error = "cannot allocate shared memory"; return 1; }
  if (C.nstacks < (size_t)nthreads) {
    if (C.stacks) munmap(C.stacks, C.nstacks * C.stack_size);
    void* p = mmap(nullptr, (size_t)nthreads * C.stack_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) { C.error = "cannot allocate fiber stacks"; return 1; }
    C.stacks = (char*)p; C.nstacks = nthreads;
  }
  C.fibers.resize(nthreads);
  trk.fibers = C.fibers.data();
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        C.blockIdx = uint3{x, y, z};
        if (!run_block(nthreads)) return 1;
      }
  return 0;
}

}  // namespace fc

#define threadIdx (fc::ctx().cur->tid)
#define blockIdx (fc::ctx().blockIdx)
#define blockDim (fc::ctx().blockDim)
#define gridDim (fc::ctx().gridDim)
#define __syncthreads() fc::syncthreads(__LINE__)
#define __syncwarp(...) fc::syncwarp_(__LINE__, ##__VA_ARGS__)
#define __shfl_sync(m, v, s, ...) fc::shfl_(fc::W_SHFL_IDX, m, v, s, __LINE__, ##__VA_ARGS__)
#define __shfl_xor_sync(m, v, s, ...) fc::shfl_(fc::W_SHFL_XOR, m, v, s, __LINE__, ##__VA_ARGS__)
#define __shfl_down_sync(m, v, s, ...) fc::shfl_(fc::W_SHFL_DOWN, m, v, s, __LINE__, ##__VA_ARGS__)
#define __shfl_up_sync(m, v, s, ...) fc::shfl_(fc::W_SHFL_UP, m, v, s, __LINE__, ##__VA_ARGS__)
#define __ballot_sync(m, p) fc::ballot_(m, p, __LINE__)
#define __any_sync(m, p) (fc::ballot_(m, p, __LINE__) != 0u)
#define __all_sync(m, p) (fc::ballot_(m, p, __LINE__) == (unsigned)(m))

namespace fc {
inline void syncwarp_(int line, unsigned mask = 0xffffffffu) { warp_op(W_SYNC, mask, 0, 0, 32, line); }
template <class T> inline T shfl_(WarpOp op, unsigned mask, T v, int arg, int line, int width = 32) {
  return unbits<T>(warp_op(op, mask, bits(v), arg, width, line));
}
inline unsigned ballot_(unsigned mask, int pred, int line) {
  return (unsigned)warp_op(W_BALLOT, mask, pred ? 1 : 0, 0, 32, line);
}
}  // namespace fc

inline unsigned __activemask() { return 0xffffffffu; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }

// ---- math the course uses (exact here: __expf is expf) ----
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
using std::abs;  // abs(float) as in CUDA (without it, C's abs(int) truncates 0.25f to 0)
using std::max;
using std::min;
inline float max(float a, int b) { return std::max(a, (float)b); }
inline float min(float a, int b) { return std::min(a, (float)b); }
inline unsigned max(unsigned a, int b) { return std::max(a, (unsigned)b); }
inline unsigned min(unsigned a, int b) { return std::min(a, (unsigned)b); }

// ---- atomics (fibers switch only at barriers, so plain operations are atomic) ----
// Not inlined: the return address is the caller's line, for a race report. The value converts to
// the pointer's type (atomicAdd(&unsigned_counter, 1) compiles, as with nvcc's overloads).
namespace fc { template <class T> struct same { using type = T; }; }
#define FC_ATOMIC(NAME, EXPR)                                                            \
  template <class T> __attribute__((noinline)) T NAME(T* p, typename fc::same<T>::type v) { \
    bool was = fc::atomic_begin((void*)p, sizeof(T), __builtin_return_address(0));           \
    T o = *p;                                                                            \
    *p = (EXPR);                                                                         \
    fc::atomic_end(was);                                                                 \
    return o;                                                                            \
  }
FC_ATOMIC(atomicAdd, o + v)
FC_ATOMIC(atomicSub, o - v)
FC_ATOMIC(atomicMax, o > v ? o : v)
FC_ATOMIC(atomicMin, o < v ? o : v)
FC_ATOMIC(atomicExch, v)
FC_ATOMIC(atomicOr, o | v)
FC_ATOMIC(atomicAnd, o & v)
FC_ATOMIC(atomicXor, o ^ v)
template <class T> __attribute__((noinline)) T atomicCAS(T* p, typename fc::same<T>::type cmp,
                                                          typename fc::same<T>::type v) {
  bool was = fc::atomic_begin((void*)p, sizeof(T), __builtin_return_address(0));
  T o = *p;
  if (o == cmp) *p = v;
  fc::atomic_end(was);
  return o;
}
inline void __threadfence() {}
inline void __threadfence_block() {}

// ---- vector types ----
#define FC_VEC2(T, N) struct alignas(2 * sizeof(T)) N##2 { T x, y; }; \
  inline N##2 make_##N##2(T a, T b) { return N##2{a, b}; }
#define FC_VEC4(T, N) struct alignas(4 * sizeof(T) > 16 ? 16 : 4 * sizeof(T)) N##4 { T x, y, z, w; }; \
  inline N##4 make_##N##4(T a, T b, T c, T d) { return N##4{a, b, c, d}; }
FC_VEC2(float, float) FC_VEC4(float, float)
FC_VEC2(int, int) FC_VEC4(int, int)
FC_VEC2(unsigned, uint) FC_VEC4(unsigned, uint)
FC_VEC2(double, double)
struct float3 { float x, y, z; };
inline float3 make_float3(float a, float b, float c) { return float3{a, b, c}; }

// ---- half and bfloat16 (storage types; arithmetic through float) ----
namespace fc {
inline unsigned short f2h(float f) {
  unsigned x = __float_as_uint(f), sign = (x >> 16) & 0x8000u;
  unsigned e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
  if (e == 0xffu) return (unsigned short)(sign | 0x7c00u | (m ? 0x200u : 0));
  int ex = (int)e - 127 + 15;
  if (ex >= 31) return (unsigned short)(sign | 0x7c00u);
  if (ex <= 0) {
    if (ex < -10) return (unsigned short)sign;
    m |= 0x800000u;
    int shift = 14 - ex;
    unsigned r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (unsigned short)(sign | r);
  }
  unsigned r = (unsigned)(ex << 10) | (m >> 13), rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (unsigned short)(sign | r);
}
inline float h2f(unsigned short h) {
  unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  if (e == 0) {
    if (!m) x = sign;
    else { int k = -1; do { m <<= 1; ++k; } while (!(m & 0x400u)); x = sign | ((unsigned)(112 - k) << 23) | ((m & 0x3ffu) << 13); }
  } else if (e == 31) x = sign | 0x7f800000u | (m << 13);
  else x = sign | ((e + 112) << 23) | (m << 13);
  return __uint_as_float(x);
}
inline unsigned short f2bf(float f) {
  unsigned x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (unsigned short)(x >> 16);
}
inline float bf2f(unsigned short b) { return __uint_as_float((unsigned)b << 16); }
}  // namespace fc

#define FC_HALF_TYPE(T, TO, FROM)                                                        \
  struct T {                                                                             \
    unsigned short bits_;                                                                \
    T() = default;                                                                       \
    T(float f) : bits_(TO(f)) {}                                                         \
    T(double f) : bits_(TO((float)f)) {}                                                 \
    T(int i) : bits_(TO((float)i)) {}                                                    \
    operator float() const { return FROM(bits_); }                                       \
  };                                                                                     \
  inline T operator+(T a, T b) { return T((float)a + (float)b); }                        \
  inline T operator-(T a, T b) { return T((float)a - (float)b); }                        \
  inline T operator*(T a, T b) { return T((float)a * (float)b); }                        \
  inline T operator/(T a, T b) { return T((float)a / (float)b); }                        \
  inline T operator-(T a) { return T(-(float)a); }
FC_HALF_TYPE(__half, fc::f2h, fc::h2f)
FC_HALF_TYPE(__nv_bfloat16, fc::f2bf, fc::bf2f)
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;
struct alignas(4) __half2 { __half x, y; };
struct alignas(4) __nv_bfloat162 { __nv_bfloat16 x, y; };
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return (float)h; }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return (float)b; }
inline __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }
inline __half2 __float2half2_rn(float a) { return __half2{__half(a), __half(a)}; }
inline float2 __half22float2(__half2 h) { return float2{(float)h.x, (float)h.y}; }
inline float __low2float(__half2 h) { return (float)h.x; }
inline float __high2float(__half2 h) { return (float)h.y; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(b)}; }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{(float)h.x, (float)h.y}; }
inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half2 __hadd2(__half2 a, __half2 b) { return __half2{a.x + b.x, a.y + b.y}; }
inline __half2 __hmul2(__half2 a, __half2 b) { return __half2{a.x * b.x, a.y * b.y}; }

#define INFINITY_F __int_as_float(0x7f800000)
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#define FLT_MAX 3.402823466e+38f
#define FLT_MIN 1.175494351e-38f

// ---- the instrumentation's hooks (GCC -fsanitize=thread without its runtime) ----
#if !defined(__SANITIZE_THREAD__) && defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define __SANITIZE_THREAD__ 1
#endif
#endif
#ifdef __SANITIZE_THREAD__
#define FC_TSAN_HOOKS(N)                                                                                  \
  extern "C" FC_NOSAN void __tsan_read##N(void* p) { fc::on_access((uintptr_t)p, N, fc::A_READ, __builtin_return_address(0)); } \
  extern "C" FC_NOSAN void __tsan_write##N(void* p) { fc::on_access((uintptr_t)p, N, fc::A_WRITE, __builtin_return_address(0)); } \
  extern "C" FC_NOSAN void __tsan_volatile_read##N(void* p) { fc::on_access((uintptr_t)p, N, fc::A_READ, __builtin_return_address(0)); } \
  extern "C" FC_NOSAN void __tsan_volatile_write##N(void* p) { fc::on_access((uintptr_t)p, N, fc::A_WRITE, __builtin_return_address(0)); }
#define FC_TSAN_UNALIGNED(N)                                                                              \
  extern "C" FC_NOSAN void __tsan_unaligned_read##N(void* p) { fc::on_access((uintptr_t)p, N, fc::A_READ, __builtin_return_address(0)); } \
  extern "C" FC_NOSAN void __tsan_unaligned_write##N(void* p) { fc::on_access((uintptr_t)p, N, fc::A_WRITE, __builtin_return_address(0)); }
FC_TSAN_HOOKS(1) FC_TSAN_HOOKS(2) FC_TSAN_HOOKS(4) FC_TSAN_HOOKS(8) FC_TSAN_HOOKS(16)
FC_TSAN_UNALIGNED(2) FC_TSAN_UNALIGNED(4) FC_TSAN_UNALIGNED(8) FC_TSAN_UNALIGNED(16)
extern "C" FC_NOSAN void __tsan_read_range(void* p, long n) {
  fc::on_access((uintptr_t)p, (unsigned)n, fc::A_READ, __builtin_return_address(0));
}
extern "C" FC_NOSAN void __tsan_write_range(void* p, long n) {
  fc::on_access((uintptr_t)p, (unsigned)n, fc::A_WRITE, __builtin_return_address(0));
}
extern "C" FC_NOSAN void __tsan_init() {}
extern "C" FC_NOSAN void __tsan_func_entry(void*) {}
extern "C" FC_NOSAN void __tsan_func_exit(void*) {}
extern "C" FC_NOSAN void __tsan_vptr_update(void*, void*) {}
#endif

#ifdef FC_TRAFFIC
// course.cuda.traffic: the launch's tensors (address, bytes) before the launch, the counts after.
extern "C" FC_NOSAN void fc_traffic_begin(int race, int n, const unsigned long long* r) {
  fc::trk.race = race;
  fc::trf.nbuf = n < (int)fc::T_MAX_BUFS ? n : 0;
  for (int i = 0; i < fc::trf.nbuf; ++i) {
    fc::trf.bufs[i].lo = r[2 * i];
    fc::trf.bufs[i].hi = r[2 * i] + r[2 * i + 1];
    fc::trf.lo = std::min(fc::trf.lo, (uintptr_t)r[2 * i]);
    fc::trf.hi = std::max(fc::trf.hi, (uintptr_t)(r[2 * i] + r[2 * i + 1]));
  }
}
extern "C" FC_NOSAN const char* fc_traffic() { return fc::traffic_report(); }
#endif
