#include "models/llm/transformer_ops.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/llm/flop_count.hpp"
#include "sim/engine/error.hpp"
#include "tests/models/accelerator/accelerator_test_spec.hpp"
#include "tests/models/llm/llm_test_models.hpp"

namespace transformer_ops_test {

using namespace clustersim;
using namespace clustersim::models;
using namespace clustersim::models::testing;

namespace {

TransformerBatch batch_of(std::vector<SequenceWork> sequences, HeadOutput head = HeadOutput::loss) {
  TransformerBatch batch;
  batch.sequences = std::move(sequences);
  batch.head = head;
  return batch;
}

std::vector<std::string> names(const std::vector<TransformerOp>& ops) {
  std::vector<std::string> result;
  for (const auto& op : ops) result.push_back(op.name);
  return result;
}

const TransformerOp& find(const std::vector<TransformerOp>& ops, const std::string& name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const TransformerOp& op) { return op.name == name; });
  REQUIRE(it != ops.end());
  return *it;
}

double flops_of(const std::vector<TransformerOp>& ops) {
  double total = 0;
  for (const auto& op : ops) total += op.flops;
  return total;
}

}  // namespace

TEST_CASE("a training micro-batch: Megatron's layer, shapes per TP rank, FLOPs of the training convention") {
  // Two sequences of 4,096 tokens, tp 4 with sequence parallelism: T = 8,192 tokens per rank.
  TransformerSharding sharding;
  sharding.tp = 4;
  sharding.sequence_parallel = true;
  const auto ops = transformer_forward_ops(llama3_8b(), batch_of({{4096, 4096}, {4096, 4096}}), sharding);
  using V = std::vector<std::string>;
  CHECK(names(ops.dense_layer) == V{"ln1", "tp all-gather", "qkv", "rope", "attn", "proj", "tp reduce-scatter",
                                    "dropout+residual", "ln2", "tp all-gather", "fc1 gate+up", "swiglu", "fc2",
                                    "tp reduce-scatter", "dropout+residual"});
  CHECK(ops.moe_layer.empty());
  CHECK(names(ops.embedding) == V{"embedding", "tp reduce-scatter"});
  CHECK(names(ops.head) == V{"final ln", "tp all-gather", "lm head", "cross-entropy"});

  const double hidden_bytes = 8192.0 * 4096 * 2;  // T h bf16
  const auto& ln1 = find(ops.dense_layer, "ln1");
  CHECK(ln1.kind == TransformerOpKind::elementwise);
  CHECK(ln1.elementwise.bytes_read == hidden_bytes / 4);  // the sequence-parallel shard
  const auto& gather = find(ops.dense_layer, "tp all-gather");
  CHECK(gather.comm.point == CommPoint::tp_before_column_parallel);
  CHECK(gather.comm.collective == CollectiveKind::all_gather);
  CHECK(gather.comm.bytes == hidden_bytes);
  // QKV on the gathered tokens: 32/4 query heads and 8/4 key/value heads of 128.
  const auto& qkv = find(ops.dense_layer, "qkv");
  CHECK(qkv.gemm.shape.m == 8192);
  CHECK(qkv.gemm.shape.n == (8 + 2 * 2) * 128);
  CHECK(qkv.gemm.shape.k == 4096);
  CHECK(qkv.gemm.parallel == GemmParallel::column);
  CHECK(qkv.gemm.quantized);
  CHECK(qkv.flops == 2.0 * 8192 * 1536 * 4096);
  CHECK(find(ops.dense_layer, "proj").gemm.parallel == GemmParallel::row);
  CHECK(find(ops.dense_layer, "proj").gemm.shape.k == 8 * 128);
  CHECK(find(ops.dense_layer, "fc2").gemm.shape.k == 14336 / 4);
  CHECK(find(ops.dense_layer, "rope").elementwise.bytes_read == 8192.0 * (8 + 2) * 128 * 2);
  // Attention: both sequences in one shape, causal over themselves.
  const auto& attn = find(ops.dense_layer, "attn");
  REQUIRE(attn.attention.groups.size() == 1);
  const AttentionShape& shape = attn.attention.groups[0];
  CHECK(shape.batch == 2);
  CHECK(shape.q_heads == 8);
  CHECK(shape.kv_heads == 2);
  CHECK(shape.seq_q == 4096);
  CHECK(shape.seq_kv == 4096);
  CHECK(shape.head_dim == 128);
  CHECK(shape.causal);
  // Full non-causal QK^T and PV: 4 x 2 sequences x 8 heads x 4096 x 4096 x 128.
  CHECK(attn.flops == 4.0 * 2 * 8 * 4096 * 4096 * 128);
  // Summed over the 4 TP ranks, a layer's and the head's FLOPs are flop_count's per token x T.
  const double tokens = 8192;
  CHECK(4 * flops_of(ops.dense_layer) ==
        doctest::Approx(tokens * layer_flops_per_token_fwd(llama3_8b(), 4096, LayerKind::dense)).epsilon(1e-12));
  CHECK(4 * flops_of(ops.head) == doctest::Approx(tokens * lm_head_flops_per_token_fwd(llama3_8b())).epsilon(1e-12));
  CHECK(flops_of(ops.embedding) == 0);
  // The loss: 3 passes over T x V/t fp32 logits.
  CHECK(find(ops.head, "cross-entropy").elementwise.bytes_read == 3 * 8192.0 * 32064 * 4);
}

TEST_CASE("a stated head_dim (Qwen3-32B's 64 x 128 over 5,120): Q, attention and the output projection at that width") {
  TransformerSpec qwen = llama3_8b();
  qwen.hidden_size = 5120;
  qwen.num_attention_heads = 64;
  qwen.num_key_value_heads = 8;
  qwen.explicit_head_dim = 128;
  qwen.intermediate_size = 25600;
  TransformerSharding sharding;
  sharding.tp = 2;
  const auto ops = transformer_forward_ops(qwen, batch_of({{1000, 1000}}, HeadOutput::next_token), sharding);
  const auto& qkv = find(ops.dense_layer, "qkv");
  CHECK(qkv.gemm.shape.n == (32 + 2 * 4) * 128);  // per TP rank
  CHECK(qkv.gemm.shape.k == 5120);
  CHECK(find(ops.dense_layer, "proj").gemm.shape.k == 32 * 128);
  CHECK(find(ops.dense_layer, "proj").gemm.shape.n == 5120);
  const AttentionShape& shape = find(ops.dense_layer, "attn").attention.groups.at(0);
  CHECK((shape.q_heads == 32 && shape.kv_heads == 4 && shape.head_dim == 128));
  // Summed over the TP ranks, the layer's FLOPs are flop_count's per token x tokens.
  CHECK(2 * flops_of(ops.dense_layer) ==
        doctest::Approx(1000.0 * layer_flops_per_token_fwd(qwen, 1000, LayerKind::dense)).epsilon(1e-12));
}

TEST_CASE("without sequence parallelism: Megatron's f and g, norms on every token") {
  TransformerSharding sharding;
  sharding.tp = 2;
  const auto ops = transformer_forward_ops(llama3_8b(), batch_of({{1024, 1024}}), sharding);
  const auto& identity = ops.dense_layer[1];
  CHECK(identity.name == "tp identity");
  CHECK(identity.comm.point == CommPoint::tp_before_column_parallel);
  CHECK_FALSE(identity.comm.collective.has_value());
  CHECK(identity.comm.bytes == 1024.0 * 4096 * 2);  // what its backward all-reduces
  CHECK(find(ops.dense_layer, "tp all-reduce").comm.point == CommPoint::tp_after_row_parallel);
  CHECK(find(ops.dense_layer, "ln1").elementwise.bytes_read == 1024.0 * 4096 * 2);
  // tp 1: no points at all.
  const auto single = transformer_forward_ops(llama3_8b(), batch_of({{1024, 1024}}), {});
  for (const auto& op : single.dense_layer) CHECK(op.kind != TransformerOpKind::communication);
}

TEST_CASE("a prefill chunk: 512 new tokens after 1,536 cached attend causally to 2,048 keys") {
  const ComputeModel compute(round_number_accelerator(132));
  const auto ops = transformer_forward_ops(llama3_8b(), batch_of({{512, 2048}}), {});
  const auto& attn = find(ops.dense_layer, "attn");
  REQUIRE(attn.attention.groups.size() == 1);
  const AttentionShape& shape = attn.attention.groups[0];
  CHECK(shape.seq_q == 512);
  CHECK(shape.seq_kv == 2048);
  CHECK(shape.causal);  // aligned to the end of the keys
  // GEMMs over the chunk's tokens only.
  CHECK(find(ops.dense_layer, "qkv").gemm.shape.m == 512);
  CHECK(find(ops.dense_layer, "fc1 gate+up").gemm.shape.m == 512);
  // Model FLOPs (full non-causal): 4 x 32 heads x 512 x 2048 x 128 = 17,179,869,184.
  CHECK(attn.flops == 17179869184.0);
  // The kernel evaluates 512 x 1536 + 512^2 / 2 = 917,504 pairs per head:
  // 4 x 32 x 917,504 x 128 = 15,032,385,536 FLOPs, the compute model's count.
  const OpEstimate attention = compute_estimate(compute, attn);
  CHECK(attention.flops == 15032385536.0);
  CHECK(attention.time_s == compute.attention(shape).time_s);
  CHECK(attention.provenance == Provenance::roofline);
  // ln1 reads and writes 512 x 4096 bf16 = 4 MiB each: 8,388,608 bytes at 2 TB/s x 0.9, plus
  // the 4 us launch = 4.6603 + 4 us.
  CHECK(compute_estimate(compute, find(ops.dense_layer, "ln1")).time_s ==
        doctest::Approx(8388608.0 / 1.8e12 + 4e-6).epsilon(1e-12).scale(0));
  const auto& qkv = find(ops.dense_layer, "qkv");
  CHECK(compute_estimate(compute, qkv).flops == 2.0 * 512 * 6144 * 4096);
  CHECK(compute_estimate(compute, qkv).time_s == compute.gemm(qkv.gemm.shape).time_s);
  // Serving's head: logits of the last token only, no loss.
  const auto sampling = transformer_forward_ops(llama3_8b(), batch_of({{512, 2048}}, HeadOutput::next_token), {});
  CHECK(names(sampling.head) == std::vector<std::string>{"final ln", "lm head"});
  CHECK(find(sampling.head, "lm head").gemm.shape.m == 1);
}

TEST_CASE("a decode batch of mixed KV lengths: GEMMs over the batch, one attention shape per KV length") {
  const ComputeModel compute(round_number_accelerator(132));
  TransformerSharding sharding;
  sharding.tp = 2;
  const auto batch = batch_of({{1, 100}, {1, 300}, {1, 100}, {1, 4000}}, HeadOutput::next_token);
  const auto ops = transformer_forward_ops(llama3_8b(), batch, sharding);
  for (const auto& op : ops.dense_layer) {
    if (op.kind == TransformerOpKind::gemm) CHECK(op.gemm.shape.m == 4);  // one token per sequence
  }
  const auto& attn = find(ops.dense_layer, "attn");
  REQUIRE(attn.attention.groups.size() == 3);  // in order of first appearance
  CHECK(attn.attention.groups[0].seq_kv == 100);
  CHECK(attn.attention.groups[0].batch == 2);
  CHECK(attn.attention.groups[1].seq_kv == 300);
  CHECK(attn.attention.groups[1].batch == 1);
  CHECK(attn.attention.groups[2].seq_kv == 4000);
  for (const auto& group : attn.attention.groups) {
    CHECK(group.seq_q == 1);
    CHECK_FALSE(group.causal);  // one query sees every key
    CHECK(group.q_heads == 16);
    CHECK(group.kv_heads == 4);
  }
  // 4 x 16 heads x 128 x (100 + 300 + 100 + 4000) keys = 36,864,000: model and kernel FLOPs
  // agree for a single query.
  CHECK(attn.flops == 36864000.0);
  const OpEstimate estimate = compute_estimate(compute, attn);
  CHECK(estimate.flops == 36864000.0);
  double sum_s = 0;
  for (const auto& group : attn.attention.groups) sum_s += compute.attention(group).time_s;
  CHECK(estimate.time_s == doctest::Approx(sum_s).epsilon(1e-15));
  // The head: 4 rows of logits, gathered over the 2 TP ranks (4 x 128,256 bf16).
  CHECK(names(ops.head) == std::vector<std::string>{"final ln", "tp identity", "lm head", "tp all-gather (logits)"});
  CHECK(find(ops.head, "lm head").gemm.shape.m == 4);
  CHECK(find(ops.head, "lm head").gemm.shape.n == 64128);
  CHECK(find(ops.head, "tp all-gather (logits)").comm.bytes == 4.0 * 128256 * 2);
  CHECK_THROWS_WITH_AS(compute_estimate(compute, find(ops.head, "tp all-gather (logits)")),
                       "op 'tp all-gather (logits)' is a communication point: the collective model times it, not "
                       "the compute model",
                       ConfigError);
}

TEST_CASE("GQA with more TP ranks than key/value heads keeps one key/value head per rank") {
  TransformerSharding sharding;
  sharding.tp = 16;
  const auto ops = transformer_forward_ops(llama3_8b(), batch_of({{2048, 2048}}), sharding);
  CHECK(find(ops.dense_layer, "qkv").gemm.shape.n == (2 + 2 * 1) * 128);
  CHECK(find(ops.dense_layer, "attn").attention.groups[0].kv_heads == 1);
}

TEST_CASE("decode K/V read per query head (pre-XQA masked MHA): decode shapes only, MHA's bytes, same FLOPs") {
  const ComputeModel compute(round_number_accelerator(132));
  TransformerSharding grouped;
  grouped.tp = 2;
  TransformerSharding per_head = grouped;
  per_head.decode_kv_per_query_head = true;
  // Two decode steps and one prefill chunk of Llama-3-8B (32 query heads, 8 KV heads; 16 and 4 per rank).
  const auto batch = batch_of({{1, 1000}, {1, 1000}, {256, 256}}, HeadOutput::next_token);
  const auto grouped_ops = transformer_forward_ops(llama3_8b(), batch, grouped);
  const auto per_head_ops = transformer_forward_ops(llama3_8b(), batch, per_head);
  const auto& shared = find(grouped_ops.dense_layer, "attn");
  const auto& separate = find(per_head_ops.dense_layer, "attn");
  REQUIRE(separate.attention.groups.size() == 2);
  CHECK(separate.attention.groups[0].seq_q == 1);
  CHECK(separate.attention.groups[0].kv_heads == 16);  // each query head loads its group's K and V
  CHECK(separate.attention.groups[1].seq_q == 256);
  CHECK(separate.attention.groups[1].kv_heads == 4);   // the context kernel shares them
  CHECK(separate.flops == shared.flops);
  // Decode attention streams K and V: 4x the bytes of the grouped kernel (16 / 4 heads), 2 x 1000
  // keys x 128 x 2 (K, V) x 2 B per head: 2 x 16 x 512,000 B plus Q and O.
  const OpEstimate a = compute.attention(shared.attention.groups[0]);
  const OpEstimate b = compute.attention(separate.attention.groups[0]);
  const double q_and_o = 2.0 * 16 * 128 * (2 + 2) + 4.0 * 2 * 16;  // Q in, O out (bf16), fp32 LSE
  CHECK(b.bytes - q_and_o == doctest::Approx(4.0 * (a.bytes - q_and_o)));
  CHECK(b.time_s > a.time_s);
}

TEST_CASE("MLA and MoE: DeepSeek-V3's projections and a routed layer") {
  TransformerSharding sharding;
  sharding.tp = 2;
  sharding.sequence_parallel = true;
  sharding.ep = 8;
  const std::int64_t tokens = 4096;
  const auto ops = transformer_forward_ops(deepseek_v3(), batch_of({{tokens, tokens}}), sharding);
  using V = std::vector<std::string>;
  const V attention_part{"ln1", "tp all-gather", "q down", "q up", "kv down", "kv up", "rope", "attn", "proj",
                         "tp reduce-scatter", "dropout+residual"};
  const V moe_names = names(ops.moe_layer);
  REQUIRE(moe_names.size() == 27);
  CHECK(V(moe_names.begin(), moe_names.begin() + 11) == attention_part);
  // Down-projections duplicated on both TP ranks (FLOPs halved per rank), up-projections split.
  const auto& q_down = find(ops.moe_layer, "q down");
  CHECK(q_down.gemm.parallel == GemmParallel::duplicated);
  CHECK(q_down.gemm.shape.n == 1536);
  CHECK(q_down.flops == 2.0 * tokens * 1536 * 7168 / 2);
  CHECK(find(ops.moe_layer, "q up").gemm.shape.n == 64 * 192);
  CHECK(find(ops.moe_layer, "kv down").gemm.shape.n == 512 + 64);
  CHECK(find(ops.moe_layer, "kv up").gemm.shape.n == 64 * (128 + 128));
  CHECK(find(ops.moe_layer, "proj").gemm.shape.k == 64 * 128);
  // RoPE on 64 query heads' and the shared key's 64 rotary channels.
  CHECK(find(ops.moe_layer, "rope").elementwise.bytes_read == 4096.0 * 65 * 64 * 2);
  const AttentionShape& shape = find(ops.moe_layer, "attn").attention.groups[0];
  CHECK(shape.head_dim == (192 + 128) / 2);
  CHECK(shape.kv_heads == 64);
  // Summed over both ranks: the attention's matmuls and core per token x T.
  double attention_flops = 0;
  for (std::size_t i = 0; i < 11; ++i) attention_flops += ops.moe_layer[i].flops;
  const TransformerSpec spec = deepseek_v3();
  CHECK(2 * attention_flops ==
        doctest::Approx(static_cast<double>(tokens) * (2 * spec.attention_matmul_parameters() +
                                                       attention_core_flops_per_token_fwd(spec, tokens)))
            .epsilon(1e-12));

  // The MoE block: 256 experts over ep 8 = 32 per rank; balanced and dropless, the rank computes
  // its T x 8 = 32,768 token copies, 1,024 per expert; expert FFNs split over tp: 1,024 columns.
  CHECK(V(moe_names.begin() + 11, moe_names.end()) ==
        V{"ln2", "router", "router softmax+top-k", "tp all-gather", "permute", "ep dispatch", "experts fc1 gate+up",
          "experts swiglu", "experts fc2", "ep combine", "unpermute", "shared fc1 gate+up", "shared swiglu",
          "shared fc2", "tp reduce-scatter", "dropout+residual"});
  const auto& router = find(ops.moe_layer, "router");
  CHECK(router.gemm.parallel == GemmParallel::replicated);
  CHECK_FALSE(router.gemm.quantized);
  CHECK(router.gemm.shape.m == tokens / 2);  // the sequence-parallel shard
  const auto& fc1 = find(ops.moe_layer, "experts fc1 gate+up");
  CHECK(fc1.gemm.grouped);
  CHECK(fc1.gemm.shape.batch == 32);
  CHECK(fc1.gemm.shape.m == 1024);
  CHECK(fc1.gemm.shape.n == 2 * 1024);
  CHECK(fc1.gemm.flop_share == 1.0);
  CHECK(find(ops.moe_layer, "ep dispatch").comm.bytes == 4096.0 * 8 * 7168 * 2);
  CHECK(find(ops.moe_layer, "shared fc2").gemm.shape.k == 1024);
  CHECK(names(ops.dense_layer)[2] == "q down");  // the first 3 layers are dense
}

TEST_CASE("MoE imbalance: the busiest EP rank sets the expert GEMM's size, a balanced rank its FLOPs") {
  MoeRuntime routing;
  routing.imbalance = 1.5;
  TransformerSharding sharding;
  sharding.ep = 2;
  // T = 4,096 tokens per rank, 8,192 on the group: 8,192 x 2 / 8 = 2,048 copies per expert. The
  // busiest expert gets 3,072, the 7 others (8 - 1.5) / 7 x 2,048 = 1,901.7 each; the busiest
  // rank holds it and 3 others: 8,777.1 copies, ceil(8,777.1 / 4) = 2,195 per local expert.
  const auto ops = transformer_forward_ops(mixtral_8x7b(), batch_of({{4096, 4096}}), sharding, routing);
  const auto& fc1 = find(ops.moe_layer, "experts fc1 gate+up");
  CHECK(fc1.gemm.shape.m == 2195);
  CHECK(fc1.gemm.shape.batch == 4);
  const double busiest = 3072.0 + 3 * 6.5 / 7 * 2048;
  CHECK(fc1.gemm.flop_share == doctest::Approx(8192.0 / busiest).epsilon(1e-12));
  // Model FLOPs: a balanced rank's 8,192 copies through the gated expert.
  CHECK(fc1.flops == doctest::Approx(2.0 * 8192 * 2 * 14336 * 4096).epsilon(1e-3));
}

TEST_CASE("a decode batch runs only the experts its token copies reach; a micro-batch runs them all") {
  TransformerSharding sharding;
  sharding.tp = 8;
  // 8 decode tokens x top-8 = 64 copies over DeepSeek-V3's 256 experts (ep 1): an expert stays
  // idle with probability (255/256)^64 = 0.7784, so ceil(256 x 0.2216) = ceil(56.72) = 57 run,
  // ceil(64 / 57) = 2 rows each; the weights of the other 199 are not read.
  const auto decode = transformer_forward_ops(deepseek_v3(), batch_of(std::vector<SequenceWork>(8, {1, 1000}),
                                                                       HeadOutput::next_token),
                                              sharding);
  const auto& fc1 = find(decode.moe_layer, "experts fc1 gate+up");
  CHECK(fc1.gemm.shape.batch == 57);
  CHECK(fc1.gemm.shape.m == 2);
  // FLOPs of the rows run (flop_share 64 / 64 = 1; the ceil pads 64 copies to 57 x 2 rows).
  CHECK(fc1.flops == doctest::Approx(2.0 * 57 * 2 * (2 * 256) * 7168).epsilon(1e-12));
  // Mixtral's 8 experts, one decode token x top-2: 2 copies, ceil(8 x (1 - (7/8)^2)) = 2 experts.
  const auto one = transformer_forward_ops(mixtral_8x7b(), batch_of({{1, 100}}, HeadOutput::next_token), {});
  CHECK(find(one.moe_layer, "experts fc1 gate+up").gemm.shape.batch == 2);
  // A training micro-batch of 4,096 tokens: (255/256)^32768 is 0 to double precision: all 256.
  const auto train = transformer_forward_ops(deepseek_v3(), batch_of({{4096, 4096}}), sharding);
  CHECK(find(train.moe_layer, "experts fc1 gate+up").gemm.shape.batch == 256);
}

TEST_CASE("context parallelism: the rank's queries over the whole context, and the K/V exchange") {
  TransformerSharding sharding;
  sharding.cp = 2;
  const auto ops = transformer_forward_ops(llama3_8b(), batch_of({{2048, 4096}}), sharding);
  const auto& attn = find(ops.dense_layer, "attn");
  CHECK(attn.attention.groups[0].seq_q == 2048);
  CHECK(attn.attention.groups[0].seq_kv == 4096);
  CHECK(attn.flops == 4.0 * 32 * 2048 * 4096 * 128);
  const auto it = std::find_if(ops.dense_layer.begin(), ops.dense_layer.end(),
                               [](const TransformerOp& op) { return op.name == "attn"; });
  const auto& exchange = *(it + 1);
  CHECK(exchange.comm.point == CommPoint::cp_kv_exchange);
  CHECK(exchange.comm.collective == CollectiveKind::all_gather);
  CHECK(exchange.comm.bytes == 4096.0 * 2 * 8 * 128 * 2);  // K and V of the whole sequence
}

TEST_CASE("invalid batches and splits are rejected with the value named") {
  CHECK_THROWS_WITH_AS(transformer_forward_ops(llama3_8b(), batch_of({}), {}),
                       "transformer batch: no sequences (at least one is needed)", ConfigError);
  CHECK_THROWS_WITH_AS(transformer_forward_ops(llama3_8b(), batch_of({{8, 8}, {600, 512}}), {}),
                       "transformer batch: sequence 1 has query_tokens 600 > kv_tokens 512 (its keys include its "
                       "new tokens)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(transformer_forward_ops(llama3_8b(), batch_of({{0, 512}}), {}),
                       "transformer batch: sequence 0 has query_tokens 0; at least 1 is needed", ConfigError);
  TransformerSharding sharding;
  sharding.tp = 3;
  CHECK_THROWS_WITH_AS(transformer_forward_ops(llama3_8b(), batch_of({{8, 8}}), sharding),
                       "transformer sharding: tp 3 does not divide the 32 attention heads of model 'llama-3-8b'",
                       ConfigError);
  sharding.tp = 1;
  sharding.cp = 0;
  CHECK_THROWS_WITH_AS(transformer_forward_ops(llama3_8b(), batch_of({{8, 8}}), sharding),
                       "transformer sharding: cp must be >= 1, got 0", ConfigError);
  sharding.cp = 1;
  sharding.ep = 3;
  CHECK_THROWS_WITH_AS(transformer_forward_ops(mixtral_8x7b(), batch_of({{8, 8}}), sharding),
                       "expert-parallel degree 3 must be >= 1 and divide the 8 experts", ConfigError);
  TransformerSpec broken = llama3_8b();
  broken.hidden_size = 0;
  CHECK_THROWS_AS(transformer_forward_ops(broken, batch_of({{8, 8}}), {}), ConfigError);
}

}  // namespace transformer_ops_test
