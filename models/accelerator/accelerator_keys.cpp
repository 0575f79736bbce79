#include "models/accelerator/accelerator_keys.hpp"

#include <string>

namespace clustersim::models {
namespace {

using config::Declarations;
using config::Dimension;

Declarations<AcceleratorSpec> peak_keys() {
  Declarations<AcceleratorSpec> keys;
  for (const std::string& format : dtype_names().names()) {
    keys.quantity_entry(format, &AcceleratorSpec::peak_flops_per_s, parse_dtype(format), Dimension::flops_per_s,
                        "dense " + format + " matrix-unit peak; omit if the chip lacks it")
        .positive();
  }
  return keys;
}

Declarations<AcceleratorSpec> memory_keys() {
  using A = AcceleratorSpec;
  Declarations<A> keys;
  keys.quantity("hbm_capacity", &A::hbm_capacity_bytes, Dimension::bytes, "device memory capacity").positive().need();
  keys.quantity("hbm_bandwidth", &A::hbm_bytes_per_s, Dimension::bytes_per_s, "device memory peak bandwidth")
      .positive()
      .need();
  keys.quantity("l2", &A::l2_bytes, Dimension::bytes, "last-level cache size");
  keys.quantity("l2_bandwidth", &A::l2_bytes_per_s, Dimension::bytes_per_s,
                "L2 read bandwidth; unset: no L2 reuse (working sets read at HBM bandwidth)")
      .positive()
      .optional();
  keys.quantity("l2_latency", &A::l2_latency_s, Dimension::seconds, "L2 load-to-use latency");
  keys.quantity("hbm_latency", &A::hbm_latency_s, Dimension::seconds, "HBM load-to-use latency");
  keys.quantity("sram", &A::sram_bytes, Dimension::bytes, "shared memory / SRAM, all compute units together")
      .positive()
      .optional();
  keys.quantity("sram_bandwidth", &A::sram_bytes_per_s, Dimension::bytes_per_s, "shared memory bandwidth, all units")
      .positive()
      .optional();
  keys.enumeration("host_link", &A::host_link, host_link_names(), "how host DRAM is attached");
  keys.quantity("host_capacity", &A::host_capacity_bytes, Dimension::bytes, "host DRAM per accelerator")
      .positive()
      .optional();
  keys.quantity("host_bandwidth", &A::host_bytes_per_s, Dimension::bytes_per_s,
                "host link bandwidth per accelerator, one direction; unset: no offload")
      .positive()
      .optional();
  keys.quantity("host_latency", &A::host_latency_s, Dimension::seconds, "host transfer setup latency");
  keys.quantity("cxl_capacity", &A::cxl_capacity_bytes, Dimension::bytes, "pooled CXL memory per accelerator")
      .positive()
      .optional();
  keys.quantity("cxl_bandwidth", &A::cxl_bytes_per_s, Dimension::bytes_per_s, "CXL bandwidth per accelerator")
      .positive()
      .optional();
  keys.quantity("cxl_latency", &A::cxl_latency_s, Dimension::seconds, "CXL transfer setup latency");
  keys.quantity("ssd_capacity", &A::ssd_capacity_bytes, Dimension::bytes,
                "local NVMe per accelerator (the node's drives over its accelerators), a KV-cache tier")
      .positive()
      .optional();
  keys.quantity("ssd_bandwidth", &A::ssd_bytes_per_s, Dimension::bytes_per_s,
                "local NVMe read bandwidth per accelerator; unset: no SSD tier")
      .positive()
      .optional();
  keys.quantity("ssd_latency", &A::ssd_latency_s, Dimension::seconds, "local NVMe read latency");
  return keys;
}

Declarations<AcceleratorSpec> power_keys() {
  using A = AcceleratorSpec;
  Declarations<AcceleratorSpec> keys;
  keys.quantity("tdp", &AcceleratorSpec::tdp_w, Dimension::watts, "thermal design power (unset: unknown)").optional();
  keys.quantity("idle", &AcceleratorSpec::idle_w, Dimension::watts, "idle power (unset: unknown)").optional();
  const auto level = [&keys](const char* key, double A::*member, const char* help) {
    keys.quantity(key, member, Dimension::watts, help).optional();
  };
  // Unset levels are derived from tdp and idle by measured fractions (models/power/power_model.hpp,
  // ActivityFractions; docs/models.md "Power").
  level("wait", &A::wait_w, "board power inside a run with no kernel; unset: from tdp and idle");
  level("memory", &A::memory_power_w, "board power of bandwidth-bound kernels; unset: from tdp and idle");
  level("compute", &A::compute_power_w,
        "board power of the best GEMM at full clock (above tdp the clock throttles); unset: from tdp and idle");
  level("communication", &A::communication_power_w, "board power of collectives alone; unset: the memory level");
  return keys;
}

Declarations<AcceleratorSpec> efficiency_keys() {
  Declarations<AcceleratorSpec> keys;
  keys.number("matmul", &AcceleratorSpec::matmul_efficiency, "best large-GEMM fraction of peak").positive().range(0, 1);
  for (const std::string& format : dtype_names().names()) {
    keys.number_entry("matmul_" + format, &AcceleratorSpec::matmul_efficiency_by_dtype, parse_dtype(format),
                      "best " + format + " GEMM fraction of the " + format + " peak; unset: matmul")
        .positive()
        .range(0, 1);
  }
  keys.number("memory", &AcceleratorSpec::memory_efficiency, "STREAM fraction of HBM peak").positive().range(0, 1);
  return keys;
}

Declarations<AcceleratorSpec> attention_keys() {
  Declarations<AcceleratorSpec> keys;
  keys.enumeration("kernel", &AcceleratorSpec::attention_kernel, attention_kernel_family_names(),
                   "fused-attention family frameworks run here (workload.attention: flash); must run on matrix_path. "
                   "fa2 = warp-level MMA, softmax not overlapped (FlashAttention-2); fa3 = full-rate MMA overlapped "
                   "with softmax (FlashAttention-3, Hopper); cudnn = cuDNN fused attention (Transformer Engine's "
                   "choice; softmax not hidden before Blackwell); fa4 = FlashAttention-4 (Blackwell, overlapped, "
                   "exponentials split between MUFU and FMA emulation); fused_sdpa = Gaudi FusedSDPA (MME + TPC); "
                   "pallas = TPU Pallas flash attention (MXU + vector units)");
  keys.number("warp_mma_fraction", &AcceleratorSpec::warp_mma_fraction,
              "fraction of the matrix peak warp-level MMA (mma.sync, used by fa2) reaches; 1 where it is the full "
              "path")
      .positive()
      .range(0, 1);
  keys.number("softmax_overlap", &AcceleratorSpec::attention_softmax_overlap,
              "overlapping families (fa3; cudnn on tcgen05; fa4, fused_sdpa, pallas): fraction of the softmax "
              "time hidden under the matrix work (1: ideal overlap, time = max; 0: none, time = matmul + softmax)")
      .range(0, 1);
  keys.quantity("special_function", &AcceleratorSpec::special_function_ops_per_s, Dimension::flops_per_s,
                "special-function (exp2) results per second, whole chip; unset: fused attention cannot be costed")
      .positive()
      .optional();
  return keys;
}

Declarations<AcceleratorSpec> gemm_tile_keys() {
  Declarations<AcceleratorSpec> keys;
  keys.integer("m", &AcceleratorSpec::gemm_tile_m, "GEMM output tile rows per compute unit").range(1, 65536);
  keys.integer("n", &AcceleratorSpec::gemm_tile_n, "GEMM output tile columns per compute unit").range(1, 65536);
  return keys;
}

Declarations<AcceleratorSpec> collectives_keys() {
  Declarations<AcceleratorSpec> keys;
  keys.boolean("nvls", &AcceleratorSpec::collectives_nvls, "NVLink SHARP in the NVSwitch (NCCL's nvls algorithm)");
  keys.quantity("ll128_bandwidth", &AcceleratorSpec::collectives_ll128_max_bytes_per_s, Dimension::bytes_per_s,
                "ceiling of NCCL's LL128 protocol payload throughput per GPU (SM-bound); unset: no ceiling")
      .positive()
      .optional();
  return keys;
}

}  // namespace

const Declarations<AcceleratorSpec>& accelerator_keys() {
  static const Declarations<AcceleratorSpec> keys = [] {
    using A = AcceleratorSpec;
    Declarations<A> k;
    k.string("display_name", &A::display_name, "human-readable name, e.g. \"NVIDIA H100 SXM5 80GB\"");
    k.enumeration("vendor", &A::vendor,
                  config::NameTable<std::string>(
                      "vendor", {{"nvidia", "nvidia"}, {"amd", "amd"}, {"google", "google"}, {"intel", "intel"}}),
                  "chip vendor");
    k.string("source", &A::source, "where the figures come from");
    k.string("projected", &A::projected,
             "not a shipping part: what is projected and from which announcement (a feasibility preset, derived "
             "with `base:` from a calibrated one); a run on it says so in its notes");
    k.object("peak", peak_keys(), "dense matrix-unit peaks per numeric format").need();
    k.quantity("vector_fp32", &A::vector_flops_per_s, Dimension::flops_per_s, "non-matrix (CUDA-core) fp32 peak")
        .positive()
        .need();
    k.object("memory", memory_keys(), "memory hierarchy").need();
    k.integer("compute_units", &A::compute_units, "SMs / CUs / cores, for wave quantization").range(1, 1e6).need();
    k.object("power", power_keys(), "board power");
    k.object("efficiency", efficiency_keys(), "achievable fractions of peak (public microbenchmarks)");
    k.quantity("kernel_launch", &A::kernel_launch_s, Dimension::seconds, "fixed cost of one kernel launch");
    k.integer("fp8_promotion_interval", &A::fp8_promotion_interval,
              "K elements between promotions of the fp8 MMA accumulator to fp32 on the vector cores in "
              "precise-accumulation GEMMs; 0: full-precision fp8 accumulation")
        .range(0, 1048576);
    k.enumeration("matrix_path", &A::matrix_path, matrix_path_names(),
                     "matrix instruction path: it decides the fused-attention families that run here and whether a "
                     "GEMM's epilogue store is exposed (mma_sync, wgmma, mfma) or overlapped (tcgen05, mme, mxu): mma_sync "
                     "(Ampere/Ada: fa2, cudnn), wgmma (Hopper: fa2, fa3, cudnn), tcgen05 (Blackwell: fa2, cudnn, fa4), "
                     "mfma (AMD CDNA: fa2), mme (Gaudi: fused_sdpa), mxu (TPU: pallas)");
    k.object("attention", attention_keys(), "fused-attention physics (docs/models.md \"Fused attention\")");
    k.object("gemm_tile", gemm_tile_keys(), "GEMM tile for tile and wave quantization");
    k.quantity("scale_up_bandwidth", &A::scale_up_bytes_per_s, Dimension::bytes_per_s,
               "scale-up (NVLink) bandwidth per accelerator, one direction; cluster.node.scale_up.bandwidth, when "
               "set, wins")
        .positive()
        .optional();
    k.enumeration("scale_up_fabric", &A::scale_up_fabric,
                  config::NameTable<std::string>("scale-up fabric", {{"ethernet-mesh", "ethernet-mesh"},
                                                                     {"ici-torus", "ici-torus"},
                                                                     {"nvswitch", "nvswitch"},
                                                                     {"pcie", "pcie"},
                                                                     {"ualink", "ualink"},
                                                                     {"xgmi-mesh", "xgmi-mesh"}}),
                  "the scale-up fabric the chip is built into; a cluster must use it (cluster.node.scale_up.fabric, "
                  "or cluster.network.topology torus for ici-torus); unset: any")
        .optional();
    k.object("collectives", collectives_keys(), "what the collective library can do on this chip");
    return k;
  }();
  return keys;
}

}  // namespace clustersim::models
