// Random fills from the counter-based stream of engine/rng.h: element i of the contiguous
// tensor t is value i of stream (seed, offset), so a CPU and a GPU tensor filled with the same
// arguments hold the same numbers (uniform: bit-identical for every dtype; normal: identical up
// to the last-bit rounding of the GPU's f64 log/sin/cos). Distinct `offset`s give independent
// streams for one seed (e.g. one per parameter tensor).
#pragma once
#include <cstdint>

#include "engine/tensor.h"

namespace rewy {

// Uniform in [lo, hi): lo + (hi - lo)·u with u = rng::uniform (24 random bits).
void fill_uniform(Tensor& t, uint64_t seed, uint64_t offset, double lo = 0.0, double hi = 1.0,
                  const Stream* s = nullptr);
// Normal: mean + stddev·z with z = rng::normal_f64 (Box-Muller on 53-bit uniforms).
void fill_normal(Tensor& t, uint64_t seed, uint64_t offset, double mean = 0.0, double stddev = 1.0,
                 const Stream* s = nullptr);

}  // namespace rewy
