#include "sim/config/declarations.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config_test_support.hpp"

namespace declarations_test {

using namespace clustersim;
using namespace clustersim::config;
using clustersim::config::testing::parse_ok;

namespace {

enum class Shape { ring, tree };

const NameTable<Shape>& shape_names() {
  static const NameTable<Shape> names("shape", {{"ring", Shape::ring}, {"tree", Shape::tree}, {"circle", Shape::ring}});
  return names;
}

struct Link {
  double latency_s = 1e-6;
  double efficiency = 0.8;
};

struct Thing {
  int count = 4;
  std::int64_t big = 0;
  double ratio = 0.5;
  bool flag = true;
  std::string label;
  Shape shape = Shape::tree;
  double bandwidth_bytes_per_s = 0;
  std::optional<double> price_usd;
  std::map<int, double> peaks;
  std::vector<int> dims;
  Link link;
};

const Declarations<Thing>& thing_keys() {
  static const Declarations<Thing> keys = [] {
    Declarations<Link> link;
    link.quantity("latency", &Link::latency_s, Dimension::seconds, "per hop");
    link.number("efficiency", &Link::efficiency, "payload fraction").positive().range(0, 1);
    Declarations<Thing> k;
    k.integer("count", &Thing::count, "how many").range(1, 16);
    k.integer("big", &Thing::big, "a large count").range(0, 1e12).need();
    k.number("ratio", &Thing::ratio, "a fraction").range(0, 1);
    k.boolean("flag", &Thing::flag, "a switch");
    k.string("label", &Thing::label, "a label");
    k.enumeration("shape", &Thing::shape, shape_names(), "algorithm");
    k.quantity("bandwidth", &Thing::bandwidth_bytes_per_s, Dimension::bytes_per_s, "rate").positive().optional();
    k.number("price", &Thing::price_usd, "dollars").range(0, 1e9);
    Declarations<Thing> peaks;
    peaks.quantity_entry("one", &Thing::peaks, 1, Dimension::flops_per_s, "first peak");
    k.object("peak", peaks, "peaks");
    k.integer_list("dims", &Thing::dims, "dimension size", 1, 64, "sizes");
    k.object("link", &Thing::link, link, "the link");
    return k;
  }();
  return keys;
}


}  // namespace

TEST_CASE("name tables: parse, first name, aliases, subsets, unknown names list the valid ones") {
  CHECK(shape_names().parse("circle") == Shape::ring);
  CHECK(shape_names().name(Shape::ring) == "ring");
  CHECK(shape_names().names() == std::vector<std::string>{"ring", "tree", "circle"});
  CHECK(shape_names().only({"tree"}).names() == std::vector<std::string>{"tree"});
  CHECK_FALSE(shape_names().only({"tree"}).has(Shape::ring));
  CHECK_THROWS_WITH_AS(shape_names().parse("star"), "unknown shape 'star'; valid: ring, tree, circle", ConfigError);
  CHECK_THROWS_WITH_AS(NameTable<int>("x", {{"a", 1}, {"a", 2}}), "name table 'x' lists 'a' twice", ConfigError);
}

TEST_CASE("declarations: the schema's defaults are the default-constructed struct's values") {
  const std::vector<Field> fields = thing_keys().fields();
  const auto field = [&](const std::vector<std::string>& path) { return find_field(fields, path); };
  CHECK(field({"count"})->default_text == "4");
  CHECK(field({"count"})->max == 16);
  CHECK(field({"big"})->required);
  CHECK(field({"ratio"})->default_text == "0.5");
  CHECK(field({"flag"})->default_text == "true");
  CHECK(field({"label"})->default_text.empty());  // empty string: unset
  CHECK(field({"shape"})->default_text == "tree");
  CHECK(field({"shape"})->choices == std::vector<std::string>{"ring", "tree", "circle"});
  CHECK(field({"bandwidth"})->default_text.empty());  // optional: 0 means unset
  CHECK(field({"price"})->default_text.empty());      // std::nullopt
  CHECK(field({"peak", "one"})->default_text.empty());  // no map entry
  CHECK(field({"dims"})->kind == FieldKind::list);
  CHECK(field({"link", "latency"})->default_text == "1 us");
  CHECK(field({"link", "efficiency"})->default_text == "0.8");
  CHECK(thing_keys().find("link.efficiency") != nullptr);
  CHECK(thing_keys().find("link.nope") == nullptr);
}

TEST_CASE("declarations: reading sets written members only, through member chains and map entries") {
  const ConfigNode node = parse_ok(
      "count: 8\nbig: 5000000000\nratio: 0.25\nflag: no\nlabel: hi\nshape: circle\nbandwidth: \"400 Gb/s\"\n"
      "price: 2.5\npeak: {one: \"1 PFLOP/s\"}\ndims: [4, 2]\nlink: {efficiency: 0.9}\n");
  std::vector<Diagnostic> diagnostics;
  Problems problems(diagnostics);
  Thing thing;
  thing_keys().read(node, "", thing, problems);
  CHECK(diagnostics.empty());
  CHECK(thing.count == 8);
  CHECK(thing.big == 5000000000);
  CHECK(thing.ratio == 0.25);
  CHECK_FALSE(thing.flag);
  CHECK(thing.label == "hi");
  CHECK(thing.shape == Shape::ring);
  CHECK(thing.bandwidth_bytes_per_s == 50e9);
  CHECK(thing.price_usd == 2.5);
  CHECK(thing.peaks.at(1) == 1e15);
  CHECK(thing.dims == std::vector<int>{4, 2});
  CHECK(thing.link.efficiency == 0.9);
  CHECK(thing.link.latency_s == 1e-6);  // not written: the default
  CHECK(thing_keys().defaults_differing(thing) ==
        std::vector<std::string>{"count", "ratio", "flag", "shape", "link.efficiency"});
  CHECK(thing_keys().defaults_differing(Thing{}).empty());
}

TEST_CASE("declarations: a value validation rejects is skipped; list items are range-checked at their position") {
  const ConfigNode node = parse_ok("count: many\ndims: [4, 0, x]\n");
  std::vector<Diagnostic> diagnostics;
  validate(node, thing_keys().fields(), "", diagnostics);
  REQUIRE(diagnostics.size() == 2);  // count's type, big missing
  Problems problems(diagnostics);
  Thing thing;
  thing_keys().read(node, "", thing, problems);
  CHECK(thing.count == 4);
  CHECK(thing.dims == std::vector<int>{4});
  REQUIRE(diagnostics.size() == 4);
  CHECK(diagnostics[2].render() == "t.yaml:2:11: dims: dimension size must be an integer in [1, 64], got \"0\"");
  CHECK(diagnostics[3].render() == "t.yaml:2:14: dims: dimension size must be an integer in [1, 64], got \"x\"");
}

TEST_CASE("declarations: a string list keeps its strings; an item that is not one is a problem at its position") {
  struct Named {
    std::vector<std::string> aliases;
  };
  Declarations<Named> keys;
  keys.string_list("aliases", &Named::aliases, "an alias", "other names");
  const ConfigNode node = parse_ok("aliases: [a/b, \"Llama 3\", {x: 1}]\n");
  std::vector<Diagnostic> diagnostics;
  Problems problems(diagnostics);
  Named named;
  keys.read(node, "", named, problems);
  CHECK(named.aliases == std::vector<std::string>{"a/b", "Llama 3"});
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() == "t.yaml:1:27: aliases: an alias must be a string, got a mapping");
}

TEST_CASE("declarations: a key declared twice is an error; numbers print as YAML users write them") {
  Declarations<Thing> keys;
  keys.integer("count", &Thing::count, "how many");
  CHECK_THROWS_WITH_AS(keys.integer("count", &Thing::count, "again"), "key 'count' is declared twice", ConfigError);
  CHECK(number_text(0.8) == "0.8");
  CHECK(number_text(16) == "16");
  CHECK(number_text(1e9) == "1e9");
  CHECK(number_text(5e8) == "5e8");
  CHECK(number_text(1500) == "1500");
  CHECK(integer_range_text(1, 1e6) == "[1, 1000000]");
}

TEST_CASE("problems: warnings are kept apart from the errors") {
  std::vector<Diagnostic> diagnostics;
  Problems problems(diagnostics);
  problems.warn(Position{"t.yaml", 3, 5}, "a.b", "has no effect");
  CHECK(diagnostics.empty());
  CHECK_FALSE(problems.bad("a.b"));
  REQUIRE(problems.warnings().size() == 1);
  CHECK(problems.warnings()[0].render() == "t.yaml:3:5: a.b: has no effect");
}

}  // namespace declarations_test
