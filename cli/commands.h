// Registry of subcommands. A subcommand file defines `Command make_<name>_command()`, which adds
// its options to the app and returns the function that runs it.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <vector>

namespace rewy::cli {

struct Command {
  std::function<CLI::App*(CLI::App&)> add_to;  // registers the subcommand and its options
  std::function<int()> run_fn;
  CLI::App* sub = nullptr;
  void add(CLI::App& app) { sub = add_to(app); }
  int run() { return run_fn(); }
};

Command make_info_command();
Command make_demo_command();
Command make_op_command();

inline std::vector<Command> all_commands() { return {make_info_command(), make_demo_command(), make_op_command()}; }

}  // namespace rewy::cli
