#include "sim/config/config_tree.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config_test_support.hpp"

namespace config_tree_test {

using namespace clustersim::config;
using clustersim::config::testing::parse_ok;

namespace {
const std::string kData = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/scenario";
}  // namespace

TEST_CASE("config_tree: nodes and keys carry 1-based positions") {
  const ConfigNode root = parse_ok("a:\n  b: 3\n  c: [1, two]\nd: x\n");
  REQUIRE(root.is_mapping());
  CHECK(root.keys() == std::vector<std::string>{"a", "d"});
  const ConfigEntry* a = root.find_entry("a");
  REQUIRE(a != nullptr);
  CHECK(a->key_position.to_string() == "t.yaml:1:1");
  const ConfigNode* b = root.find_path("a.b");
  REQUIRE(b != nullptr);
  CHECK(b->text == "3");
  CHECK(b->position.line == 2);
  CHECK(b->position.column == 6);
  const ConfigNode* c = root.find_path("a.c");
  REQUIRE(c != nullptr);
  REQUIRE(c->items.size() == 2);
  CHECK(c->items[1].text == "two");
  CHECK(c->items[1].position.to_string() == "t.yaml:3:10");
  CHECK(root.find_path("a.missing") == nullptr);
  CHECK(root.find_path("d.x") == nullptr);  // d is a scalar
}

TEST_CASE("config_tree: YAML syntax errors and duplicate keys become positioned diagnostics") {
  std::vector<Diagnostic> diagnostics;
  parse_config("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].file == "bad.yaml");
  CHECK(diagnostics[0].line == 3);
  CHECK(diagnostics[0].column == 2);
  CHECK(diagnostics[0].render() == "bad.yaml:3:2: YAML syntax error: end of sequence flow not found");

  // A tab in the indentation: yaml-cpp's message does not say so; the hint names the tab.
  diagnostics.clear();
  parse_config("a:\n\tb: 1\n", "tab.yaml", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() ==
        "tab.yaml:2:3: YAML syntax error: illegal map value (line 2 column 1 indents with a tab: YAML indents with "
        "spaces only; replace the tab with spaces)");
  diagnostics.clear();
  parse_config("a: \"x\ty\"\nb: [1\n", "tab-in-value.yaml", diagnostics);  // a tab inside a value is no hint
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].hint.empty());

  diagnostics.clear();
  parse_config("a: 1\nb: 2\na: 3\n", "dup.yaml", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() == "dup.yaml:3:1: a: duplicate key 'a'");
}

TEST_CASE("config_tree: deep merge merges maps and replaces scalars and lists") {
  ConfigNode base = parse_ok("m: {x: 1, y: 2, n: {p: 1}}\nlist: [1, 2]\nkeep: k\n");
  const ConfigNode overlay = parse_ok("m: {y: 5, n: {q: 2}}\nlist: [3]\nnew: v\n");
  merge_config(base, overlay);
  CHECK(base.find_path("m.x")->text == "1");
  CHECK(base.find_path("m.y")->text == "5");
  CHECK(base.find_path("m.n.p")->text == "1");
  CHECK(base.find_path("m.n.q")->text == "2");
  REQUIRE(base.find("list")->items.size() == 1);
  CHECK(base.find("list")->items[0].text == "3");
  CHECK(base.find("keep")->text == "k");
  CHECK(base.find("new")->text == "v");
  CHECK(base.keys() == std::vector<std::string>{"m", "list", "keep", "new"});
}

TEST_CASE("config_tree: nested includes merge underneath, later files override") {
  std::vector<Diagnostic> diagnostics;
  const ConfigNode root = load_config_file(kData + "/inc_top.yaml", "/nonexistent", diagnostics);
  REQUIRE(diagnostics.empty());
  CHECK(root.find("include") == nullptr);
  CHECK(root.find_path("section.x")->text == "1");   // from base
  CHECK(root.find_path("section.y")->text == "20");  // mid overrides base
  CHECK(root.find_path("section.deep.p")->text == "a");
  CHECK(root.find_path("section.deep.q")->text == "top");  // top overrides base deep key
  REQUIRE(root.find("items")->items.size() == 1);
  CHECK(root.find("items")->items[0].text == "9");
  CHECK(root.find("only_base")->text == "true");
  // Positions point into the file each value came from.
  CHECK(root.find_path("section.y")->position.file == kData + "/inc_mid.yaml");
  CHECK(root.find_path("section.y")->position.line == 4);
  CHECK(root.find_path("section.x")->position.file == kData + "/inc_base.yaml");
}

TEST_CASE("config_tree: include falls back to the library data dir") {
  std::vector<Diagnostic> diagnostics;
  const ConfigNode root = load_config_string("include: scenario/inc_base.yaml\nz: 1\n",
                                             "/nowhere/virtual.yaml", CLUSTERSIM_TEST_DATA_DIR, diagnostics);
  REQUIRE(diagnostics.empty());
  CHECK(root.find_path("section.x")->text == "1");
  CHECK(root.find("z")->text == "1");
}

TEST_CASE("config_tree: an included file that is not YAML keys is reported without quoting it") {
  const auto text = std::filesystem::temp_directory_path() / "clustersim-include-text.txt";
  std::ofstream(text) << "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
  std::vector<Diagnostic> diagnostics;
  load_config_string("include: [" + text.string() + "]\nz: 1\n", "/nowhere/virtual.yaml", "/nonexistent", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].message ==
        "an included file must be a mapping of scenario keys; this one is plain text (79 characters, 2 words), not a "
        "scenario or preset file");
  CHECK(diagnostics[0].render().find("root:x") == std::string::npos);
  CHECK(diagnostics[0].file == text.lexically_normal().string());  // at the included file's start
  CHECK(diagnostics[0].line == 1);
  CHECK(diagnostics[0].column == 1);
  std::filesystem::remove(text);
  // Elsewhere a long scalar is cut to its start.
  ConfigNode scalar;
  scalar.kind = ConfigNode::Kind::scalar;
  scalar.text = std::string(100, 'a');
  CHECK(scalar.describe() == "\"" + std::string(60, 'a') + "...\" (100 characters)");
}

TEST_CASE("config_tree: missing include and include cycle are errors with positions") {
  std::vector<Diagnostic> diagnostics;
  load_config_file(kData + "/missing_include.yaml", "/nonexistent-data", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].file == kData + "/missing_include.yaml");
  CHECK(diagnostics[0].line == 3);
  CHECK(diagnostics[0].column == 5);
  CHECK(diagnostics[0].message.rfind("include file 'no-such-preset.yaml' not found (looked for '" + kData +
                                         "/no-such-preset.yaml' and '/nonexistent-data/no-such-preset.yaml')",
                                     0) == 0);

  diagnostics.clear();
  load_config_file(kData + "/cycle_a.yaml", "/nonexistent", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].file == kData + "/cycle_b.yaml");
  CHECK(diagnostics[0].line == 2);
  CHECK(diagnostics[0].column == 11);
  CHECK(diagnostics[0].message == "include cycle: " + kData + "/cycle_a.yaml -> " + kData + "/cycle_b.yaml -> " +
                                      kData + "/cycle_a.yaml");

  diagnostics.clear();
  load_config_string("include: {a: 1}\n", "v.yaml", "/nonexistent", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() == "v.yaml:1:10: include: expected a file path or a list of file paths, got a mapping");
}

TEST_CASE("config_tree: --set overrides existing keys with YAML-parsed values") {
  ConfigNode root = parse_ok("workload:\n  parallelism: {tp: 8, pp: 2}\n");
  std::vector<Diagnostic> diagnostics;
  apply_set_override(root, "workload.parallelism.tp=4", diagnostics);
  apply_set_override(root, "workload.parallelism.pp=[1, 2]", diagnostics);
  REQUIRE(diagnostics.empty());
  const ConfigNode* tp = root.find_path("workload.parallelism.tp");
  CHECK(tp->text == "4");
  CHECK(tp->position.file == "--set workload.parallelism.tp=4");
  CHECK(root.find_path("workload.parallelism.pp")->items.size() == 2);

  // A path the schema knows but the file does not spell out is created.
  apply_set_override(root, "simulation.seed=7", diagnostics,
                     [](const std::vector<std::string>& path) { return path.front() == "simulation"; });
  REQUIRE(diagnostics.empty());
  CHECK(root.find_path("simulation.seed")->text == "7");
}

TEST_CASE("config_tree: --set errors") {
  ConfigNode root = parse_ok("workload:\n  parallelism: {tp: 8, pp: 2}\n");
  std::vector<Diagnostic> diagnostics;
  apply_set_override(root, "workload.parallelism.tpp=4", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() ==
        "<command line>: workload.parallelism.tpp: unknown key 'tpp' in --set workload.parallelism.tpp=4 "
        "(valid keys: tp, pp | did you mean 'tp'?)");

  diagnostics.clear();
  apply_set_override(root, "workload.parallelism", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() == "<command line>: expected --set key.path=value, got 'workload.parallelism'");

  diagnostics.clear();
  apply_set_override(root, "workload.parallelism.tp=[1, 2", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() ==
        "--set workload.parallelism.tp=[1, 2: workload.parallelism.tp: cannot parse the value '[1, 2' as YAML");

  diagnostics.clear();
  apply_set_override(root, "workload.parallelism.tp.x=1", diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].message == "cannot set a key inside \"8\" in --set workload.parallelism.tp.x=1");
  CHECK(root.find_path("workload.parallelism.tp")->text == "8");  // unchanged
}

TEST_CASE("config_tree: env CLUSTERSIM_DATA overrides the library data dir") {
  const std::filesystem::path built_in = library_data_dir();
  CHECK(built_in.filename() == "data");
  ::setenv("CLUSTERSIM_DATA", "/tmp/my-presets", 1);
  CHECK(library_data_dir() == std::filesystem::path("/tmp/my-presets"));
  ::unsetenv("CLUSTERSIM_DATA");
  CHECK(library_data_dir() == built_in);
}

}  // namespace config_tree_test
