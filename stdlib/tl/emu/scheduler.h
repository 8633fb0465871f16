// tl/emu/scheduler.h - the threads of one block as fibers, run in a seeded random order.
//
// Every CUDA thread of the block being emulated is a fiber (ucontext, its own small stack).
// A fiber runs until it reaches a barrier or a warp-collective instruction, or ends; the
// scheduler then picks the next fiber uniformly at random (seeded) among those that can run.
// So between two barriers the threads of a block interleave in an order that changes with the
// seed, and a missing __syncthreads() lets a thread read shared memory that the threads it
// should have waited for have not written yet: a wrong answer, not a lucky right one.
// Blocks run one after another. Nothing here is thread-safe: the emulator is one OS thread.
#pragma once

#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

namespace tl::emu {

// What the driver (tlc run --emulate) sets from its command line.
struct Config {
  std::uint64_t seed = 1;       // the order of the fibers (and nothing else)
  std::size_t stack_bytes = 1u << 20;  // per fiber; reserved, touched only as used
  long max_blocks = 0;          // > 0: run at most this many blocks, a seeded random subset
  bool verbose = false;
};
inline Config& config() {
  static Config c;
  return c;
}

// Lanes per warp: 32 for CUDA; 64 for the HIP lowering (CDNA's wave64), which tlc run
// --emulate compiles with -DTL_EMU_WARP_SIZE=64. Lane masks are 64 bits either way.
#ifndef TL_EMU_WARP_SIZE
#define TL_EMU_WARP_SIZE 32
#endif
inline constexpr int kWarpSize = TL_EMU_WARP_SIZE;
static_assert(kWarpSize == 32 || kWarpSize == 64, "tl emulator: a warp has 32 or 64 lanes");
using LaneMask = std::uint64_t;
inline constexpr LaneMask lane_bit(int lane) { return LaneMask{1} << lane; }
inline constexpr int kNumBarriers = 16;  // bar.sync ids 0..15; __syncthreads() is id 0

struct Block;

// A pending cp.async: the bytes it read at issue, written to shared memory only at the
// cp.async.wait_group that covers its group (cp_async.h).
struct PendingCopy {
  unsigned char* dst;
  unsigned char data[16];
  int bytes;
  long group;
};

struct Thread {
  enum class State { Ready, Running, AtBarrier, AtCollective, Done };
  ucontext_t context;
  unsigned char* stack = nullptr;
  uint3 index{};
  int linear = 0, lane = 0, warp = 0;
  State state = State::Ready;
  const char* waiting_at = "";  // what a blocked fiber waits for (deadlock reports)
  std::vector<PendingCopy> pending;
  long committed_groups = 0;    // cp.async.commit_group count
};

struct Barrier {
  int arrived = 0;
  std::vector<int> waiters;
  // bar.red.or / __syncthreads_or: the OR of the predicates of the phase being gathered, and
  // of the last completed phase (what its waiters read; the next phase cannot complete before
  // every one of them has read it, since each must arrive again).
  bool vote = false, voted = false;
};

// The rendezvous of a warp-collective instruction: each participating lane leaves a pointer to
// its operands; the last one to arrive computes for all (instructions.h, builtins.h).
struct WarpRendezvous {
  LaneMask arrived = 0, mask = 0;
  const char* op = nullptr;
  void* slots[kWarpSize] = {};
};

[[noreturn]] void fail(const char* fmt, ...);

struct Block {
  dim3 grid_dim, block_dim;
  uint3 block_index{};
  std::vector<Thread> threads;
  std::vector<int> ready;
  std::vector<WarpRendezvous> warps;
  Barrier barriers[kNumBarriers];
  int live = 0;
  Thread* current = nullptr;
  ucontext_t scheduler_context;
  std::mt19937_64 rng;
  void (*body)(void*) = nullptr;
  void* body_arg = nullptr;
};

inline Block*& current_block_ptr() {
  static Block* b = nullptr;
  return b;
}
inline Block& current_block() { return *current_block_ptr(); }
inline Thread& self() {
  Block* b = current_block_ptr();
  if (!b || !b->current) fail("a CUDA builtin was used outside a kernel launch");
  return *b->current;
}

inline void fail(const char* fmt, ...) {
  std::fflush(stdout);
  std::fprintf(stderr, "tl emulator: error: ");
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  Block* b = current_block_ptr();
  if (b) {
    std::fprintf(stderr, "\n  in block (%u, %u, %u)", b->block_index.x, b->block_index.y, b->block_index.z);
    if (b->current)
      std::fprintf(stderr, ", thread (%u, %u, %u) (warp %d, lane %d)", b->current->index.x,
                   b->current->index.y, b->current->index.z, b->current->warp, b->current->lane);
  }
  std::fprintf(stderr, "\n");
  std::exit(3);
}

// Back to the scheduler; returns when the scheduler picks this fiber again.
inline void yield() {
  Block& b = current_block();
  Thread& t = *b.current;
  swapcontext(&t.context, &b.scheduler_context);
}

inline void make_ready(int linear) {
  Block& b = current_block();
  b.threads[linear].state = Thread::State::Ready;
  b.ready.push_back(linear);
}

inline void release(Barrier& bar) {
  for (int w : bar.waiters) make_ready(w);
  bar.waiters.clear();
  bar.arrived = 0;
  bar.voted = bar.vote;
  bar.vote = false;
}

// bar.sync id, n / bar.arrive id, n: the barrier completes when n threads have arrived since
// it last completed. Id 0 with every thread of the block is __syncthreads(); threads that have
// exited are not waited for (as on the GPU, where an exited warp no longer counts).
inline void barrier(int id, int num_threads, bool wait, const char* what) {
  Block& b = current_block();
  if (id < 0 || id >= kNumBarriers) fail("%s: barrier id %d is not in 0..15", what, id);
  Thread& t = self();
  Barrier& bar = b.barriers[id];
  ++bar.arrived;
  if (wait) {
    bar.waiters.push_back(t.linear);
    t.state = Thread::State::AtBarrier;
    t.waiting_at = what;
  }
  if (bar.arrived >= num_threads) release(bar);
  if (wait) yield();
}

inline void syncthreads() {
  Block& b = current_block();
  barrier(0, b.live, true, "__syncthreads()");
}

// bar.red.or.pred id, n, p / __syncthreads_or(p): a waiting barrier whose threads all get the
// OR of every arriving thread's predicate.
inline bool barrier_or(int id, int num_threads, bool predicate, const char* what) {
  Block& b = current_block();
  if (id >= 0 && id < kNumBarriers) b.barriers[id].vote |= predicate;
  barrier(id, num_threads, /*wait=*/true, what);
  return b.barriers[id].voted;
}

// One warp-collective operation over the lanes of `mask`: every lane calls it with its own
// operands; `compute(slots)` runs once, in the last lane to arrive, with every lane's operand
// pointer (slots[lane]; lanes outside the mask have none), before any lane goes on.
template <class Compute>
void warp_collective(const char* op, LaneMask mask, void* operands, Compute&& compute) {
  Block& b = current_block();
  Thread& t = self();
  WarpRendezvous& w = b.warps[t.warp];
  const LaneMask bit = lane_bit(t.lane);
  if (!(mask & bit))
    fail("%s: lane %d calls it with mask 0x%llx, which leaves the lane out", op, t.lane,
         static_cast<unsigned long long>(mask));
  if (w.arrived == 0) {
    w.op = op;
    w.mask = mask;
  } else if (std::strcmp(w.op, op) != 0 || w.mask != mask) {
    fail("the lanes of warp %d disagree: %s (mask 0x%llx) here, %s (mask 0x%llx) in lanes 0x%llx", t.warp, op,
         static_cast<unsigned long long>(mask), w.op, static_cast<unsigned long long>(w.mask),
         static_cast<unsigned long long>(w.arrived));
  }
  w.slots[t.lane] = operands;
  w.arrived |= bit;
  t.state = Thread::State::AtCollective;
  t.waiting_at = op;
  if (w.arrived == mask) {
    compute(w.slots);
    w.arrived = 0;
    for (int lane = 0; lane < kWarpSize; ++lane)
      if (mask & lane_bit(lane)) make_ready(t.warp * kWarpSize + lane);
  }
  yield();
}

inline void flush_cp_async(Thread& t);

namespace detail {
inline void fiber_main() {
  Block& b = current_block();
  Thread& t = *b.current;
  b.body(b.body_arg);
  flush_cp_async(t);  // copies never waited for still land (the GPU finishes them too)
  t.state = Thread::State::Done;
  --b.live;
  // __syncthreads() waits for the threads still running only.
  Barrier& bar0 = b.barriers[0];
  if (bar0.arrived > 0 && bar0.arrived >= b.live) release(bar0);
  // returns to uc_link: the scheduler
}

inline unsigned char* stack_pool(std::size_t index, std::size_t bytes) {
  static std::vector<unsigned char*> pool;
  while (pool.size() <= index) {
    // One guard page below each stack: an overflow faults instead of corrupting a neighbour.
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* p = mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) fail("cannot reserve %zu bytes for a fiber stack", bytes);
    mprotect(p, page, PROT_NONE);
    pool.push_back(static_cast<unsigned char*>(p) + page);
  }
  return pool[index];
}

// A fault in the kernel (an out-of-bounds access, a fiber's stack overflow) names the thread.
inline void on_fault(int sig) {
  char msg[200];
  Block* b = current_block_ptr();
  int n = b && b->current
              ? std::snprintf(msg, sizeof msg,
                              "tl emulator: error: signal %d in block (%u, %u, %u), thread (%u, %u, %u)\n", sig,
                              b->block_index.x, b->block_index.y, b->block_index.z, b->current->index.x,
                              b->current->index.y, b->current->index.z)
              : std::snprintf(msg, sizeof msg, "tl emulator: error: signal %d outside a kernel\n", sig);
  if (n > 0 && write(2, msg, static_cast<std::size_t>(n)) < 0) n = 0;
  _exit(3);
}
inline void install_fault_handler() {
  static bool done = false;
  if (done) return;
  done = true;
  static unsigned char alt[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt;
  ss.ss_size = sizeof alt;
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_handler = on_fault;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
  sigaction(SIGFPE, &sa, nullptr);
  sigaction(SIGILL, &sa, nullptr);  // __builtin_trap() (tl::trap on HIP)
}
}  // namespace detail

// Runs `body(arg)` as every thread of block `index`, to completion.
inline void run_block(Block& b, uint3 index, std::uint64_t seed) {
  detail::install_fault_handler();
  const int n = static_cast<int>(b.block_dim.x * b.block_dim.y * b.block_dim.z);
  b.block_index = index;
  b.threads.assign(static_cast<std::size_t>(n), Thread{});
  b.warps.assign(static_cast<std::size_t>((n + kWarpSize - 1) / kWarpSize), WarpRendezvous{});
  for (Barrier& bar : b.barriers) bar = Barrier{};
  b.ready.clear();
  b.live = n;
  b.rng.seed(seed);
  current_block_ptr() = &b;
  const std::size_t stack_bytes = config().stack_bytes;
  for (int i = 0; i < n; ++i) {
    Thread& t = b.threads[static_cast<std::size_t>(i)];
    t.linear = i;
    t.index = make_uint3(static_cast<unsigned>(i) % b.block_dim.x,
                         (static_cast<unsigned>(i) / b.block_dim.x) % b.block_dim.y,
                         static_cast<unsigned>(i) / (b.block_dim.x * b.block_dim.y));
    t.lane = i % kWarpSize;
    t.warp = i / kWarpSize;
    t.stack = detail::stack_pool(static_cast<std::size_t>(i), stack_bytes);
    getcontext(&t.context);
    t.context.uc_stack.ss_sp = t.stack;
    t.context.uc_stack.ss_size = stack_bytes;
    t.context.uc_link = &b.scheduler_context;
    makecontext(&t.context, detail::fiber_main, 0);
    b.ready.push_back(i);
  }
  while (!b.ready.empty()) {
    const std::size_t pick = static_cast<std::size_t>(b.rng() % b.ready.size());
    const int next = b.ready[pick];
    b.ready[pick] = b.ready.back();
    b.ready.pop_back();
    b.current = &b.threads[static_cast<std::size_t>(next)];
    b.current->state = Thread::State::Running;
    swapcontext(&b.scheduler_context, &b.current->context);
  }
  b.current = nullptr;
  if (b.live > 0) {
    // Nothing can run, yet threads have not finished: they wait for each other forever.
    std::fprintf(stderr, "tl emulator: error: deadlock in block (%u, %u, %u): %d of %d threads wait forever\n",
                 index.x, index.y, index.z, b.live, n);
    int shown = 0;
    for (const Thread& t : b.threads)
      if (t.state != Thread::State::Done && shown++ < 8)
        std::fprintf(stderr, "  thread %d (warp %d, lane %d) waits at %s\n", t.linear, t.warp, t.lane, t.waiting_at);
    int done = n - b.live;
    if (done > 0) std::fprintf(stderr, "  %d threads have exited (a barrier or warp collective they skipped?)\n", done);
    std::exit(3);
  }
  current_block_ptr() = nullptr;
}

}  // namespace tl::emu
