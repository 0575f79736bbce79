// What is not YAML text is refused with what it is and where: a binary file (a control byte),
// text in another encoding (a byte that starts no UTF-8 character), a folder, and a document
// that aliases expand past kMaxConfigNodes (a "billion laughs").
#include "sim/config/config_tree.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace text_input_test {

using namespace clustersim::config;

TEST_CASE("text_problem finds the first byte that is not YAML text, with its line and column") {
  const auto problem = text_problem(std::string("a: 1\nb: \x7f" "ELF\x00", 11), "f.yaml");
  REQUIRE(problem);
  CHECK(problem->render() == "f.yaml:2:4: not a text (YAML) file: it holds the control byte 0x7F, as binary files do");
  const auto latin1 = text_problem("name: caf\xE9\n", "l.yaml");
  REQUIRE(latin1);
  CHECK(latin1->render() ==
        "l.yaml:1:10: not a UTF-8 text (YAML) file: the byte 0xE9 starts no UTF-8 character (a binary file, or text "
        "in another encoding)");
  CHECK(!text_problem("latency: \"2 \xC2\xB5s\"\t# tab and CRLF\r\n", "u.yaml"));  // UTF-8 text
  CHECK(!text_problem(std::string("\xFF\xFE" "a\x00", 4), "utf16.yaml"));           // a BOM: the parser's
  CHECK(text_problem("\xE2\x82", "cut.yaml"));                                      // a cut sequence
}

TEST_CASE("a binary scenario is refused before the YAML parser reads it") {
  std::vector<Diagnostic> diagnostics;
  const ConfigNode root = parse_config(std::string("# header\nx: \x00\x01", 13), "bin.yaml", diagnostics);
  CHECK(root.is_null());
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() ==
        "bin.yaml:2:4: not a text (YAML) file: it holds the control byte 0x00, as binary files do");
}

TEST_CASE("nested aliases past kMaxConfigNodes end in one quick error at the alias") {
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 9; ++level) {
    bomb += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) {
      bomb += i > 0 ? ", *a" : "*a";
      bomb += std::to_string(level - 1);
    }
    bomb += "]\n";
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<Diagnostic> diagnostics;
  (void)parse_config(bomb, "bomb.yaml", diagnostics);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].message ==
        "the YAML expands to more than 100000 nodes (each alias *name repeats its &name anchor's content: nested "
        "aliases multiply); a scenario needs far fewer");
  CHECK(diagnostics[0].line == 5);  // a4, 111,111 nodes: the first top-level entry past the budget
  CHECK(diagnostics[0].key_path == "a4");
  CHECK(seconds < 5.0);
  // Aliases that stay small are YAML as usual.
  diagnostics.clear();
  const ConfigNode small = parse_config("base: &b {tp: 2}\nuse: *b\n", "ok.yaml", diagnostics);
  CHECK(diagnostics.empty());
  CHECK(small.find_path("use.tp")->text == "2");
}

TEST_CASE("a folder given as a scenario file says it is a folder") {
  std::vector<Diagnostic> diagnostics;
  const auto folder = std::filesystem::path(CLUSTERSIM_TEST_DATA_DIR);
  (void)load_config_file(folder, library_data_dir(), diagnostics);
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].render() == folder.string() + ": '" + folder.string() + "' is a folder, not a scenario file");
}

}  // namespace text_input_test
