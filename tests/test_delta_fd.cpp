// Gradients against central finite differences of the naive forward (f64), for every float
// input: q, k, v, beta or b and w, g, h0. Naive, chunk ReWY and chunk baseline are each compared
// with the same difference quotients.
#include "test_delta_util.h"

using namespace rewy;
using namespace rewy::delta;
using namespace rewy::delta::test;

namespace {

// Central differences with step 1e-5 on f64: truncation ~ eps² |ℓ'''| ~ 1e-10 and cancellation
// ~ 1e-16 |ℓ| / eps ~ 1e-10 for ℓ = O(10), against gradient norms O(1-10); measured <= 4e-9
// (relative L2 per gradient). 1e-6 keeps a factor 250, is 10x inside the 1e-5, and is far
// below the error of any wrong or missing term (>= 1e-4 seen when one gradient is off by 1e-4).
constexpr double kStep = 1e-5;
constexpr double kTol = 1e-6;

double dot(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

// ℓ = <dout, o> + <dht, ht>: its gradient is what backward(dout, dht) returns.
double loss(const Config& cfg, const Inputs& in, const Problem& p) {
  const ForwardResult f = forward(cfg, in);
  return dot(f.o, p.dout) + (p.dht.defined() ? dot(f.ht, p.dht) : 0.0);
}

Grads finite_differences(const Config& naive, const Problem& p) {
  const std::pair<Tensor Inputs::*, Tensor Grads::*> fields[] = {
      {&Inputs::q, &Grads::dq},       {&Inputs::k, &Grads::dk}, {&Inputs::v, &Grads::dv},
      {&Inputs::beta, &Grads::dbeta}, {&Inputs::g, &Grads::dg}, {&Inputs::b, &Grads::db},
      {&Inputs::w, &Grads::dw},       {&Inputs::h0, &Grads::dh0}};
  Grads fd;
  for (const auto& [x, dx] : fields) {
    const Tensor& t = p.in.*x;
    if (!t.defined()) continue;
    std::vector<double> val = t.to_vector(), grad(val.size());
    Inputs in = p.in;
    for (size_t i = 0; i < val.size(); ++i) {
      const double x0 = val[i];
      // g must stay <= 0: near zero, a smaller step (the function is smooth there too)
      const double h = x == &Inputs::g ? std::min(kStep, -x0 / 2) : kStep;
      val[i] = x0 + h;
      in.*x = Tensor::from_vector(val, t.shape(), DType::F64);
      const double up = loss(naive, in, p);
      val[i] = x0 - h;
      in.*x = Tensor::from_vector(val, t.shape(), DType::F64);
      const double down = loss(naive, in, p);
      val[i] = x0;
      grad[i] = (up - down) / (2 * h);
    }
    fd.*dx = Tensor::from_vector(grad, t.shape(), DType::F64);
  }
  return fd;
}

void check_fd(const Case& c, int chunk) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(fmt::format("{} chunk={} seed={}", c.str(), chunk, seed));
  const Problem p = make_problem(c, seed);
  const Grads fd = finite_differences(config(c.variant, Impl::Naive), p);
  expect_grads_close(run_backward(config(c.variant, Impl::Naive), p), fd, kTol, "naive");
  for (BackwardAlgo algo : {BackwardAlgo::ReWY, BackwardAlgo::Baseline})
    expect_grads_close(run_backward(config(c.variant, Impl::Chunk, algo, Policy::Recompute, chunk), p), fd, kTol,
                       name(algo));
}

class DeltaFiniteDifferences : public testing::TestWithParam<Variant> {};

// Two chunks, the second ragged; K != V; gates strong enough that every decay term matters.
TEST_P(DeltaFiniteDifferences, TwoChunks) {
  Case c;
  c.variant = GetParam(), c.T = 70, c.H = 2, c.K = 8, c.V = 12;
  c.gates = Gates::Uniform, c.gate = -1.0;
  check_fd(c, 64);
}

// Three sequences (one inside a single chunk), 16-row chunks, β in (0, 2), no dht.
TEST_P(DeltaFiniteDifferences, VarlenSmallChunks) {
  Case c;
  c.variant = GetParam(), c.T = 60, c.seqlens = {21, 9, 30}, c.H = 1, c.K = 8, c.V = 12;
  c.gates = Gates::Uniform, c.gate = -2.0, c.wide_beta = true, c.dht = false;
  check_fd(c, 16);
}

INSTANTIATE_TEST_SUITE_P(AllOps, DeltaFiniteDifferences, testing::ValuesIn(all_variants()), variant_name);

}  // namespace
