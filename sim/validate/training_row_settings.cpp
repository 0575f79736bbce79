#include "sim/validate/training_row_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "sim/config/schema.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/scenario_schema.hpp"
#include "sim/scenario/workload_kinds.hpp"

namespace clustersim::validate {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::optional<std::int64_t> parse_whole(const std::string& text) {
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value != std::floor(value)) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

/// The declaration of a training-workload key: its choices and range are the loader's.
const config::Field& declared(const std::string& key) {
  static const config::Schema schema =
      scenario::scenario_schema(scenario::builtin_workload_kinds(), "training");
  const config::Field* field = config::find_field(schema.fields, config::split_key_path(key));
  if (field == nullptr) throw std::logic_error("undeclared scenario key " + key);  // a table bug
  return *field;
}

std::string range_text(const config::Field& field) {
  const auto low = static_cast<std::int64_t>(field.min);
  if (std::isinf(field.max)) return fmt::format("an integer >= {}", low);
  return fmt::format("an integer from {} to {}", low, static_cast<std::int64_t>(field.max));
}

/// Reads one column against its key's declaration; a problem names the column, the value and
/// what the key accepts.
class ColumnReader {
 public:
  ColumnReader(const CsvRow& row, std::vector<std::string>& problems, std::vector<std::string>& set)
      : row_(row), problems_(problems), set_(set) {}

  std::optional<std::int64_t> integer(const RowSettingColumn& c) {
    const std::string text = value(c);
    if (text.empty()) return std::nullopt;
    const config::Field& field = declared(c.key);
    const auto v = parse_whole(text);
    if (!v || static_cast<double>(*v) < field.min || static_cast<double>(*v) > field.max) {
      return fail<std::int64_t>(c, text, range_text(field));
    }
    return v;
  }

  std::optional<std::string> choice(const RowSettingColumn& c) {
    const std::string text = value(c);
    if (text.empty()) return std::nullopt;
    const config::Field& field = declared(c.key);
    if (std::find(field.choices.begin(), field.choices.end(), text) == field.choices.end()) {
      return fail<std::string>(c, text, fmt::format("one of {}", fmt::join(field.choices, ", ")));
    }
    return text;
  }

  std::optional<bool> boolean(const RowSettingColumn& c) {
    const std::string text = value(c);
    if (text.empty()) return std::nullopt;
    const std::string l = lower_case(text);
    if (l == "true" || l == "yes" || l == "on") return true;
    if (l == "false" || l == "no" || l == "off") return false;
    return fail<bool>(c, text, "true or false");
  }

  /// Layers per stage: integers >= 1 separated by spaces, ';' or ',' (quoted), brackets allowed.
  std::vector<std::int64_t> layer_counts(const RowSettingColumn& c) {
    std::string text = value(c);
    if (text.empty()) return {};
    std::vector<std::int64_t> counts;
    std::string item;
    bool bad = false;
    const auto flush = [&] {
      if (item.empty()) return;
      const auto v = parse_whole(item);
      if (!v || *v < 1) bad = true;
      else counts.push_back(*v);
      item.clear();
    };
    for (const char ch : text) {
      if (ch == ' ' || ch == ';' || ch == ',' || ch == '[' || ch == ']') {
        flush();
      } else {
        item += ch;
      }
    }
    flush();
    if (bad || counts.empty()) {
      fail<bool>(c, text, "integers >= 1, one per pipeline stage (or virtual stage), separated by spaces or ';'");
      return {};
    }
    return counts;
  }

 private:
  std::string value(const RowSettingColumn& c) {
    std::string text = trimmed(row_.get(c.column));
    if (!text.empty() && !c.format_column) set_.push_back(c.column);
    return text;
  }

  template <typename T>
  std::optional<T> fail(const RowSettingColumn& c, const std::string& text, const std::string& valid) {
    problems_.push_back(fmt::format("column '{}': '{}' is not {} ({})", c.column, text, valid, c.key));
    return std::nullopt;
  }

  const CsvRow& row_;
  std::vector<std::string>& problems_;
  std::vector<std::string>& set_;
};

}  // namespace

const std::vector<RowSettingColumn>& row_setting_columns() {
  static const std::vector<RowSettingColumn> columns = {
      {"micro_batch", "workload.micro_batch"},
      {"vp", "workload.parallelism.vp", true},
      {"stage_layers", "workload.parallelism.stage_layers"},
      {"recompute", "workload.recompute"},
      {"sequence_parallel", "workload.parallelism.sequence_parallel"},
      {"zero", "workload.parallelism.zero"},
      {"attention", "workload.attention"},
      {"tp_comm_overlap", "workload.tp_comm_overlap"},
      {"overlap_grad_reduce", "workload.overlap_grad_reduce"},
      {"framework", "workload.framework"},
      {"cross_entropy", "workload.cross_entropy"},
      {"gradient_reduce_dtype", "workload.gradient_reduce_dtype"},
      {"optimizer_master", "workload.optimizer.master_weights"},
      {"optimizer_moments", "workload.optimizer.moments"},
  };
  return columns;
}

RowSettings read_row_settings(const CsvRow& row, std::vector<std::string>& problems) {
  const auto& c = row_setting_columns();
  RowSettings s;
  ColumnReader read(row, problems, s.columns_set);
  s.micro_batch = read.integer(c[0]);
  s.vp = read.integer(c[1]);
  s.stage_layers = read.layer_counts(c[2]);
  s.recompute = read.choice(c[3]);
  s.sequence_parallel = read.boolean(c[4]);
  s.zero = read.integer(c[5]);
  s.attention = read.choice(c[6]);
  s.tp_comm_overlap = read.boolean(c[7]);
  s.overlap_grad_reduce = read.boolean(c[8]);
  s.framework = read.choice(c[9]);
  s.cross_entropy = read.choice(c[10]);
  s.gradient_reduce_dtype = read.choice(c[11]);
  s.optimizer_master = read.choice(c[12]);
  s.optimizer_moments = read.choice(c[13]);
  for (const auto& unsupported : unsupported_row_columns()) {
    const std::string text = trimmed(row.get(unsupported.column));
    if (!text.empty()) {
      problems.push_back(fmt::format("column '{}': '{}' cannot be simulated: {}", unsupported.column, text,
                                     unsupported.reason));
    }
  }
  return s;
}

std::optional<std::string> read_row_precision(const CsvRow& row, std::vector<std::string>& problems) {
  std::vector<std::string> set;
  return ColumnReader(row, problems, set).choice({"precision", "workload.precision"});
}

const std::vector<UnsupportedColumn>& unsupported_row_columns() {
  static const std::vector<UnsupportedColumn> columns = {
      {"fp8_recipe",
       "the workload has no FP8 recipe key; precision fp8 runs every GEMM in FP8 with the accelerator's "
       "fp8 peak (and its fp8_promotion_interval), attention in bf16, whatever the scaling recipe; leave the "
       "column empty"},
  };
  return columns;
}

const std::vector<GpuTypeSystem>& gpu_type_systems() {
  // The SXM part for a bare name: the one the DGX/HGX training systems carry (and the 80 GB
  // A100, the one the library has).
  static const std::vector<GpuTypeSystem> systems = {
      {"dgx-a100", {"A100", "A100-SXM", "A100-SXM4-80GB", "A100-80GB", "a100-sxm-80gb"}},
      // MLPerf's spellings too (H100-SXM-80GB, H200-SXM-141GB, B200-SXM-180GB), as the serving rows read them.
      {"dgx-h100", {"H100", "H100-SXM", "H100-SXM5", "H100-SXM5-80GB", "H100-SXM-80GB", "h100-sxm"}},
      {"grand-teton-h100", {"H100-SXM-96GB", "h100-sxm-96gb"}},
      {"dgx-h200", {"H200", "H200-SXM", "H200-SXM5-141GB", "H200-SXM-141GB", "h200-sxm"}},
      {"dgx-b200", {"B200", "B200-SXM-180GB"}},
      {"h100-pcie-x8", {"H100-PCIe", "h100-pcie"}},
      {"h100-nvl-x8", {"H100-NVL", "h100-nvl"}},
      {"gh200-nvl32", {"GH200", "GH200-144GB", "gh200-144gb"}},
      {"gb200-nvl72", {"GB200"}},
      {"gb300-nvl72", {"GB300"}},
      {"l40s-pcie-x8", {"L40S"}},
      {"mi300x-x8", {"MI300X"}},
      {"mi325x-x8", {"MI325X"}},
  };
  return systems;
}

std::optional<std::string> system_for_gpu_type(const std::string& gpu_type) {
  std::string name = gpu_type.substr(0, gpu_type.find('('));
  name = lower_case(trimmed(name));
  if (name.empty()) return std::nullopt;
  for (const auto& entry : gpu_type_systems()) {
    for (const auto& n : entry.names) {
      if (lower_case(n) == name) return entry.system;
    }
  }
  for (const auto& system : scenario::library_names(scenario::LibraryKind::systems)) {
    if (lower_case(system) == name) return system;
  }
  return std::nullopt;
}

std::string gpu_type_choices() {
  std::vector<std::string> parts;
  for (const auto& entry : gpu_type_systems()) {
    std::vector<std::string> shown;
    for (const auto& n : entry.names) {
      if (n != lower_case(n) || shown.empty()) shown.push_back(n);  // the preset names are listed below
    }
    parts.push_back(fmt::format("{} ({})", fmt::join(shown, ", "), entry.system));
  }
  return fmt::format("{}; or a system preset's own name", fmt::join(parts, "; "));
}

}  // namespace clustersim::validate
