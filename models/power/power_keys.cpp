#include "models/power/power_keys.hpp"

namespace clustersim::models {

const config::Declarations<PowerSpec>& platform_power_keys() {
  static const config::Declarations<PowerSpec> keys = [] {
    using config::Dimension;
    config::Declarations<PowerSpec> k;
    k.quantity("accelerator_limit", &PowerSpec::accelerator_limit_w, Dimension::watts,
               "board power limit of every accelerator (nvidia-smi -pl); unset or 0: its TDP")
        .optional();
    k.quantity("nic", &PowerSpec::nic_w, Dimension::watts, "one NIC with its transceiver");
    k.quantity("switch", &PowerSpec::switch_w, Dimension::watts, "one scale-out switch with its transceivers");
    k.number("optics_pj_per_bit", &PowerSpec::optics_pj_per_bit,
             "energy of the optics of every scale-out switch port per bit at its line rate (pluggable "
             "transceivers, or co-packaged optics); set: `switch` is the switch without them; 0: in `switch`")
        .range(0, 1000);
    k.number("nic_optics_pj_per_bit", &PowerSpec::nic_optics_pj_per_bit,
             "the same for each NIC's port; set: `nic` is the NIC without its transceiver; 0: in `nic`")
        .range(0, 1000);
    k.quantity("node", &PowerSpec::node_w, Dimension::watts,
               "a node's own draw beyond accelerators and NICs: CPUs, host memory, fans, storage, on-board switches");
    k.number("psu_efficiency", &PowerSpec::psu_efficiency,
             "AC-to-DC efficiency of the nodes' power supplies (1: power reported as DC)")
        .positive()
        .range(0, 1);
    return k;
  }();
  return keys;
}

const config::Declarations<CostSpec>& cost_keys() {
  static const config::Declarations<CostSpec> keys = [] {
    config::Declarations<CostSpec> k;
    k.number("accelerator_hour_usd", &CostSpec::accelerator_hour_usd, "rental price, $ per accelerator-hour")
        .range(0, 1e9);
    k.number("capex_usd_per_accelerator", &CostSpec::capex_usd_per_accelerator,
             "purchase price per accelerator incl. its share of servers and network, $")
        .range(0, 1e12);
    k.number("amortization_years", &CostSpec::amortization_years, "straight-line lifetime of the capex").positive();
    k.number("electricity_usd_per_kwh", &CostSpec::electricity_usd_per_kwh, "electricity price, $ per kWh")
        .range(0, 1e6);
    k.number("pue", &CostSpec::pue, "facility power / IT power").range(1, 10);
    return k;
  }();
  return keys;
}

}  // namespace clustersim::models
