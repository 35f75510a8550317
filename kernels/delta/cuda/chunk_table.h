// The chunk list of a sequence layout on the device (delta_cuda.cu builds and caches it): chunks
// of kChunk tokens restarting at every sequence start.
#pragma once
#include "engine/tensor.h"
#include "kernels/delta/delta.h"

namespace rewy::delta::cuda_impl {

// grad_items (DeltaParams): the overlapped backward's grad_chunk takes chunks in the order the
// state passes finish them, {chunk, tok0, len, position in its sequence} each: `serial` by
// state_bwd's step (last chunk of each sequence first), `paired` by the later of the replay's step
// (first chunk first) and state_bwd's (the middle chunks first), for passes that run side by side.
// prep_order (DeltaParams::prep_items): the forward's wy_prep beside its state pass takes chunks by
// their place in their sequence, the order the pass reads them.
struct ChunkTable {
  Tensor chunk_tok, chunk_len, seq_chunk;  // i32 [num_chunks], [num_chunks], [N + 1]
  Tensor grad_serial, grad_paired;         // i32 [num_chunks][4]
  Tensor prep_order;                       // i32 [num_chunks][4]: by position in the sequence (wy_prep beside the pass)
  int num_chunks = 0, num_seqs = 0;
};

// dims.N and dims.seq_start's table on dev, uploaded on s the first time that layout meets the
// device and reused after (so that a call does not upload and synchronise each time).
ChunkTable make_chunk_table(const Dims& dims, Device dev, const Stream& s);

}  // namespace rewy::delta::cuda_impl
