// clustersim: the command-line entry point. The CLI holds no modeling logic; only this file
// turns errors into exit codes (0 ok, 1 bad input or failed simulation, 2 usage).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "sim/cli/commands.hpp"
#include "sim/engine/error.hpp"

int main(int argc, char** argv) {
  namespace cli = clustersim::cli;
  CLI::App app{"clustersim: discrete-event simulator of LLM training on accelerator clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "clustersim 0.1.0");

  cli::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "simulate a scenario and print its prediction");
  run_cmd->add_option("scenario", run.scenario, "scenario YAML file")->required();
  run_cmd->add_option("--set", run.overrides, "override a key: --set workload.parallelism.tp=4");
  run_cmd->add_option("--format", run.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
  run_cmd->add_option("--out", run.out_dir, "also write result.json into this folder");

  std::string list_kind;
  auto* list_cmd = app.add_subcommand("list", "list what the registries hold");
  list_cmd->add_option("kind", list_kind, "accelerators | models | systems | topologies")
      ->required()
      ->check(CLI::IsMember({"accelerators", "models", "systems", "topologies"}));

  std::string describe_name;
  auto* describe_cmd = app.add_subcommand("describe", "print every parameter of a registry entry");
  describe_cmd->add_option("name", describe_name, "accelerator, model, system or topology name")->required();

  cli::ValidateOptions validate;
  auto* validate_cmd = app.add_subcommand("validate", "compare predictions with published measurements");
  validate_cmd->add_option("--dataset", validate.dataset, "CSV in the ground_truth_training.csv format")
      ->required();
  validate_cmd->add_option("--format", validate.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");

  std::string doc_name;
  auto* docs_cmd = app.add_subcommand("docs", "print generated documentation");
  docs_cmd->add_option("name", doc_name, "scenario-reference")
      ->required()
      ->check(CLI::IsMember({"scenario-reference"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (*run_cmd) return cli::run_command(run, std::cout);
    if (*list_cmd) return cli::list_command(list_kind, std::cout);
    if (*describe_cmd) return cli::describe_command(describe_name, std::cout);
    if (*validate_cmd) return cli::validate_command(validate, std::cout);
    if (*docs_cmd) return cli::docs_command(doc_name, std::cout);
  } catch (const clustersim::Error& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return 1;
  }
  return 2;
}
