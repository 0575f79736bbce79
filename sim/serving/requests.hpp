#pragma once
/// Where a serving simulation's requests come from: an arrival process (open loop: Poisson,
/// gamma, constant, a linear ramp; or closed loop: N clients each waiting for its answer and a
/// think time before the next), input and output length distributions, shared prefixes
/// (system prompts, multi-turn sessions), or a replayed trace CSV. Every draw comes from
/// engine RNG streams derived from the scenario seed, one per purpose, so a run is
/// reproducible and adding a purpose never perturbs another's stream.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/config/name_table.hpp"

namespace clustersim::serving {

/// One request as the generator hands it out.
struct Request {
  std::int64_t id = 0;
  double arrival_s = 0;            ///< when it reaches the router
  std::int64_t input_tokens = 1;   ///< prompt tokens, the shared prefix included
  std::int64_t output_tokens = 1;  ///< tokens to generate (the first one included)
  std::int64_t prefix_id = -1;     ///< shared-prefix group (system prompt, session); -1: none
  std::int64_t prefix_tokens = 0;  ///< leading input tokens shared with the group's other requests
  /// Tokens of its context a later request may reuse, kept cached after it ends with prefix
  /// caching: a system prompt's prefix_tokens; a session turn's whole conversation (input and
  /// output: the next turn's prefix).
  std::int64_t reusable_tokens = 0;
  int client = -1;                 ///< closed loop: the client that sent it; -1: open loop
};

/// How requests arrive (`requests.arrival.process`).
enum class ArrivalProcess : std::uint8_t {
  poisson,      ///< exponential gaps at `rate`
  gamma,        ///< gamma gaps with mean 1 / rate and coefficient of variation `cv` (bursty when > 1)
  constant,     ///< one request every 1 / rate seconds
  ramp,         ///< Poisson whose rate rises linearly from `rate` to `rate_end` over `ramp_duration`
  closed_loop,  ///< `clients` users, each sending its next request `think_time` after its answer
  offline,      ///< every request at time 0 (MLPerf Offline, a fixed batch)
  trace,        ///< the times, lengths and prefixes of a CSV trace
};
const config::NameTable<ArrivalProcess>& arrival_process_names();

struct ArrivalSpec {
  ArrivalProcess process = ArrivalProcess::poisson;
  double rate_per_s = 1;        ///< poisson, gamma, constant; ramp: the start rate
  double cv = 1;                ///< gamma: coefficient of variation of the gaps (> 0)
  double rate_end_per_s = 0;    ///< ramp: the rate reached at ramp_duration_s
  double ramp_duration_s = 0;   ///< ramp: seconds to reach rate_end (then it stays there)
  int clients = 1;              ///< closed loop
  double think_time_s = 0;      ///< closed loop: mean think time (exponential; 0: none)
};

/// A length distribution (`requests.input` / `requests.output`).
/// `dataset` is an empirical distribution the library ships (models/data/datasets/NAME.SIDE.csv,
/// the lengths of a public trace), read like an `empirical` file.
enum class LengthKind : std::uint8_t { fixed, uniform, normal, lognormal, empirical, dataset };
const config::NameTable<LengthKind>& length_kind_names();

struct LengthSpec {
  LengthKind kind = LengthKind::fixed;
  double value = 128;       ///< fixed
  double min = 1;           ///< uniform bounds; every kind is clamped to [min, max]
  double max = 1e9;
  double mean = 0;          ///< normal, lognormal: the mean of the lengths
  double stddev = 0;        ///< normal, lognormal: their standard deviation
  std::string file;         ///< empirical: a CSV of `length[,weight]` rows (a header line allowed)
  /// dataset: the library profile's name; the scenario loader sets `file` to its table.
  std::string dataset;
};

/// The library's length profiles (models/data/datasets): the names that have both an input and
/// an output table, sorted.
std::vector<std::string> dataset_profiles(const std::filesystem::path& data_dir);
/// A profile's table for one side ("input" or "output").
std::filesystem::path dataset_profile_file(const std::filesystem::path& data_dir, const std::string& name,
                                           const std::string& side);

/// Shared prefixes (`requests.prefix`): system prompts shared by groups of requests, or
/// multi-turn sessions whose every turn carries the conversation so far.
struct PrefixSpec {
  int groups = 0;                 ///< system prompts; each request picks one uniformly; 0: none
  std::int64_t tokens = 0;        ///< a system prompt's tokens (added in front of the input)
  /// > 1: sessions of this many turns (closed loop only: a turn follows its answer); turn k's
  /// prefix is the conversation of turns 1..k-1, inputs and outputs.
  int turns = 1;
};

/// The whole request stream.
struct RequestsSpec {
  ArrivalSpec arrival;
  LengthSpec input;
  LengthSpec output;
  PrefixSpec prefix;
  std::int64_t count = 1000;  ///< requests to send (a trace: at most this many of its rows; 0: all)
  std::string trace_file;     ///< trace: CSV with arrival_s,input_tokens,output_tokens[,prefix_id]
};

/// The rows of a length file or a trace, read once.
struct LengthTable {
  std::vector<double> lengths;
  std::vector<double> cumulative;  ///< cumulative weights, last = total
};

/// Reads an empirical length file. Throws ConfigError naming the file and line.
LengthTable read_length_table(const std::filesystem::path& file);

/// Reads a trace CSV: header `arrival_s,input_tokens,output_tokens` and optionally
/// `prefix_id` and `prefix_tokens`, in any column order; arrivals non-decreasing. Throws
/// ConfigError naming the file, line and column.
std::vector<Request> read_trace(const std::filesystem::path& file);

/// Draws lengths from a LengthSpec.
class LengthSampler {
 public:
  /// Throws ConfigError for an empty empirical table or bad moments.
  explicit LengthSampler(const LengthSpec& spec);
  std::int64_t draw(std::mt19937_64& rng) const;
  /// The distribution's mean after clamping and rounding, estimated once from 4,096 seeded draws
  /// for normal and lognormal (used for capacity estimates, never for the simulation).
  double mean() const;

 private:
  LengthSpec spec_;
  LengthTable table_;
  double lognormal_mu_ = 0, lognormal_sigma_ = 0;
};

/// Generates the requests of a RequestsSpec in arrival order. Open-loop processes pre-draw
/// nothing: next() draws one request at a time. Closed loop: next_for_client() draws a
/// client's next request when its previous answer arrives.
class RequestGenerator {
 public:
  /// `seed` is the scenario's; the streams are derived from it. Throws ConfigError for a bad
  /// spec (an unreadable trace or length file).
  RequestGenerator(const RequestsSpec& spec, std::uint64_t seed);

  /// The next open-loop request (offline, trace and rate processes), or nullopt when `count`
  /// were sent.
  std::optional<Request> next();
  /// Closed loop: the first request of every client (at time 0, staggered by one think time
  /// draw each).
  std::vector<Request> initial_clients();
  /// Closed loop: client `client`'s next request after its answer at `now_s`, or nullopt when
  /// `count` were sent.
  std::optional<Request> next_for_client(int client, double now_s);

  bool closed_loop() const { return spec_.arrival.process == ArrivalProcess::closed_loop; }
  std::int64_t sent() const { return sent_; }
  const RequestsSpec& spec() const { return spec_; }
  /// Mean input and output tokens per request (trace: the rows'), for capacity estimates.
  double mean_input_tokens() const;
  double mean_output_tokens() const;

 private:
  Request make(double arrival_s, int client);
  double next_gap();

  RequestsSpec spec_;
  std::mt19937_64 arrivals_rng_, input_rng_, output_rng_, prefix_rng_;
  LengthSampler input_, output_;
  std::vector<Request> trace_;
  std::int64_t sent_ = 0;
  double clock_s_ = 0;
  // Multi-turn sessions: per open session, turns done and the conversation's tokens so far.
  struct Session {
    std::int64_t id = 0;
    int turns_done = 0;
    std::int64_t context_tokens = 0;
  };
  std::vector<Session> client_sessions_;  // closed loop: one per client
  std::int64_t next_session_id_ = 0;
};

}  // namespace clustersim::serving
