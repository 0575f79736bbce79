#include "models/comm/comm_keys.hpp"

namespace clustersim::models {

const config::Declarations<CommConfig>& comm_keys() {
  static const config::Declarations<CommConfig> keys = [] {
    using config::Dimension;
    using config::member;
    config::Declarations<CommConfig> k;
    k.enumeration("algorithm", &CommConfig::algorithm, algorithm_names(),
                  "collective algorithm where it applies (elsewhere auto); auto: the fastest, as NCCL's tuner picks");
    const auto latency = [&k](const char* key, double TunerParams::*seconds, const char* help) {
      k.quantity(key, member(&CommConfig::tuner, seconds), Dimension::seconds, help);
    };
    latency("ll_base_latency", &TunerParams::ll_base_latency_s, "launch + completion sync per collective, LL protocol");
    latency("ll128_base_latency", &TunerParams::ll128_base_latency_s,
            "launch + completion sync per collective, LL128 protocol");
    latency("simple_base_latency", &TunerParams::simple_base_latency_s,
            "launch + completion sync per collective, Simple protocol (also NVLS, SHARP)");
    latency("ll_step_latency", &TunerParams::ll_step_latency_s, "per algorithm step, LL protocol");
    latency("ll128_step_latency", &TunerParams::ll128_step_latency_s, "per algorithm step, LL128 protocol");
    latency("simple_step_latency", &TunerParams::simple_step_latency_s, "per algorithm step, Simple protocol");
    latency("nvls_step_latency", &TunerParams::nvls_step_latency_s, "per NVLS step (reduce, multicast)");
    k.number("nvls_efficiency", member(&CommConfig::tuner, &TunerParams::nvls_efficiency),
             "NVLS fraction of the achievable NVLink payload rate")
        .positive()
        .range(0, 1);
    k.boolean("scale_out_sharp", member(&CommConfig::tuner, &TunerParams::scale_out_sharp),
              "SHARP in-network reduction in the scale-out switches");
    return k;
  }();
  return keys;
}

}  // namespace clustersim::models
