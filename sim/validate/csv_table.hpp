#pragma once
/// A small RFC 4180 CSV reader: quoted fields, doubled quotes, embedded commas and newlines.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::validate {

/// One data row, addressed by column name.
struct CsvRow {
  int line = 0;  ///< 1-based line of the row's first character in the file
  std::map<std::string, std::string, std::less<>> fields;
  /// The field, or "" when the column is absent or empty.
  const std::string& get(std::string_view column) const;
};

/// Parses CSV text whose first record is the header. Throws ConfigError with file:line for
/// an unterminated quote or a row with more fields than the header.
std::vector<CsvRow> parse_csv(std::string_view text, std::string_view file_name);

/// Reads and parses a CSV file; throws ConfigError if it cannot be read.
std::vector<CsvRow> read_csv_file(const std::filesystem::path& file);

}  // namespace clustersim::validate
