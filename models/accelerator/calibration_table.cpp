#include "models/accelerator/calibration_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/engine/error.hpp"

namespace clustersim::models {

namespace {

constexpr std::size_t kColumns = 19;

/// Splits one CSV line into cells; double quotes enclose cells with commas, "" is a quote.
std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && (text[begin] == ' ' || text[begin] == '\t' || text[begin] == '\r')) ++begin;
  while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r')) --end;
  return std::string(text.substr(begin, end - begin));
}

/// Collects the problems of one row; each becomes "FILE:LINE: message".
class RowProblems {
 public:
  RowProblems(const std::string& file, int line, std::vector<std::string>& sink)
      : prefix_(file + ":" + std::to_string(line) + ": "), sink_(sink) {}
  void add(const std::string& message) { sink_.push_back(prefix_ + message); }

 private:
  std::string prefix_;
  std::vector<std::string>& sink_;
};

std::int64_t read_dimension(const std::string& cell, const char* column, bool needed,
                            std::int64_t fallback, RowProblems& problems) {
  if (cell.empty()) {
    if (needed) problems.add(std::string("column ") + column + " is empty but the op needs it");
    return fallback;
  }
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (ec != std::errc() || end != cell.data() + cell.size()) {
    problems.add(std::string("column ") + column + " must be an integer, got '" + cell + "'");
    return fallback;
  }
  if (value <= 0) {
    problems.add(std::string("column ") + column + " must be positive, got " + cell);
    return fallback;
  }
  return value;
}

double read_number(const std::string& cell, const char* column, RowProblems& problems) {
  if (cell.empty()) return 0;
  try {
    std::size_t used = 0;
    const double value = std::stod(cell, &used);
    if (used != cell.size() || !std::isfinite(value)) throw std::invalid_argument(cell);
    return value;
  } catch (const std::exception&) {
    problems.add(std::string("column ") + column + " must be a number, got '" + cell + "'");
    return 0;
  }
}

bool read_flag(const std::string& cell, const char* column, RowProblems& problems) {
  if (cell.empty() || cell == "0") return false;
  if (cell == "1") return true;
  problems.add(std::string("column ") + column + " must be 0 or 1, got '" + cell + "'");
  return false;
}

std::string quote_cell(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string format_number(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

CalibrationTable parse_calibration_csv(std::string_view text, const std::string& file_name) {
  CalibrationTable table;
  std::vector<std::string> problems;
  bool header_seen = false;
  int line_number = 0;
  std::size_t position = 0;
  while (position <= text.size()) {
    const std::size_t end = std::min(text.find('\n', position), text.size());
    const std::string line = trim(text.substr(position, end - position));
    position = end + 1;
    ++line_number;
    if (line.empty()) {
      if (end == text.size()) break;
      continue;
    }
    if (line[0] == '#') {
      const std::string body = trim(std::string_view(line).substr(1));
      const std::size_t colon = body.find(':');
      if (colon != std::string::npos && colon > 0 && body.find(' ') > colon) {
        table.metadata.emplace_back(trim(std::string_view(body).substr(0, colon)),
                                    trim(std::string_view(body).substr(colon + 1)));
      }
      continue;
    }
    if (!header_seen) {
      if (line != kCalibrationHeader) {
        throw ConfigError(file_name + ":" + std::to_string(line_number) +
                          ": expected the calibration header '" + std::string(kCalibrationHeader) +
                          "', got '" + line + "'");
      }
      header_seen = true;
      continue;
    }
    std::vector<std::string> cells = split_csv_line(line);
    RowProblems row_problems(file_name, line_number, problems);
    if (cells.size() != kColumns) {
      row_problems.add("expected " + std::to_string(kColumns) + " columns, got " +
                       std::to_string(cells.size()));
      continue;
    }
    for (auto& cell : cells) cell = trim(cell);
    CalibrationRow row;
    row.file = file_name;
    row.line = line_number;
    row.accelerator = cells[0];
    if (row.accelerator.empty()) row_problems.add("column accelerator is empty");
    try {
      row.shape.op = parse_op_class(cells[1]);
    } catch (const ConfigError& e) {
      row_problems.add(e.what());
      continue;
    }
    const OpClass op = row.shape.op;
    if (cells[2].empty()) {
      row.dtype_given = false;
      if (!is_bandwidth_op(op)) row_problems.add("column dtype is empty but the op needs it");
    } else {
      try {
        row.shape.dtype = parse_dtype(cells[2]);
      } catch (const ConfigError& e) {
        row_problems.add(e.what());
      }
    }
    const bool is_gemm = is_gemm_op(op);
    const bool is_attention = op == OpClass::attention;
    row.shape.m = read_dimension(cells[3], "m", is_gemm, 0, row_problems);
    row.shape.n = read_dimension(cells[4], "n", is_gemm, 0, row_problems);
    row.shape.k = read_dimension(cells[5], "k", is_gemm, 0, row_problems);
    row.shape.batch = read_dimension(cells[6], "batch", op == OpClass::batched_gemm, 1, row_problems);
    row.shape.heads = read_dimension(cells[7], "heads", is_attention, 0, row_problems);
    row.shape.kv_heads = read_dimension(cells[8], "kv_heads", false, row.shape.heads, row_problems);
    row.shape.seq_q = read_dimension(cells[9], "seq_q", is_attention, 0, row_problems);
    row.shape.seq_kv = read_dimension(cells[10], "seq_kv", false, row.shape.seq_q, row_problems);
    row.shape.head_dim = read_dimension(cells[11], "head_dim", is_attention, 0, row_problems);
    row.shape.causal = read_flag(cells[12], "causal", row_problems);
    row.shape.backward = read_flag(cells[13], "backward", row_problems);
    row.shape.bytes = read_number(cells[14], "bytes", row_problems);
    if (is_bandwidth_op(op) && !(row.shape.bytes > 0)) {
      row_problems.add("column bytes must be positive for op " + cells[1]);
    }
    if (is_attention && row.shape.heads > 0 && row.shape.kv_heads > 0 &&
        row.shape.heads % row.shape.kv_heads != 0) {
      row_problems.add("heads (" + cells[7] + ") must be a multiple of kv_heads (" + cells[8] + ")");
    }
    if (is_attention && row.shape.causal && row.shape.seq_q > row.shape.seq_kv) {
      row_problems.add("causal attention needs seq_q <= seq_kv");
    }
    row.time_s = read_number(cells[15], "time_s", row_problems);
    if (!(row.time_s > 0)) row_problems.add("column time_s must be positive, got '" + cells[15] + "'");
    row.spread_s = read_number(cells[16], "spread_s", row_problems);
    if (row.spread_s < 0) row_problems.add("column spread_s must not be negative");
    const double repeats = read_number(cells[17], "repeats", row_problems);
    if (repeats < 0 || repeats != std::floor(repeats)) {
      row_problems.add("column repeats must be a non-negative integer, got '" + cells[17] + "'");
    }
    row.repeats = static_cast<std::int64_t>(repeats);
    row.source = cells[18];
    if (row.source.empty()) row_problems.add("column source is empty: every row names its source");
    table.rows.push_back(std::move(row));
  }
  if (!header_seen) throw ConfigError(file_name + ": no calibration header line found");
  if (!problems.empty()) {
    std::string message;
    for (const auto& problem : problems) message += (message.empty() ? "" : "\n") + problem;
    throw ConfigError(message);
  }
  return table;
}

CalibrationTable read_calibration_csv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read calibration file '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_calibration_csv(text.str(), path.string());
}

std::string write_calibration_csv(const CalibrationTable& table) {
  std::string out;
  for (const auto& [key, value] : table.metadata) out += "# " + key + ": " + value + "\n";
  out += std::string(kCalibrationHeader) + "\n";
  const auto dim = [](std::int64_t value) { return value > 0 ? std::to_string(value) : std::string(); };
  for (const auto& row : table.rows) {
    const KernelShape& s = row.shape;
    const bool is_gemm = is_gemm_op(s.op);
    const bool is_attention = s.op == OpClass::attention;
    out += row.accelerator + "," + std::string(op_class_name(s.op)) + "," +
           (row.dtype_given ? std::string(dtype_name(s.dtype)) : std::string()) + ",";
    out += (is_gemm ? dim(s.m) + "," + dim(s.n) + "," + dim(s.k) : std::string(",,")) + ",";
    out += (is_gemm || is_attention ? dim(s.batch) : std::string()) + ",";
    if (is_attention) {
      out += dim(s.heads) + "," + dim(s.kv_heads) + "," + dim(s.seq_q) + "," + dim(s.seq_kv) +
             "," + dim(s.head_dim) + "," + (s.causal ? "1" : "0") + "," +
             (s.backward ? "1" : "0") + ",";
    } else {
      out += ",,,,,,,";
    }
    out += (s.bytes > 0 ? format_number(s.bytes) : std::string()) + ",";
    out += format_number(row.time_s) + "," + format_number(row.spread_s) + "," +
           std::to_string(row.repeats) + "," + quote_cell(row.source) + "\n";
  }
  return out;
}

bool same_measurement_key(const CalibrationRow& a, const CalibrationRow& b) {
  const KernelShape& x = a.shape;
  const KernelShape& y = b.shape;
  const bool dtype_equal =
      a.dtype_given == b.dtype_given && (!a.dtype_given || x.dtype == y.dtype);
  return a.accelerator == b.accelerator && x.op == y.op && dtype_equal && x.m == y.m &&
         x.n == y.n && x.k == y.k && x.batch == y.batch && x.heads == y.heads &&
         x.kv_heads == y.kv_heads && x.seq_q == y.seq_q && x.seq_kv == y.seq_kv &&
         x.head_dim == y.head_dim && x.causal == y.causal && x.backward == y.backward &&
         x.bytes == y.bytes;
}

CalibrationTable merge_calibration(const std::vector<CalibrationTable>& tables,
                                   const std::string& accelerator) {
  CalibrationTable merged;
  // Groups of duplicate rows, in order of first appearance.
  std::vector<std::vector<const CalibrationRow*>> groups;
  for (const auto& table : tables) {
    for (const auto& item : table.metadata) {
      // Not a structured binding: clang before 16 cannot capture one in the lambda.
      const std::string& key = item.first;
      const std::string& value = item.second;
      auto found = std::find_if(merged.metadata.begin(), merged.metadata.end(),
                                [&](const auto& entry) { return entry.first == key; });
      if (found == merged.metadata.end()) {
        merged.metadata.emplace_back(key, value);
      } else if (found->second != value &&
                 found->second.find(value) == std::string::npos) {
        found->second += "; " + value;
      }
    }
    for (const auto& row : table.rows) {
      if (!accelerator.empty() && row.accelerator != accelerator) continue;
      auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& members) {
        return same_measurement_key(*members.front(), row);
      });
      if (group == groups.end()) {
        groups.push_back({&row});
      } else {
        group->push_back(&row);
      }
    }
  }
  for (const auto& members : groups) {
    CalibrationRow row = *members.front();
    std::vector<double> times, spreads;
    row.repeats = 0;
    row.source.clear();
    for (const CalibrationRow* member : members) {
      times.push_back(member->time_s);
      spreads.push_back(member->spread_s);
      row.repeats += member->repeats;
      if (row.source.find(member->source) == std::string::npos) {
        row.source += (row.source.empty() ? "" : " | ") + member->source;
      }
    }
    row.time_s = median(times);
    row.spread_s = median(spreads);
    merged.rows.push_back(std::move(row));
  }
  return merged;
}

std::optional<CalibrationTable> read_default_calibration(const std::filesystem::path& data_dir,
                                                         const std::string& accelerator) {
  const std::filesystem::path file = data_dir / "calibration" / (accelerator + ".csv");
  if (!std::filesystem::exists(file)) return std::nullopt;
  return read_calibration_csv(file);
}

std::vector<CalibrationRow> rows_for_accelerator(const CalibrationTable& table,
                                                 const std::string& accelerator) {
  std::vector<CalibrationRow> rows;
  for (const auto& row : table.rows) {
    if (row.accelerator == accelerator) rows.push_back(row);
  }
  return rows;
}

bool has_measurement(const CalibrationTable& table, const std::string& accelerator, OpClass op, Dtype dtype) {
  const auto kind = [](OpClass o) { return o == OpClass::batched_gemm ? OpClass::gemm : o; };
  return std::any_of(table.rows.begin(), table.rows.end(), [&](const CalibrationRow& row) {
    return row.accelerator == accelerator && kind(row.shape.op) == kind(op) && row.shape.dtype == dtype;
  });
}

CalibrationTable read_calibration_path(const std::filesystem::path& path, const std::string& accelerator) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_regular_file(path)) {
    files.push_back(path);
  } else if (std::filesystem::is_directory(path)) {
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      if (entry.is_regular_file() && entry.path().extension() == ".csv") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) throw ConfigError("no *.csv files in '" + path.string() + "'");
  } else {
    throw ConfigError("calibration file or folder '" + path.string() + "' does not exist");
  }
  std::vector<CalibrationTable> tables;
  std::string problems;
  for (const auto& file : files) {
    try {
      tables.push_back(read_calibration_csv(file));
    } catch (const ConfigError& e) {
      problems += (problems.empty() ? "" : "\n") + std::string(e.what());
    }
  }
  if (!problems.empty()) throw ConfigError(problems);
  return merge_calibration(tables, accelerator);
}

}  // namespace clustersim::models
