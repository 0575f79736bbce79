#include "calibration_csv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace clustersim::kernels {

const std::vector<std::string>& calibration_ops() {
  static const std::vector<std::string> ops = {
      "gemm",     "batched_gemm", "attention", "layernorm", "softmax",   "elementwise",
      "embedding", "optimizer",   "memcpy",    "hbm_read",  "hbm_write", "hbm_copy",
      "hbm_triad", "l2_read",     "layer_fwd", "layer_bwd"};
  return ops;
}

const std::vector<std::string>& calibration_dtypes() {
  static const std::vector<std::string> dtypes = {"fp32", "tf32", "bf16", "fp16", "fp8"};
  return dtypes;
}

namespace {

bool contains(const std::vector<std::string>& set, const std::string& value) {
  return std::find(set.begin(), set.end(), value) != set.end();
}

void check_positive(const char* field, const std::optional<std::int64_t>& value) {
  if (value && *value <= 0) {
    throw std::invalid_argument(std::string("calibration row: ") + field + " must be positive, got " +
                                std::to_string(*value));
  }
}

std::string optional_int(const std::optional<std::int64_t>& value) {
  return value ? std::to_string(*value) : std::string();
}

std::string optional_flag(const std::optional<bool>& value) {
  return value ? (*value ? "1" : "0") : "";
}

// Shortest round-trippable decimal representation (%.17g would print noise digits).
std::string format_double(double value) {
  char buffer[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

std::string quote_if_needed(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

void validate_row(const CalibrationRow& row) {
  if (row.accelerator.empty()) throw std::invalid_argument("calibration row: accelerator is empty");
  if (row.accelerator.find_first_of(",\"\n") != std::string::npos) {
    throw std::invalid_argument("calibration row: accelerator '" + row.accelerator +
                                "' holds a comma, quote or newline");
  }
  if (!contains(calibration_ops(), row.op)) {
    throw std::invalid_argument("calibration row: unknown op '" + row.op + "'");
  }
  if (!contains(calibration_dtypes(), row.dtype)) {
    throw std::invalid_argument("calibration row: unknown dtype '" + row.dtype + "'");
  }
  check_positive("m", row.m);
  check_positive("n", row.n);
  check_positive("k", row.k);
  check_positive("batch", row.batch);
  check_positive("heads", row.heads);
  check_positive("kv_heads", row.kv_heads);
  check_positive("seq_q", row.seq_q);
  check_positive("seq_kv", row.seq_kv);
  check_positive("head_dim", row.head_dim);
  if (row.bytes && !(std::isfinite(*row.bytes) && *row.bytes > 0)) {
    throw std::invalid_argument("calibration row: bytes must be finite and positive");
  }
  if (!(std::isfinite(row.time_s) && row.time_s > 0)) {
    throw std::invalid_argument("calibration row: time_s must be finite and positive, got " +
                                format_double(row.time_s));
  }
  if (!(std::isfinite(row.spread_s) && row.spread_s >= 0)) {
    throw std::invalid_argument("calibration row: spread_s must be finite and >= 0, got " +
                                format_double(row.spread_s));
  }
  if (row.repeats < 1) {
    throw std::invalid_argument("calibration row: repeats must be >= 1, got " +
                                std::to_string(row.repeats));
  }
  if (row.source.find('\n') != std::string::npos) {
    throw std::invalid_argument("calibration row: source holds a newline");
  }
}

std::string format_row(const CalibrationRow& row) {
  validate_row(row);
  std::ostringstream line;
  line << row.accelerator << ',' << row.op << ',' << row.dtype << ',' << optional_int(row.m) << ','
       << optional_int(row.n) << ',' << optional_int(row.k) << ',' << optional_int(row.batch) << ','
       << optional_int(row.heads) << ',' << optional_int(row.kv_heads) << ','
       << optional_int(row.seq_q) << ',' << optional_int(row.seq_kv) << ','
       << optional_int(row.head_dim) << ',' << optional_flag(row.causal) << ','
       << optional_flag(row.backward) << ',' << (row.bytes ? format_double(*row.bytes) : "") << ','
       << format_double(row.time_s) << ',' << format_double(row.spread_s) << ',' << row.repeats
       << ',' << quote_if_needed(row.source);
  return line.str();
}

void write_preamble(std::ostream& out, const CalibrationMetadata& metadata) {
  for (const auto& [key, value] : metadata) {
    if (key.empty() || key.find_first_of(":\n") != std::string::npos) {
      throw std::invalid_argument("calibration metadata: invalid key '" + key + "'");
    }
    if (value.find('\n') != std::string::npos) {
      throw std::invalid_argument("calibration metadata: value of '" + key + "' holds a newline");
    }
    out << "# " << key << ": " << value << '\n';
  }
  out << kCalibrationHeader << '\n';
}

void write_calibration_csv(std::ostream& out, const CalibrationMetadata& metadata,
                           const std::vector<CalibrationRow>& rows) {
  // Format every row before writing anything so an invalid row leaves no half-written file.
  std::vector<std::string> lines;
  lines.reserve(rows.size());
  for (const auto& row : rows) lines.push_back(format_row(row));
  write_preamble(out, metadata);
  for (const auto& line : lines) out << line << '\n';
}

}  // namespace clustersim::kernels
