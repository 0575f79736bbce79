#pragma once
/// A small RFC 4180 CSV reader: quoted fields, doubled quotes, embedded commas and newlines.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
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

// The field parsers and the node size every dataset validator shares.

/// Throws ConfigError at the header ("<file>:1: ...") when it lacks a column of `required`:
/// each missing one with the closest column the header has, and the header's columns.
void require_columns(const std::vector<CsvRow>& rows, std::string_view file, const std::vector<std::string>& required);

/// Accelerators per node of every system preset the dataset validators run rows on.
inline constexpr int kAcceleratorsPerNode = 8;
/// The whole field as a number; nullopt when it is empty or has anything after the number.
std::optional<double> parse_number(std::string_view text);
/// The whole field as an integer; nullopt as parse_number, or when it has a fraction or is
/// beyond int64.
std::optional<std::int64_t> parse_integer(std::string_view text);
/// An ASCII lower-case copy.
std::string lower_case(std::string text);
/// A field as it is written into a CSV line: quoted (quotes doubled) when it holds a comma, a
/// quote or a line break, as is otherwise.
std::string csv_field(const std::string& field);

}  // namespace clustersim::validate
