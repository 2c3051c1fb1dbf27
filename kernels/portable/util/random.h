// The random numbers of rand, randn and native_dropout.
//
// A counter-based generator: value k of the stream is a 64-bit mix (SplitMix64's
// finaliser) of seed + k * golden-ratio increment. One stream is shared by every
// kernel of the program (single-threaded, like the runtime); it starts from
// kDefaultRandomSeed, so a program draws the same numbers on every start and every
// target. No heap, no state but one counter.
#pragma once

#include <cstdint>

namespace kiln {
namespace portable {

constexpr uint64_t kDefaultRandomSeed = 0x4b494c4e;  // "KILN"

/// Restarts the stream from `seed`.
void set_random_seed(uint64_t seed);

/// The next 64 random bits.
uint64_t random_bits();

/// Uniform in [0, 1) with T's precision (24 bits for float, 53 for double).
template <typename T>
T random_uniform() {
  constexpr int kBits = sizeof(T) == 4 ? 24 : 53;
  return static_cast<T>(random_bits() >> (64 - kBits)) * (static_cast<T>(1) / static_cast<T>(1ull << kBits));
}

/// Standard normal (Box-Muller over two uniforms), computed in double.
double random_normal();

}  // namespace portable
}  // namespace kiln
