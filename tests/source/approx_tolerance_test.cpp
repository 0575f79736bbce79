// Every doctest::Approx of a small quantity in tests/ has a relative tolerance.
//
// doctest::Approx(x) passes when |a - x| < 1.19e-5 * (1 + max(|a|, |x|)): below about 0.01
// that is an absolute tolerance far wider than the quantity's own precision, and below 1.2e-5
// (microseconds, picojoules) it passes for 0 (tests/relative_approx.hpp). The scan finds each
// `Approx(` outside comments and strings and rejects it, unless its chain sets `.scale(`, when
//   * its argument is a constant expression (literals and + - * / only) worth less than
//     kSmall in magnitude, 0 included, or
//   * its argument holds a literal below kSmall (a latency added to a time: `t + 4e-6` cannot
//     tell whether the 4 us was added when the tolerance is 12 us).
// An argument made of names only (`Approx(expected_s)`) cannot be judged here.
#include <doctest/doctest.h>

#include "source_scan.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace approx_tolerance_test {

namespace fs = std::filesystem;

namespace {

constexpr double kSmall = 1e-2;

/// One `Approx(...)` in stripped code: its line, argument and the calls chained after it.
struct ApproxCall {
  int line = 0;
  std::string argument;
  std::string chain;  ///< e.g. ".epsilon(1e-9).scale(0)"
};

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// From `open` (just past a '('), the index just past its matching ')', or npos.
std::size_t matching_paren(const std::string& code, std::size_t open) {
  int depth = 1;
  for (std::size_t i = open; i < code.size(); ++i) {
    if (code[i] == '(') ++depth;
    if (code[i] == ')' && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

std::vector<ApproxCall> approx_calls(const std::string& code) {
  std::vector<ApproxCall> calls;
  const std::string token = "Approx(";
  for (std::size_t at = code.find(token); at != std::string::npos; at = code.find(token, at + 1)) {
    if (at > 0 && is_identifier_char(code[at - 1])) continue;  // relative_approx is lower case anyway
    const std::size_t end = matching_paren(code, at + token.size());
    if (end == std::string::npos) break;
    ApproxCall call;
    call.line = 1 + static_cast<int>(std::count(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    call.argument = code.substr(at + token.size(), end - 1 - at - token.size());
    // The chain: `.name(...)` calls, whitespace allowed between.
    std::size_t i = end;
    while (true) {
      std::size_t k = i;
      while (k < code.size() && std::isspace(static_cast<unsigned char>(code[k]))) ++k;
      if (k >= code.size() || code[k] != '.') break;
      const std::size_t paren = code.find('(', k);
      if (paren == std::string::npos) break;
      const std::size_t close = matching_paren(code, paren + 1);
      if (close == std::string::npos) break;
      call.chain += code.substr(k, close - k);
      i = close;
    }
    calls.push_back(call);
  }
  return calls;
}

/// Tokens of an argument: numbers (value), names, and one-character operators.
struct Token {
  enum Kind { number, name, op } kind = op;
  double value = 0;
  char symbol = 0;
};

std::vector<Token> tokenize(const std::string& text) {
  std::vector<Token> tokens;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      std::string digits;
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                                 text[i] == '\'' ||
                                 ((text[i] == '+' || text[i] == '-') && (text[i - 1] == 'e' || text[i - 1] == 'E')))) {
        if (text[i] != '\'') digits += text[i];
        ++i;
      }
      tokens.push_back({Token::number, std::strtod(digits.c_str(), nullptr), 0});  // suffixes (f, L) ignored
    } else if (is_identifier_char(c)) {
      while (i < text.size() && is_identifier_char(text[i])) ++i;
      tokens.push_back({Token::name, 0, 0});
    } else {
      tokens.push_back({Token::op, 0, c});
      ++i;
    }
  }
  return tokens;
}

/// Evaluates + - * / and parentheses over numbers; nullopt for anything else.
class ConstantExpression {
 public:
  explicit ConstantExpression(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  std::optional<double> value() {
    const auto result = level(0);
    if (!result || at_ != tokens_.size()) return std::nullopt;
    return result;
  }

 private:
  bool accept(char symbol) {
    if (at_ < tokens_.size() && tokens_[at_].kind == Token::op && tokens_[at_].symbol == symbol) {
      ++at_;
      return true;
    }
    return false;
  }
  // The left-associative operators of one precedence level: + and - (0), * and / (1).
  std::optional<double> level(int precedence) {
    const auto operand = [&] { return precedence == 0 ? level(1) : unary(); };
    const char* ops = precedence == 0 ? "+-" : "*/";
    auto left = operand();
    while (left) {
      const char op = accept(ops[0]) ? ops[0] : accept(ops[1]) ? ops[1] : '\0';
      if (op == '\0') break;
      const auto right = operand();
      if (!right) return std::nullopt;
      left = op == '+' ? *left + *right : op == '-' ? *left - *right : op == '*' ? *left * *right : *left / *right;
    }
    return left;
  }
  std::optional<double> unary() {
    if (accept('-')) {
      const auto inner = unary();
      return inner ? std::optional(-*inner) : std::nullopt;
    }
    if (accept('+')) return unary();
    if (accept('(')) {
      const auto inner = level(0);
      return inner && accept(')') ? inner : std::nullopt;
    }
    if (at_ < tokens_.size() && tokens_[at_].kind == Token::number) return tokens_[at_++].value;
    return std::nullopt;
  }

  std::vector<Token> tokens_;
  std::size_t at_ = 0;
};

/// Why `call` compares a small quantity with an absolute tolerance, or "" when it does not.
std::string small_absolute_problem(const ApproxCall& call) {
  if (call.chain.find(".scale(") != std::string::npos) return "";
  const std::vector<Token> tokens = tokenize(call.argument);
  if (const auto value = ConstantExpression(tokens).value(); value && std::fabs(*value) < kSmall) {
    std::ostringstream text;
    text << "its value " << *value << " is below " << kSmall;
    return text.str();
  }
  for (const Token& token : tokens) {
    if (token.kind == Token::number && token.value != 0 && std::fabs(token.value) < kSmall) {
      std::ostringstream text;
      text << "it adds or scales by " << token.value << ", below " << kSmall;
      return text.str();
    }
  }
  return "";
}

/// Every small absolute Approx in `source` (the text of `file`), one message each.
std::vector<std::string> approx_problems(const std::string& file, const std::string& source) {
  std::vector<std::string> problems;
  for (const ApproxCall& call : approx_calls(source_scan::strip(source))) {
    const std::string why = small_absolute_problem(call);
    if (why.empty()) continue;
    std::string shown = call.argument;
    std::replace(shown.begin(), shown.end(), '\n', ' ');
    problems.push_back(file + ":" + std::to_string(call.line) + ": Approx(" + shown + ")" + call.chain + ": " + why +
                       ", so doctest's absolute tolerance (about 1.2e-5) hides errors: use relative_approx "
                       "(tests/relative_approx.hpp) or set .scale(0) with .epsilon");
  }
  return problems;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("the Approx scan rejects small absolute comparisons and accepts relative ones") {
  const auto count = [](const std::string& source) { return approx_problems("x.cpp", source).size(); };
  CHECK(count("CHECK(latency_s == doctest::Approx(2e-6));") == 1);
  CHECK(count("CHECK(t == doctest::Approx(0.5e-6 + 0 + 4e-6));") == 1);
  CHECK(count("CHECK(t == doctest::Approx(0.02 + 4e-6));") == 1);          // the 4 us is below the tolerance
  CHECK(count("CHECK(t == doctest::Approx(compute_s + 4e-6));") == 1);     // a small literal in an expression
  CHECK(count("CHECK(t == doctest::Approx(2e9 / 1.8e12));") == 1);         // 1.1 ms, computed
  CHECK(count("CHECK(t == doctest::Approx(0.0));") == 1);                  // 0 is small too
  CHECK(count("CHECK(t == doctest::Approx(-3e-3));") == 1);
  CHECK(count("CHECK(t == Approx(2e-6).epsilon(1e-9));") == 1);           // epsilon alone stays absolute
  CHECK(count("CHECK(t == doctest::Approx(1'000 * 1e-9));") == 1);
  CHECK(count("CHECK(t == doctest::Approx(\n    5e-6 +\n    x));") == 1);  // over lines
  CHECK(count("CHECK(t == relative_approx(2e-6));") == 0);
  CHECK(count("CHECK(t == doctest::Approx(2e-6).epsilon(1e-3).scale(0));") == 0);
  CHECK(count("CHECK(t == doctest::Approx(2e-6)\n      .scale(0));") == 0);
  CHECK(count("CHECK(t == doctest::Approx(0.5));") == 0);
  CHECK(count("CHECK(t == doctest::Approx(expected_s));") == 0);          // names only: not judged
  CHECK(count("CHECK(t == doctest::Approx(1e6 * x));") == 0);
  CHECK(count("// CHECK(t == doctest::Approx(2e-6));\nconst char* s = \"Approx(1e-6)\";") == 0);
  const auto problems = approx_problems("x.cpp", "\n\n  CHECK(latency_s == doctest::Approx(2e-6));\n");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] ==
        "x.cpp:3: Approx(2e-6): its value 2e-06 is below 0.01, so doctest's absolute tolerance (about 1.2e-5) hides "
        "errors: use relative_approx (tests/relative_approx.hpp) or set .scale(0) with .epsilon");
}

TEST_CASE("a bad line injected into a real test file is found at its line") {
  const fs::path file = fs::path(CLUSTERSIM_SOURCE_DIR) / "tests/topologies/fat_tree_test.cpp";
  std::string source = read(file);
  REQUIRE(approx_problems(file.string(), source).empty());
  // After the first line: the injected check lands on line 2.
  source.insert(source.find('\n') + 1, "CHECK(topology.path(0, 8).latency_s == doctest::Approx(2e-6));\n");
  const auto problems = approx_problems("fat_tree_test.cpp", source);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].rfind("fat_tree_test.cpp:2: Approx(2e-6):", 0) == 0);
}

TEST_CASE("no test in tests/ compares a small quantity with doctest's absolute tolerance") {
  std::vector<std::string> problems;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(CLUSTERSIM_SOURCE_DIR) / "tests")) {
    const std::string extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp" && extension != ".cc")) continue;
    if (entry.path().filename() == "approx_tolerance_test.cpp") continue;  // its examples are bad on purpose
    ++files;
    const std::string relative = fs::relative(entry.path(), CLUSTERSIM_SOURCE_DIR).string();
    for (std::string& problem : approx_problems(relative, read(entry.path()))) problems.push_back(std::move(problem));
  }
  CHECK(files > 50);
  std::string all;
  for (const std::string& problem : problems) all += problem + "\n";
  CHECK_MESSAGE(problems.empty(), all);
}

}  // namespace approx_tolerance_test
