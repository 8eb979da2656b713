#ifndef TESSEL_TESTS_COMMON_BUILDSLOWDOWN_H
#define TESSEL_TESTS_COMMON_BUILDSLOWDOWN_H

// How much slower this build runs than a Release build, for the few tests whose
// limits separate "bounded" from "unbounded" by wall time (a hang killed at its
// timeout, a budget that stops an infinite loop within 30 s). AddressSanitizer
// (make test-sanitize, -O1) makes the simulator and Halide's lowering several
// times slower, so such a limit scales by kBuildSlowdown; speed itself is
// measured by benchmarks, never by these tests.

namespace tessel::test {

#if defined(__SANITIZE_ADDRESS__)
constexpr int kBuildSlowdown = 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kBuildSlowdown = 10;
#else
constexpr int kBuildSlowdown = 1;
#endif
#else
constexpr int kBuildSlowdown = 1;
#endif

} // namespace tessel::test

#endif
