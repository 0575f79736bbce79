#include "gemm_shapes.hpp"

#include <stdexcept>

namespace clustersim::kernels {

void validate_shard(const TransformerShard& shard) {
  const auto positive = [&](const char* field, std::int64_t value) {
    if (value <= 0) {
      throw std::invalid_argument("transformer shard " + shard.model + ": " + field +
                                  " must be positive, got " + std::to_string(value));
    }
  };
  positive("hidden_size", shard.hidden_size);
  positive("num_heads", shard.num_heads);
  positive("num_kv_heads", shard.num_kv_heads);
  positive("intermediate_size", shard.intermediate_size);
  positive("tp", shard.tp);
  positive("seq_len", shard.seq_len);
  positive("micro_batch", shard.micro_batch);
  const auto divisible = [&](const char* what, std::int64_t a, std::int64_t b) {
    if (a % b != 0) {
      throw std::invalid_argument("transformer shard " + shard.model + ": " + what + " (" +
                                  std::to_string(a) + " not divisible by " + std::to_string(b) +
                                  ")");
    }
  };
  divisible("hidden_size must be a multiple of num_heads", shard.hidden_size, shard.num_heads);
  divisible("num_heads must be a multiple of num_kv_heads", shard.num_heads, shard.num_kv_heads);
  divisible("num_heads must be a multiple of tp", shard.num_heads, shard.tp);
  divisible("num_kv_heads must be a multiple of tp", shard.num_kv_heads, shard.tp);
  divisible("intermediate_size must be a multiple of tp", shard.intermediate_size, shard.tp);
}

namespace {

struct Linear {
  const char* name;
  std::int64_t in_features;   // per rank
  std::int64_t out_features;  // per rank
};

// The layer's four linears on one rank (the shard is validated by the caller).
std::vector<Linear> layer_linears(const TransformerShard& shard) {
  const std::int64_t head_dim = shard.hidden_size / shard.num_heads;
  return {
      {"qkv", shard.hidden_size, (shard.num_heads + 2 * shard.num_kv_heads) * head_dim / shard.tp},
      {"attn_out", shard.num_heads * head_dim / shard.tp, shard.hidden_size},
      {"mlp_up", shard.hidden_size,
       (shard.gated_mlp ? 2 : 1) * shard.intermediate_size / shard.tp},
      {"mlp_down", shard.intermediate_size / shard.tp, shard.hidden_size},
  };
}

}  // namespace

std::vector<GemmShape> transformer_layer_gemms(const TransformerShard& shard) {
  validate_shard(shard);
  const std::int64_t tokens = shard.seq_len * shard.micro_batch;
  const std::string prefix = shard.model + " tp" + std::to_string(shard.tp) + " s" +
                             std::to_string(shard.seq_len) + " mb" +
                             std::to_string(shard.micro_batch) + " ";
  std::vector<GemmShape> shapes;
  for (const Linear& linear : layer_linears(shard)) {
    // Y[T x out] = X[T x in] W[in x out]; dX = dY W^T; dW = X^T dY.
    shapes.push_back({prefix + linear.name + " fwd", tokens, linear.out_features,
                      linear.in_features, 1});
    shapes.push_back({prefix + linear.name + " dgrad", tokens, linear.in_features,
                      linear.out_features, 1});
    shapes.push_back({prefix + linear.name + " wgrad", linear.in_features, linear.out_features,
                      tokens, 1});
  }
  return shapes;
}

std::vector<GemmShape> attention_batched_gemms(const TransformerShard& shard) {
  validate_shard(shard);
  const std::int64_t head_dim = shard.hidden_size / shard.num_heads;
  const std::int64_t batch = shard.micro_batch * shard.num_heads / shard.tp;
  const std::string prefix = shard.model + " tp" + std::to_string(shard.tp) + " s" +
                             std::to_string(shard.seq_len) + " mb" +
                             std::to_string(shard.micro_batch) + " ";
  return {
      {prefix + "attn scores QK^T", shard.seq_len, shard.seq_len, head_dim, batch},
      {prefix + "attn context PV", shard.seq_len, head_dim, shard.seq_len, batch},
  };
}

std::vector<GemmShape> square_gemms(const std::vector<std::int64_t>& sizes) {
  std::vector<GemmShape> shapes;
  for (std::int64_t size : sizes) {
    if (size <= 0) {
      throw std::invalid_argument("square GEMM size must be positive, got " + std::to_string(size));
    }
    shapes.push_back({"square " + std::to_string(size), size, size, size, 1});
  }
  return shapes;
}

TransformerShard llama3_70b_tp8() {
  return {"llama-3-70b", 8192, 64, 8, 28672, true, 8, 8192, 1};
}

TransformerShard gpt3_175b_tp8() {
  return {"gpt3-175b", 12288, 96, 96, 49152, false, 8, 2048, 1};
}

TransformerShard mcore_gpt_1_7b_tp1() {
  return {"mcore-gpt-1.7b", 2048, 16, 16, 8192, false, 1, 4096, 1};
}

TransformerShard mcore_gpt_7_1b_tp2() {
  return {"mcore-gpt-7.1b", 4096, 32, 32, 16384, false, 2, 4096, 1};
}

TransformerShard llama3_8b_decode(std::int64_t tp, std::int64_t tokens) {
  return {"llama-3-8b", 4096, 32, 8, 14336, true, tp, 1, tokens};
}

TransformerShard llama3_70b_decode(std::int64_t tp, std::int64_t tokens) {
  return {"llama-3-70b", 8192, 64, 8, 28672, true, tp, 1, tokens};
}

std::vector<GemmShape> decode_layer_gemms(const TransformerShard& shard) {
  validate_shard(shard);
  const std::int64_t tokens = shard.seq_len * shard.micro_batch;
  const std::string prefix = shard.model + " tp" + std::to_string(shard.tp) + " decode m" +
                             std::to_string(tokens) + " ";
  std::vector<GemmShape> shapes;
  for (const Linear& linear : layer_linears(shard)) {
    shapes.push_back({prefix + linear.name, tokens, linear.out_features, linear.in_features, 1});
  }
  return shapes;
}

std::vector<std::int64_t> decode_token_counts(bool quick) {
  if (quick) return {1, 16, 256};
  return {1, 2, 4, 8, 16, 32, 64, 128, 256};
}

std::vector<std::int64_t> decode_tp_degrees(bool quick) {
  if (quick) return {1, 8};
  return {1, 2, 4, 8};
}

std::vector<GemmShape> decode_gemm_sweep(bool quick) {
  std::vector<GemmShape> shapes;
  for (auto* model : {&llama3_8b_decode, &llama3_70b_decode}) {
    for (std::int64_t tp : decode_tp_degrees(quick)) {
      for (std::int64_t tokens : decode_token_counts(quick)) {
        for (GemmShape& shape : decode_layer_gemms(model(tp, tokens))) shapes.push_back(std::move(shape));
      }
    }
  }
  return shapes;
}

std::vector<GemmShape> default_gemm_sweep(bool quick) {
  if (quick) {
    std::vector<GemmShape> shapes = square_gemms({1024, 4096});
    for (const GemmShape& shape : transformer_layer_gemms(gpt3_175b_tp8())) {
      if (shape.label.size() >= 4 && shape.label.compare(shape.label.size() - 4, 4, " fwd") == 0) {
        shapes.push_back(shape);
      }
    }
    return shapes;
  }
  std::vector<GemmShape> shapes = square_gemms({1024, 2048, 4096, 8192, 16384});
  for (const TransformerShard& shard :
       {llama3_70b_tp8(), gpt3_175b_tp8(), mcore_gpt_1_7b_tp1(), mcore_gpt_7_1b_tp2()}) {
    for (GemmShape& shape : transformer_layer_gemms(shard)) shapes.push_back(std::move(shape));
  }
  for (GemmShape& shape : attention_batched_gemms(gpt3_175b_tp8())) {
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

}  // namespace clustersim::kernels
