#pragma once
/// Which fused-attention (FlashAttention-style) kernel family runs, and on which matrix path:
/// the family decides the matrix path the kernel uses and whether its softmax overlaps the
/// matrix math (attention_cost.hpp); the accelerator's matrix path decides which families run
/// on it at all (runs_on()).
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/name_table.hpp"

namespace clustersim::models {

/// Fused-attention kernel family.
enum class AttentionKernelFamily {
  /// FlashAttention-2 style: warp-level MMA (mma.sync on NVIDIA; MFMA on AMD, its only
  /// path: the ROCm port runs on Composable Kernel), softmax between the two GEMMs of a warp
  /// with no explicit overlap: time = matmul + softmax, where the exponentials and the fp32
  /// operations of the softmax run in separate pipes and overlap each other (max).
  fa2,
  /// FlashAttention-3, Hopper only (sm90 wgmma, TMA): asynchronous warpgroup MMA at the full
  /// matrix rate, softmax overlapped with the GEMMs (warp specialisation, ping-pong
  /// scheduling) by the accelerator's attention_softmax_overlap.
  fa3,
  /// cuDNN fused attention (cudnn-frontend SDPA), what Transformer Engine (Megatron-Core,
  /// NeMo) selects on Hopper and Blackwell. On Ampere and Hopper: full-rate MMA, softmax not
  /// hidden: time = matmul + max(exponentials, fp32 ops) (the FA3 paper's H100 cuDNN curves fit
  /// it causal, docs/models.md). On Blackwell (tcgen05) its kernels are warp-specialised
  /// around TMEM: softmax overlapped as fa3 (ESTIMATE, no public Blackwell cuDNN curve).
  cudnn,
  /// FlashAttention-4, Blackwell (tcgen05 UMMA into tensor memory): full-rate MMA, softmax
  /// overlapped by attention_softmax_overlap, and part of the exponentials emulated by a
  /// polynomial on the FMA pipe so that MUFU.EX2 stops being the bottleneck (Zadouri et al.,
  /// arXiv:2603.05451): the exponentials are split between the two pipes to finish together.
  fa4,
  /// Intel Gaudi fused scaled-dot-product attention (habana FusedSDPA): the matrix math on the
  /// MMEs, the softmax on the TPC vector cores; the graph compiler pipelines slices between
  /// the two engines, so the softmax overlaps the matrix work by attention_softmax_overlap.
  fused_sdpa,
  /// TPU Pallas flash attention (jax.experimental.pallas.ops.tpu flash/splash attention, what
  /// MaxText and XLA's fused attention run): the matrix math on the MXUs, the softmax on the
  /// vector and transcendental units, overlapped by attention_softmax_overlap.
  pallas,
};

/// The matrix instruction path of an accelerator (preset `attention.matrix_path`): which
/// fused-attention families exist for it.
enum class MatrixPath {
  mma_sync,  ///< NVIDIA Ampere / Ada: warp-level mma.sync is the full tensor-core path
  wgmma,     ///< NVIDIA Hopper (sm90): asynchronous warpgroup MMA; mma.sync reaches part of it
  tcgen05,   ///< NVIDIA Blackwell (sm100/sm103): tcgen05 UMMA into tensor memory (TMEM)
  mfma,      ///< AMD CDNA: MFMA matrix cores (one path)
  mme,       ///< Intel Gaudi: Matrix Math Engines beside the TPC vector cores
  mxu,       ///< Google TPU: MXU systolic arrays beside the vector units
};

/// The names of the families: "fa2", "fa3", "cudnn", "fa4", "fused_sdpa", "pallas".
const config::NameTable<AttentionKernelFamily>& attention_kernel_family_names();
/// The family's name.
std::string_view attention_kernel_family_name(AttentionKernelFamily family);
/// Parses a family name; throws ConfigError listing the valid names.
AttentionKernelFamily parse_attention_kernel_family(std::string_view name);

/// The names of the matrix paths: "mma_sync", "wgmma", "tcgen05", "mfma", "mme", "mxu".
const config::NameTable<MatrixPath>& matrix_path_names();
/// The path's name.
std::string_view matrix_path_name(MatrixPath path);

/// Whether `family` runs on an accelerator whose matrix path is `path`: fa2 on mma_sync, wgmma,
/// tcgen05 (mma.sync exists on every NVIDIA tensor-core generation since Ampere) and mfma (the
/// ROCm port); fa3 on wgmma only (its kernels are sm90-specific); cudnn on mma_sync, wgmma and
/// tcgen05; fa4 on tcgen05 (its Hopper code path is not modelled); fused_sdpa on mme; pallas
/// on mxu.
bool runs_on(AttentionKernelFamily family, MatrixPath path);
/// Whether `family` on `path` overlaps its softmax with the matrix math (by the accelerator's
/// attention_softmax_overlap): fa3, fa4, fused_sdpa, pallas, and cudnn on tcgen05; fa2 and
/// cudnn before Blackwell add them.
bool overlaps_softmax(AttentionKernelFamily family, MatrixPath path);

/// The families that run on `path`, in enum order.
std::vector<AttentionKernelFamily> families_on(MatrixPath path);
/// Those families' names joined by ", " (for messages).
std::string families_on_text(MatrixPath path);

}  // namespace clustersim::models
