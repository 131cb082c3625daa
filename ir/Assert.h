// FUSEC_ASSERT: the channel for bugs. A failed assertion is never reachable
// from user input; it prints where and why, then aborts (in every build type,
// since a wrong answer from a compiler is worse than a crash report).
#pragma once

namespace fusec {
[[noreturn]] void assertionFailed(const char *cond, const char *msg, const char *file, int line);
} // namespace fusec

#define FUSEC_ASSERT(cond, msg)                                                                    \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::fusec::assertionFailed(#cond, msg, __FILE__, __LINE__);                                    \
  } while (0)
