#include "models/comm/comm_tuning.hpp"

#include <array>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/engine/error.hpp"

namespace clustersim::models {

const config::NameTable<std::optional<Algorithm>>& algorithm_names() {
  static const config::NameTable<std::optional<Algorithm>> names(
      "algorithm", {{"auto", std::nullopt},
                    {"ring", Algorithm::ring},
                    {"tree", Algorithm::tree},
                    {"halving-doubling", Algorithm::halving_doubling},
                    {"hierarchical", Algorithm::hierarchical},
                    {"nvls", Algorithm::nvls},
                    {"sharp", Algorithm::sharp},
                    {"torus-rings", Algorithm::torus_rings},
                    {"pairwise", Algorithm::pairwise}});
  return names;
}

std::string_view algorithm_name(Algorithm algorithm) { return algorithm_names().name(algorithm); }

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> algorithms = {
      Algorithm::ring,  Algorithm::tree,  Algorithm::halving_doubling, Algorithm::hierarchical,
      Algorithm::nvls,  Algorithm::sharp, Algorithm::torus_rings,      Algorithm::pairwise};
  return algorithms;
}

Algorithm parse_algorithm(std::string_view name) {
  const std::optional<Algorithm> algorithm = algorithm_names().parse(name);
  if (!algorithm) throw ConfigError("algorithm 'auto' names no fixed algorithm (the tuner chooses)");
  return *algorithm;
}

std::string_view protocol_name(Protocol protocol) {
  switch (protocol) {
    case Protocol::ll: return "LL";
    case Protocol::ll128: return "LL128";
    case Protocol::simple: return "Simple";
  }
  throw ConfigError("unknown protocol");
}

double protocol_payload_fraction(Protocol protocol) {
  switch (protocol) {
    case Protocol::ll: return 0.5;
    case Protocol::ll128: return 120.0 / 128.0;
    case Protocol::simple: return 1.0;
  }
  throw ConfigError("unknown protocol");
}

double TunerParams::base_latency_s(Protocol protocol) const {
  switch (protocol) {
    case Protocol::ll: return ll_base_latency_s;
    case Protocol::ll128: return ll128_base_latency_s;
    case Protocol::simple: return simple_base_latency_s;
  }
  throw ConfigError("unknown protocol");
}

void check_tuner_params(const TunerParams& params) {
  const std::array<std::pair<const char*, double>, 7> latencies = {{
      {"ll_base_latency_s", params.ll_base_latency_s},
      {"ll128_base_latency_s", params.ll128_base_latency_s},
      {"simple_base_latency_s", params.simple_base_latency_s},
      {"ll_step_latency_s", params.ll_step_latency_s},
      {"ll128_step_latency_s", params.ll128_step_latency_s},
      {"simple_step_latency_s", params.simple_step_latency_s},
      {"nvls_step_latency_s", params.nvls_step_latency_s},
  }};
  for (const auto& [name, value] : latencies) {
    if (!std::isfinite(value) || value < 0) {
      throw ConfigError(fmt::format("comm {} must be a finite number >= 0, got {}", name, value));
    }
  }
  if (!(params.nvls_efficiency > 0 && params.nvls_efficiency <= 1)) {
    throw ConfigError(fmt::format("comm nvls_efficiency must be in (0, 1], got {}", params.nvls_efficiency));
  }
  for (const int dim : params.torus_dims) {
    if (dim < 2) throw ConfigError(fmt::format("torus dimension sizes must be >= 2, got {}", dim));
  }
}

void check_collective_hardware(const CollectiveHardware& hardware) {
  if (!std::isfinite(hardware.ll128_max_bytes_per_s) || hardware.ll128_max_bytes_per_s < 0) {
    throw ConfigError(fmt::format("collectives ll128_max_bytes_per_s must be a finite number >= 0, got {}",
                                  hardware.ll128_max_bytes_per_s));
  }
}

CollectiveHardware collective_hardware(const AcceleratorSpec& accelerator) {
  CollectiveHardware hardware;
  hardware.nvls = accelerator.collectives_nvls;
  hardware.ll128_max_bytes_per_s = accelerator.collectives_ll128_max_bytes_per_s;
  return hardware;
}

}  // namespace clustersim::models
