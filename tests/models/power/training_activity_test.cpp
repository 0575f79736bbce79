#include "models/power/training_activity.hpp"

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"

using namespace clustersim;
using namespace clustersim::models;

namespace {

/// h 1024, 4 layers of 12,584,960 parameters, vocabulary 1000; tp 2, pp 2, dp 2, 4
/// micro-batches of one 512-token sequence.
FootprintInputs small_job() {
  FootprintInputs in;
  in.model.name = "small";
  in.model.hidden_size = 1024;
  in.model.num_hidden_layers = 4;
  in.model.num_attention_heads = 8;
  in.model.num_key_value_heads = 8;
  in.model.intermediate_size = 4096;
  in.model.vocab_size = 1000;
  in.seq_len = 512;
  in.microbatches = 4;
  in.tp = 2;
  in.pp = 2;
  in.dp = 2;
  return in;
}

}  // namespace

TEST_CASE("link traffic per device: TP collectives, DP all-reduce, PP sends") {
  const FootprintInputs in = small_job();
  const double tp = 8 * 0.5 * 1048576.0 * 2 * 4;                 // 8 collectives x (t-1)/t x 2sbh x layers x mbs
  const double dp = 2 * 0.5 * ((13096960.0 + 13097984.0) / 2) * 2;  // ring, mean stage parameters, bf16
  const double pp = 2 * 4 * 1048576.0 / 2;                          // fwd + bwd per micro-batch, 2sbh / t
  auto bytes = estimated_step_link_bytes(in, 8, 2);
  CHECK(bytes[LinkKind::scale_up] == doctest::Approx(tp + dp + pp));
  CHECK(bytes[LinkKind::scale_out] == 0);
  // Four accelerators per node: the pipeline crosses nodes.
  bytes = estimated_step_link_bytes(in, 4, 2);
  CHECK(bytes[LinkKind::scale_up] == doctest::Approx(tp + dp));
  CHECK(bytes[LinkKind::scale_out] == doctest::Approx(pp));
  CHECK_THROWS_WITH(estimated_step_link_bytes(in, 0, 2), doctest::Contains("accelerators per node must be >= 1"));
}

TEST_CASE("training activity carries the FLOPs, mean HBM traffic and link bytes") {
  const FootprintInputs in = small_job();
  const DeviceActivity a = estimate_training_activity(in, 8, 2, 1e15, Dtype::bf16, 2.0, 1.5);
  CHECK(a.flops.at(Dtype::bf16) == 1e15);
  CHECK(a.compute_busy_s == 1.5);
  CHECK(a.bytes.at(MemoryLevelKind::hbm) ==
        doctest::Approx((estimated_step_hbm_bytes(in, 0) + estimated_step_hbm_bytes(in, 1)) / 2));
  CHECK_THROWS_WITH(estimate_training_activity(in, 8, 2, 1, Dtype::bf16, 0, 1), doctest::Contains("times must be positive"));
}
