// A workload kind the project does not ship, added through the declarations only: a test
// registers it, the loader checks and reads its keys, the runner runs it beside a training job
// on one platform, and the reports show it, with no change to the loader, runner or CLI code.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/exec/executor.hpp"
#include "sim/report/run_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/scenario/workload_kinds.hpp"

namespace custom_workload_test {

using namespace clustersim;

namespace {

/// `rounds` point-to-point transfers of `bytes` from `src` to `dst`, one after another.
class TransferLoopSpec final : public platform::WorkloadSpec {
 public:
  int src = 0, dst = 1, rounds = 1;
  double bytes = 0;
  mutable int starts = 0;  ///< sessions it was started in
  std::string_view kind() const override { return "transfer-loop"; }
  std::optional<platform::Allocation> pinned() const override {
    return platform::Allocation{std::min(src, dst), std::abs(dst - src) + 1};
  }
  std::unique_ptr<platform::Workload> instantiate(const platform::Platform&, const platform::Allocation&,
                                                  const platform::SessionOptions&) const override;
};

class TransferLoop final : public platform::Workload {
 public:
  explicit TransferLoop(const TransferLoopSpec& spec) : spec_(spec) {}
  void start(platform::Session& session, std::function<void()> on_done) override {
    ++spec_.starts;
    executor_ = std::make_unique<exec::Executor>(session.engine(), graph_);
    const auto stream = graph_.add_stream("transfers");
    for (int r = 0; r < spec_.rounds; ++r) {
      executor_->add_work(stream, session.comm().transfer(spec_.src, spec_.dst, spec_.bytes),
                          {exec::TaskKind::communication, 0, 0, spec_.bytes}, fmt::format("round {}", r));
    }
    executor_->on_finished([this, &session, on_done = std::move(on_done)] {
      end_s_ = engine::ps_to_seconds(session.engine().now());
      if (on_done) on_done();
    });
    executor_->start();
  }
  std::unique_ptr<platform::WorkloadResult> finish(platform::Session&) override {
    (void)executor_->finish();
    auto result = std::make_unique<platform::WorkloadResult>();
    result->kind = "transfer-loop";
    result->metrics = {{"rounds", static_cast<double>(spec_.rounds), ""}, {"time", end_s_, "s"}};
    return result;
  }

 private:
  const TransferLoopSpec& spec_;
  exec::TaskGraph graph_;
  std::unique_ptr<exec::Executor> executor_;
  double end_s_ = 0;
};

std::unique_ptr<platform::Workload> TransferLoopSpec::instantiate(const platform::Platform&,
                                                                  const platform::Allocation&,
                                                                  const platform::SessionOptions&) const {
  return std::make_unique<TransferLoop>(*this);
}

/// The kind's declarations: each key once, bound to the member it sets, with its type, unit,
/// range and help (its default is the member's initializer); the rule between keys next to it.
scenario::WorkloadKind transfer_loop_kind() {
  config::Declarations<TransferLoopSpec> keys;
  keys.integer("src", &TransferLoopSpec::src, "sending accelerator").range(0, 1e9).need();
  keys.integer("dst", &TransferLoopSpec::dst, "receiving accelerator").range(0, 1e9).need();
  keys.quantity("bytes", &TransferLoopSpec::bytes, config::Dimension::bytes, "per transfer").positive().need();
  keys.integer("rounds", &TransferLoopSpec::rounds, "transfers").range(1, 1e6);
  const auto distinct = [](const scenario::WorkloadReadContext& c, TransferLoopSpec& spec) {
    if (spec.src == spec.dst && !c.problems.any_bad(c.key("src"), c.key("dst"))) {
      c.problems.add(c.position("dst"), c.key("dst"), "dst must differ from src");
    }
  };
  scenario::WorkloadKind kind = scenario::declared_workload_kind<TransferLoopSpec>(
      "transfer-loop", "point-to-point transfers between two accelerators, one after another", keys, distinct);
  kind.can_be_primary = false;
  return kind;
}

const std::string kYaml = R"(schema_version: 1
name: custom-kind
include: [systems/dgx-a100.yaml]
cluster: {nodes: 2}
workload:
  kind: training
  model: megatron-gpt-1.7b
  seq_len: 2048
  global_batch: 16
  parallelism: {tp: 8, pp: 1, dp: 1}
jobs:
  ping: {kind: transfer-loop, src: 8, dst: 12, bytes: "1 GB", rounds: 3}
)";

}  // namespace

TEST_CASE("a workload kind added through the declarations runs beside a training job on one platform") {
  scenario::WorkloadKinds kinds = scenario::builtin_workload_kinds();
  kinds.add(transfer_loop_kind());
  const auto s = scenario::load_scenario_from_string(kYaml, "custom.yaml", {}, config::library_data_dir(), kinds);
  REQUIRE(s.jobs.size() == 1);
  CHECK(s.primary_allocation().count == 8);  // the job is pinned to accelerators 8-12
  const runner::RunResult run = runner::run_scenario(s);
  const auto* training = dynamic_cast<const training::TrainingResult*>(run.primary.get());
  REQUIRE(training != nullptr);
  CHECK(training->gpus == 8);
  REQUIRE(run.jobs.size() == 1);
  const platform::WorkloadResult& ping = *run.jobs[0].result;
  CHECK(ping.kind == "transfer-loop");
  // Three transfers over NVLink, each the closed-form time (analytical fidelity).
  const auto platform = runner::build_platform(s);
  const double one_s = engine::ps_to_seconds(engine::seconds_to_ps(platform->collectives().send_recv_time_s(8, 12, 1e9)));
  CHECK(ping.metrics[1].value == doctest::Approx(3 * one_s).epsilon(1e-9));
  // The reports show it without knowing the kind.
  const auto json = report::run_result_json(s, run);
  REQUIRE(json.contains("jobs"));
  CHECK(json["jobs"][0]["name"] == "ping");
  CHECK(json["jobs"][0]["metrics"]["rounds"]["value"] == 3.0);
  CHECK(report::run_summary_table(s, run).find("job ping (transfer-loop)") != std::string::npos);
  // Its keys are checked against its declarations, --set reaches them, and without the kind
  // registered the scenario is an error that lists the kinds there are.
  const auto set = scenario::load_scenario_from_string(kYaml, "custom.yaml", {"jobs.ping.rounds=5"},
                                                       config::library_data_dir(), kinds);
  CHECK(dynamic_cast<const TransferLoopSpec&>(*set.jobs[0].spec).rounds == 5);
  CHECK_THROWS_WITH_AS(scenario::load_scenario_from_string(kYaml, "custom.yaml", {"jobs.ping.dst=8"},
                                                           config::library_data_dir(), kinds),
                       "--set jobs.ping.dst=8: jobs.ping.dst: dst must differ from src", ConfigError);
  // The default the reference shows is the member's initializer.
  const auto& fields = kinds.find("transfer-loop")->fields;
  CHECK(std::find_if(fields.begin(), fields.end(), [](const auto& f) { return f.key == "rounds"; })->default_text == "1");
  std::string bad = kYaml;
  bad.replace(bad.find("rounds: 3"), 9, "round: 3");
  CHECK_THROWS_WITH_AS(scenario::load_scenario_from_string(bad, "custom.yaml", {}, config::library_data_dir(), kinds),
                       "custom.yaml:12:63: jobs.ping.round: unknown key 'round' (valid keys: kind, src, dst, bytes, "
                       "rounds | did you mean 'rounds'?)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(scenario::load_scenario_from_string(kYaml, "custom.yaml"),
                       "custom.yaml:12:16: jobs.ping.kind: unknown workload kind 'transfer-loop' (valid choices: "
                       "serving, collective-loop, trace)",
                       ConfigError);
}

TEST_CASE("with link faults the runner runs the workloads again on the intact network only for a result that asks") {
  scenario::WorkloadKinds kinds = scenario::builtin_workload_kinds();
  kinds.add(transfer_loop_kind());
  const std::vector<std::string> optic = {"simulation.fidelity=flow", "cluster.network.faults.optic.link=gpu8-nvswitch1",
                                          "cluster.network.faults.optic.at=0 s",
                                          "cluster.network.faults.optic.bandwidth_fraction=0.5"};
  // A training step reports what the faults cost it: every workload runs again, the job too.
  const auto training = scenario::load_scenario_from_string(kYaml, "custom.yaml", optic, config::library_data_dir(), kinds);
  const runner::RunResult with_training = runner::run_scenario(training);
  CHECK(dynamic_cast<const training::TrainingResult&>(*with_training.primary).link_faults.computed);
  CHECK(dynamic_cast<const TransferLoopSpec&>(*training.jobs[0].spec).starts == 2);
  // A serving run reports no fault cost: nothing runs twice.
  std::string serving_yaml = kYaml;
  const auto workload = serving_yaml.find("workload:");
  serving_yaml.replace(workload, serving_yaml.find("jobs:") - workload, R"(workload:
  kind: serving
  model: llama-3-8b
  pools:
    main: {replicas: 8, tp: 1}
  requests: {count: 20, arrival: {process: offline}}
)");
  const auto serving = scenario::load_scenario_from_string(serving_yaml, "custom.yaml", optic, config::library_data_dir(), kinds);
  (void)runner::run_scenario(serving);
  CHECK(dynamic_cast<const TransferLoopSpec&>(*serving.jobs[0].spec).starts == 1);
}

}  // namespace custom_workload_test
