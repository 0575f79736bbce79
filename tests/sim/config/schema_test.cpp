#include "sim/config/schema.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace schema_test {

using namespace clustersim::config;

namespace {
std::vector<Field> test_fields() {
  return {
      integer_field("count", "how many").range(1, 16).need(),
      number_field("ratio", "a fraction").positive().range(0, 1).def("0.5"),
      boolean_field("flag", "a switch").def("true"),
      enum_field("shape", {"ring", "tree", "mesh"}, "algorithm").def("ring"),
      quantity_field("bandwidth", Dimension::bytes_per_s, "link rate").positive(),
      object_field("inner", {integer_field("depth", "levels").range(0, 3).def("2")}, "nested"),
      map_field("named", {string_field("label", "a label").need()}, "name -> object"),
  };
}

std::vector<Diagnostic> check(const std::string& yaml) {
  std::vector<Diagnostic> diagnostics;
  const ConfigNode root = parse_config(yaml, "s.yaml", diagnostics);
  REQUIRE(diagnostics.empty());
  validate(root, test_fields(), "", diagnostics);
  sort_diagnostics(diagnostics);
  return diagnostics;
}

std::string only(const std::string& yaml) {
  const auto diagnostics = check(yaml);
  REQUIRE(diagnostics.size() == 1);
  return diagnostics[0].render();
}
}  // namespace

TEST_CASE("diagnostics: closest_match and edit distance") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(closest_match("fat-tre", {"fat-tree", "switch"}).value() == "fat-tree");
  CHECK(closest_match("H100-SXM", {"a100-sxm-80gb", "h100-sxm"}).value() == "h100-sxm");
  CHECK_FALSE(closest_match("torus", {"fat-tree", "switch"}).has_value());
  // Budget is max(2, len/3): "clustre" (7 chars) allows 2 edits (a transposition costs 2).
  CHECK(closest_match("clustre", {"cluster"}).value() == "cluster");
  CHECK_FALSE(closest_match("abc", {"xyz"}).has_value());
}

TEST_CASE("diagnostics: ScenarioError renders every diagnostic sorted by file, line, column") {
  const ScenarioError error({
      Diagnostic{"b.yaml", 1, 1, "x", "third", ""},
      Diagnostic{"a.yaml", 7, 3, "", "second", "did you mean 'y'?"},
      Diagnostic{"a.yaml", 2, 9, "k.p", "first", "valid choices: a, b"},
  });
  CHECK(std::string(error.what()) ==
        "a.yaml:2:9: k.p: first (valid choices: a, b)\n"
        "a.yaml:7:3: second (did you mean 'y'?)\n"
        "b.yaml:1:1: x: third");
  REQUIRE(error.diagnostics().size() == 3);
  CHECK(error.diagnostics()[0].message == "first");
  const clustersim::ConfigError& as_config_error = error;  // it is a ConfigError
  CHECK(std::string(as_config_error.what()).find("second") != std::string::npos);
}

TEST_CASE("schema: a valid document has no diagnostics") {
  CHECK(check("count: 4\nratio: 1\nflag: no\nshape: tree\nbandwidth: 10 GB/s\ninner: {depth: 0}\n"
              "named: {one: {label: x}}\n")
            .empty());
}

TEST_CASE("schema: each kind of problem is reported at its position") {
  CHECK(only("count: 4\ncolor: red\n") ==
        "s.yaml:2:1: color: unknown key 'color' (valid keys: count, ratio, flag, shape, bandwidth, inner, named)");
  CHECK(only("count: 4\nshap: ring\n") ==
        "s.yaml:2:1: shap: unknown key 'shap' (valid keys: count, ratio, flag, shape, bandwidth, inner, named "
        "| did you mean 'shape'?)");
  CHECK(only("count: eight\n") == "s.yaml:1:8: count: expected an integer, got \"eight\"");
  CHECK(only("count: 2.5\n") == "s.yaml:1:8: count: expected an integer, got \"2.5\"");
  CHECK(only("count: 17\n") == "s.yaml:1:8: count: out of range: must be between 1 and 16, got 17");
  CHECK(only("count: 1\nratio: 0\n") == "s.yaml:2:8: ratio: out of range: must be > 0 and <= 1, got 0");
  CHECK(only("count: 1\nflag: maybe\n") == "s.yaml:2:7: flag: expected true or false, got \"maybe\"");
  CHECK(only("count: 1\nshape: rign\n") ==
        "s.yaml:2:8: shape: invalid value 'rign' (valid choices: ring, tree, mesh | did you mean 'ring'?)");
  CHECK(only("count: 1\nbandwidth: 400\n") ==
        "s.yaml:2:12: bandwidth: missing unit: expected a bandwidth such as \"400 Gb/s\" or \"3.35 TB/s\"");
  CHECK(only("count: 1\nbandwidth: 0 GB/s\n") ==
        "s.yaml:2:12: bandwidth: out of range: must be > 0 B/s, got \"0 GB/s\"");
  CHECK(only("count: 1\nbandwidth: [1]\n") ==
        "s.yaml:2:12: bandwidth: expected a bandwidth such as \"400 Gb/s\" or \"3.35 TB/s\", got a list");
  CHECK(only("count: 1\ninner: {depht: 1}\n") ==
        "s.yaml:2:9: inner.depht: unknown key 'depht' (valid keys: depth | did you mean 'depth'?)");
  CHECK(only("count: 1\ninner: 3\n") == "s.yaml:2:8: inner: expected a mapping, got \"3\"");
  CHECK(only("count: 1\nnamed:\n  one: {}\n") == "s.yaml:3:8: named.one.label: missing required key 'label'");
  CHECK(only("ratio: 0.5\n") == "s.yaml:1:1: count: missing required key 'count'");
  CHECK(only("count:\n") == "s.yaml:1:1: count: missing value");
}

TEST_CASE("schema: all problems are collected, sorted by position") {
  const auto diagnostics = check("shape: x\ncount: 0\nextra: 1\n");
  REQUIRE(diagnostics.size() == 3);
  CHECK(diagnostics[0].key_path == "shape");
  CHECK(diagnostics[1].key_path == "count");
  CHECK(diagnostics[2].key_path == "extra");
}

TEST_CASE("schema: find_field walks objects and named entries; positions fall back to written ancestors") {
  std::vector<Diagnostic> diagnostics;
  const ConfigNode root = parse_config("count: 3\nbandwidth: 400 Gb/s\n", "s.yaml", diagnostics);
  const auto fields = test_fields();
  CHECK_FALSE(has_value(root, "ratio"));
  CHECK(has_value(root, "count"));
  CHECK(position_of(root, "inner.depth").to_string() == "s.yaml:1:1");  // falls back to the root
  CHECK(position_of(root, "bandwidth").to_string() == "s.yaml:2:12");
  CHECK(find_field(fields, {"named", "anything", "label"})->key == "label");
  CHECK(find_field(fields, {"inner", "nope"}) == nullptr);
}

}  // namespace schema_test
