// Random delta-rule problems with the benchmark's input distributions (../shared/bench/README.md):
// q, k l2-normalised N(0,1) rows; v ~ N(0,1); beta = sigmoid(U(0,1)); g = logsigmoid(N(0,1)) / 16
// (GDN per head, KDA/GDN2 per channel) or another gate distribution (Gates); GDN2 b, w ~ U(0,1);
// h0 ~ 0.1 N(0,1); dout ~ N(0,1); dht ~ N(0,1). Generated on the CPU from a counter RNG: the same
// seed gives the same problem everywhere. Also the comparison helpers that the tests and the
// accuracy tool share.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/delta/delta.h"

namespace rewy::delta {

enum class Gates {
  Bench,     // logsigmoid(N(0,1)) / 16, the benchmark's gates
  SafeGate,  // -5 sigmoid(N(0,1)): KDA's safe-gate range, per-step log-decay down to -5
  Uniform,   // gate * U(0, 1]: per-step log-decay down to `gate`
  Constant,  // gate everywhere: the per-step bound itself
};

struct RandomSpec {
  Variant variant = Variant::GDN;
  int64_t B = 1, T = 64, H = 2, K = 64, V = 64;
  std::vector<int64_t> seqlens;  // varlen (B must be 1; Σ = T) when non-empty
  bool h0 = true, dht = true;
  Gates gates = Gates::Bench;
  double gate = -5.0;      // for Gates::Uniform and Gates::Constant
  bool wide_beta = false;  // beta ~ U(0, 2) instead of sigmoid(U(0, 1))
  bool cu_i32 = false;     // cu_seqlens as i32 (else i64)
  bool round_bf16 = true;  // round q, k, v, beta, b, w, dout to bf16 values (what a bf16 kernel sees)
  DType dtype = DType::F64;
  uint64_t seed = 1;
};

struct RandomCase {
  Inputs in;
  Tensor dout;  // [B, T, H, V]
  Tensor dht;   // [N, H, K, V] or undefined
};

RandomCase make_random_case(const RandomSpec& spec);

// Benchmark-sized problems generated directly on the GPU (same distributions, bf16/f32 as the
// kernels take them); no varlen.
RandomCase make_random_case_cuda(const RandomSpec& spec, Device dev);

// The dtypes the CUDA kernels take: q k v beta b w dout bf16; g h0 dht f32; cu_seqlens i32.
RandomCase to_cuda(const RandomCase& c, Device dev);
// Same values as CPU tensors of one floating dtype.
RandomCase to_cpu(const RandomCase& c, DType dt);

// ||a - b|| / ||b|| over all elements (f64), both any device/dtype.
double relative_error(const Tensor& a, const Tensor& b);
bool all_finite(const Tensor& t);

// Forward then backward; every output and gradient the operator produced, by name
// (o, ht, dq, dk, dv, dbeta, dg, db, dw, dh0).
std::map<std::string, Tensor> run_named(const Config& cfg, const RandomCase& c);

// The CPU references of a CUDA result on the same (bf16-valued) inputs: the chunk path in f64, and
// its bf16 twin (f32, Config::round_to_bf16) whose error sets the kernels' bar.
struct CpuReference {
  std::map<std::string, Tensor> exact, twin;
};
CpuReference cpu_reference(Variant v, const RandomCase& c64);
// The same with cfg's options (its variant; round_to_bf16 set for the twin alone), e.g. a twin that
// rounds where a kernel path chosen by the device does (Config::dk_state_term On); cpu_twin: that twin alone.
CpuReference cpu_reference_with(const Config& cfg, const RandomCase& c64);
std::map<std::string, Tensor> cpu_twin(const Config& cfg, const RandomCase& c64);

}  // namespace rewy::delta
