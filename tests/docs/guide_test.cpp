// docs/guide.md stays true: every ```console block's `$ COMMAND` line is run again from the
// repository root (`build/release/clustersim` standing for the binary these tests were built
// with) and its output must equal the block's text, and the prose's numbers with decimals must be
// ones the commands print. CLUSTERSIM_UPDATE_GUIDE=1 rewrites the blocks with the fresh output
// instead (then fix the prose the number check points to).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace guide_test {

namespace {

const std::string kGuide = std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/guide.md";
constexpr std::string_view kBinary = "build/release/clustersim";
constexpr std::string_view kFence = "```";
constexpr std::string_view kConsoleFence = "```console";

/// One console block: the command and the output shown under it, as line ranges of the guide.
struct ConsoleBlock {
  std::size_t command_line = 0;  ///< index of the `$ ` line
  std::size_t end_line = 0;      ///< index of the closing fence
  std::string command;
  std::string shown;  ///< the lines between, each ending in '\n'
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<ConsoleBlock> console_blocks(const std::vector<std::string>& lines) {
  std::vector<ConsoleBlock> blocks;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != kConsoleFence) continue;
    if (i + 1 >= lines.size() || lines[i + 1].rfind("$ ", 0) != 0) {
      throw std::runtime_error("docs/guide.md:" + std::to_string(i + 2) + ": a console block starts with its `$ ` command line");
    }
    ConsoleBlock block;
    block.command_line = i + 1;
    block.command = lines[i + 1].substr(2);
    std::size_t j = i + 2;
    while (j < lines.size() && lines[j].rfind(kFence, 0) != 0) block.shown += lines[j++] + "\n";
    if (j == lines.size()) throw std::runtime_error("docs/guide.md:" + std::to_string(i + 1) + ": the console block is not closed");
    block.end_line = j;
    blocks.push_back(std::move(block));
    i = j;
  }
  return blocks;
}

struct CommandOutput {
  int exit_code = -1;
  std::string text;  ///< stdout and stderr together
};

/// Runs `command` with sh from the repository root, the documented binary path replaced by the
/// one under test.
CommandOutput run_from_root(std::string command) {
  for (std::size_t at = command.find(kBinary); at != std::string::npos; at = command.find(kBinary, at)) {
    command.replace(at, kBinary.size(), CLUSTERSIM_BINARY);
    at += std::string_view(CLUSTERSIM_BINARY).size();
  }
  const std::string shell = "cd '" + std::string(CLUSTERSIM_SOURCE_DIR) + "' && (" + command + ") 2>&1";
  CommandOutput result;
  FILE* pipe = popen(shell.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  for (std::size_t n = 0; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) result.text.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!result.text.empty() && result.text.back() != '\n') result.text += '\n';
  return result;
}

/// The decimal numbers of `text` (thousands commas dropped), outside `code spans`.
std::vector<std::string> decimal_numbers(const std::string& text, bool with_fraction_only) {
  const std::string without_code = std::regex_replace(text, std::regex("`[^`]*`"), "");
  const std::regex number(with_fraction_only ? "\\d[\\d,]*\\.\\d+" : "\\d[\\d,]*(\\.\\d+)?");
  std::vector<std::string> out;
  for (std::sregex_iterator it(without_code.begin(), without_code.end(), number), end; it != end; ++it) {
    std::string digits = it->str();
    digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
    out.push_back(digits);
  }
  return out;
}

/// The prose numbers with a fraction (8.423, 1,043.9) that no output shows, rounded to as many
/// decimals: what the prose says after a section's first console block must quote an output.
/// Text before it (the scenario's description: 3.35 TB/s, 16.8M tokens) is not checked.
std::vector<std::string> unquoted_numbers(const std::vector<std::string>& lines,
                                          const std::vector<ConsoleBlock>& blocks) {
  std::vector<double> shown;
  for (const ConsoleBlock& block : blocks) {
    for (const std::string& n : decimal_numbers(block.shown, false)) shown.push_back(std::stod(n));
  }
  std::vector<std::string> unquoted;
  bool after_block = false;
  std::size_t next = 0;  // the next block
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("## ", 0) == 0) after_block = false;
    if (next < blocks.size() && i + 1 == blocks[next].command_line) {
      i = blocks[next++].end_line;  // skip the block
      after_block = true;
      continue;
    }
    if (!after_block) continue;
    for (const std::string& n : decimal_numbers(lines[i], true)) {
      const int decimals = static_cast<int>(n.size() - n.find('.') - 1);
      const double scale = std::pow(10.0, decimals), value = std::stod(n);
      const bool quoted = std::any_of(shown.begin(), shown.end(), [&](double s) {
        return std::abs(std::round(s * scale) - std::round(value * scale)) < 0.5;
      });
      if (!quoted) unquoted.push_back("docs/guide.md:" + std::to_string(i + 1) + ": " + n);
    }
  }
  return unquoted;
}

}  // namespace

TEST_CASE("every command in docs/guide.md prints what the guide shows") {
  std::vector<std::string> lines = read_lines(kGuide);
  const std::vector<ConsoleBlock> blocks = console_blocks(lines);
  REQUIRE(blocks.size() >= 10);
  const char* update_env = std::getenv("CLUSTERSIM_UPDATE_GUIDE");
  const bool update = update_env != nullptr && std::string(update_env) == "1";
  std::vector<std::string> fresh;  // each block's new output, for the update
  for (const ConsoleBlock& block : blocks) {
    INFO("docs/guide.md:", block.command_line + 1, ": $ ", block.command);
    const CommandOutput output = run_from_root(block.command);
    CHECK(output.exit_code == 0);
    // The guide must read the same on every machine: no absolute path of this checkout.
    CHECK(output.text.find(CLUSTERSIM_SOURCE_DIR) == std::string::npos);
    if (!update) {
      INFO("update with: CLUSTERSIM_UPDATE_GUIDE=1 build/release/test_docs, then review the prose's numbers");
      CHECK(output.text == block.shown);
    }
    fresh.push_back(output.text);
  }
  if (!update) {
    INFO("a number in the prose that no command prints (rounded to its decimals); say it without "
         "decimals if it is derived, or quote the output");
    const std::vector<std::string> unquoted = unquoted_numbers(lines, blocks);
    std::string listed;
    for (const std::string& n : unquoted) listed += "\n  " + n;
    INFO("unquoted:", listed);
    CHECK(unquoted.empty());
    return;
  }
  // Rewrite from the last block up, so earlier line numbers stay valid.
  for (std::size_t b = blocks.size(); b-- > 0;) {
    std::vector<std::string> replacement;
    std::istringstream text(fresh[b]);
    for (std::string line; std::getline(text, line);) replacement.push_back(line);
    lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(blocks[b].command_line + 1),
                lines.begin() + static_cast<std::ptrdiff_t>(blocks[b].end_line));
    lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(blocks[b].command_line + 1), replacement.begin(),
                 replacement.end());
  }
  std::ofstream out(kGuide);
  for (const std::string& line : lines) out << line << '\n';
  MESSAGE("rewrote docs/guide.md with the commands' output");
}

TEST_CASE("the guide's parser finds commands and their output, refuses a bad block and finds unquoted numbers") {
  const std::vector<std::string> guide = {"text", "```console", "$ echo hi", "hi", "```", "```yaml", "a: 1", "```"};
  const auto blocks = console_blocks(guide);
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].command == "echo hi");
  CHECK(blocks[0].shown == "hi\n");
  CHECK(blocks[0].command_line == 2);
  CHECK(blocks[0].end_line == 4);
  const CommandOutput echoed = run_from_root(blocks[0].command);
  CHECK(echoed.exit_code == 0);
  CHECK(echoed.text == blocks[0].shown);
  CHECK(run_from_root("exit 3").exit_code == 3);
  const std::vector<std::string> quoting = {"## A", "3.35 TB/s before any block", "```console", "$ run", "step 8.4231 s, 1043.94 ms",
                                            "```", "8.423 s, 1,043.9 ms and `9.99` in code", "but 8.42 is rounded, 7.5 invented",
                                            "## B", "5.25 before this section's block"};
  CHECK(unquoted_numbers(quoting, console_blocks(quoting)) == std::vector<std::string>{"docs/guide.md:8: 7.5"});
  CHECK_THROWS_WITH(console_blocks({"```console", "echo hi", "```"}),
                    "docs/guide.md:2: a console block starts with its `$ ` command line");
  CHECK_THROWS_WITH(console_blocks({"x", "```console", "$ echo hi", "hi"}), "docs/guide.md:2: the console block is not closed");
}

}  // namespace guide_test
