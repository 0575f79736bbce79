#include "models/llm/parallel_rules.hpp"

#include <doctest/doctest.h>

namespace parallel_rules_test {

using namespace clustersim;
using namespace clustersim::models;

namespace {

TransformerSpec dense() {
  TransformerSpec model;
  model.name = "dense";
  model.hidden_size = 1024;
  model.num_hidden_layers = 4;
  model.num_attention_heads = 16;
  model.num_key_value_heads = 4;
  model.vocab_size = 32000;
  return model;
}

}  // namespace

TEST_CASE("parallel rules: each returns the key it is reported at and one message, or nothing") {
  TransformerSpec moe = dense();
  moe.name = "moe";
  moe.moe.num_experts = 8;
  moe.moe.num_experts_per_tok = 2;
  CHECK_FALSE(expert_parallel_problem(dense(), 1, 8, 1));
  CHECK_FALSE(expert_parallel_problem(moe, 4, 8, 1));
  const auto dense_ep = expert_parallel_problem(dense(), 2, 8, 1);
  REQUIRE(dense_ep);
  CHECK(dense_ep->key == "parallelism.ep");
  CHECK(dense_ep->message ==
        "expert parallelism needs a mixture-of-experts model (ep = 2; model 'dense' sets no num_local_experts / "
        "n_routed_experts)");
  CHECK(expert_parallel_problem(moe, 3, 6, 1)->message == "ep 3 does not divide the 8 experts of model 'moe'");
  CHECK(expert_parallel_problem(moe, 8, 2, 2)->message ==
        "ep 8 does not divide dp x cp = 2 x 2 (the expert-parallel group is carved out of the data-parallel ranks, "
        "as in Megatron-Core)");

  CHECK_FALSE(tensor_parallel_problem(dense(), 8));  // 4 KV heads replicated over tp 8
  CHECK(tensor_parallel_problem(dense(), 3)->message == "num_attention_heads 16 is not divisible by tp 3");
  TransformerSpec odd_kv = dense();
  odd_kv.num_attention_heads = 24;
  odd_kv.num_key_value_heads = 3;
  CHECK(tensor_parallel_problem(odd_kv, 2)->message == "num_key_value_heads 3 and tp 2 must divide one another");
  CHECK(tensor_parallel_problem(odd_kv, 2)->key == "parallelism.tp");

  CHECK_FALSE(context_parallel_problem(1025, 1));
  CHECK_FALSE(context_parallel_problem(1024, 4));
  CHECK(context_parallel_problem(1028, 4)->key == "seq_len");
  CHECK(context_parallel_problem(1028, 4)->message ==
        "seq_len 1028 is not divisible by 2 x cp = 8 (context parallelism splits each sequence into 2 x cp chunks)");

  CHECK_FALSE(batch_split_problem(64, 8, 2));
  CHECK(batch_split_problem(60, 8, 2)->message == "global_batch 60 is not divisible by dp x micro_batch = 8 x 2");

  CHECK_FALSE(virtual_pipeline_problem(1, "1f1b", false));
  CHECK_FALSE(virtual_pipeline_problem(2, "interleaved", true));
  CHECK(virtual_pipeline_problem(2, "gpipe", false)->message == "vp = 2 needs schedule 'interleaved', got 'gpipe'");
  CHECK(virtual_pipeline_problem(1, "interleaved", true)->key == "parallelism.schedule");
  CHECK_THROWS_WITH_AS(config::throw_if(batch_split_problem(60, 8, 2)),
                       "global_batch 60 is not divisible by dp x micro_batch = 8 x 2", ConfigError);
}

}  // namespace parallel_rules_test
