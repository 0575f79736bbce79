#include "sim/report/result_reports.hpp"

#include <map>

#include "sim/report/serving_report.hpp"
#include "sim/report/trace_counters.hpp"
#include "sim/report/training_report.hpp"

namespace clustersim::report {
namespace {

const training::TrainingResult& training_of(const runner::RunResult& run) {
  return static_cast<const training::TrainingResult&>(*run.primary);
}

const serving::ServingResult& serving_of(const runner::RunResult& run) {
  return static_cast<const serving::ServingResult&>(*run.primary);
}

}  // namespace

const ResultReport* result_report(std::string_view kind) {
  // Built once, never mutated: a constant table like the workload kinds'.
  static const std::map<std::string, ResultReport, std::less<>> reports = [] {
    std::map<std::string, ResultReport, std::less<>> built;
    ResultReport& training = built["training"];
    training.json = [](const scenario::Scenario& s, const runner::RunResult& run) {
      return training_result_json(s, training_of(run));
    };
    training.table = [](const scenario::Scenario& s, const runner::RunResult& run) {
      return training_summary_table(s, training_of(run));
    };
    training.html = [](const scenario::Scenario& s, const runner::RunResult& run, const RunReportInputs& inputs) {
      return training_report_html(s, run, training_of(run), inputs);
    };
    training.counters = [](ChromeTrace& trace, const runner::RunResult& run, const RunTimeline& timeline) {
      return training_trace_counters(trace, training_of(run), timeline);
    };
    training.columns = [](const runner::RunResult& run, std::vector<MetricColumn>& out) {
      training_columns(training_of(run), out);
    };
    training.wants_stage_programs = true;
    ResultReport& serving = built["serving"];
    serving.json = [](const scenario::Scenario& s, const runner::RunResult& run) {
      return serving_result_json(s, serving_of(run), run);
    };
    serving.table = [](const scenario::Scenario& s, const runner::RunResult& run) {
      return serving_summary_table(s, serving_of(run), run);
    };
    serving.html = [](const scenario::Scenario& s, const runner::RunResult& run, const RunReportInputs&) {
      return serving_report_html(s, run, serving_of(run));
    };
    serving.columns = [](const runner::RunResult& run, std::vector<MetricColumn>& out) {
      serving_columns(serving_of(run), out);
    };
    return built;
  }();
  const auto it = reports.find(kind);
  return it == reports.end() ? nullptr : &it->second;
}

}  // namespace clustersim::report
