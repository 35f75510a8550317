// `rewy demo`: placeholder until the engine ops land (replaced by the engine demo).
#include <fmt/format.h>

#include "cli/commands.h"

namespace rewy::cli {

Command make_demo_command() {
  Command c;
  c.add_to = [](CLI::App& app) { return app.add_subcommand("demo", "Run a small end-to-end engine demo"); };
  c.run_fn = [] {
    fmt::print("demo\n");
    return 0;
  };
  return c;
}

}  // namespace rewy::cli
