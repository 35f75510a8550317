// The forward state pass as a chain of chunk maps, one product a step (a prototype: the maps are
// inputs here; nothing in the forward forms them yet).
//
// The chunk recurrence H_{c+1} = Diag(e^γ_c) H_c + K̄_cᵀ (U_c − W_c H_c) and the chunk's output
// O_c = s (Q̂_c H_c + P_c (U_c − W_c H_c)) are affine in H_c:
//   H_{c+1} = Diag(e^γ_c) H_c − M_c H_c + B_c,   O_c = s (Q'_c H_c + N_c),
//   M_c = K̄ᵀW [K][K], B_c = K̄ᵀU [K][V], Q'_c = Q̂ − P W [C][K], N_c = P U [C][V].
// The state pass (state_fwd) spends a step on two dependent products with E between them (three
// block barriers); with the maps a step is one product on the chain and the output beside it,
// one barrier. bench/affine_scan_numerics.py: with M, B in bf16 and the decay applied to the fp32
// state, the states keep the pass's accuracy (3.9e-3 against 4.0e-3 at K = 128, 256 chunks).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/tensor.h"

namespace rewy::delta::cuda_impl {

struct MapChainArgs {
  // Chunks of kChunk tokens restarting at every sequence start: seq_start [N + 1] token offsets.
  std::vector<int64_t> seq_start;
  Tensor M;     // bf16 [chunks][H][K][K]  row d: the map's row for state row d
  Tensor B;     // bf16 [chunks][H][K][V]
  Tensor Qp;    // bf16 [tokens][H][K]     Q̂ − P W
  Tensor N;     // bf16 [tokens][H][V]     P U
  Tensor gexp;  // f32 [chunks][H][K]      e^γ of each state row (ones: no decay)
  Tensor h0;    // f32 [N][H][K][V], or undefined (zero)
  Tensor o;     // bf16 [tokens][H][V]     out
  Tensor ht;    // f32 [N][H][K][V], or undefined (not stored)
  float scale = 1.f;
  int bv = 16;  // V-slice of a CTA: 16, 32 or 64
};

// Runs the chain on args' stream-ordered tensors (all on one CUDA device) on stream s.
void map_chain_forward(const MapChainArgs& args, const Stream& s);

}  // namespace rewy::delta::cuda_impl
