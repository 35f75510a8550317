// rewy: command-line entry point. Each subcommand lives in its own file and registers here.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "engine/check.h"

int main(int argc, char** argv) {
  CLI::App app{"rewy: train delta-rule linear-attention language models (CPU and CUDA)"};
  app.require_subcommand(1);
  std::vector<rewy::cli::Command> commands = rewy::cli::all_commands();
  for (auto& c : commands) c.add(app);
  // CLI11 reports an unknown subcommand as a missing one; name it instead.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](const auto& c) { return c.sub->check_name(argv[1]); })) {
    std::fprintf(stderr, "rewy: unknown subcommand '%s'\nRun with --help for the list.\n", argv[1]);
    return static_cast<int>(CLI::ExitCodes::ExtrasError);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (auto& c : commands)
      if (c.sub && c.sub->parsed()) return c.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rewy: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
