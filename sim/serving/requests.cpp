#include "sim/serving/requests.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "sim/engine/error.hpp"
#include "sim/engine/time.hpp"
#include "sim/engine/mix.hpp"

namespace clustersim::serving {
namespace {

// One RNG stream per purpose, derived from the seed (engine::rng_stream_seed), so the lengths
// do not change when the arrival process does.
constexpr std::uint64_t kArrivalStream = 0x5e41'0001;
constexpr std::uint64_t kInputStream = 0x5e41'0002;
constexpr std::uint64_t kOutputStream = 0x5e41'0003;
constexpr std::uint64_t kPrefixStream = 0x5e41'0004;

std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) {
    cell.erase(0, cell.find_first_not_of(" \t\r"));
    cell.erase(cell.find_last_not_of(" \t\r") + 1);
    cells.push_back(cell);
  }
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const double value = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(value)) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool is_blank_or_comment(const std::string& line) {
  const auto first = line.find_first_not_of(" \t\r");
  return first == std::string::npos || line[first] == '#';
}

std::ifstream open(const std::filesystem::path& file, std::string_view what) {
  std::ifstream in(file);
  if (!in) throw ConfigError(fmt::format("cannot open {} '{}'", what, file.string()));
  return in;
}

/// Column `name`'s index in a trace header, or -1.
int column(const std::vector<std::string>& header, std::string_view name) {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

}  // namespace

const config::NameTable<ArrivalProcess>& arrival_process_names() {
  static const config::NameTable<ArrivalProcess> names(
      "arrival process", {{"poisson", ArrivalProcess::poisson},
                          {"gamma", ArrivalProcess::gamma},
                          {"constant", ArrivalProcess::constant},
                          {"ramp", ArrivalProcess::ramp},
                          {"closed_loop", ArrivalProcess::closed_loop},
                          {"offline", ArrivalProcess::offline},
                          {"trace", ArrivalProcess::trace}});
  return names;
}

const config::NameTable<LengthKind>& length_kind_names() {
  static const config::NameTable<LengthKind> names("length distribution", {{"fixed", LengthKind::fixed},
                                                                           {"uniform", LengthKind::uniform},
                                                                           {"normal", LengthKind::normal},
                                                                           {"lognormal", LengthKind::lognormal},
                                                                           {"empirical", LengthKind::empirical},
                                                                           {"dataset", LengthKind::dataset}});
  return names;
}

std::filesystem::path dataset_profile_file(const std::filesystem::path& data_dir, const std::string& name,
                                           const std::string& side) {
  return data_dir / "datasets" / (name + "." + side + ".csv");
}

std::vector<std::string> dataset_profiles(const std::filesystem::path& data_dir) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir / "datasets", error)) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".input.csv";
    if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string name = file.substr(0, file.size() - suffix.size());
    if (std::filesystem::exists(dataset_profile_file(data_dir, name, "output"))) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

LengthTable read_length_table(const std::filesystem::path& file) {
  std::ifstream in = open(file, "length file");
  LengthTable table;
  std::string line;
  int line_number = 0;
  double total = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (is_blank_or_comment(line)) continue;
    const std::vector<std::string> cells = split_line(line);
    const auto length = parse_number(cells.at(0));
    if (!length) {
      if (table.lengths.empty() && total == 0 && line_number == 1) continue;  // a header
      throw ConfigError(fmt::format("{}:{}: column 1: expected a length, got '{}'", file.string(), line_number, cells[0]));
    }
    const auto weight = cells.size() > 1 ? parse_number(cells[1]) : std::optional<double>(1.0);
    if (*length < 1 || !weight || *weight < 0) {
      throw ConfigError(fmt::format("{}:{}: a length must be >= 1 and a weight >= 0, got '{}'", file.string(),
                                    line_number, line));
    }
    total += *weight;
    table.lengths.push_back(std::round(*length));
    table.cumulative.push_back(total);
  }
  if (table.lengths.empty() || total <= 0) {
    throw ConfigError(fmt::format("length file '{}' has no lengths with a positive weight", file.string()));
  }
  return table;
}

std::vector<Request> read_trace(const std::filesystem::path& file) {
  std::ifstream in = open(file, "trace");
  std::string line;
  int line_number = 0;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    ++line_number;
    if (!is_blank_or_comment(line)) header = split_line(line);
  }
  const int arrival = column(header, "arrival_s"), input = column(header, "input_tokens"),
            output = column(header, "output_tokens"), prefix = column(header, "prefix_id"),
            prefix_tokens = column(header, "prefix_tokens");
  if (arrival < 0 || input < 0 || output < 0) {
    throw ConfigError(fmt::format(
        "{}:{}: a trace's header must name arrival_s, input_tokens and output_tokens (optionally prefix_id, "
        "prefix_tokens)",
        file.string(), line_number));
  }
  std::vector<Request> rows;
  while (std::getline(in, line)) {
    ++line_number;
    if (is_blank_or_comment(line)) continue;
    const std::vector<std::string> cells = split_line(line);
    const auto cell = [&](int index, const char* name, double min) -> double {
      const std::string text = index < static_cast<int>(cells.size()) ? cells[static_cast<std::size_t>(index)] : "";
      const auto value = parse_number(text);
      if (!value || *value < min) {
        throw ConfigError(fmt::format("{}:{}: column {} ({}): expected a number >= {}, got '{}'", file.string(),
                                      line_number, index + 1, name, min, text));
      }
      return *value;
    };
    Request r;
    r.id = static_cast<std::int64_t>(rows.size());
    r.arrival_s = cell(arrival, "arrival_s", 0);
    if (!(r.arrival_s * static_cast<double>(engine::kPsPerSecond) < engine::kHorizonPs)) {
      throw ConfigError(fmt::format("{}:{}: column {} (arrival_s): {} s is past the representable horizon of simulated "
                                    "time (2^63 ps, about {:.1f} days)",
                                    file.string(), line_number, arrival + 1, r.arrival_s,
                                    engine::kHorizonPs / static_cast<double>(engine::kPsPerSecond) / 86400.0));
    }
    r.input_tokens = static_cast<std::int64_t>(std::llround(cell(input, "input_tokens", 1)));
    r.output_tokens = static_cast<std::int64_t>(std::llround(cell(output, "output_tokens", 1)));
    if (prefix >= 0) r.prefix_id = static_cast<std::int64_t>(cell(prefix, "prefix_id", -1));
    if (prefix_tokens >= 0) {
      r.prefix_tokens = std::min(r.input_tokens, static_cast<std::int64_t>(cell(prefix_tokens, "prefix_tokens", 0)));
    }
    r.reusable_tokens = r.prefix_tokens;
    if (!rows.empty() && r.arrival_s < rows.back().arrival_s) {
      throw ConfigError(fmt::format("{}:{}: column {} (arrival_s): arrivals must not decrease ({} after {})",
                                    file.string(), line_number, arrival + 1, r.arrival_s, rows.back().arrival_s));
    }
    rows.push_back(r);
  }
  if (rows.empty()) throw ConfigError(fmt::format("trace '{}' has no requests", file.string()));
  return rows;
}

LengthSampler::LengthSampler(const LengthSpec& spec) : spec_(spec) {
  if (spec.min < 1 || spec.max < spec.min) {
    throw ConfigError(fmt::format("a length distribution needs 1 <= min <= max, got [{}, {}]", spec.min, spec.max));
  }
  switch (spec.kind) {
    case LengthKind::fixed:
      if (spec.value < 1) throw ConfigError(fmt::format("a fixed length must be >= 1, got {}", spec.value));
      break;
    case LengthKind::uniform:
      break;
    case LengthKind::normal:
    case LengthKind::lognormal:
      if (!(spec.mean >= 1) || !(spec.stddev >= 0)) {
        throw ConfigError(fmt::format("normal and lognormal lengths need mean >= 1 and stddev >= 0, got {} and {}",
                                      spec.mean, spec.stddev));
      }
      // A lognormal with the given mean m and standard deviation s of the lengths themselves.
      lognormal_sigma_ = std::sqrt(std::log1p(spec.stddev * spec.stddev / (spec.mean * spec.mean)));
      lognormal_mu_ = std::log(spec.mean) - lognormal_sigma_ * lognormal_sigma_ / 2;
      break;
    case LengthKind::empirical:
    case LengthKind::dataset:
      if (spec.file.empty()) {
        throw ConfigError(spec.kind == LengthKind::dataset ? "a dataset length distribution needs a dataset"
                                                           : "an empirical length distribution needs a file");
      }
      table_ = read_length_table(spec.file);
      break;
  }
}

std::int64_t LengthSampler::draw(std::mt19937_64& rng) const {
  double length = spec_.value;
  switch (spec_.kind) {
    case LengthKind::fixed:
      break;
    case LengthKind::uniform:
      length = std::floor(std::uniform_real_distribution<double>(spec_.min, spec_.max + 1)(rng));
      break;
    case LengthKind::normal:
      length = std::normal_distribution<double>(spec_.mean, spec_.stddev)(rng);
      break;
    case LengthKind::lognormal:
      length = std::lognormal_distribution<double>(lognormal_mu_, lognormal_sigma_)(rng);
      break;
    case LengthKind::empirical:
    case LengthKind::dataset: {
      const double u = std::uniform_real_distribution<double>(0, table_.cumulative.back())(rng);
      const auto it = std::upper_bound(table_.cumulative.begin(), table_.cumulative.end(), u);
      const auto index = std::min<std::size_t>(static_cast<std::size_t>(it - table_.cumulative.begin()),
                                               table_.lengths.size() - 1);
      length = table_.lengths[index];
      break;
    }
  }
  return static_cast<std::int64_t>(std::llround(std::clamp(std::round(length), spec_.min, spec_.max)));
}

double LengthSampler::mean() const {
  std::mt19937_64 rng(engine::rng_stream_seed(1, 0x5e41'00ff));
  double sum = 0;
  constexpr int kDraws = 4096;
  for (int i = 0; i < kDraws; ++i) sum += static_cast<double>(draw(rng));
  return spec_.kind == LengthKind::fixed ? static_cast<double>(draw(rng)) : sum / kDraws;
}

RequestGenerator::RequestGenerator(const RequestsSpec& spec, std::uint64_t seed)
    : spec_(spec),
      arrivals_rng_(engine::rng_stream_seed(seed, kArrivalStream)),
      input_rng_(engine::rng_stream_seed(seed, kInputStream)),
      output_rng_(engine::rng_stream_seed(seed, kOutputStream)),
      prefix_rng_(engine::rng_stream_seed(seed, kPrefixStream)),
      input_(spec.input),
      output_(spec.output) {
  const ArrivalSpec& a = spec.arrival;
  const bool rated = a.process == ArrivalProcess::poisson || a.process == ArrivalProcess::gamma ||
                     a.process == ArrivalProcess::constant || a.process == ArrivalProcess::ramp;
  if (rated && !(a.rate_per_s > 0)) throw ConfigError(fmt::format("an arrival rate must be > 0, got {}", a.rate_per_s));
  if (a.process == ArrivalProcess::gamma && !(a.cv > 0)) {
    throw ConfigError(fmt::format("gamma arrivals need cv > 0, got {}", a.cv));
  }
  if (a.process == ArrivalProcess::ramp && (!(a.rate_end_per_s > 0) || !(a.ramp_duration_s > 0))) {
    throw ConfigError("ramp arrivals need rate_end > 0 and ramp_duration > 0");
  }
  if (a.process == ArrivalProcess::closed_loop && a.clients < 1) {
    throw ConfigError(fmt::format("closed-loop arrivals need clients >= 1, got {}", a.clients));
  }
  if (spec.prefix.turns > 1 && a.process != ArrivalProcess::closed_loop) {
    throw ConfigError("multi-turn sessions (prefix.turns > 1) need arrival.process: closed_loop (a turn follows its answer)");
  }
  if (spec.count < 0) throw ConfigError(fmt::format("requests.count must be >= 0, got {}", spec.count));
  if (a.process == ArrivalProcess::trace) {
    if (spec.trace_file.empty()) throw ConfigError("trace arrivals need requests.trace");
    trace_ = read_trace(spec.trace_file);
    if (spec.count > 0 && static_cast<std::int64_t>(trace_.size()) > spec.count) {
      trace_.resize(static_cast<std::size_t>(spec.count));
    }
  } else if (spec.count < 1) {
    throw ConfigError("requests.count must be >= 1 (0 means 'every row' for a trace only)");
  }
  if (closed_loop()) client_sessions_.resize(static_cast<std::size_t>(a.clients));
}

double RequestGenerator::next_gap() {
  const ArrivalSpec& a = spec_.arrival;
  switch (a.process) {
    case ArrivalProcess::poisson:
      return std::exponential_distribution<double>(a.rate_per_s)(arrivals_rng_);
    case ArrivalProcess::gamma: {
      const double shape = 1 / (a.cv * a.cv);
      return std::gamma_distribution<double>(shape, 1 / (a.rate_per_s * shape))(arrivals_rng_);
    }
    case ArrivalProcess::constant:
      return 1 / a.rate_per_s;
    case ArrivalProcess::ramp: {
      // Inversion of the integrated rate r(t) = r0 + (r1 - r0) t / D (t < D), r1 after.
      double e = std::exponential_distribution<double>(1.0)(arrivals_rng_);
      const double slope = (a.rate_end_per_s - a.rate_per_s) / a.ramp_duration_s;
      double t = clock_s_, gap = 0;
      if (t < a.ramp_duration_s) {
        const double r = a.rate_per_s + slope * t;
        const double to_end = a.ramp_duration_s - t;
        const double area_to_end = r * to_end + slope * to_end * to_end / 2;
        if (e <= area_to_end) {
          return slope == 0 ? e / r : (-r + std::sqrt(r * r + 2 * slope * e)) / slope;
        }
        e -= area_to_end;
        gap = to_end;
        t = a.ramp_duration_s;
      }
      return gap + e / a.rate_end_per_s;
    }
    default:
      return 0;
  }
}

Request RequestGenerator::make(double arrival_s, int client) {
  Request r;
  r.id = sent_++;
  r.arrival_s = arrival_s;
  r.client = client;
  r.input_tokens = input_.draw(input_rng_);
  r.output_tokens = output_.draw(output_rng_);
  const PrefixSpec& p = spec_.prefix;
  if (p.groups > 0 && p.tokens > 0) {
    r.prefix_id = std::uniform_int_distribution<std::int64_t>(0, p.groups - 1)(prefix_rng_);
    r.prefix_tokens = p.tokens;
    r.reusable_tokens = p.tokens;
    r.input_tokens += p.tokens;
  }
  if (client >= 0 && p.turns > 1) {
    Session& s = client_sessions_[static_cast<std::size_t>(client)];
    if (s.turns_done == 0) {
      s.id = next_session_id_++;
      s.context_tokens = r.prefix_tokens;
    }
    // The session's conversation so far is this turn's shared prefix: groups of system prompts
    // and sessions are numbered apart (sessions after the system prompts).
    r.prefix_id = p.groups + s.id;
    r.prefix_tokens = s.context_tokens;
    r.input_tokens += s.context_tokens - (p.groups > 0 && p.tokens > 0 ? p.tokens : 0);
    s.context_tokens = r.input_tokens + r.output_tokens;
    r.reusable_tokens = s.context_tokens;
    if (++s.turns_done == p.turns) s.turns_done = 0;
  }
  return r;
}

std::optional<Request> RequestGenerator::next() {
  if (spec_.arrival.process == ArrivalProcess::trace) {
    if (sent_ >= static_cast<std::int64_t>(trace_.size())) return std::nullopt;
    Request r = trace_[static_cast<std::size_t>(sent_)];
    r.id = sent_++;
    return r;
  }
  if (closed_loop() || sent_ >= spec_.count) return std::nullopt;
  // Offline: every request at 0; constant: the first at 0; otherwise each arrival (the first
  // too) one gap after the last.
  const ArrivalProcess process = spec_.arrival.process;
  if (process != ArrivalProcess::offline && (sent_ > 0 || process != ArrivalProcess::constant)) {
    clock_s_ += next_gap();
  }
  return make(clock_s_, -1);
}

std::vector<Request> RequestGenerator::initial_clients() {
  std::vector<Request> first;
  const ArrivalSpec& a = spec_.arrival;
  for (int client = 0; client < a.clients && sent_ < spec_.count; ++client) {
    const double think =
        a.think_time_s > 0 ? std::exponential_distribution<double>(1 / a.think_time_s)(arrivals_rng_) : 0.0;
    first.push_back(make(think, client));
  }
  std::stable_sort(first.begin(), first.end(), [](const Request& x, const Request& y) { return x.arrival_s < y.arrival_s; });
  return first;
}

std::optional<Request> RequestGenerator::next_for_client(int client, double now_s) {
  if (sent_ >= spec_.count || client < 0 || client >= spec_.arrival.clients) return std::nullopt;
  const double think = spec_.arrival.think_time_s > 0
                           ? std::exponential_distribution<double>(1 / spec_.arrival.think_time_s)(arrivals_rng_)
                           : 0.0;
  return make(now_s + think, client);
}

double RequestGenerator::mean_input_tokens() const {
  if (!trace_.empty()) {
    double sum = 0;
    for (const Request& r : trace_) sum += static_cast<double>(r.input_tokens);
    return sum / static_cast<double>(trace_.size());
  }
  return input_.mean() + (spec_.prefix.groups > 0 ? static_cast<double>(spec_.prefix.tokens) : 0.0);
}

double RequestGenerator::mean_output_tokens() const {
  if (!trace_.empty()) {
    double sum = 0;
    for (const Request& r : trace_) sum += static_cast<double>(r.output_tokens);
    return sum / static_cast<double>(trace_.size());
  }
  return output_.mean();
}

}  // namespace clustersim::serving
