// flashcourse CPU execution layer for CUDA cells (correctness only, nothing is timed).
// Every CUDA thread of a block is a fiber; blocks run one after another on one OS thread.
// Fibers switch only at __syncthreads, __syncwarp and warp intrinsics, which are real
// barriers honouring their masks; threads that return drop out. A barrier nobody can pass
// is reported as a deadlock that names the block and what its threads wait on.
#pragma once
#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sys/mman.h>
#include <ucontext.h>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __shared__ static
#define __constant__ static
#define warpSize 32

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
  std::vector<char> dyn_smem;
  std::string error;
};
inline Ctx& ctx() { static Ctx c; return c; }

inline void yield_to_scheduler() {
  Fiber* f = ctx().cur;
  if (!_setjmp(f->env)) _longjmp(ctx().sched, 1);
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

inline void* dynamic_smem() { return ctx().dyn_smem.data(); }

inline void syncthreads(int line) {
  Fiber* f = ctx().cur;
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

inline uint64_t warp_op(WarpOp op, unsigned mask, uint64_t value, int arg, int width, int line) {
  Fiber* f = ctx().cur;
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
inline bool resolve_warps(int nthreads) {
  auto& F = ctx().fibers;
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
inline bool run_block(int nthreads) {
  auto& C = ctx();
  auto& F = C.fibers;
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
  int live = nthreads;
  while (live > 0) {
    bool progress = false;
    for (int i = 0; i < nthreads; ++i) {
      Fiber& f = F[i];
      if (f.state != RUN) continue;
      C.cur = &f;
      int r = _setjmp(C.sched);
      if (r == 0) {
        if (!f.started) { f.started = true; setcontext(&f.uc); }
        else _longjmp(f.env, 1);
      }
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
      progress = true;
    }
    if (!progress) { C.error = describe_deadlock(nthreads); return false; }
  }
  return true;
}

inline int launch(std::function<void()> body, dim3 grid, dim3 block, size_t smem) {
  auto& C = ctx();
  int nthreads = (int)(block.x * block.y * block.z);
  if (nthreads < 1 || nthreads > 1024) { C.error = "a block holds 1 to 1024 threads"; return 1; }
  C.body = std::move(body);
  C.gridDim = grid; C.blockDim = block;
  C.dyn_smem.assign(smem + 16, 0);
  C.error.clear();
  if (C.nstacks < (size_t)nthreads) {
    if (C.stacks) munmap(C.stacks, C.nstacks * C.stack_size);
    void* p = mmap(nullptr, (size_t)nthreads * C.stack_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) { C.error = "cannot allocate fiber stacks"; return 1; }
    C.stacks = (char*)p; C.nstacks = nthreads;
  }
  C.fibers.resize(nthreads);
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
using std::max;
using std::min;
inline float max(float a, int b) { return std::max(a, (float)b); }
inline float min(float a, int b) { return std::min(a, (float)b); }
inline unsigned max(unsigned a, int b) { return std::max(a, (unsigned)b); }
inline unsigned min(unsigned a, int b) { return std::min(a, (unsigned)b); }

// ---- atomics (fibers switch only at barriers, so plain operations are atomic) ----
template <class T> inline T atomicAdd(T* p, T v) { T o = *p; *p = o + v; return o; }
template <class T> inline T atomicSub(T* p, T v) { T o = *p; *p = o - v; return o; }
template <class T> inline T atomicMax(T* p, T v) { T o = *p; *p = o > v ? o : v; return o; }
template <class T> inline T atomicMin(T* p, T v) { T o = *p; *p = o < v ? o : v; return o; }
template <class T> inline T atomicExch(T* p, T v) { T o = *p; *p = v; return o; }
template <class T> inline T atomicCAS(T* p, T cmp, T v) { T o = *p; if (o == cmp) *p = v; return o; }
template <class T> inline T atomicOr(T* p, T v) { T o = *p; *p = o | v; return o; }
template <class T> inline T atomicAnd(T* p, T v) { T o = *p; *p = o & v; return o; }
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
