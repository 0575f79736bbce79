#pragma once
/// Datasheet and microbenchmark description of one accelerator model.
#include <map>
#include <string>
#include <vector>

#include "models/accelerator/attention_kernel_family.hpp"
#include "models/accelerator/dtype.hpp"
#include "models/memory/memory_hierarchy.hpp"

namespace clustersim::models {

/// Everything the compute, memory and power models need to know about one accelerator: what an
/// accelerator preset sets (models/data/accelerators/, keys declared in accelerator_keys.cpp,
/// whose defaults are the initializers below). All rates are dense (no sparsity).
struct AcceleratorSpec {
  std::string name;          ///< registry name, e.g. "h100-sxm"
  std::string display_name;  ///< e.g. "NVIDIA H100 SXM5 80GB"
  std::string vendor;        ///< "nvidia", "amd", "google", "intel"
  std::string source;        ///< where the figures come from
  /// Not a shipping part: what is projected and from which announcement (empty: a part whose
  /// figures are datasheets and measurements). A run on it says so in its notes.
  std::string projected;

  std::map<Dtype, double> peak_flops_per_s;  ///< dense matrix-unit peak per format
  double vector_flops_per_s = 0;             ///< non-matrix (CUDA-core fp32) peak

  double hbm_capacity_bytes = 0;
  double hbm_bytes_per_s = 0;  ///< datasheet peak
  double l2_bytes = 0;         ///< last-level cache capacity, bytes (0: unknown)
  double l2_bytes_per_s = 0;   ///< L2 read bandwidth, bytes/s (0: unknown, no L2 reuse credit)
  int compute_units = 0;  ///< SMs (NVIDIA), CUs (AMD), cores (TPU) -- for wave quantization

  /// Memory hierarchy around HBM (preset `memory`); memory_levels() builds the levels. A level
  /// with an unknown (0) capacity or bandwidth is absent. Defaults in SI units are written as
  /// the units parser reads their YAML text ("500 ns" is 500 x 1e-9), so a default and the same
  /// value written in a scenario are the same double.
  double hbm_latency_s = 500 * 1e-9;  ///< HBM load-to-use latency
  double l2_latency_s = 200 * 1e-9;   ///< L2 load-to-use latency
  double sram_bytes = 0;          ///< shared memory / SRAM, all compute units together
  double sram_bytes_per_s = 0;    ///< SRAM bandwidth, all compute units together
  HostLink host_link = HostLink::pcie;  ///< how host DRAM is attached
  double host_capacity_bytes = 0;       ///< host DRAM per accelerator
  double host_bytes_per_s = 0;          ///< host link bandwidth, one direction (0: no offload)
  double host_latency_s = 2e-6;         ///< host transfer setup latency
  double cxl_capacity_bytes = 0;        ///< pooled CXL memory per accelerator
  double cxl_bytes_per_s = 0;           ///< CXL bandwidth per accelerator
  double cxl_latency_s = 3e-6;          ///< CXL transfer setup latency
  /// Local NVMe per accelerator (the node's drives over its accelerators): a KV-cache tier.
  double ssd_capacity_bytes = 0;
  double ssd_bytes_per_s = 0;           ///< read bandwidth per accelerator (0: no SSD tier)
  double ssd_latency_s = 100 * 1e-6;    ///< NVMe read latency (a 4 KiB read, ~100 us)
  double tdp_w = 0;   ///< board power limit (0: unknown, no power report)
  double idle_w = 0;  ///< idle power (0: unknown)
  /// Board power by activity class at full clock, W (0: derived from tdp and idle with the
  /// measured fractions of models/power/power_model.hpp, ActivityFractions).
  double wait_w = 0;                 ///< inside a run, no kernel
  double memory_power_w = 0;         ///< bandwidth-bound kernels
  double compute_power_w = 0;        ///< the best large GEMM (may exceed tdp: the clock throttles)
  double communication_power_w = 0;  ///< collectives alone (0: the memory-bound level)

  /// Fraction of peak the best large GEMM reaches ("maximum achievable matmul"), from
  /// public microbenchmarks; the roofline scales peak by it.
  double matmul_efficiency = 0.8;
  /// The same fraction for formats whose best GEMM differs from `matmul_efficiency` (e.g. fp8
  /// on Hopper reaches ~0.71 of its peak where bf16 reaches 0.80), each from a public
  /// maximum-achievable-matmul measurement in that format. Formats not listed use
  /// `matmul_efficiency`.
  std::map<Dtype, double> matmul_efficiency_by_dtype;
  /// Fraction of HBM peak reached by streaming kernels (STREAM triad / copy).
  double memory_efficiency = 0.85;
  /// Fixed cost of one kernel launch, seconds.
  double kernel_launch_s = 4e-6;
  /// K elements between promotions of the fp8 matrix-unit accumulator into fp32 registers on
  /// the vector cores, when a GEMM asks for precise ("split") accumulation; 0 = the matrix
  /// unit accumulates fp8 products at full precision, or never needs promotion. Hopper's fp8
  /// MMA keeps ~14 bits of its running sum (DeepSeek-V3 report, arXiv:2412.19437 sec. 3.3.2),
  /// so precise fp8 GEMMs add one fp32 add per output element per interval.
  int fp8_promotion_interval = 0;
  /// GEMM output tile handled by one compute unit (for tile and wave quantization).
  int gemm_tile_m = 128;
  int gemm_tile_n = 256;

  /// Fused attention (preset `attention`; attention_cost.hpp). The matrix instruction path,
  /// which decides the families that run here (runs_on(); a family that does not is refused,
  /// naming the ones that do).
  MatrixPath matrix_path = MatrixPath::mma_sync;
  /// The kernel family frameworks run here when a workload asks for plain `flash` attention;
  /// must run on matrix_path.
  AttentionKernelFamily attention_kernel = AttentionKernelFamily::fa2;
  /// Fraction of the matrix peak that warp-level MMA (mma.sync, the path FlashAttention-2
  /// uses) reaches: 1 where it is the full path (Ampere, AMD MFMA), about 0.5 on Hopper.
  double warp_mma_fraction = 1.0;
  /// Overlapping families (fa3; cudnn on tcgen05; fa4, fused_sdpa, pallas): fraction of the
  /// softmax time (max of the exp and fp32 parts) hidden under the matrix work, in [0, 1]. 1 is the ideal overlap (time = max(matmul, softmax)), 0 none
  /// (time = matmul + softmax, at the full MMA rate). H100/H200: 0.5, from the
  /// FlashAttention-3 paper's forward kernel (docs/models.md "Fused attention").
  double attention_softmax_overlap = 1.0;
  /// Special-function (exp2) results per second, whole chip (0: unknown; fused attention
  /// then cannot be costed).
  double special_function_ops_per_s = 0;

  /// Scale-up (NVLink / Infinity Fabric / ICI) bandwidth per accelerator, one direction.
  double scale_up_bytes_per_s = 0;
  /// The scale-up fabric this chip is built into (preset `scale_up_fabric`): "nvswitch",
  /// "pcie", "ualink", "xgmi-mesh", "ethernet-mesh" (cluster.node.scale_up.fabric must be it) or
  /// "ici-torus" (cluster.network.topology must be torus); empty: not stated, any fabric.
  std::string scale_up_fabric;

  /// Collective library on this chip (preset `collectives`): NVLink SHARP support, and the
  /// ceiling of NCCL's LL128 protocol payload throughput per GPU (0 = none known).
  bool collectives_nvls = false;
  double collectives_ll128_max_bytes_per_s = 0;

  /// Peak for `dtype`, FLOP/s. Plain fp32 without a matrix-unit entry falls back to
  /// `vector_flops_per_s` (an fp32 GEMM on H100 runs on the CUDA cores). Throws ConfigError
  /// naming the accelerator and listing its formats if it has no path for `dtype`.
  double peak_for(Dtype dtype) const;
  /// Best-GEMM fraction of peak in `dtype`: matmul_efficiency_by_dtype, else matmul_efficiency.
  double matmul_efficiency_for(Dtype dtype) const;
  /// The memory levels of one accelerator, nearest-last as the loader has always listed them:
  /// HBM, then L2, SRAM, host, CXL and SSD where both their capacity and bandwidth are known.
  std::vector<MemoryLevel> memory_levels() const;
};

}  // namespace clustersim::models
