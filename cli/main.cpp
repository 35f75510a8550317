// rewy: command-line entry point. Each subcommand lives in its own file and registers here.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "engine/check.h"

int main(int argc, char** argv) {
  CLI::App app{"rewy: train delta-rule linear-attention language models (CPU and CUDA)"};
  app.require_subcommand(1);
  std::vector<rewy::cli::Command> commands = rewy::cli::all_commands();
  for (auto& c : commands) c.add(app);
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
