#include "models/accelerator/attention_kernel_family.hpp"

namespace clustersim::models {

const config::NameTable<AttentionKernelFamily>& attention_kernel_family_names() {
  static const config::NameTable<AttentionKernelFamily> names(
      "attention kernel family",
      {{"fa2", AttentionKernelFamily::fa2},
       {"fa3", AttentionKernelFamily::fa3},
       {"cudnn", AttentionKernelFamily::cudnn},
       {"fa4", AttentionKernelFamily::fa4},
       {"fused_sdpa", AttentionKernelFamily::fused_sdpa},
       {"pallas", AttentionKernelFamily::pallas}});
  return names;
}

std::string_view attention_kernel_family_name(AttentionKernelFamily family) {
  return attention_kernel_family_names().name(family);
}

AttentionKernelFamily parse_attention_kernel_family(std::string_view name) {
  return attention_kernel_family_names().parse(name);
}

const config::NameTable<MatrixPath>& matrix_path_names() {
  static const config::NameTable<MatrixPath> names("matrix path", {{"mma_sync", MatrixPath::mma_sync},
                                                                   {"wgmma", MatrixPath::wgmma},
                                                                   {"tcgen05", MatrixPath::tcgen05},
                                                                   {"mfma", MatrixPath::mfma},
                                                                   {"mme", MatrixPath::mme},
                                                                   {"mxu", MatrixPath::mxu}});
  return names;
}

std::string_view matrix_path_name(MatrixPath path) { return matrix_path_names().name(path); }

bool runs_on(AttentionKernelFamily family, MatrixPath path) {
  const bool nvidia = path == MatrixPath::mma_sync || path == MatrixPath::wgmma || path == MatrixPath::tcgen05;
  switch (family) {
    case AttentionKernelFamily::fa2: return nvidia || path == MatrixPath::mfma;
    case AttentionKernelFamily::fa3: return path == MatrixPath::wgmma;
    case AttentionKernelFamily::cudnn: return nvidia;
    case AttentionKernelFamily::fa4: return path == MatrixPath::tcgen05;
    case AttentionKernelFamily::fused_sdpa: return path == MatrixPath::mme;
    case AttentionKernelFamily::pallas: return path == MatrixPath::mxu;
  }
  return false;
}

bool overlaps_softmax(AttentionKernelFamily family, MatrixPath path) {
  if (family == AttentionKernelFamily::fa2) return false;
  if (family == AttentionKernelFamily::cudnn) return path == MatrixPath::tcgen05;
  return true;
}

std::vector<AttentionKernelFamily> families_on(MatrixPath path) {
  std::vector<AttentionKernelFamily> families;
  for (const std::string& name : attention_kernel_family_names().names()) {
    const AttentionKernelFamily family = parse_attention_kernel_family(name);
    if (runs_on(family, path)) families.push_back(family);
  }
  return families;
}

std::string families_on_text(MatrixPath path) {
  std::string text;
  for (const AttentionKernelFamily family : families_on(path)) {
    if (!text.empty()) text += ", ";
    text += attention_kernel_family_name(family);
  }
  return text;
}

}  // namespace clustersim::models
