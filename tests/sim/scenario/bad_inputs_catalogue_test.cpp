// The catalogue of bad inputs (tests/data/bad_inputs): every file is one case, and adding a
// case is adding a file. A case is a scenario (or, with `# command: validate FILE`, a
// validation dataset) whose header comments say where the error is and what it says:
//
//   # what is wrong, in words
//   # error-at: 06-nodes-zero.yaml:6:10: cluster.nodes
//   # error: out of range: must be between 1 and 10000000, got 0
//
// (several `# error:` lines: the line must hold each of them, e.g. the message and its
// "did you mean" hint apart from a list of valid choices that grows with the library.)
// The case is loaded (and run, if it loads) as `clustersim run` would; it must fail with a
// typed error (clustersim::Error, never a crash or "internal error") one of whose lines starts
// with the `error-at` position and key and holds every `error` text. Paths in messages are taken
// relative to the catalogue folder. Data files the cases name live in bad_inputs/files/.
//
// `# when: run` marks the one kind of error found after loading: a workload that does not fit in
// memory loads, and its run refuses it (the check needs the built workload; moving it into the
// loader would refuse the scenarios `search` and `capacity` start from), at the setting that chose
// the layout. Such a case must load, then fail when run at its `error-at` position.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/validate/csv_table.hpp"
#include "sim/validate/serving_validation.hpp"
#include "sim/validate/training_validation.hpp"

namespace bad_inputs_catalogue_test {

namespace fs = std::filesystem;

namespace {

const fs::path kFolder = fs::path(CLUSTERSIM_TEST_DATA_DIR) / "bad_inputs";

/// A case's header: where the error is, what it says, and how to feed the input.
struct BadInput {
  fs::path file;
  std::string error_at;  ///< "file:line:column: key" (or "file:line: column 'name'" in a CSV)
  std::vector<std::string> errors;  ///< fragments of the message's line
  std::string command;   ///< "" (load and run the scenario) or "validate FILE"
  std::string when;      ///< "" (refused when it loads) or "run" (loads, refused when it runs)
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

BadInput read_case(const fs::path& file) {
  BadInput input;
  input.file = file;
  std::istringstream lines(read_text(file));
  std::string line;
  const auto value = [&](std::string_view tag, std::string& out) {
    if (line.rfind(tag, 0) == 0) out = line.substr(tag.size());
  };
  while (std::getline(lines, line) && line.rfind("#", 0) == 0) {
    value("# error-at: ", input.error_at);
    if (line.rfind("# error: ", 0) == 0) input.errors.push_back(line.substr(9));
    value("# command: ", input.command);
    value("# when: ", input.when);
  }
  return input;
}

/// Every occurrence of `from` in `text` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

/// What the case's input makes the simulator say: the error's message, or why there was none.
/// `loaded`: the scenario loaded (the error came from its run).
std::string error_of(const BadInput& input, bool& typed, bool& loaded) {
  typed = false;
  loaded = false;
  try {
    if (input.command.rfind("validate ", 0) == 0) {
      const fs::path dataset = kFolder / input.command.substr(9);
      if (clustersim::validate::is_inference_dataset(clustersim::validate::read_csv_file(dataset))) {
        (void)clustersim::validate::validate_serving_dataset(dataset);
      } else {
        (void)clustersim::validate::validate_training_dataset(dataset, {});
      }
      return "(no error: the dataset validated)";
    }
    if (!input.command.empty()) return "(unknown command '" + input.command + "')";
    const auto scenario = clustersim::scenario::load_scenario(input.file);
    loaded = true;
    (void)clustersim::runner::run_scenario(scenario);
    return "(no error: the scenario loaded and ran)";
  } catch (const clustersim::Error& e) {
    typed = true;
    return e.what();
  } catch (const std::exception& e) {
    return std::string("internal error: ") + e.what();
  }
}

/// True when a line of `message` ("error: " dropped) starts with `error_at` + ": " and holds
/// every one of `errors`.
bool message_has(const std::string& message, const std::string& error_at, const std::vector<std::string>& errors) {
  std::istringstream lines(message);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("error: ", 0) == 0) line = line.substr(7);
    if (line.rfind(error_at + ": ", 0) != 0) continue;
    if (std::all_of(errors.begin(), errors.end(),
                    [&](const std::string& error) { return line.find(error) != std::string::npos; })) {
      return true;
    }
  }
  return false;
}

std::vector<fs::path> case_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kFolder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every bad input in the catalogue gets its message at its position") {
  const std::vector<fs::path> files = case_files();
  CHECK(files.size() >= 60);
  for (const fs::path& file : files) {
    const BadInput input = read_case(file);
    INFO("case ", file.filename().string());
    REQUIRE_MESSAGE(!input.error_at.empty(), "the case has no '# error-at:' line");
    REQUIRE_MESSAGE(!input.errors.empty(), "the case has no '# error:' line");
    const auto start = std::chrono::steady_clock::now();
    bool typed = false, loaded = false;
    const std::string message = replace_all(error_of(input, typed, loaded), kFolder.string() + "/", "");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    INFO("message: ", message);
    CHECK_MESSAGE(typed, "not a clustersim::Error");
    REQUIRE_MESSAGE((input.when.empty() || input.when == "run"), "'# when: ' takes only 'run'");
    CHECK_MESSAGE(loaded == (input.when == "run"), (loaded ? "it loaded: only its run failed" : "it did not load"));
    CHECK(seconds < 5.0);  // a bad input is refused quickly (the alias bomb took 16 s)
    std::string expected;
    for (const std::string& error : input.errors) expected += " '" + error + "'";
    CHECK_MESSAGE(message_has(message, input.error_at, input.errors), "expected a line starting '", input.error_at,
                  ": ' holding", expected);
  }
}

TEST_CASE("the catalogue harness fails a case whose position or message is wrong") {
  const std::string message =
      "a.yaml:6:10: cluster.nodes: out of range: must be between 1 and 10000000, got 0\n"
      "a.yaml:12:17: workload.global_batch: out of range: must be between 1 and 1e+12, got 0";
  CHECK(message_has(message, "a.yaml:6:10: cluster.nodes", {"got 0"}));
  CHECK(message_has(message, "a.yaml:6:10: cluster.nodes", {"out of range", "got 0"}));
  CHECK(message_has(message, "a.yaml:12:17: workload.global_batch", {"1e+12"}));
  CHECK(message_has("error: " + message, "a.yaml:6:10: cluster.nodes", {"got 0"}));
  CHECK(!message_has(message, "a.yaml:7:10: cluster.nodes", {"got 0"}));              // line
  CHECK(!message_has(message, "a.yaml:6:11: cluster.nodes", {"got 0"}));              // column
  CHECK(!message_has(message, "a.yaml:6:10: cluster", {"got 0"}));                    // key
  CHECK(!message_has(message, "a.yaml:6:10: cluster.nodes", {"got 1"}));              // text
  CHECK(!message_has(message, "a.yaml:6:10: cluster.nodes", {"got 0", "got 1"}));     // one of two
  CHECK(!message_has(message, "a.yaml:6:10: cluster.nodes", {"1e+12"}));              // another line's text
  const BadInput input = read_case(kFolder / "06-nodes-zero.yaml");
  CHECK(input.error_at == "06-nodes-zero.yaml:8:10: cluster.nodes");
  CHECK(input.command.empty());
}

}  // namespace bad_inputs_catalogue_test
