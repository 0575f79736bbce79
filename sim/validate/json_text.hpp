#pragma once
/// Reading the tools' output files: the whole text of a file, and a JSON document whose syntax
/// errors name the file, line and column (Python's NaN / Infinity literals accepted).
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace clustersim::validate {

/// The file's bytes; ConfigError naming the file when it cannot be read.
std::string read_text(const std::filesystem::path& file);

/// 1-based line and column of byte `offset` of `text`.
std::pair<int, int> line_column(std::string_view text, std::size_t offset);

/// Parses one JSON document whose first line is line `first_line` of `file`; a syntax error is
/// a ConfigError "FILE:LINE:COLUMN: not valid JSON: ...". Python's json module's non-standard
/// literals outside strings read as null (NaN), "inf" and "-inf" (Infinity, -Infinity).
nlohmann::json parse_json(std::string_view raw, const std::string& file, int first_line);

}  // namespace clustersim::validate
