// Runs a function on a thread with a large stack: parsing and the AST walkers recurse, and a
// big stack keeps pathological nesting (already bounded by the front end) far from the limit.
// Shared by the `tlc` driver and the fuzzer so that both run the compiler under one stack.
#pragma once

#include <pthread.h>

namespace tlc::driver {

inline constexpr size_t kCompilerStackBytes = size_t(256) << 20;

// Runs fn(arg) on a thread of kCompilerStackBytes; if no such thread can be made, runs it on
// the caller's thread rather than failing.
inline void runOnLargeStack(void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kCompilerStackBytes);
  pthread_t thread;
  if (pthread_create(&thread, &attr, fn, arg) != 0)
    fn(arg);
  else
    pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

} // namespace tlc::driver
