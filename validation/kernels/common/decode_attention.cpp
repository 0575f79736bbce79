#include "decode_attention.hpp"

#include <stdexcept>

namespace clustersim::kernels {

std::int64_t decode_kv_bytes(const DecodeAttentionShape& shape) {
  return 2 * 2 * shape.batch * shape.kv_heads * shape.seq_kv * shape.head_dim;
}

std::vector<DecodeAttentionShape> decode_attention_sweep(bool quick) {
  struct Model {
    const char* name;
    std::int64_t heads, kv_heads;
  };
  const Model models[] = {{"llama-3-8b", 32, 8}, {"llama-3-70b", 64, 8}};
  std::vector<DecodeAttentionShape> shapes;
  for (const Model& model : models) {
    for (std::int64_t tp : {1, 2, 4, 8}) {
      if (quick && tp != (model.heads == 32 ? 1 : 8)) continue;
      for (std::int64_t batch = 1; batch <= 256; batch *= 2) {
        if (quick && batch != 1 && batch != 16 && batch != 256) continue;
        for (std::int64_t seq_kv = 128; seq_kv <= 32768; seq_kv *= 2) {
          if (quick && seq_kv != 128 && seq_kv != 2048 && seq_kv != 32768) continue;
          DecodeAttentionShape shape{std::string(model.name) + " tp" + std::to_string(tp), batch,
                                     model.heads / tp, model.kv_heads / tp, seq_kv, 128};
          if (decode_kv_bytes(shape) <= kMaxDecodeKvBytes) shapes.push_back(std::move(shape));
        }
      }
    }
  }
  return shapes;
}

DecodeSplitPlan plan_decode_splits(std::int64_t batch, std::int64_t kv_heads, std::int64_t seq_kv,
                                   int sm_count, std::int64_t min_keys) {
  if (batch <= 0 || kv_heads <= 0 || seq_kv <= 0 || sm_count <= 0 || min_keys <= 0) {
    throw std::invalid_argument("plan_decode_splits: batch, kv_heads, seq_kv, sm_count and "
                                "min_keys must be positive");
  }
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  const std::int64_t groups = batch * kv_heads;
  std::int64_t splits = ceil_div(2 * static_cast<std::int64_t>(sm_count), groups);
  const std::int64_t most = ceil_div(seq_kv, min_keys);
  if (splits > most) splits = most;
  if (splits < 1) splits = 1;
  const std::int64_t keys = ceil_div(ceil_div(seq_kv, splits), 64) * 64;
  return {ceil_div(seq_kv, keys), keys};
}

}  // namespace clustersim::kernels
