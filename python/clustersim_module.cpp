/// `import clustersim`: the simulator as a CPython extension (pybind11), over the libraries the
/// CLI links: the same loader, runner, sweep, search, capacity and validation code, no second
/// implementation. docs/python.md is its guide; tests/python its tests.
///
/// Scenarios are loaded (and every change to them checked) by the scenario loader; results are
/// the documents `clustersim run --format json` prints, read as attributes (`result.training.
/// step_time_s`) or as dicts (`result.to_dict()`). A simulation releases the GIL, so threads of
/// a pool run scenarios in parallel. Errors raise clustersim.ScenarioError (with file, line,
/// column and key), ConfigError or SimulationError, all clustersim.Error.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/config/config_tree.hpp"
#include "sim/config/diagnostics.hpp"
#include "sim/engine/error.hpp"
#include "sim/report/run_report.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/sweep/capacity.hpp"
#include "sim/sweep/objective.hpp"
#include "sim/sweep/parallelism_search.hpp"
#include "sim/sweep/search_report.hpp"
#include "sim/sweep/sweep_runner.hpp"
#include "sim/sweep/training_capacity.hpp"
#include "sim/training/training_config.hpp"
#include "sim/validate/dataset_validation.hpp"
#include "topologies/topology_keys.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace clustersim::python {
namespace {

// ---------------------------------------------------------------------------------------------
// JSON <-> Python

py::object to_python(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return py::none();
    case json::value_t::boolean: return py::bool_(value.get<bool>());
    case json::value_t::number_integer: return py::int_(value.get<std::int64_t>());
    case json::value_t::number_unsigned: return py::int_(value.get<std::uint64_t>());
    case json::value_t::number_float: return py::float_(value.get<double>());
    case json::value_t::string: return py::str(value.get_ref<const std::string&>());
    case json::value_t::array: {
      py::list list;
      for (const json& item : value) list.append(to_python(item));
      return list;
    }
    case json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = to_python(item);
      return dict;
    }
    default: return py::none();  // binary and discarded values: never in a result document
  }
}

/// A Python value as the YAML text of a `--set key=value` override: a str as written (so
/// "400 Gb/s" and "fat-tree" read as they do on the command line), numbers and booleans in
/// YAML's spelling, lists and dicts as flow YAML (their strings quoted).
std::string yaml_text(const py::handle& value, bool top_level = true) {
  if (value.is_none()) return "null";
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::int_>(value)) return py::str(value).cast<std::string>();
  if (py::isinstance<py::float_>(value)) return py::repr(value).cast<std::string>();
  if (py::isinstance<py::str>(value)) {
    const std::string text = value.cast<std::string>();
    return top_level && !text.empty() ? text : json(text).dump();  // JSON strings are YAML flow scalars
  }
  if (py::isinstance<py::dict>(value)) {
    std::string text = "{";
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (text.size() > 1) text += ", ";
      text += json(py::str(key).cast<std::string>()).dump() + ": " + yaml_text(item, false);
    }
    return text + "}";
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    std::string text = "[";
    for (const auto& item : value) {
      if (text.size() > 1) text += ", ";
      text += yaml_text(item, false);
    }
    return text + "]";
  }
  throw py::type_error(fmt::format("a scenario value must be None, bool, int, float, str, list or dict; got {}",
                                   py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>()));
}

/// `overrides` (a dict {key: value} or a list of "key=value" strings) as override texts.
std::vector<std::string> override_texts(const py::object& overrides) {
  std::vector<std::string> texts;
  if (overrides.is_none()) return texts;
  if (py::isinstance<py::dict>(overrides)) {
    for (const auto& [key, value] : overrides.cast<py::dict>()) {
      texts.push_back(py::str(key).cast<std::string>() + "=" + yaml_text(value));
    }
    return texts;
  }
  if (py::isinstance<py::str>(overrides)) {
    throw py::type_error("overrides must be a dict {key: value} or a list of 'key=value' strings, not one string");
  }
  for (const auto& item : overrides) {
    if (!py::isinstance<py::str>(item)) {
      throw py::type_error("overrides as a list hold 'key=value' strings; use a dict for other values");
    }
    texts.push_back(item.cast<std::string>());
  }
  return texts;
}

// ---------------------------------------------------------------------------------------------
// Results

/// A JSON document read as attributes and items: objects become Results, arrays lists,
/// numbers, strings, booleans and null their Python values.
class Result {
 public:
  explicit Result(std::shared_ptr<const json> root, const json* node = nullptr)
      : root_(std::move(root)), node_(node != nullptr ? node : root_.get()) {}
  virtual ~Result() = default;

  const json& node() const { return *node_; }

  py::object wrap(const json& value) const {
    if (value.is_object()) return py::cast(Result(root_, &value));
    if (value.is_array()) {
      py::list list;
      for (const json& item : value) list.append(wrap(item));
      return list;
    }
    return to_python(value);
  }

  py::object attribute(const std::string& name) const {
    if (node_->is_object()) {
      if (const auto it = node_->find(name); it != node_->end()) return wrap(*it);
    }
    throw py::attribute_error(fmt::format("the result has no '{}'; it has: {}", name, fmt::join(keys(), ", ")));
  }

  py::object item(const std::string& key) const {
    if (node_->is_object()) {
      if (const auto it = node_->find(key); it != node_->end()) return wrap(*it);
    }
    throw py::key_error(key);
  }

  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    if (node_->is_object()) {
      for (const auto& [key, value] : node_->items()) out.push_back(key);
    }
    return out;
  }

  bool contains(const std::string& key) const { return node_->is_object() && node_->contains(key); }
  py::object to_dict() const { return to_python(*node_); }
  std::string to_json(int indent) const { return node_->dump(indent); }

  std::string repr() const {
    std::vector<std::string> parts;
    for (const char* key : {"kind", "scenario", "fingerprint"}) {
      if (const auto it = node_->find(key); it != node_->end() && it->is_string()) {
        parts.push_back(fmt::format("{}={}", key, it->dump()));
      }
    }
    return fmt::format("<clustersim.Result {}keys: {}>", parts.empty() ? "" : fmt::format("{} ", fmt::join(parts, " ")),
                       fmt::join(keys(), ", "));
  }

 private:
  std::shared_ptr<const json> root_;
  const json* node_;
};

/// A report with rows (a sweep's points, a search's candidates, a capacity search's trials, a
/// validation's rows): a Result whose len(), iteration and integer index are over its rows, as
/// plain dicts (`list(report)` is a list of dicts), with frame() for pandas.
class Report : public Result {
 public:
  /// A report whose rows are the document's `rows_key` array.
  static Report over(std::shared_ptr<const json> root, const std::string& rows_key) {
    json rows = root->contains(rows_key) ? root->at(rows_key) : json::array();
    return Report(std::move(root), std::move(rows));
  }
  /// The rows are `rows` (derived from the document, e.g. a sweep's points flattened).
  Report(std::shared_ptr<const json> root, json rows)
      : Result(std::move(root)), rows_(std::make_shared<const json>(std::move(rows))) {}

  py::list rows() const { return to_python(*rows_); }
  std::size_t size() const { return rows_->size(); }
  py::object row(std::ptrdiff_t index) const {
    const auto count = static_cast<std::ptrdiff_t>(size());
    if (index < 0) index += count;
    if (index < 0 || index >= count) throw py::index_error(fmt::format("row {} of {}", index, count));
    return to_python((*rows_)[static_cast<std::size_t>(index)]);
  }

 private:
  std::shared_ptr<const json> rows_;
};

/// `rows` (a Report or a list of dicts) as a pandas DataFrame, nested dicts flattened to dotted
/// columns (pandas.json_normalize). pandas is optional: without it this raises ImportError.
py::object to_frame(const py::object& rows) {
  py::module_ pandas;
  try {
    pandas = py::module_::import("pandas");
  } catch (const py::error_already_set&) {
    throw py::import_error(
        "clustersim.to_frame needs pandas (Debian: python3-pandas); without it use the rows as a list of dicts");
  }
  py::object list = py::isinstance<Report>(rows) ? py::object(rows.cast<const Report&>().rows()) : rows;
  return pandas.attr("json_normalize")(list);
}

// ---------------------------------------------------------------------------------------------
// Scenarios

/// A loaded scenario: its source, the overrides applied so far, and the validated scenario.
class PyScenario {
 public:
  PyScenario(scenario::ScenarioSource source, std::vector<std::string> overrides)
      : source_(std::move(source)), overrides_(std::move(overrides)) {
    reload();
  }

  const scenario::Scenario& scenario() const { return *scenario_; }
  const scenario::ScenarioSource& source() const { return source_; }
  const std::vector<std::string>& overrides() const { return overrides_; }

  /// Applies `key=value` (checked by the loader; on an error the scenario keeps its state).
  void set(const std::string& key, const py::object& value) {
    overrides_.push_back(key + "=" + yaml_text(value));
    try {
      reload();
    } catch (...) {
      overrides_.pop_back();
      throw;
    }
  }

  /// Applies every `key=value` of `values` together (keys that are only valid together, such as
  /// tp and dp at a fixed cluster size); on an error none is applied.
  void update(const py::dict& values) {
    const std::size_t before = overrides_.size();
    for (const auto& [key, value] : values) overrides_.push_back(py::str(key).cast<std::string>() + "=" + yaml_text(value));
    try {
      reload();
    } catch (...) {
      overrides_.resize(before);
      throw;
    }
  }

  /// The resolved value of `key` (as written or its default), as YAML text; KeyError if the
  /// scenario has no such key.
  std::string get(const std::string& key) const {
    const auto it = scenario_->resolved.find(key);
    if (it == scenario_->resolved.end()) throw py::key_error(key);
    return it->second;
  }

  PyScenario copy() const { return *this; }

  std::string repr() const {
    return fmt::format("<clustersim.Scenario {} from {}{}>", json(scenario_->name).dump(), source_.name(),
                       overrides_.empty() ? "" : fmt::format(" with {}", fmt::join(overrides_, ", ")));
  }

 private:
  void reload() {
    py::gil_scoped_release release;
    scenario_ = std::make_shared<const scenario::Scenario>(source_.load(overrides_));
  }

  scenario::ScenarioSource source_;
  std::vector<std::string> overrides_;
  std::shared_ptr<const scenario::Scenario> scenario_;  // shared: copies of a scenario share it
};

/// load(): a path (str or os.PathLike) or YAML text (a str with a line break).
PyScenario load(const py::object& source, const py::object& overrides) {
  const std::vector<std::string> texts = override_texts(overrides);
  if (py::isinstance<py::str>(source)) {
    const std::string text = source.cast<std::string>();
    if (text.find('\n') != std::string::npos) return PyScenario(scenario::ScenarioSource::text(text, "<text>"), texts);
    return PyScenario(scenario::ScenarioSource(std::filesystem::path(text)), texts);
  }
  if (py::hasattr(source, "__fspath__")) {
    return PyScenario(scenario::ScenarioSource(source.cast<std::filesystem::path>()), texts);
  }
  throw py::type_error("clustersim.load takes a scenario file's path or YAML text");
}

/// A scenario argument: a Scenario, or what load() takes.
PyScenario as_scenario(const py::object& scenario) {
  if (py::isinstance<PyScenario>(scenario)) return scenario.cast<const PyScenario&>();
  return load(scenario, py::none());
}

std::shared_ptr<const json> shared(json document) { return std::make_shared<const json>(std::move(document)); }

// ---------------------------------------------------------------------------------------------
// Commands

Result run(const py::object& scenario_arg) {
  const PyScenario scenario = as_scenario(scenario_arg);
  json document;
  {
    py::gil_scoped_release release;
    const runner::RunResult result = runner::run_scenario(scenario.scenario());
    document = report::run_result_json(scenario.scenario(), result);
  }
  return Result(shared(std::move(document)));
}

/// The sweep block of clustersim.sweep's arguments, as YAML text (block style: one key a line,
/// so a problem's position names the axis).
std::string sweep_block_yaml(const py::object& grid, const py::object& zip, const py::object& sample,
                             const py::object& seed, const py::object& pareto) {
  std::string text = "sweep:\n";
  if (!grid.is_none()) {
    if (!py::isinstance<py::dict>(grid)) throw py::type_error("grid must be a dict {key: [values]}");
    text += "  grid:\n";
    for (const auto& [key, values] : grid.cast<py::dict>()) {
      text += fmt::format("    {}: {}\n", json(py::str(key).cast<std::string>()).dump(), yaml_text(values, false));
    }
  }
  if (!zip.is_none()) {
    text += "  zip:\n";
    for (const auto& group : zip) {
      if (!py::isinstance<py::dict>(group)) throw py::type_error("zip must be a list of dicts {key: [values], ...}");
      bool first = true;
      for (const auto& [key, values] : group.cast<py::dict>()) {
        text += fmt::format("    {} {}: {}\n", first ? "-" : " ", json(py::str(key).cast<std::string>()).dump(),
                            yaml_text(values, false));
        first = false;
      }
    }
  }
  if (!sample.is_none()) text += fmt::format("  sample: {}\n", yaml_text(sample));
  if (!seed.is_none()) text += fmt::format("  seed: {}\n", yaml_text(seed));
  if (!pareto.is_none()) text += fmt::format("  pareto: {}\n", yaml_text(pareto, false));
  return text;
}

/// A sweep row (sweep::row_json) as one flat record, the columns of sweep.csv: index, id,
/// status, reason, seed, each varied key (a number or boolean when its YAML text is one), each
/// metric column, pareto.
json flat_sweep_row(const json& point) {
  json row = {{"index", point.at("index")},
              {"id", point.at("id")},
              {"status", point.at("status")},
              {"reason", point.at("reason")},
              {"seed", point.at("seed")}};
  for (const auto& [key, value] : point.at("values").items()) {
    const std::string& text = value.get_ref<const std::string&>();
    const json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    row[key] = parsed.is_number() || parsed.is_boolean() ? parsed : value;
  }
  for (const json& metric : point.at("metrics")) row[metric.at("column").get<std::string>()] = metric.at("value");
  row["pareto"] = point.at("pareto");
  return row;
}

Report sweep(const py::object& scenario_arg, const py::object& grid, const py::object& zip, const py::object& sample,
             const py::object& seed, const py::object& pareto, int jobs, const py::object& out) {
  const PyScenario scenario = as_scenario(scenario_arg);
  std::optional<config::ConfigNode> block_root;
  const bool given = !grid.is_none() || !zip.is_none();
  if (!given && !(sample.is_none() && seed.is_none() && pareto.is_none())) {
    throw py::value_error("sample, seed and pareto refine a grid or zip: give one (or none of them, to run the "
                          "scenario file's own sweep: block)");
  }
  if (given) {
    std::vector<config::Diagnostic> diagnostics;
    block_root = config::parse_config(sweep_block_yaml(grid, zip, sample, seed, pareto), "clustersim.sweep()",
                                      diagnostics);
    if (!diagnostics.empty()) throw config::ScenarioError(diagnostics);
  }
  const std::optional<std::filesystem::path> out_dir =
      out.is_none() ? std::nullopt : std::optional(out.cast<std::filesystem::path>());
  json document;
  {
    py::gil_scoped_release release;
    const sweep::SweepPlan plan =
        sweep::plan_sweep(scenario.source(), scenario.overrides(), config::library_data_dir(),
                          block_root ? block_root->find_entry("sweep") : nullptr);
    sweep::SweepOptions options;
    options.threads = jobs;
    if (out_dir) options.out_dir = *out_dir;  // none: the rows in memory only
    const sweep::SweepOutcome outcome = sweep::run_sweep(plan, options);
    document = sweep::sweep_json(outcome);
  }
  json rows = json::array();
  for (const json& point : document.at("rows")) rows.push_back(flat_sweep_row(point));
  return Report(shared(std::move(document)), std::move(rows));
}

Report search(const py::object& scenario_arg, const std::string& objective, int top, int resimulate, int max_tp,
              int max_pp, int max_cp, int max_ep, int max_vp, std::int64_t max_micro_batch,
              const std::vector<int>& zero, const std::vector<std::string>& recompute, int threads) {
  const PyScenario scenario = as_scenario(scenario_arg);
  sweep::SearchOptions options;
  options.objective = sweep::parse_objective(objective);
  options.top_n = top;
  options.resimulate = resimulate;
  options.threads = threads;
  options.space.max_tp = max_tp;
  options.space.max_pp = max_pp;
  options.space.max_cp = max_cp;
  options.space.max_ep = max_ep;
  options.space.max_vp = max_vp;
  options.space.max_micro_batch = max_micro_batch;
  options.space.zero_stages = zero;
  options.space.recompute_policies.clear();
  for (const std::string& name : recompute) {
    options.space.recompute_policies.push_back(training::recompute_names().parse(name));
  }
  json document;
  {
    py::gil_scoped_release release;
    document = sweep::search_json(sweep::search_parallelism(scenario.scenario(), options));
  }
  return Report::over(shared(std::move(document)), "top");
}

Report capacity(const py::object& scenario_arg, const py::object& rate, double precision, int max_trials,
                int threads, const py::object& deadline, double tokens, const std::vector<std::string>& accelerators,
                const std::map<std::string, double>& prices, int max_nodes) {
  const PyScenario scenario = as_scenario(scenario_arg);
  json document;
  std::string rows_key;
  if (!deadline.is_none()) {
    if (!rate.is_none()) throw py::value_error("rate sizes a serving scenario; deadline a training one: not both");
    sweep::TrainingCapacityOptions options;
    options.deadline_s = py::isinstance<py::str>(deadline) ? sweep::parse_deadline_s(deadline.cast<std::string>())
                                                           : deadline.cast<double>();
    options.tokens = tokens;
    options.accelerators = accelerators;
    options.price_per_hour_usd = prices;
    options.max_nodes = max_nodes;
    options.threads = threads;
    py::gil_scoped_release release;
    document = sweep::training_capacity_json(
        sweep::find_training_capacity(scenario.source(), scenario.overrides(), options));
    rows_key = "accelerators";
  } else {
    if (tokens > 0 || !accelerators.empty() || !prices.empty()) {
      throw py::value_error("tokens, accelerators and prices size a training run: give a deadline too");
    }
    sweep::CapacityOptions options;
    if (!rate.is_none()) options.target_rate = rate.cast<double>();
    options.precision = precision;
    options.max_trials = max_trials;
    options.threads = threads;
    std::vector<std::string> warnings;
    options.on_warning = [&warnings](const std::string& warning) { warnings.push_back(warning); };
    {
      py::gil_scoped_release release;
      document = sweep::capacity_json(sweep::find_capacity(scenario.source(), scenario.overrides(), options));
    }
    for (const std::string& warning : warnings) PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1);
    rows_key = "trials";
  }
  return Report::over(shared(std::move(document)), rows_key);
}

Report validate_dataset(const std::filesystem::path& dataset, const py::object& base, const py::object& calibration,
                        int threads) {
  validate::DatasetValidationOptions options;
  if (!base.is_none()) options.base = base.cast<std::filesystem::path>();
  if (!calibration.is_none()) options.calibration = calibration.cast<std::filesystem::path>();
  options.threads = threads;
  json document;
  {
    py::gil_scoped_release release;
    document = validate::validate_dataset(dataset, options).json;
  }
  return Report::over(shared(std::move(document)), "rows");
}

py::dict export_chakra(const py::object& scenario_arg, const std::filesystem::path& dir) {
  const PyScenario scenario = as_scenario(scenario_arg);
  training::ChakraExport written;
  {
    py::gil_scoped_release release;
    written = runner::export_chakra(scenario.scenario(), dir);
  }
  py::dict out;
  std::vector<std::string> files;
  for (const auto& file : written.files) files.push_back(file.string());
  out["files"] = files;
  out["groups_file"] = written.groups_file.string();
  out["groups"] = written.groups;
  out["nodes"] = written.nodes;
  return out;
}

py::object presets(const py::object& kind) {
  std::vector<std::string> topologies;
  for (const auto& topology : topologies::topology_kinds()) topologies.push_back(topology.name);
  const config::NameTable<scenario::LibraryKind>& kinds = scenario::library_kind_names();
  if (kind.is_none()) {
    py::dict all;
    for (const std::string& name : kinds.names()) all[py::str(name)] = py::cast(scenario::library_names(kinds.parse(name)));
    all["topologies"] = py::cast(topologies);
    return all;
  }
  const std::string wanted = kind.cast<std::string>();
  if (wanted == "topologies") return py::cast(topologies);
  if (!kinds.find(wanted)) {
    throw py::value_error(fmt::format("unknown preset kind '{}' (valid: {}, topologies)", wanted, kinds.joined_names()));
  }
  return py::cast(scenario::library_names(*kinds.find(wanted)));
}

py::dict describe(const std::string& name) {
  const scenario::Description description = scenario::describe(name);
  py::dict keys;
  for (const scenario::DescribedKey& key : description.keys) keys[py::str(key.key)] = key.shown;
  py::dict out;
  out["title"] = description.title;
  out["help"] = description.help;
  out["prefix"] = description.prefix;
  out["keys"] = keys;
  out["text"] = scenario::render_description(description);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Errors

struct ErrorTypes {
  py::object error, config_error, scenario_error, simulation_error;
};

ErrorTypes& error_types() {
  static ErrorTypes types;  // set once at import, under the GIL
  return types;
}

void raise(const py::object& type, const std::string& message) { PyErr_SetObject(type.ptr(), py::str(message).ptr()); }

void translate(std::exception_ptr pointer) {
  const ErrorTypes& types = error_types();
  try {
    if (pointer) std::rethrow_exception(pointer);
  } catch (const config::ScenarioError& e) {
    py::object instance = types.scenario_error(py::str(e.what()));
    py::list diagnostics;
    for (const config::Diagnostic& d : e.diagnostics()) {
      py::dict item;
      item["file"] = d.file;
      item["line"] = d.line;
      item["column"] = d.column;
      item["key"] = d.key_path;
      item["message"] = d.message;
      item["hint"] = d.hint;
      diagnostics.append(item);
    }
    instance.attr("diagnostics") = diagnostics;
    // The first problem's position (the diagnostics are sorted by position).
    const bool any = !e.diagnostics().empty();
    const config::Diagnostic first = any ? e.diagnostics().front() : config::Diagnostic{};
    instance.attr("file") = any ? py::object(py::str(first.file)) : py::none();
    instance.attr("line") = first.line;
    instance.attr("column") = first.column;
    instance.attr("key") = first.key_path;
    instance.attr("hint") = first.hint;
    PyErr_SetObject(types.scenario_error.ptr(), instance.ptr());
  } catch (const ConfigError& e) {
    raise(types.config_error, e.what());
  } catch (const SimulationError& e) {
    raise(types.simulation_error, e.what());
  } catch (const Error& e) {
    raise(types.error, e.what());
  }
}

}  // namespace
}  // namespace clustersim::python

PYBIND11_MODULE(clustersim, m) {
  using namespace clustersim::python;
  namespace cs = clustersim;
  m.doc() = "ClusterSim: LLM training and serving on accelerator clusters, simulated (docs/python.md)";
  m.attr("__version__") = CLUSTERSIM_VERSION;

  ErrorTypes& types = error_types();
  types.error = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("clustersim.Error", "Base of every error ClusterSim raises on purpose.", nullptr, nullptr));
  types.config_error = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "clustersim.ConfigError", "A setting or option is invalid.", types.error.ptr(), nullptr));
  types.scenario_error = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "clustersim.ScenarioError",
      "A scenario could not be loaded: file, line, column, key and hint of the first problem; diagnostics lists "
      "every problem (dicts with the same fields and message).",
      types.config_error.ptr(), nullptr));
  types.simulation_error = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "clustersim.SimulationError", "The simulator cannot honestly produce the result (does not fit, deadlock...).",
      types.error.ptr(), nullptr));
  m.attr("Error") = types.error;
  m.attr("ConfigError") = types.config_error;
  m.attr("ScenarioError") = types.scenario_error;
  m.attr("SimulationError") = types.simulation_error;
  py::register_exception_translator(&translate);

  py::class_<PyScenario>(m, "Scenario", "A loaded, checked scenario (clustersim.load).")
      .def("set", [](PyScenario& self, const std::string& key, const py::object& value) -> PyScenario& {
             self.set(key, value);
             return self;
           },
           py::arg("key"), py::arg("value"), py::return_value_policy::reference_internal,
           "Sets a key as --set would (checked now: ScenarioError on a bad key or value, the scenario unchanged); "
           "returns the scenario.")
      .def("update", [](PyScenario& self, const py::dict& values) -> PyScenario& {
             self.update(values);
             return self;
           },
           py::arg("values"), py::return_value_policy::reference_internal,
           "Sets several keys together ({key: value}), checked once all are applied (tp and dp at a fixed cluster "
           "size); on an error none is applied. Returns the scenario.")
      .def("get", &PyScenario::get, py::arg("key"),
           "The value `key` resolves to (as written, or its default), as YAML text.")
      .def("copy", &PyScenario::copy, "An independent copy (set() on it leaves this one as it is).")
      .def_property_readonly("name", [](const PyScenario& self) { return self.scenario().name; })
      .def_property_readonly("source", [](const PyScenario& self) { return self.source().name(); },
                             "The file it was loaded from, or '<text>'.")
      .def_property_readonly("overrides", &PyScenario::overrides, "The 'key=value' overrides applied, in order.")
      .def_property_readonly("resolved", [](const PyScenario& self) { return self.scenario().resolved; },
                             "Every key as run: {dotted key: YAML text}.")
      .def_property_readonly("warnings",
                             [](const PyScenario& self) {
                               std::vector<std::string> out;
                               for (const auto& w : self.scenario().warnings) out.push_back(w.render());
                               return out;
                             },
                             "Problems that did not stop the load (a setting with no effect), with positions.")
      .def_property_readonly("accelerators",
                             [](const PyScenario& self) { return self.scenario().platform.cluster.accelerator_count(); })
      .def("__repr__", &PyScenario::repr);

  py::class_<Result>(m, "Result",
                     "A result document (what `clustersim run --format json` prints), read as attributes or items.")
      .def("__getattr__", &Result::attribute)
      .def("__getitem__", &Result::item)
      .def("__contains__", &Result::contains)
      .def("__dir__",
           [](const py::object& self) {
             py::list names = py::module_::import("builtins").attr("object").attr("__dir__")(self);
             for (const std::string& key : self.cast<const Result&>().keys()) names.append(key);
             return names;
           })
      .def("keys", &Result::keys)
      .def("to_dict", &Result::to_dict, "The document as plain dicts and lists.")
      .def("to_json", &Result::to_json, py::arg("indent") = 2, "The document as JSON text.")
      .def("__repr__", &Result::repr);

  py::class_<Report, Result>(m, "Report",
                             "A result with rows: len(), iteration and report[i] are over its rows (dicts).")
      .def("__len__", &Report::size)
      .def("__iter__", [](const Report& self) { return py::iter(self.rows()); })
      .def("__getitem__", &Report::row)
      .def("__getitem__", &Result::item)
      .def_property_readonly("rows", &Report::rows, "The rows as a list of dicts.")
      .def("frame", [](const py::object& self) { return to_frame(self); },
           "The rows as a pandas DataFrame (nested fields as dotted columns); needs pandas.");

  m.def("load", &load, py::arg("source"), py::arg("overrides") = py::none(),
        "Loads a scenario from a file's path or from YAML text, with overrides ({key: value} or ['key=value']).");
  m.def("run", &run, py::arg("scenario"), "Simulates a scenario (or a path); returns its Result. Releases the GIL.");
  const cs::sweep::SearchOptions search_defaults;
  const cs::sweep::SearchSpaceOptions space = search_defaults.space;
  std::vector<std::string> recompute_defaults;
  for (const auto policy : space.recompute_policies) {
    recompute_defaults.emplace_back(cs::training::recompute_names().name(policy));
  }
  m.def("sweep", &sweep, py::arg("scenario"), py::arg("grid") = py::none(), py::kw_only(), py::arg("zip") = py::none(),
        py::arg("sample") = py::none(), py::arg("seed") = py::none(), py::arg("pareto") = py::none(),
        py::arg("jobs") = 0, py::arg("out") = py::none(),
        "Runs every point of grid {key: [values]} (and zip groups [{key: [..], key: [..]}]) as `clustersim sweep` "
        "does; without them the scenario file's own sweep: block. jobs: points at once (0: every core); out: a "
        "folder for resumable point files. Returns a Report, one row per point.");
  m.def("search", &search, py::arg("scenario"), py::kw_only(), py::arg("objective") = "throughput",
        py::arg("top") = search_defaults.top_n, py::arg("resimulate") = search_defaults.resimulate,
        py::arg("max_tp") = space.max_tp, py::arg("max_pp") = space.max_pp, py::arg("max_cp") = space.max_cp,
        py::arg("max_ep") = space.max_ep, py::arg("max_vp") = space.max_vp,
        py::arg("max_micro_batch") = space.max_micro_batch, py::arg("zero") = space.zero_stages,
        py::arg("recompute") = recompute_defaults, py::arg("threads") = search_defaults.threads,
        "The best parallel splits of a training scenario, as `clustersim search`; a Report, one row per candidate.");
  const cs::sweep::CapacityOptions capacity_defaults;
  const cs::sweep::TrainingCapacityOptions training_defaults;
  m.def("capacity", &capacity, py::arg("scenario"), py::kw_only(), py::arg("rate") = py::none(),
        py::arg("precision") = capacity_defaults.precision, py::arg("max_trials") = capacity_defaults.max_trials,
        py::arg("threads") = capacity_defaults.threads, py::arg("deadline") = py::none(),
        py::arg("tokens") = training_defaults.tokens, py::arg("accelerators") = std::vector<std::string>{},
        py::arg("prices") = std::map<std::string, double>{}, py::arg("max_nodes") = training_defaults.max_nodes,
        "Serving: the highest rate within the SLO, or (rate=) the fewest instances for a rate; training "
        "(deadline='30 d' or seconds): the smallest and cheapest cluster per accelerator. A Report of its trials "
        "(serving) or accelerators (training).");
  m.def("validate", &validate_dataset, py::arg("dataset"), py::kw_only(), py::arg("base") = py::none(),
        py::arg("calibration") = py::none(), py::arg("threads") = 0,
        "Validates a measured dataset (training, inference or power CSV, or a benchmark tool's output) as "
        "`clustersim validate`; a Report, one row per compared metric, with summary and skipped. calibration= a "
        "calibration table to run the rows on as well (the document's 'calibration': each row's error on the "
        "library's tables and on it).");
  m.def("export_chakra", &export_chakra, py::arg("scenario"), py::arg("dir"),
        "Writes a training scenario's step as Chakra execution traces, one file per rank, and its process groups "
        "(as `clustersim run --export-chakra DIR`; docs/chakra.md): {files, groups_file, groups, nodes}.");
  m.def("presets", &presets, py::arg("kind") = py::none(),
        "Preset names: {kind: [names]}, or one kind's (accelerators, models, systems, stacks, topologies).");
  m.def("describe", &describe, py::arg("name"),
        "A topology's keys or a preset's values: {title, help, prefix, keys: {key: value}, text}.");
  m.def("to_frame", &to_frame, py::arg("rows"), "A Report or list of dicts as a pandas DataFrame (needs pandas).");
}
