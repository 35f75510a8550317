#include "kernels/delta/delta.h"

namespace rewy::delta {

Variant parse_variant(const std::string& s) {
  if (s == "deltanet") return Variant::DeltaNet;
  if (s == "gdn") return Variant::GDN;
  if (s == "kda") return Variant::KDA;
  if (s == "gdn2") return Variant::GDN2;
  REWY_FAIL("unknown op '{}': expected deltanet, gdn, kda or gdn2", s);
}
BackwardAlgo parse_backward(const std::string& s) {
  if (s == "rewy") return BackwardAlgo::ReWY;
  if (s == "baseline") return BackwardAlgo::Baseline;
  REWY_FAIL("unknown backward '{}': expected rewy or baseline", s);
}
Policy parse_policy(const std::string& s) {
  if (s == "recompute") return Policy::Recompute;
  if (s == "save") return Policy::Save;
  REWY_FAIL("unknown policy '{}': expected recompute or save", s);
}
Impl parse_impl(const std::string& s) {
  if (s == "naive") return Impl::Naive;
  if (s == "chunk") return Impl::Chunk;
  REWY_FAIL("unknown impl '{}': expected naive or chunk", s);
}
const char* name(Variant v) {
  switch (v) {
    case Variant::DeltaNet: return "deltanet";
    case Variant::GDN: return "gdn";
    case Variant::KDA: return "kda";
    case Variant::GDN2: return "gdn2";
  }
  return "?";
}
const char* name(BackwardAlgo b) { return b == BackwardAlgo::ReWY ? "rewy" : "baseline"; }
const char* name(Policy p) { return p == Policy::Recompute ? "recompute" : "save"; }
const char* name(Impl i) { return i == Impl::Naive ? "naive" : "chunk"; }

}  // namespace rewy::delta
