#pragma once
// Helpers of the rules over the source tree (tests/source): a small C++-aware lexer.
#include <cctype>
#include <string>

namespace source_scan {

/// The source with comments and string and character literals blanked (newlines kept, so line
/// numbers hold); digit separators (1'000) stay code.
inline std::string strip(const std::string& text) {
  std::string out = text;
  enum { code, line_comment, block_comment, string, character, raw } state = code;
  std::string raw_end;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (state) {
      case code:
        if (c == '/' && next == '/') state = line_comment;
        else if (c == '/' && next == '*') state = block_comment;
        else if (c == 'R' && next == '"' && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])))) {
          const std::size_t open = text.find('(', i);
          raw_end = ")";
          raw_end += text.substr(i + 2, open - i - 2);
          raw_end += '"';
          state = raw;
          for (std::size_t k = i; k <= open; ++k) out[k] = ' ';
          i = open;
          continue;
        } else if (c == '"') state = string;
        else if (c == '\'' && i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
                 std::isxdigit(static_cast<unsigned char>(next))) continue;  // a digit separator: 1'000
        else if (c == '\'') state = character;
        else continue;
        out[i] = ' ';
        continue;
      case line_comment:
        if (c == '\n') state = code;
        break;
      case block_comment:
        if (c == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = code;
          continue;
        }
        break;
      case string:
      case character:
        if (c == '\\') {
          out[i] = ' ';
          if (next != '\n') out[i + 1] = ' ';
          ++i;
          continue;
        }
        if ((state == string && c == '"') || (state == character && c == '\'')) state = code;
        break;
      case raw:
        if (text.compare(i, raw_end.size(), raw_end) == 0) {
          for (std::size_t k = i; k < i + raw_end.size(); ++k) out[k] = ' ';
          i += raw_end.size() - 1;
          state = code;
          continue;
        }
        break;
    }
    if (c != '\n') out[i] = ' ';
  }
  return out;
}

}  // namespace source_scan
