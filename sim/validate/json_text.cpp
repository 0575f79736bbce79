#include "sim/validate/json_text.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::validate {
namespace {

/// Python's json module writes the non-standard literals NaN, Infinity and -Infinity (SGLang's
/// default request rate is Infinity): outside strings they become null, "inf" and "-inf", with
/// the text's length kept where it can be so error columns stay right.
std::string python_literals(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (text.substr(i, 3) == "NaN") {
      out += "null";
      i += 2;
    } else if (text.substr(i, 8) == "Infinity") {
      out += "\"inf\"   ";  // 8 characters, as the literal
      i += 7;
    } else if (text.substr(i, 9) == "-Infinity") {
      out += "\"-inf\"   ";
      i += 8;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot read the file", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::pair<int, int> line_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

nlohmann::json parse_json(std::string_view raw, const std::string& file, int first_line) {
  const std::string text = python_literals(raw);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's byte is 1-based and points at the last character it read: the offending
    // token's end. Its start is what an editor should jump to.
    std::size_t at = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, text.size() - 1) : 0;
    if (!text.empty() && text[at] == '"') {
      while (at > 0 && !(text[at - 1] == '"' && (at < 2 || text[at - 2] != '\\'))) --at;
      if (at > 0) --at;
    } else {
      while (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) != 0 || text[at - 1] == '.' ||
                        text[at - 1] == '-' || text[at - 1] == '+')) {
        --at;
      }
    }
    const auto [line, column] = line_column(text, at);
    std::string what = e.what();
    if (const auto syntax = what.find("syntax error"); syntax != std::string::npos) what = what.substr(syntax);
    throw ConfigError(fmt::format("{}:{}:{}: not valid JSON: {}", file, first_line + line - 1, column, what));
  }
}

}  // namespace clustersim::validate
