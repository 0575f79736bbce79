#include "models/llm/mla_spec.hpp"

namespace clustersim::models {

MlaProjectionParameters mla_projection_parameters(const MlaSpec& mla, std::int64_t hidden_size,
                                                  std::int64_t heads) {
  const double h = static_cast<double>(hidden_size);
  const double a = static_cast<double>(heads);
  const double q_rank = static_cast<double>(mla.q_lora_rank);
  const double kv_rank = static_cast<double>(mla.kv_lora_rank);
  const double qk = static_cast<double>(mla.qk_head_dim());
  MlaProjectionParameters p;
  if (mla.q_lora_rank > 0) {
    p.w_dq = h * q_rank;
    p.w_uq = q_rank * a * qk;
  } else {
    p.w_uq = h * a * qk;  // W_Q: queries straight from the hidden state
  }
  p.w_dkv = h * kv_rank;
  p.w_kr = h * static_cast<double>(mla.qk_rope_head_dim);
  p.w_uk = kv_rank * a * static_cast<double>(mla.qk_nope_head_dim);
  p.w_uv = kv_rank * a * static_cast<double>(mla.v_head_dim);
  p.w_o = a * static_cast<double>(mla.v_head_dim) * h;
  p.norms = q_rank + kv_rank;
  return p;
}

}  // namespace clustersim::models
