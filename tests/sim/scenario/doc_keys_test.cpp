// Every scenario key the docs name exists: a backquoted dotted name under a top-level section
// (`cluster.network.tiers`, `--set workload.parallelism.tp=4`) must be a key of
// docs/scenario-reference.md (whose `<name>` segments stand for any name), a section above one,
// a preset-relative key of an accelerator or model (`power.tdp`), or an output metric of
// docs/metrics.md. Both files are checked against the code by their own tests (cli_test,
// metric_glossary_test), so a renamed or removed key fails here where a doc still names it. A
// name the text calls misspelt, a typo or an unknown key (on its line or the line before) is an
// example of a wrong one and is left alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace doc_keys_test {

namespace {

namespace fs = std::filesystem;

const fs::path kSource = CLUSTERSIM_SOURCE_DIR;

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The backquoted names in the first column of a Markdown table: `| `name` | ...`.
std::vector<std::string> table_names(const fs::path& file) {
  static const std::regex row(R"(^\| `([^`]+)` \|)");
  std::vector<std::string> names;
  for (const std::string& line : lines_of(file)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) names.push_back(m[1]);
  }
  return names;
}

/// A reference key as a pattern: its `<...>` segments match any one segment.
std::regex key_pattern(const std::string& key) {
  std::string out = "^";
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] == '<') {
      i = key.find('>', i);
      out += "[^.]+";
    } else if (std::string("\\^$.|?*+()[]{}").find(key[i]) != std::string::npos) {
      out += std::string("\\") + key[i];
    } else {
      out += key[i];
    }
  }
  return std::regex(out + "$");
}

struct KnownNames {
  std::vector<std::string> keys;
  std::vector<std::regex> patterns;
  std::set<std::string> metrics;

  KnownNames() {
    keys = table_names(kSource / "docs/scenario-reference.md");
    for (const std::string& key : keys) patterns.push_back(key_pattern(key));
    for (const std::string& metric : table_names(kSource / "docs/metrics.md")) metrics.insert(metric);
  }

  bool known(const std::string& name) const {
    if (metrics.count(name) != 0) return true;
    for (const std::string& metric : metrics) {  // a group of metrics (`power.energy_parts_j`)
      if (metric.rfind(name + ".", 0) == 0) return true;
    }
    for (const std::regex& pattern : patterns) {
      if (std::regex_match(name, pattern)) return true;
    }
    // A section: a key continues it.
    for (const std::string& key : keys) {
      if (key.rfind(name + ".", 0) == 0) return true;
    }
    // Preset-relative: the tail of an accelerator's or a model's key (`power.tdp`).
    for (const char* preset : {"accelerators.<name>.", "models.<name>."}) {
      const std::string relative = preset + name;
      if (std::find(keys.begin(), keys.end(), relative) != keys.end()) return true;
    }
    return false;
  }
};

/// The dotted names under a top-level section among the words in backquotes on `line` (a
/// command's `--set KEY=VALUE` too): a leading quote, `=value` and a trailing `:` or `,` cut off.
std::vector<std::string> named_keys(const std::string& line) {
  static const std::regex quoted("`([^`]+)`");
  static const std::regex key(R"(^(cluster|workload|simulation|power|cost|output|accelerators|models|jobs)\.[A-Za-z0-9_.<>-]*[A-Za-z0-9_>]$)");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), quoted); it != std::sregex_iterator(); ++it) {
    std::istringstream words((*it)[1].str());
    for (std::string word; words >> word;) {
      word.erase(0, word.find_first_not_of("'\""));
      word = word.substr(0, word.find('='));
      while (!word.empty() && (word.back() == ':' || word.back() == ',')) word.pop_back();
      if (std::regex_match(word, key)) names.push_back(word);
    }
  }
  return names;
}

bool says_wrong(const std::string& text) {
  for (const char* word : {"misspel", "typo", "unknown key"}) {
    if (text.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("every scenario key a doc names is one the loader reads") {
  const KnownNames known;
  REQUIRE(known.keys.size() > 300);
  REQUIRE(known.metrics.size() > 100);
  std::vector<fs::path> docs = {kSource / "README.md"};
  for (const auto& entry : fs::directory_iterator(kSource / "docs")) {
    const fs::path& p = entry.path();
    if (p.extension() == ".md" && p.filename() != "scenario-reference.md" && p.filename() != "metrics.md") {
      docs.push_back(p);
    }
  }
  std::sort(docs.begin(), docs.end());
  int checked = 0;
  for (const fs::path& doc : docs) {
    const std::vector<std::string> lines = lines_of(doc);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      for (const std::string& name : named_keys(lines[i])) {
        if (says_wrong(lines[i]) || (i > 0 && says_wrong(lines[i - 1]))) continue;
        ++checked;
        INFO(doc.filename().string() << ":" << i + 1 << ": `" << name << "`");
        CHECK(known.known(name));
      }
    }
  }
  CHECK(checked > 150);
}

TEST_CASE("the doc key check knows a key, a named entry, a section, a preset key and a metric, and no other") {
  const KnownNames known;
  CHECK(known.known("workload.parallelism.tp"));
  CHECK(known.known("cluster.network.faults.slow-cable.link"));  // <name> stands for any name
  CHECK(known.known("cluster.network"));
  CHECK(known.known("power.tdp"));  // accelerators.<name>.power.tdp in a preset
  CHECK(known.known("power.device_average_w"));
  CHECK_FALSE(known.known("workload.parallelism.dpp"));
  CHECK_FALSE(known.known("workload.memory.workspace_bytes"));
  CHECK(known.known("power.energy_parts_j"));  // a group of metrics
  CHECK(named_keys("set `--set workload.parallelism.tp=4` and `cluster.nodes:`, not `ls` or `a.b`, "
                   "`--set 'cluster.network.faults.x={link: a-b}'`") ==
        std::vector<std::string>{"workload.parallelism.tp", "cluster.nodes", "cluster.network.faults.x"});
}

}  // namespace doc_keys_test
