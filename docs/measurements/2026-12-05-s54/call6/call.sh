#!/usr/bin/env bash
# Device call 6 of the fifty-fourth session (carry nothing): pdl_order.cu, the stream-order question
# that putting the decay cut's plan beside wy_prep depends on.
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 2
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" -gencode=arch=compute_90a,code=sm_90a -o /tmp/pdl_order pdl_order.cu && /tmp/pdl_order; echo "exit $?"
