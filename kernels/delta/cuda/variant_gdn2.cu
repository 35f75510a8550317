// Kernel instantiations for one variant (the four compile in parallel).
#include "kernels/delta/cuda/launch_impl.cuh"

REWY_DELTA_INSTANTIATE(rewy::delta::cuda_impl::kGDN2)
