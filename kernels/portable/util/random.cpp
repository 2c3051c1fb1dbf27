#include "kernels/portable/util/random.h"

#include <cmath>

namespace kiln {
namespace portable {

namespace {

uint64_t g_seed = kDefaultRandomSeed;
uint64_t g_counter = 0;

}  // namespace

void set_random_seed(uint64_t seed) {
  g_seed = seed;
  g_counter = 0;
}

uint64_t random_bits() {
  uint64_t z = g_seed + (++g_counter) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double random_normal() {
  // 1 - u is in (0, 1]: log never sees 0.
  const double u1 = 1.0 - random_uniform<double>();
  const double u2 = random_uniform<double>();
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

}  // namespace portable
}  // namespace kiln
