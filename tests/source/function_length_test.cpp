// No function in sim/, models/ or topologies/ is longer than 150 lines: a function that does
// not fit on a screen holds several ideas (docs/ARCHITECTURE.md, "Sizes"). Declarative tables
// (schemas, registries of documented parameters) are exempt by name below, each with its reason.
//
// The scan is a small C++-aware lexer: comments, string and character literals are skipped;
// a `{` opens a function body when the declaration before it ends like a function head
// (`name(...)` with qualifiers, a trailing return type or a constructor's initializer list) and
// we are not already inside one; the body's length is from its `{` line to its `}` line.
#include <doctest/doctest.h>

#include "source_scan.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace function_length_test {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxLines = 150;

struct FunctionBody {
  std::string name;
  int first_line = 0;
  int lines = 0;
};

/// Declarative tables longer than a screen, by file and function name.
struct Exemption {
  const char* file;
  const char* function;
  const char* reason;
};
// Functions allowed past the limit, each with its reason (none at present: the scenario's key
// table, the last one, became per-layer declarations).
constexpr std::array<Exemption, 0> kExemptions{};

/// The name of the function a declaration heads, or "" when it heads something else.
std::string function_name(const std::string& declaration) {
  static const std::regex head(R"(([~\w:<>]+)\s*\((?:[^()]|\([^()]*\))*\)\s*(?:const|noexcept|override|final|mutable|&|\s)*)"
                               R"((?:->\s*[\w:<>,*&\s]+)?(?::\s*[\s\S]*)?$)");
  static const std::regex control(R"(^(if|for|while|switch|catch|return|sizeof|decltype|alignof)$)");
  static const std::regex type_head(R"(^\s*(template\s*<[^{]*>\s*)?(class|struct|union|enum|namespace|extern)\b)");
  if (std::regex_search(declaration, type_head)) return "";
  std::smatch match;
  if (!std::regex_search(declaration, match, head)) return "";
  std::string name = match[1].str();
  const auto colons = name.rfind("::");
  const std::string last = colons == std::string::npos ? name : name.substr(colons + 2);
  if (std::regex_match(last, control)) return "";
  return name;
}

std::vector<FunctionBody> function_bodies(const std::string& source) {
  const std::string code = source_scan::strip(source);
  std::vector<FunctionBody> bodies;
  std::string declaration;  // text since the last statement or body boundary, outside functions
  int line = 1, depth = 0, function_depth = -1;
  FunctionBody current;
  // Braces opened outside functions: true for a member's brace initializer in a constructor's
  // initializer list, which belongs to the declaration that goes on.
  std::vector<bool> initializer;
  static const std::regex ends_with_member(R"(\)\s*:[\s\S]*[\w>]\s*$)");
  for (const char c : code) {
    if (c == '\n') ++line;
    if (function_depth >= 0) {  // inside a function: only find where it ends
      if (c == '{') ++depth;
      if (c == '}' && --depth == function_depth) {
        current.lines = line - current.first_line + 1;
        bodies.push_back(current);
        function_depth = -1;
        declaration.clear();
      }
      continue;
    }
    if (c == '{') {
      const std::string name = function_name(declaration);
      const bool member_initializer = !name.empty() && std::regex_search(declaration, ends_with_member);
      if (!name.empty() && !member_initializer) {
        current = {name, line, 0};
        function_depth = depth;
        ++depth;
        continue;
      }
      ++depth;
      initializer.push_back(member_initializer);
      if (member_initializer) {
        declaration += c;
      } else {
        declaration.clear();
      }
      continue;
    }
    if (c == '}') {
      --depth;
      const bool member_initializer = !initializer.empty() && initializer.back();
      if (!initializer.empty()) initializer.pop_back();
      if (member_initializer) {
        declaration += c;
      } else {
        declaration.clear();
      }
      continue;
    }
    if (c == ';') {
      declaration.clear();
      continue;
    }
    declaration += c;
  }
  return bodies;
}

/// The exemption of `function` in `file`, or nullptr.
const Exemption* exemption(const std::string& file, const std::string& function) {
  for (const Exemption& e : kExemptions) {
    if (file == e.file && (function == e.function || function.ends_with(std::string("::") + e.function))) return &e;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the scanner finds function bodies and their lengths") {
  const std::string source = "namespace n {\nstruct S {\n  int f() const {\n    if (x) {\n    }\n    return 1;\n  }\n};\n"
                             "S::S(int a) : a_(a), b_{a} {\n}\nconst char* s = \"{\";  // {\n"
                             "auto g(int x) -> int {\n  return [x] { return x; }();\n}\n}\n";
  const auto bodies = function_bodies(source);
  REQUIRE(bodies.size() == 3);
  CHECK(bodies[0].name == "f");
  CHECK(bodies[0].lines == 5);
  CHECK(bodies[1].name == "S::S");
  CHECK(bodies[1].lines == 2);
  CHECK(bodies[2].name == "g");
  CHECK(bodies[2].lines == 3);
}

TEST_CASE("no function in sim/, models/ or topologies/ is longer than 150 lines") {
  const fs::path root(CLUSTERSIM_SOURCE_DIR);
  std::vector<std::string> too_long;
  std::vector<const Exemption*> used;
  std::size_t scanned = 0;
  for (const char* folder : {"sim", "models", "topologies"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const auto extension = entry.path().extension();
      if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp")) continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string file = fs::relative(entry.path(), root).generic_string();
      for (const FunctionBody& body : function_bodies(text.str())) {
        ++scanned;
        const Exemption* excused = body.lines > kMaxLines ? exemption(file, body.name) : nullptr;
        if (excused != nullptr) used.push_back(excused);
        if (body.lines > kMaxLines && excused == nullptr) {
          too_long.push_back(file + ":" + std::to_string(body.first_line) + ": " + body.name + " has " +
                             std::to_string(body.lines) + " lines");
        }
      }
    }
  }
  CHECK(scanned > 1000);
  std::string report;
  for (const std::string& problem : too_long) report += problem + "\n";
  INFO(report);
  CHECK(too_long.empty());
  // An exemption no longer needed goes.
  for (const Exemption& e : kExemptions) {
    INFO(std::string(e.file) << ": " << std::string(e.function));
    CHECK(std::find(used.begin(), used.end(), &e) != used.end());
  }
}

}  // namespace function_length_test
