// Power by activity class (issue 28 part 4): every figure below is derived by hand from the
// levels, so a change to the arithmetic shows here.
#include <doctest/doctest.h>

#include "models/power/power_model.hpp"
#include "sim/engine/error.hpp"

namespace power_model_test {

using namespace clustersim;
using namespace clustersim::models;

namespace {

/// Round levels: idle 100, wait 150, memory 400, compute 900, communication 300 W, limit 700 W;
/// the best bf16 GEMM runs at 500 TFLOP/s, fp8 at 1000.
ActivityPower levels() {
  ActivityPower p;
  p.idle_w = 100;
  p.wait_w = 150;
  p.memory_w = 400;
  p.compute_w = 900;
  p.communication_w = 300;
  p.limit_w = 700;
  p.best_flops_per_s = {{Dtype::bf16, 500e12}, {Dtype::fp8, 1000e12}};
  return p;
}

DeviceActivity activity(double period, double kernel, double communication, double bf16_flops) {
  DeviceActivity a;
  a.period_s = period;
  a.kernel_s = kernel;
  a.communication_s = communication;
  if (bf16_flops > 0) a.matrix_flops[Dtype::bf16] = bf16_flops;
  return a;
}

}  // namespace

TEST_CASE("each activity class draws its level: idle, wait, memory-bound, communication") {
  // 10 s: 4 s of bandwidth-bound kernels (no matrix FLOPs), 2 s of collectives alone, 4 s waiting.
  const DeviceEnergy e = device_energy(levels(), activity(10, 4, 2, 0));
  CHECK(e.static_j == doctest::Approx(1000));        // 100 W x 10 s
  CHECK(e.wait_j == doctest::Approx(200));           // (150 - 100) W x 4 s
  CHECK(e.memory_j == doctest::Approx(1200));        // (400 - 100) W x 4 s
  CHECK(e.compute_j == 0);
  CHECK(e.communication_j == doctest::Approx(400));  // (300 - 100) W x 2 s
  CHECK(e.total_j == doctest::Approx(2800));         // 150x4 + 400x4 + 300x2
  CHECK(e.average_power_w == doctest::Approx(280));
  CHECK(e.kernel_power_w == doctest::Approx(400));
  CHECK(e.throttle_factor == 1);
}

TEST_CASE("the matrix share of kernel time moves the kernels' draw from memory-bound to compute") {
  // 4 s of kernels that ran 500e12 bf16 FLOPs: 1 s at the best rate, a quarter of the kernel
  // time: 400 + (900 - 400) x 0.25 = 525 W, under the limit.
  const DeviceEnergy e = device_energy(levels(), activity(4, 4, 0, 500e12));
  CHECK(e.kernel_power_w == doctest::Approx(525));
  CHECK(e.memory_j == doctest::Approx(1200));  // (400 - 100) x 4
  CHECK(e.compute_j == doctest::Approx(500));  // (900 - 400) x 1 s
  CHECK(e.total_j == doctest::Approx(2100));   // 525 W x 4 s
  CHECK(e.throttle_factor == 1);
  // fp8 FLOPs count at their own best rate: 1000e12 fp8 FLOPs are the same 1 s.
  DeviceActivity fp8 = activity(4, 4, 0, 0);
  fp8.matrix_flops[Dtype::fp8] = 1000e12;
  CHECK(device_energy(levels(), fp8).kernel_power_w == doctest::Approx(525));
}

TEST_CASE("the power limit caps the kernels' draw and sets the throttle factor") {
  // Every kernel second at the best rate: 900 W demanded, 700 W allowed. The clock falls to
  // (700 - 100) / (900 - 100) = 0.75; the parts above idle keep their proportions:
  // memory 300/800 and compute 500/800 of the 600 W above idle.
  const DeviceEnergy e = device_energy(levels(), activity(2, 2, 0, 1000e12));
  CHECK(e.unthrottled_kernel_power_w == doctest::Approx(900));
  CHECK(e.kernel_power_w == doctest::Approx(700));
  CHECK(e.throttle_factor == doctest::Approx(0.75));
  CHECK(e.memory_j == doctest::Approx(300.0 / 800 * 600 * 2));
  CHECK(e.compute_j == doctest::Approx(500.0 / 800 * 600 * 2));
  CHECK(e.total_j == doctest::Approx(1400));  // 700 W x 2 s
  // More FLOPs than the kernel time could hold at the best rate count as a share of 1.
  CHECK(device_energy(levels(), activity(2, 2, 0, 5000e12)).unthrottled_kernel_power_w == doctest::Approx(900));
}

TEST_CASE("a limit below the communication and wait levels caps them too: the average never exceeds it") {
  // Limit 200 W (MaxQ-like, far below the 900 W GEMM): 10 s with 4 s of bandwidth-bound kernels,
  // 2 s of collectives (300 W at full clock) and 4 s waiting (150 W, under the limit). Kernels:
  // 400 W capped at 200; collectives capped at 200 W.
  ActivityPower low = levels();
  low.limit_w = 200;
  const DeviceEnergy e = device_energy(low, activity(10, 4, 2, 0));
  CHECK(e.kernel_power_w == doctest::Approx(200));
  CHECK(e.throttle_factor == doctest::Approx((200.0 - 100) / (400 - 100)));
  CHECK(e.memory_j == doctest::Approx(100.0 * 4));        // (200 - 100) W x 4 s
  CHECK(e.communication_j == doctest::Approx(100.0 * 2)); // (200 - 100) W x 2 s, not (300 - 100)
  CHECK(e.wait_j == doctest::Approx(50.0 * 4));           // (150 - 100) W x 4 s, under the limit
  CHECK(e.total_j == doctest::Approx(1000 + 400 + 200 + 200));
  CHECK(e.average_power_w == doctest::Approx(180));
  // Below the wait level as well: every state at the limit, the average is the limit.
  low.limit_w = 120;
  const DeviceEnergy all = device_energy(low, activity(10, 4, 2, 0));
  CHECK(all.average_power_w == doctest::Approx(120));
}

TEST_CASE("levels derived from TDP and idle with the measured fractions") {
  AcceleratorSpec chip;
  chip.name = "chip";
  chip.tdp_w = 700;
  chip.idle_w = 100;
  chip.peak_flops_per_s = {{Dtype::bf16, 1000e12}};
  chip.matmul_efficiency = 0.8;
  const ActivityFractions f;
  const ActivityPower p = *activity_power(chip, 0);
  CHECK(p.wait_w == doctest::Approx(100 + 600 * f.wait));
  CHECK(p.memory_w == doctest::Approx(100 + 600 * f.memory));
  CHECK(p.compute_w == doctest::Approx(100 + 600 / 0.85));
  CHECK(p.communication_w == p.memory_w);
  CHECK(p.limit_w == 700);
  CHECK(p.best_flops_per_s.at(Dtype::bf16) == doctest::Approx(800e12));
  // A preset's own level wins; a lower limit (MLPerf MaxQ runs) replaces the TDP.
  chip.memory_power_w = 450;
  chip.communication_power_w = 250;
  const ActivityPower set = *activity_power(chip, 500);
  CHECK(set.memory_w == 450);
  CHECK(set.communication_w == 250);
  CHECK(set.limit_w == 500);
  // No TDP above idle: no power data.
  chip.tdp_w = 0;
  CHECK_FALSE(activity_power(chip, 0).has_value());
}

TEST_CASE("the cluster: devices, nodes, NICs, switches and power-supply losses") {
  const DeviceEnergy device = device_energy(levels(), activity(10, 4, 2, 0));  // 2800 J, 400 W kernels
  PowerSpec power;
  power.nic_w = 25;
  power.switch_w = 1000;
  power.node_w = 500;
  power.psu_efficiency = 0.8;
  // 16 devices in 2 nodes with 8 NICs each, 1 switch, over 10 s; 1e6 tokens, 4e18 model FLOPs.
  const ClusterEnergy c = cluster_energy({{device, 16}}, power, 2, 16, 1, 10, 1e6, 4e18);
  CHECK(c.devices_j == doctest::Approx(44800));                          // 16 x 2800
  CHECK(c.nodes_j == doctest::Approx(10000));                            // 2 x 500 W x 10 s
  CHECK(c.network_j == doctest::Approx((16 * 25 + 1000) * 10.0));        // 14000
  CHECK(c.psu_loss_j == doctest::Approx((44800 + 10000 + 4000) * 0.25));  // behind the supplies, x (1/0.8 - 1)
  CHECK(c.total_j == doctest::Approx(44800 + 10000 + 14000 + 14700));
  CHECK(c.devices_average_power_w == doctest::Approx(4480));
  CHECK(c.average_power_w == doctest::Approx(c.total_j / 10));
  CHECK(c.peak_power_w == doctest::Approx((16 * 400 + 1000 + 400) * 1.25 + 1000));
  CHECK(c.energy_per_token_j == doctest::Approx(c.total_j / 1e6));
  CHECK(c.device_energy_per_token_j == doctest::Approx(0.0448));
  CHECK(c.flops_per_j == doctest::Approx(4e18 / c.total_j));
  // Two kinds of device (a disaggregated fleet): the groups add.
  const DeviceEnergy other = device_energy(levels(), activity(10, 0, 0, 0));  // waiting: 1500 J
  CHECK(cluster_energy({{device, 8}, {other, 8}}, power, 2, 16, 1, 10, 1e6, 0).devices_j == doctest::Approx(8 * 2800 + 8 * 1500));
}

TEST_CASE("the optics of the fabric's ports: pJ per bit at the line rate, on the network's side") {
  const DeviceEnergy device = device_energy(levels(), activity(10, 4, 2, 0));
  PowerSpec power;
  power.nic_w = 15;
  power.switch_w = 800;
  power.optics_pj_per_bit = 10;      // the switch ports'
  power.nic_optics_pj_per_bit = 20;  // the NICs' transceivers
  // 64 switch ports and 16 NIC ports at 400 Gb/s: 0.4 W per pJ/bit and port, so
  // 0.4 x (10 x 64 + 20 x 16) = 384 W.
  const OpticalPorts ports{64, 16, 400e9};
  CHECK(ports.watts(power) == doctest::Approx(384));
  const ClusterEnergy c = cluster_energy({{device, 16}}, power, 2, 16, 1, 10, 1e6, 0, ports);
  CHECK(c.network_j == doctest::Approx((16 * 15 + 800 + 384) * 10.0));
  CHECK(c.psu_loss_j == 0);
  CHECK(c.peak_power_w == doctest::Approx(16 * 400 + 16 * 15 + 800 + 384));
  power.optics_pj_per_bit = -1;
  CHECK_THROWS_WITH(cluster_energy({{device, 16}}, power, 2, 16, 1, 10, 1e6, 0, ports),
                    doctest::Contains("optics energy per bit must not be negative"));
}

TEST_CASE("bad inputs are errors naming the field") {
  ActivityPower p = levels();
  CHECK_THROWS_WITH(device_energy(p, activity(0, 0, 0, 0)), doctest::Contains("period must be positive"));
  CHECK_THROWS_WITH(device_energy(p, activity(1, 0.8, 0.4, 0)), doctest::Contains("exceed the period"));
  CHECK_THROWS_WITH(device_energy(p, activity(1, -1, 0, 0)), doctest::Contains("must not be negative"));
  DeviceActivity fp16 = activity(1, 1, 0, 0);
  fp16.matrix_flops[Dtype::fp16] = 1e12;
  CHECK_THROWS_WITH(device_energy(p, fp16), doctest::Contains("no fp16 matrix rate"));
  p.memory_w = 1000;  // above compute
  CHECK_THROWS_WITH(device_energy(p, activity(1, 1, 0, 0)),
                    doctest::Contains("compute power 900 W must not be below memory-bound 1000 W"));
  PowerSpec bad;
  bad.psu_efficiency = 1.5;
  const DeviceEnergy e = device_energy(levels(), activity(1, 1, 0, 0));
  CHECK_THROWS_WITH(cluster_energy({{e, 1}}, bad, 1, 0, 0, 1, 1, 0), doctest::Contains("efficiency must be in (0, 1]"));
  CHECK_THROWS_WITH(cluster_energy({}, PowerSpec{}, 1, 0, 0, 1, 1, 0), doctest::Contains("no devices"));
  CHECK_THROWS_WITH(cluster_energy({{e, 1}}, PowerSpec{}, 1, 0, 0, 1, 0, 0), doctest::Contains("tokens must be positive"));
}

}  // namespace power_model_test
