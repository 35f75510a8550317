// The E-system identity behind the ReWY kernels' ∂A (and the bf16 twin's, kernels/delta/rw_from_ru.h):
// W and U enter the backward only through E = U − WH, so with ∂X = [−∂E Hᵀ | ∂E] the residual solve
// gives R_W = −R_U Hᵀ and −stril(R Xᵀ) = −stril(R_U Eᵀ). Checked in f64 on random chunks, ragged
// ones included, against wy_backward's two forms of R2, and with R_W formed from R_U (rw_state).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "kernels/delta/cpu/chunk_ops.h"

namespace {

using rewy::delta::BackwardAlgo;
using rewy::delta::cpu::wy_backward;

double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double x : a) m = std::max(m, std::abs(x));
  return m;
}

TEST(DeltaWyEForm, DAFromEMatchesDAFromX) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed=" << seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  for (int n : {64, 37, 1}) {
    for (auto [K, V] : {std::pair{128, 128}, std::pair{32, 48}}) {
      const int KV = K + V;
      std::vector<double> T(size_t(n) * n, 0.0), W(size_t(n) * K), U(size_t(n) * V), H(size_t(K) * V), dE(size_t(n) * V);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) T[size_t(i) * n + j] = i == j ? 1.0 : 0.3 * nd(rng);  // 𝒯 is unit lower
      for (auto* v : {&W, &U, &H, &dE})
        for (double& x : *v) x = nd(rng);
      std::vector<double> X(size_t(n) * KV), dX(size_t(n) * KV, 0.0), E(size_t(n) * V), Y(size_t(n) * KV, 0.0);
      for (int i = 0; i < n; ++i) {
        for (int d = 0; d < K; ++d) X[size_t(i) * KV + d] = W[size_t(i) * K + d];
        for (int v = 0; v < V; ++v) {
          X[size_t(i) * KV + K + v] = U[size_t(i) * V + v];
          dX[size_t(i) * KV + K + v] = dE[size_t(i) * V + v];
          double wh = 0;
          for (int d = 0; d < K; ++d) wh += W[size_t(i) * K + d] * H[size_t(d) * V + v];
          E[size_t(i) * V + v] = U[size_t(i) * V + v] - wh;
        }
        for (int d = 0; d < K; ++d) {  // ∂W = −∂E Hᵀ
          double s = 0;
          for (int v = 0; v < V; ++v) s += dE[size_t(i) * V + v] * H[size_t(d) * V + v];
          dX[size_t(i) * KV + d] = -s;
        }
      }
      // ReWY's WY backward in f64 (no rounding) with R_W from R_U (rw_state) and ∂A from E (e_rows) or not.
      auto run = [&](const double* rw_state, const double* e_rows) {
        std::pair<std::vector<double>, std::vector<double>> dYA{std::vector<double>(size_t(n) * KV),
                                                                std::vector<double>(size_t(n) * n)};
        wy_backward(BackwardAlgo::ReWY, n, KV, T.data(), X.data(), Y.data(), dX.data(), dYA.first.data(),
                    dYA.second.data(), false, rw_state, K, e_rows);
        return dYA;
      };
      const auto [dY0, dA0] = run(nullptr, nullptr);
      const auto [dY1, dA1] = run(nullptr, E.data());
      const auto [dY2, dA2] = run(H.data(), E.data());
      const double scale = std::max(max_abs(dA0), 1e-300);
      for (size_t i = 0; i < dA0.size(); ++i) {
        ASSERT_NEAR(dA1[i], dA0[i], 1e-11 * scale) << "n=" << n << " K=" << K << " V=" << V << " at " << i;
        ASSERT_NEAR(dA2[i], dA0[i], 1e-11 * scale) << "rw_state, n=" << n << " K=" << K << " V=" << V << " at " << i;
      }
      const double yscale = max_abs(dY0);
      for (size_t i = 0; i < dY0.size(); ++i) {
        ASSERT_EQ(dY1[i], dY0[i]);  // ∂Y does not depend on the form of R2
        ASSERT_NEAR(dY2[i], dY0[i], 1e-11 * yscale);
      }
      if (n > 1) {
        EXPECT_GT(max_abs(dA0), 0.0);
        // The E form reads E: E[0][0] off U − WH moves ∂A[i][0] = −R_U[i]·E[0] for i > 0.
        std::vector<double> Ebad = E;
        Ebad[0] += 1.0;
        const std::vector<double> dAb = run(nullptr, Ebad.data()).second;
        double moved = 0;
        for (size_t i = 0; i < dA0.size(); ++i) moved = std::max(moved, std::abs(dAb[i] - dA0[i]));
        EXPECT_GT(moved, 1e-6 * scale);
      }
      for (int i = 0; i < n; ++i)
        for (int j = i; j < n; ++j) EXPECT_EQ(dA1[size_t(i) * n + j], 0.0);  // strictly lower
    }
  }
}

}  // namespace
