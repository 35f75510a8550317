// `rewy info`: what this build has and which devices it sees.
#include <fmt/format.h>

#include "cli/commands.h"
#include "engine/device.h"

namespace rewy::cli {

Command make_info_command() {
  Command c;
  c.add_to = [](CLI::App& app) { return app.add_subcommand("info", "Show build options and visible devices"); };
  c.run_fn = [] {
    fmt::print("rewy {}\n", "0.1.0");
    fmt::print("cuda backend: {}\n", cuda_built() ? "built (sm_90a)" : "not built (-DREWY_CUDA=OFF)");
    const int n = cuda_device_count();
    fmt::print("cuda devices: {}\n", n);
    for (int i = 0; i < n; ++i) fmt::print("  {}\n", device_description(cuda(i)));
    return 0;
  };
  return c;
}

}  // namespace rewy::cli
