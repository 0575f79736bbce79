#include "sim/validate/csv_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "sim/config/diagnostics.hpp"
#include "sim/engine/error.hpp"

namespace clustersim::validate {

const std::string& CsvRow::get(std::string_view column) const {
  static const std::string kEmpty;
  const auto it = fields.find(column);
  return it == fields.end() ? kEmpty : it->second;
}

std::vector<CsvRow> parse_csv(std::string_view text, std::string_view file_name) {
  std::vector<std::vector<std::string>> records;
  std::vector<int> record_lines;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false;
  bool field_started = false;
  int line = 1;
  int record_line = 1;
  int quote_line = 0;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&] {
    end_field();
    if (!(record.size() == 1 && record[0].empty())) {  // skip blank lines
      records.push_back(std::move(record));
      record_lines.push_back(record_line);
    }
    record.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      in_quotes = true;
      field_started = true;
      quote_line = line;
    } else if (c == ',') {
      end_field();
    } else if (c == '\n') {
      end_record();
      ++line;
      record_line = line;
    } else if (c != '\r') {
      field += c;
      field_started = true;
    }
  }
  if (in_quotes) {
    throw ConfigError(fmt::format("{}:{}: unterminated quoted field", file_name, quote_line));
  }
  if (field_started || !record.empty()) end_record();
  if (records.empty()) throw ConfigError(fmt::format("{}: empty CSV file (no header)", file_name));

  const auto& header = records.front();
  std::vector<CsvRow> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() > header.size()) {
      throw ConfigError(fmt::format("{}:{}: row has {} fields but the header has {}", file_name,
                                    record_lines[r], records[r].size(), header.size()));
    }
    CsvRow row;
    row.line = record_lines[r];
    for (std::size_t c = 0; c < records[r].size(); ++c) row.fields[header[c]] = records[r][c];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<CsvRow> read_csv_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot read file", file.string()));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_csv(buffer.str(), file.string());
}

void require_columns(const std::vector<CsvRow>& rows, std::string_view file, const std::vector<std::string>& required) {
  if (rows.empty()) return;
  std::vector<std::string> header;  // every column a row has: the header's, in name order
  for (const CsvRow& row : rows) {
    for (const auto& entry : row.fields) {
      if (std::find(header.begin(), header.end(), entry.first) == header.end()) header.push_back(entry.first);
    }
  }
  std::sort(header.begin(), header.end());
  std::vector<std::string> missing;
  for (const std::string& column : required) {
    if (std::find(header.begin(), header.end(), column) != header.end()) continue;
    const auto close = config::closest_match(column, header);
    missing.push_back(close ? fmt::format("'{}' (did you mean '{}'?)", column, *close) : fmt::format("'{}'", column));
  }
  if (missing.empty()) return;
  throw ConfigError(fmt::format("{}:1: the header has no column {}; its columns: {} (docs/validation.md lists the "
                                "columns of a dataset)",
                                file, fmt::join(missing, ", "), fmt::join(header, ", ")));
}

std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  const auto value = parse_number(text);
  // 2^63: the first double an int64 cannot hold (converting one beyond it is undefined).
  constexpr double kLimit = 9223372036854775808.0;
  if (!value || *value != std::floor(*value) || *value >= kLimit || *value < -kLimit) return std::nullopt;
  return static_cast<std::int64_t>(*value);
}

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (const char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace clustersim::validate
