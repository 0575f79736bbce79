// Sweeps (sim/sweep/sweep_spec, sweep_runner): the points a sweep block stands for, their IDs
// and seeds, failing points, shards, resume, merge and the Pareto front.
#include <mutex>
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/diagnostics.hpp"
#include "sim/engine/error.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "temp_folders.hpp"

namespace sweep_test {

using namespace clustersim;
namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(CLUSTERSIM_TEST_DATA_DIR) + "/sweep/";

sweep::SweepSpec parse(const std::string& yaml, std::uint64_t seed = 1) {
  std::vector<config::Diagnostic> diagnostics;
  const config::ConfigNode root = config::parse_config(yaml, "sweep.yaml", diagnostics);
  REQUIRE(diagnostics.empty());
  const config::ConfigEntry* entry = root.find_entry("sweep");
  REQUIRE(entry != nullptr);
  return sweep::parse_sweep(entry->value, entry->key_position, seed);
}

std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> values_of(const sweep::SweepPoint& point) {
  std::vector<std::string> out;
  for (const auto& [key, value] : point.values) out.push_back(key + "=" + value);
  return out;
}

const clustersim::testing::TempFolders folders("clustersim-sweep-test");
fs::path fresh_dir(const std::string& name) { return folders.fresh(name); }
using clustersim::testing::read_text;

const sweep::Metric* metric(const sweep::SweepRow& row, const std::string& column) {
  for (const auto& m : row.metrics) {
    if (m.column == column) return &m;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a 2x2 grid is 4 points in product order, the last key fastest") {
  const auto spec = parse(R"(sweep:
  grid:
    cluster.node.accelerator: [h100-sxm, a100-sxm-80gb]
    cluster.nodes: [1, 2]
)");
  const auto points = sweep::expand_points(spec, 1);
  REQUIRE(points.size() == 4);
  CHECK(values_of(points[0]) == std::vector<std::string>{"cluster.node.accelerator=h100-sxm", "cluster.nodes=1"});
  CHECK(values_of(points[1]) == std::vector<std::string>{"cluster.node.accelerator=h100-sxm", "cluster.nodes=2"});
  CHECK(values_of(points[2]) ==
        std::vector<std::string>{"cluster.node.accelerator=a100-sxm-80gb", "cluster.nodes=1"});
  CHECK(values_of(points[3]) ==
        std::vector<std::string>{"cluster.node.accelerator=a100-sxm-80gb", "cluster.nodes=2"});
  std::set<std::string> ids;
  for (const auto& p : points) {
    CHECK(p.index == static_cast<std::size_t>(&p - points.data()));
    CHECK(p.id.size() == 16);
    ids.insert(p.id);
    // Each point sets its values, then its derived seed.
    REQUIRE(p.overrides.size() == 3);
    CHECK(p.overrides[2].key_path == "simulation.seed");
    CHECK(p.overrides[2].value.text == std::to_string(p.seed));
  }
  CHECK(ids.size() == 4);
  // The key's position in the block travels with the value (errors point there).
  CHECK(points[0].overrides[1].key_position.line == 4);
  CHECK(points[0].overrides[1].key_position.column == 5);
}

TEST_CASE("a point's ID and seed depend on its values only, not on the key order or the other points") {
  const auto a = sweep::expand_points(parse("sweep: {grid: {x.a: [1, 2], x.b: [3]}}"), 5);
  const auto b = sweep::expand_points(parse("sweep: {grid: {x.b: [3], x.a: [2, 1, 9]}}"), 5);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 3);
  CHECK(a[0].id == b[1].id);  // {x.a: 1, x.b: 3}
  CHECK(a[1].id == b[0].id);  // {x.a: 2, x.b: 3}
  CHECK(a[0].seed == b[1].seed);
  CHECK(a[0].seed == sweep::point_seed(5, a[0].id));
  CHECK(a[0].seed != a[1].seed);
  // Another base seed gives other point seeds, the same IDs.
  const auto c = sweep::expand_points(parse("sweep: {grid: {x.a: [1, 2], x.b: [3]}}"), 6);
  CHECK(c[0].id == a[0].id);
  CHECK(c[0].seed != a[0].seed);
  CHECK(a[0].seed < (std::uint64_t{1} << 62));
}

TEST_CASE("sweeping simulation.seed uses the swept seed and derives none") {
  const auto points = sweep::expand_points(parse("sweep: {grid: {simulation.seed: [11, 12]}}"), 1);
  REQUIRE(points.size() == 2);
  CHECK(points[0].seed == 11);
  CHECK(points[1].seed == 12);
  CHECK(points[0].overrides.size() == 1);
}

TEST_CASE("a zip group varies its lists together; it multiplies the grid as one dimension") {
  const auto spec = parse(R"(sweep:
  grid:
    workload.global_batch: [8, 16]
  zip:
    - workload.parallelism.tp: [1, 2, 4]
      workload.parallelism.dp: [4, 2, 1]
)");
  CHECK(sweep::product_size(spec) == 6);
  const auto points = sweep::expand_points(spec, 1);
  REQUIRE(points.size() == 6);
  CHECK(values_of(points[0]) == std::vector<std::string>{"workload.global_batch=8", "workload.parallelism.tp=1",
                                                         "workload.parallelism.dp=4"});
  CHECK(values_of(points[2]) == std::vector<std::string>{"workload.global_batch=8", "workload.parallelism.tp=4",
                                                         "workload.parallelism.dp=1"});
  CHECK(values_of(points[4]) == std::vector<std::string>{"workload.global_batch=16", "workload.parallelism.tp=2",
                                                         "workload.parallelism.dp=2"});
  // A mapping value is one value, shown as flow YAML.
  const auto maps = sweep::expand_points(parse("sweep: {grid: {workload.parallelism: [{tp: 2, dp: 2}]}}"), 1);
  CHECK(values_of(maps[0]) == std::vector<std::string>{"workload.parallelism={tp: 2, dp: 2}"});
}

TEST_CASE("a bad sweep block is reported with positions, keys and choices") {
  const std::string unknown = error_of("sweep:\n  gird: {a: [1]}\n");
  CHECK(unknown.find("sweep.yaml:2:3: sweep.gird: unknown key 'gird'") != std::string::npos);
  CHECK(unknown.find("did you mean 'grid'") != std::string::npos);
  const std::string zip = error_of("sweep:\n  zip:\n    - {a.b: [1, 2], a.c: [1, 2, 3]}\n");
  CHECK(zip.find("sweep.yaml:3:26: sweep.zip[0].a.c: a zip group's lists vary together") != std::string::npos);
  CHECK(zip.find("this one has 3 values, 'a.b' has 2") != std::string::npos);
  CHECK(error_of("sweep: {grid: {a.b: 4}}").find("sweep.grid.a.b: expected a list of values, got \"4\"") !=
        std::string::npos);
  CHECK(error_of("sweep: {grid: {a.b: [1]}, zip: [{a.b: [2]}]}").find("'a.b' is varied twice") !=
        std::string::npos);
  CHECK(error_of("sweep: {grid: {a: [1]}, sample: 0}").find("sweep.sample: expected a whole number >= 1") !=
        std::string::npos);
  CHECK(error_of("sweep: {grid: {a: [1]}, seed: 3}").find("sweep.seed: has no effect without `sample`") !=
        std::string::npos);
  CHECK(error_of("sweep: {sample: 3}").find("the sweep varies nothing") != std::string::npos);
  CHECK(error_of("sweep: {grid: {sweep.sample: [1]}}").find("cannot vary its own block") != std::string::npos);
  CHECK(error_of("sweep: {grid: {a: [1]}, pareto: {maximise: x}}").find("did you mean 'maximize'") !=
        std::string::npos);
  // A value listed twice would be the same point twice.
  const auto twice = parse("sweep: {grid: {a: [1, 1]}}");
  CHECK_THROWS_WITH_AS(sweep::expand_points(twice, 1), doctest::Contains("listed twice"), ConfigError);
}

TEST_CASE("sample N draws N distinct points of the product, the same ones for the same seed") {
  const auto drawn = sweep::sample_indices(100, 7, 42);
  REQUIRE(drawn.size() == 7);
  CHECK(std::is_sorted(drawn.begin(), drawn.end()));
  CHECK(std::set<std::size_t>(drawn.begin(), drawn.end()).size() == 7);
  CHECK(drawn.back() < 100);
  CHECK(sweep::sample_indices(100, 7, 42) == drawn);
  CHECK(sweep::sample_indices(100, 7, 43) != drawn);
  CHECK(sweep::sample_indices(5, 9, 1) == std::vector<std::size_t>{0, 1, 2, 3, 4});
  // Through the block: `seed` draws, and the sampled points are points of the full product.
  const std::string yaml = "sweep: {grid: {a: [1, 2, 3, 4], b: [1, 2, 3, 4, 5]}, sample: 6, seed: 9}";
  const auto sampled = sweep::expand_points(parse(yaml), 1);
  const auto again = sweep::expand_points(parse(yaml), 1);
  const auto full = sweep::expand_points(parse("sweep: {grid: {a: [1, 2, 3, 4], b: [1, 2, 3, 4, 5]}}"), 1);
  REQUIRE(sampled.size() == 6);
  const auto chosen = sweep::sample_indices(20, 6, 9);
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    CHECK(sampled[i].id == again[i].id);
    CHECK(sampled[i].index == i);
    CHECK(sampled[i].id == full[chosen[i]].id);
    CHECK(sampled[i].seed == full[chosen[i]].seed);
  }
  // Without `seed`, the scenario's seed draws.
  const auto by_scenario_seed = sweep::expand_points(parse("sweep: {grid: {a: [1, 2, 3, 4]}, sample: 2}", 9), 9);
  const auto expected = sweep::sample_indices(4, 2, 9);
  CHECK(by_scenario_seed[0].values[0].second == std::to_string(expected[0] + 1));
  CHECK(by_scenario_seed[1].values[0].second == std::to_string(expected[1] + 1));
}

TEST_CASE("--shard i/N partitions the points round robin") {
  CHECK_THROWS_AS(sweep::parse_shard("0/2"), ConfigError);
  CHECK_THROWS_AS(sweep::parse_shard("3/2"), ConfigError);
  CHECK_THROWS_AS(sweep::parse_shard("2"), ConfigError);
  const auto shard = sweep::parse_shard("2/3");
  CHECK(shard.index == 2);
  CHECK(shard.count == 3);
  for (std::size_t index = 0; index < 10; ++index) {
    int owners = 0;
    for (int i = 1; i <= 3; ++i) owners += sweep::in_shard(index, {i, 3}) ? 1 : 0;
    CHECK(owners == 1);
  }
  CHECK(sweep::in_shard(1, shard));
  CHECK(sweep::in_shard(4, shard));
  CHECK_FALSE(sweep::in_shard(2, shard));
}

TEST_CASE("the Pareto front of a hand-made set: most throughput for the fewest GPUs") {
  // (tokens/s, gpus): a (100, 8), b (150, 16), c (90, 16) dominated by b, d (150, 32) dominated
  // by b, e (200, 64), f failed, g (100, 8) equal to a: both stay.
  std::vector<sweep::SweepRow> rows;
  const auto add = [&](std::string id, double throughput, double gpus, bool ok = true) {
    sweep::SweepRow row;
    row.id = std::move(id);
    row.ok = ok;
    row.metrics = {{"gpus", gpus}, {"tokens_per_s", throughput}};
    rows.push_back(row);
  };
  add("a", 100, 8);
  add("b", 150, 16);
  add("c", 90, 16);
  add("d", 150, 32);
  add("e", 200, 64);
  add("f", 1000, 1, false);
  add("g", 100, 8);
  sweep::ParetoSpec pareto;
  CHECK(sweep::mark_pareto(rows, pareto).empty());
  CHECK(pareto.maximize == "tokens_per_s");
  CHECK(pareto.minimize == "gpus");
  std::string front;
  for (const auto& row : rows) front += row.pareto ? row.id : "";
  CHECK(front == "abeg");
  // An objective no row has is reported, with the closest column, and leaves no front.
  sweep::ParetoSpec misspelt{"tokens_per_s", "gpu"};
  const auto notes = sweep::mark_pareto(rows, misspelt);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("no row has the column 'gpu'") != std::string::npos);
  CHECK(notes[0].find("did you mean 'gpus'") != std::string::npos);
  CHECK(std::none_of(rows.begin(), rows.end(), [](const auto& r) { return r.pareto; }));
}

TEST_CASE("a sweep runs every point; a failing point keeps its reason and the others run") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  REQUIRE(plan.points.size() == 6);
  CHECK(plan.name == "tiny-sweep");
  sweep::SweepOptions options;
  options.threads = 1;
  options.out_dir = fresh_dir("run");
  const auto outcome = sweep::run_sweep(plan, options);
  REQUIRE(outcome.rows.size() == 6);
  CHECK(outcome.ran == 6);
  CHECK(outcome.missing == 0);
  for (const auto& row : outcome.rows) {
    const bool tp3 = row.values[1].second == "3";
    CHECK(row.ok == !tp3);
    if (tp3) {
      // tp 3 x dp 1 is 3 of the 4 accelerators: the loader says so.
      CHECK(row.reason.find("workload.parallelism") != std::string::npos);
      CHECK(row.metrics.empty());
      CHECK_FALSE(row.pareto);
      continue;
    }
    REQUIRE(metric(row, "step_time_s") != nullptr);
    REQUIRE(metric(row, "tokens_per_s") != nullptr);
    CHECK(metric(row, "gpus")->value == 4);
    const double batch = row.values[0].second == "8" ? 8 : 16;
    // tokens/s is the global batch of 256-token sequences over the step time.
    CHECK(metric(row, "tokens_per_s")->value == doctest::Approx(batch * 256 / metric(row, "step_time_s")->value));
  }
  // All runs use 4 GPUs: the front is the highest throughput (possibly tied).
  double best = 0;
  for (const auto& row : outcome.rows) {
    if (row.ok) best = std::max(best, metric(row, "tokens_per_s")->value);
  }
  for (const auto& row : outcome.rows) CHECK(row.pareto == (row.ok && metric(row, "tokens_per_s")->value == best));
  // The folder holds one file per point and the tables.
  const std::string csv = read_text(options.out_dir / "sweep.csv");
  CHECK(csv.rfind("index,id,status,reason,seed,workload.global_batch,workload.parallelism.tp,"
                  "workload.parallelism.dp,gpus,step_time_s,tokens_per_s,mfu_fraction,",
                  0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);
  CHECK(csv.find(",failed,") != std::string::npos);
  for (const auto& row : outcome.rows) CHECK(fs::exists(options.out_dir / "points" / (row.id + ".json")));
  const auto json = nlohmann::json::parse(read_text(options.out_dir / "sweep.json"));
  CHECK(json["rows"].size() == 6);
  CHECK(json["sweep"]["pareto"]["maximize"] == "tokens_per_s");
}

TEST_CASE("-j 1 and -j 2 give identical rows") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  sweep::SweepOptions one;
  one.threads = 1;
  one.out_dir = fresh_dir("j1");
  sweep::SweepOptions two = one;
  two.threads = 2;
  two.out_dir = fresh_dir("j2");
  // Progress from both threads: a start, then one call per point, ending at every point done.
  std::mutex mutex;
  std::vector<std::size_t> done;
  two.on_progress = [&](std::string_view label, std::string_view unit, std::size_t n, std::size_t total) {
    const std::lock_guard<std::mutex> lock(mutex);
    CHECK(label == "sweep");
    CHECK(unit == "points");
    CHECK(total == plan.points.size());
    done.push_back(n);
  };
  sweep::run_sweep(plan, one);
  sweep::run_sweep(plan, two);
  REQUIRE(done.size() == plan.points.size() + 1);
  std::sort(done.begin(), done.end());
  for (std::size_t i = 0; i < done.size(); ++i) CHECK(done[i] == i);
  const std::string csv = read_text(one.out_dir / "sweep.csv");
  CHECK(csv.size() > 100);
  CHECK(csv == read_text(two.out_dir / "sweep.csv"));
  CHECK(read_text(one.out_dir / "sweep.json") == read_text(two.out_dir / "sweep.json"));
}

TEST_CASE("shards, resume and merge: the merged shards equal the whole sweep") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  sweep::SweepOptions whole;
  whole.threads = 2;
  whole.out_dir = fresh_dir("whole");
  sweep::run_sweep(plan, whole);

  sweep::SweepOptions first = whole;
  first.shard = {1, 2};
  first.out_dir = fresh_dir("shard1");
  const auto one = sweep::run_sweep(plan, first);
  CHECK(one.ran == 3);  // points 0, 2, 4
  CHECK(one.missing == 3);
  REQUIRE(one.rows.size() == 3);
  CHECK(one.rows[1].index == 2);

  // Resume: running shard 1 again runs nothing; the whole sweep in that folder runs the rest.
  const auto again = sweep::run_sweep(plan, first);
  CHECK(again.ran == 0);
  CHECK(again.skipped == 3);
  sweep::SweepOptions second = whole;
  second.shard = {2, 2};
  second.out_dir = fresh_dir("shard2");
  const auto two = sweep::run_sweep(plan, second);
  CHECK(two.ran == 3);

  const fs::path merged = fresh_dir("merged");
  const auto outcome = sweep::merge_sweeps({first.out_dir, second.out_dir}, merged);
  CHECK(outcome.missing == 0);
  CHECK(outcome.rows.size() == 6);
  CHECK(read_text(merged / "sweep.csv") == read_text(whole.out_dir / "sweep.csv"));

  sweep::SweepOptions rest = whole;
  rest.out_dir = first.out_dir;
  // Before the first point runs, the call says what it will run: 6 points, 3 left, 3 finished.
  std::vector<sweep::SweepStart> starts;
  rest.on_start = [&starts](const sweep::SweepStart& start) { starts.push_back(start); };
  const auto resumed = sweep::run_sweep(plan, rest);
  CHECK(resumed.ran == 3);
  CHECK(resumed.skipped == 3);
  REQUIRE(starts.size() == 1);
  CHECK(starts[0].points == 6);
  CHECK(starts[0].to_run == 3);
  CHECK(starts[0].finished == 3);
  CHECK(read_text(first.out_dir / "sweep.csv") == read_text(whole.out_dir / "sweep.csv"));

  // A folder of another sweep is refused, for running and for merging.
  const auto other = sweep::plan_sweep(kData + "tiny_sweep.yaml", {"workload.seq_len=128"});
  CHECK(other.fingerprint != plan.fingerprint);
  CHECK_THROWS_WITH_AS(sweep::run_sweep(other, rest), doctest::Contains("holds the points of another sweep"),
                       ConfigError);
  sweep::SweepOptions elsewhere = whole;
  elsewhere.out_dir = fresh_dir("other");
  elsewhere.shard = {1, 3};
  sweep::run_sweep(other, elsewhere);
  CHECK_THROWS_WITH_AS(sweep::merge_sweeps({first.out_dir, elsewhere.out_dir}, fresh_dir("bad-merge")),
                       doctest::Contains("holds another sweep"), ConfigError);
}

TEST_CASE("a misspelt key in the sweep block fails each point at its position, with the valid keys") {
  const auto plan = sweep::plan_sweep(kData + "bad_key_sweep.yaml");
  REQUIRE(plan.points.size() == 2);
  const auto row = sweep::run_point(plan, plan.points[0]);
  CHECK_FALSE(row.ok);
  CHECK(row.reason.find("bad_key_sweep.yaml:8:5: workload.parallelism.dpp: unknown key 'dpp' in sweep key "
                        "'workload.parallelism.dpp'") != std::string::npos);
  CHECK(row.reason.find("did you mean 'dp'") != std::string::npos);
}

TEST_CASE("a scenario without a sweep block is refused; `run` warns that the block has no effect") {
  CHECK_THROWS_WITH_AS(sweep::plan_sweep(kData + "tiny_base.yaml"), doctest::Contains("has no `sweep:` block"),
                       ConfigError);
  const auto scenario = scenario::load_scenario(kData + "tiny_sweep.yaml");
  REQUIRE(scenario.warnings.size() == 1);
  CHECK(scenario.warnings[0].key_path == "sweep");
  CHECK(scenario.warnings[0].message.find("no effect on a single run") != std::string::npos);
  CHECK(scenario.training().global_batch == 8);
}

TEST_CASE("a sweep of YAML text with a block given apart runs the same points as the file's block") {
  // What clustersim.sweep does: the scenario as text (ScenarioSource::text) and its axes as a
  // block of their own, which replaces the text's block.
  const auto from_file = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  std::vector<config::Diagnostic> diagnostics;
  const config::ConfigNode block = config::parse_config(R"(sweep:
  grid:
    workload.global_batch: [8, 16]
  zip:
    - workload.parallelism.tp: [1, 2, 3]
      workload.parallelism.dp: [4, 2, 1]
)",
                                                        "axes", diagnostics);
  REQUIRE(diagnostics.empty());
  // The text includes the base file by its absolute path; its own sweep block differs.
  const std::string text = "include: [" + kData + "tiny_base.yaml]\nname: tiny-sweep\nsimulation: {seed: 7}\n"
                           "sweep: {grid: {workload.global_batch: [32]}}\n";
  const auto from_text = sweep::plan_sweep(scenario::ScenarioSource::text(text, "<text>"), {},
                                           config::library_data_dir(), block.find_entry("sweep"));
  CHECK(from_text.source_file == "<text>");
  REQUIRE(from_text.points.size() == from_file.points.size());
  for (std::size_t i = 0; i < from_text.points.size(); ++i) {
    CHECK(from_text.points[i].id == from_file.points[i].id);
    CHECK(from_text.points[i].seed == from_file.points[i].seed);
  }
  const auto row_text = sweep::run_point(from_text, from_text.points[1]);
  const auto row_file = sweep::run_point(from_file, from_file.points[1]);
  REQUIRE(row_text.ok);
  REQUIRE(row_file.ok);
  REQUIRE(row_text.metrics.size() == row_file.metrics.size());
  for (std::size_t i = 0; i < row_text.metrics.size(); ++i) {
    CHECK(row_text.metrics[i].column == row_file.metrics[i].column);
    CHECK(row_text.metrics[i].value == row_file.metrics[i].value);
  }
  // Without a block given apart, the text's own block is the sweep.
  CHECK(sweep::plan_sweep(scenario::ScenarioSource::text(text, "<text>")).points.size() == 1);
}

TEST_CASE("a sweep without an output folder returns the rows a folder's run writes, and writes nothing") {
  const auto plan = sweep::plan_sweep(kData + "tiny_sweep.yaml");
  sweep::SweepOptions in_memory;
  in_memory.threads = 2;
  const auto memory = sweep::run_sweep(plan, in_memory);
  sweep::SweepOptions to_folder = in_memory;
  to_folder.out_dir = fresh_dir("memory-vs-folder");
  const auto folder = sweep::run_sweep(plan, to_folder);
  CHECK(memory.ran == plan.points.size());
  CHECK(memory.missing == 0);
  CHECK(sweep::sweep_json(memory) == sweep::sweep_json(folder));  // Pareto marks included
  CHECK_FALSE(fs::exists(fs::current_path() / "points"));
  CHECK_FALSE(fs::exists(fs::current_path() / "sweep.csv"));
}

}  // namespace sweep_test
