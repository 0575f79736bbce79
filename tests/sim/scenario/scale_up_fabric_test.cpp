// Issue 16 part 3: every accelerator on the fabric it is built into. The system presets load
// and build on their fabric; a chip on a fabric it cannot have is an error naming the one it
// has; a fabric setting a torus ignores is a warning.
#include <doctest/doctest.h>

#include <numeric>
#include <string>
#include <vector>

#include "models/comm/collective_kind.hpp"
#include "sim/platform/platform.hpp"
#include "sim/scenario/preset_library.hpp"
#include "sim/scenario/scenario_loader.hpp"

namespace scale_up_fabric_test {

using namespace clustersim;
using namespace clustersim::scenario;
using config::ScenarioError;

namespace {

/// A small training scenario on `system` with `nodes` nodes (line numbers matter: the error
/// cases assert positions in it).
std::string on_system(const std::string& system, int nodes, const std::string& extra_cluster = "") {
  const int per_node = system.rfind("tpu-", 0) == 0 ? 4 : 8;
  return "schema_version: 1\n"
         "name: fabric-test\n"
         "include: [systems/" + system + ".yaml]\n"
         "cluster:\n"
         "  nodes: " + std::to_string(nodes) + "\n" + extra_cluster +
         "workload:\n"
         "  kind: training\n"
         "  model: llama-3-8b\n"
         "  seq_len: 2048\n"
         "  global_batch: 288\n"
         "  micro_batch: 1\n"
         "  precision: bf16\n"
         "  parallelism: {tp: 4, pp: 1, dp: " + std::to_string(nodes * per_node / 4) + ", cp: 1}\n";
}

Scenario load(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return load_scenario_from_string(yaml, "f.yaml", sets);
}

std::vector<config::Diagnostic> problems(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    load(yaml, sets);
  } catch (const ScenarioError& e) {
    return e.diagnostics();
  }
  FAIL("expected ScenarioError");
  return {};
}

}  // namespace

TEST_CASE("every system preset loads and builds on the fabric its accelerator is built into") {
  const auto systems = library_names(LibraryKind::systems);
  REQUIRE(systems.size() >= 14);
  for (const std::string& system : systems) {
    CAPTURE(system);
    // Enough nodes for a whole NVLink domain (NVL72: 9 nodes of 8; NVL32: 4) or TPU cube (16 x 4).
    const int nodes = system.find("nvl72") != std::string::npos ? 9
                      : system == "gh200-nvl32"                 ? 4
                      : system == "tpu-v5p-cube"                ? 16
                                                                : 2;
    Scenario scenario;
    REQUIRE_NOTHROW(scenario = load(on_system(system, nodes)));
    CHECK(scenario.warnings.empty());
    const auto& cluster = scenario.platform.cluster;
    const std::string& built_into = cluster.accelerator.scale_up_fabric;
    if (built_into == "ici-torus") {
      CHECK(cluster.network.scale_out.topology == "torus");
    } else {
      CHECK(cluster.network.scale_up.fabric == built_into);
    }
    const platform::Platform platform(scenario.platform);
    CHECK(platform.topology().scale_up_mesh() == (built_into == "xgmi-mesh" || built_into == "ethernet-mesh"));
  }
}

TEST_CASE("an NVL72 rack is one NVSwitch domain of 72 GPUs with NVLS") {
  for (const char* system : {"gb200-nvl72", "gb300-nvl72"}) {
    CAPTURE(system);
    const Scenario scenario = load(on_system(system, 9));
    const platform::Platform platform(scenario.platform);
    CHECK(platform.topology().scale_up_domain_of(0) == platform.topology().scale_up_domain_of(71));
    std::vector<int> rack(72);
    std::iota(rack.begin(), rack.end(), 0);
    const auto tuned = platform.collectives().plan(models::CollectiveKind::all_reduce, rack, 1e9);
    CHECK(tuned.plan.algorithm == models::Algorithm::nvls);
  }
}

TEST_CASE("mi300x-x8: a GPU pair gets one 64 GB/s xGMI link, an 8-GPU ring all-reduce the 448 GB/s aggregate") {
  const platform::Platform platform(load(on_system("mi300x-x8", 1)).platform);
  const auto& collectives = platform.collectives();
  const double efficiency = 0.707;  // the preset's
  // Pair: 1 GB at 64 GB/s x efficiency, plus latencies well under 0.1 %.
  const double pair_s = collectives.send_recv_time_s(0, 5, 1e9);
  CHECK(1e9 / pair_s == doctest::Approx(64e9 * efficiency).epsilon(0.01));
  // 8-GPU all-reduce of 8 GiB: ring (no NVLS on a mesh) at the aggregate.
  std::vector<int> node(8);
  std::iota(node.begin(), node.end(), 0);
  const double bytes = 8.0 * (1 << 30);
  const auto tuned = collectives.plan(models::CollectiveKind::all_reduce, node, bytes);
  CHECK(tuned.plan.algorithm == models::Algorithm::ring);
  const double busbw = bytes / collectives.time_s(models::CollectiveKind::all_reduce, node, bytes) *
                       models::bus_bandwidth_factor(models::CollectiveKind::all_reduce, 8);
  CHECK(busbw == doctest::Approx(448e9 * efficiency).epsilon(0.01));
}

TEST_CASE("a chip on a fabric it cannot have is an error naming the fabric it has") {
  // MI300X on an NVSwitch: the position of the written key, the key, the fabric it has.
  const auto mi300x = problems(on_system("mi300x-x8", 1), {"cluster.node.scale_up.fabric=nvswitch"});
  REQUIRE(mi300x.size() == 1);
  CHECK(mi300x[0].render() ==
        "--set cluster.node.scale_up.fabric=nvswitch: cluster.node.scale_up.fabric: accelerator 'mi300x' is built into the AMD Infinity Fabric (xGMI) "
        "full mesh, not the NVSwitch / NVLink switch: cluster.node.scale_up.fabric must be xgmi-mesh, got nvswitch "
        "(valid choices for mi300x: xgmi-mesh)");
  // H100 on an xGMI mesh, written in the scenario file.
  const auto h100 = problems(on_system("dgx-h100", 1, "  node: {scale_up: {fabric: xgmi-mesh}}\n"));
  REQUIRE(h100.size() == 1);
  CHECK(h100[0].render() ==
        "f.yaml:6:29: cluster.node.scale_up.fabric: accelerator 'h100-sxm' is built into the NVSwitch / NVLink "
        "switch, not the AMD Infinity Fabric (xGMI) full mesh: cluster.node.scale_up.fabric must be nvswitch, got "
        "xgmi-mesh (valid choices for h100-sxm: nvswitch)");
  // Gaudi 3 put on an H100 node.
  const auto gaudi = problems(on_system("dgx-h100", 1), {"cluster.node.accelerator=gaudi3"});
  REQUIRE(gaudi.size() == 1);
  CHECK(gaudi[0].message.find("accelerator 'gaudi3' is built into the all-to-all RoCE Ethernet mesh") == 0);
  CHECK(gaudi[0].key_path == "cluster.node.scale_up.fabric");
  // A TPU on a switched network.
  const auto tpu = problems(on_system("tpu-v5p-cube", 16), {"cluster.network.topology=fat-tree",
                                                            "cluster.network.nic.bandwidth=50Gb/s"});
  REQUIRE(tpu.size() == 1);
  CHECK(tpu[0].key_path == "cluster.network.topology");
  CHECK(tpu[0].message ==
        "accelerator 'tpu-v5p' is built into the ICI torus (scale_up_fabric ici-torus): cluster.network.topology "
        "must be torus (or custom), got fat-tree");
  CHECK(tpu[0].hint == "valid choices for tpu-v5p: custom, torus");
  // An unknown fabric lists the valid choices.
  const auto unknown = problems(on_system("mi300x-x8", 1), {"cluster.node.scale_up.fabric=infinity"});
  REQUIRE(unknown.size() >= 1);
  CHECK(unknown[0].hint.find("ethernet-mesh, nvswitch, pcie, ualink, xgmi-mesh") != std::string::npos);
}

TEST_CASE("a scale-up fabric on a torus has no effect and says so") {
  const Scenario torus = load(on_system("dgx-h100", 2), {"cluster.network.topology=torus", "cluster.network.dims=[16]"});
  REQUIRE(torus.warnings.size() == 1);
  CHECK(torus.warnings[0].key_path == "cluster.node.scale_up.fabric");
  CHECK(torus.warnings[0].message.find("has no effect: topology torus is the whole network") == 0);
}

// Issue 28 part 5: a system preset built for one accelerator, run with another, never mixes
// generations silently.
TEST_CASE("a system preset run with another generation's accelerator takes its NVLink and says what it kept") {
  // B200 on a DGX H100: NVLink 5's 900 GB/s replaces NVLink 4's 450; every other preset
  // setting equals the DGX B200's, so only the bandwidth is named.
  const Scenario b200 = load(on_system("dgx-h100", 2), {"cluster.node.accelerator=b200"});
  CHECK(b200.platform.cluster.network.scale_up.bytes_per_s == 900e9);
  REQUIRE(b200.warnings.size() == 1);
  CHECK(b200.warnings[0].render() ==
        "--set cluster.node.accelerator=b200: cluster.node.accelerator: system preset dgx-h100 was built for "
        "h100-sxm, the cluster runs b200; applied: node.scale_up.bandwidth 450 GB/s -> b200's own 900 GB/s "
        "(include systems/dgx-b200.yaml for b200's own platform, or set these keys)");
  // An A100 written in the scenario file: its 300 GB/s NVLink 3, and the DGX H100's latency,
  // efficiency and NICs named beside the DGX A100's own, at the accelerator key's position.
  const Scenario a100 = load(on_system("dgx-h100", 2, "  node: {accelerator: a100-sxm-80gb}\n"));
  CHECK(a100.platform.cluster.network.scale_up.bytes_per_s == 300e9);
  CHECK(a100.platform.cluster.network.scale_out.nic_bytes_per_s == 400e9 / 8);  // kept, as the warning says
  REQUIRE(a100.warnings.size() == 1);
  CHECK(a100.warnings[0].render() ==
        "f.yaml:6:23: cluster.node.accelerator: system preset dgx-h100 was built for h100-sxm, the cluster runs "
        "a100-sxm-80gb; applied: node.scale_up.bandwidth 450 GB/s -> a100-sxm-80gb's own 300 GB/s; kept from "
        "dgx-h100 (h100-sxm's hardware): node.scale_up.latency 1 us (dgx-a100 has 1.8 us), node.scale_up.efficiency "
        "0.822 (dgx-a100 has 0.772), network.nic.bandwidth 400 Gb/s (dgx-a100 has 200 Gb/s) (include "
        "systems/dgx-a100.yaml for a100-sxm-80gb's own platform, or set these keys)");
  // An accelerator without a library system of its own (a what-if B200 of the scenario's):
  // NVLink 5, and every kept setting named.
  const Scenario own = load(on_system("dgx-h100", 2),
                            {"accelerators.my-b200={base: b200, power: {tdp: \"1200 W\"}}",
                             "cluster.node.accelerator=my-b200"});
  CHECK(own.platform.cluster.network.scale_up.bytes_per_s == 900e9);
  REQUIRE(own.warnings.size() == 1);
  CHECK(own.warnings[0].message ==
        "system preset dgx-h100 was built for h100-sxm, the cluster runs my-b200; applied: node.scale_up.bandwidth "
        "450 GB/s -> my-b200's own 900 GB/s; kept from dgx-h100 (h100-sxm's hardware): node.scale_up.latency 1 us, "
        "node.scale_up.efficiency 0.822, network.nic.bandwidth 400 Gb/s, network.nic.efficiency 0.94");
  CHECK(own.warnings[0].hint == "set these keys for my-b200 (no library system is built for it)");
  // The Grand Teton's 96 GB H100 runs the same NVLink 4 platform: nothing to say.
  CHECK(load(on_system("dgx-h100", 2), {"cluster.node.accelerator=h100-sxm-96gb"}).warnings.empty());
}

TEST_CASE("the same generation's part, a derived accelerator or the user's own bandwidth leaves the preset quiet") {
  // H200 on a DGX H100: the DGX H200 is the same platform.
  const Scenario h200 = load(on_system("dgx-h100", 2), {"cluster.node.accelerator=h200-sxm"});
  CHECK(h200.warnings.empty());
  CHECK(h200.platform.cluster.network.scale_up.bytes_per_s == 450e9);
  // A what-if H100 derived from the library's (README: twice the HBM bandwidth).
  const Scenario derived = load(on_system("dgx-h100", 2),
                                {"accelerators.h100-2xhbm={base: h100-sxm, memory: {hbm_bandwidth: \"6.7 TB/s\"}}",
                                 "cluster.node.accelerator=h100-2xhbm"});
  CHECK(derived.warnings.empty());
  // The user's own scale-up bandwidth stands: a B200 held to NVLink 4 on purpose.
  const Scenario held = load(on_system("dgx-h100", 2),
                             {"cluster.node.accelerator=b200", "cluster.node.scale_up.bandwidth=450GB/s"});
  CHECK(held.warnings.empty());
  CHECK(held.platform.cluster.network.scale_up.bytes_per_s == 450e9);
  // MI300X on an NVSwitch system stays an error (the fabric), with no second message.
  const auto mi300x = problems(on_system("dgx-h100", 1), {"cluster.node.accelerator=mi300x"});
  REQUIRE(mi300x.size() == 1);
  CHECK(mi300x[0].key_path == "cluster.node.scale_up.fabric");
}

}  // namespace scale_up_fabric_test
