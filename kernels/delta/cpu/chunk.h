// The chunkwise (WY) delta rule on CPU, computed in T = float or double (the inputs' dtype):
// forward §2, backward §3 + the WY part by ReWY (§5) or the FLA baseline (§4), the saving policies
// of §2.3. Works per (sequence, head), chunks restarting at every sequence start.
#pragma once
#include "kernels/delta/delta.h"

namespace rewy::delta::cpu {

template <typename T>
ForwardResult chunk_forward(const Config& cfg, const Inputs& in, const Dims& dims);

// Writes (=) every gradient. `fwd` must hold what cfg.policy saves (check_backward_inputs).
template <typename T>
Grads chunk_backward(const Config& cfg, const Inputs& in, const Dims& dims, const ForwardResult& fwd,
                     const Tensor& dout, const Tensor& dht);

}  // namespace rewy::delta::cpu
