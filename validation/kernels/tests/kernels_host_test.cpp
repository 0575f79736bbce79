// Host-side code of the CUDA kernel suite: calibration CSV writing, timing statistics,
// argument parsing and the transformer GEMM shapes. Runs without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "common/bench_args.hpp"
#include "common/calibration_csv.hpp"
#include "common/decode_attention.hpp"
#include "common/gemm_shapes.hpp"
#include "common/sustained.hpp"
#include "common/timing_stats.hpp"

using namespace clustersim::kernels;

namespace {

CalibrationRow gemm_row() {
  CalibrationRow row;
  row.accelerator = "h200-sxm";
  row.op = "gemm";
  row.dtype = "bf16";
  row.m = 8192;
  row.n = 1280;
  row.k = 8192;
  row.batch = 1;
  row.time_s = 2.5e-4;
  row.spread_s = 1.25e-6;
  row.repeats = 30;
  row.source = "validation/kernels/gemm_bench 2026-12-02; llama-3-70b tp8 s8192 mb1 qkv fwd";
  return row;
}

}  // namespace

TEST_CASE("calibration row: every column in order, empty unused columns") {
  CHECK(format_row(gemm_row()) ==
        "h200-sxm,gemm,bf16,8192,1280,8192,1,,,,,,,,,0.00025,1.25e-06,30,"
        "validation/kernels/gemm_bench 2026-12-02; llama-3-70b tp8 s8192 mb1 qkv fwd");
  CalibrationRow attention;
  attention.accelerator = "h100-sxm";
  attention.op = "attention";
  attention.dtype = "bf16";
  attention.batch = 1;
  attention.heads = 8;
  attention.kv_heads = 1;
  attention.seq_q = 8192;
  attention.seq_kv = 8192;
  attention.head_dim = 128;
  attention.causal = true;
  attention.backward = false;
  attention.time_s = 0.001;
  attention.spread_s = 0.0;
  attention.repeats = 20;
  attention.source = "sdpa, flash";
  CHECK(format_row(attention) ==
        "h100-sxm,attention,bf16,,,,1,8,1,8192,8192,128,1,0,,0.001,0,20,\"sdpa, flash\"");
  CalibrationRow bandwidth;
  bandwidth.accelerator = "h200-sxm";
  bandwidth.op = "hbm_copy";
  bandwidth.dtype = "fp32";
  bandwidth.bytes = 2147483648.0;
  bandwidth.time_s = 5e-4;
  bandwidth.spread_s = 2e-6;
  bandwidth.repeats = 30;
  bandwidth.source = "say \"hi\"";
  CHECK(format_row(bandwidth) ==
        "h200-sxm,hbm_copy,fp32,,,,,,,,,,,,2147483648,0.0005,2e-06,30,\"say \"\"hi\"\"\"");
}

TEST_CASE("calibration csv: metadata lines, header, rows") {
  std::ostringstream out;
  write_calibration_csv(out, {{"gpu", "NVIDIA H200"}, {"clocks", "sm 1980 MHz, mem 3201 MHz"}},
                        {gemm_row()});
  const std::string text = out.str();
  CHECK(text.rfind("# gpu: NVIDIA H200\n# clocks: sm 1980 MHz, mem 3201 MHz\n"
                   "accelerator,op,dtype,m,n,k,batch,heads,kv_heads,seq_q,seq_kv,head_dim,causal,"
                   "backward,bytes,time_s,spread_s,repeats,source\nh200-sxm,gemm,bf16,8192,",
                   0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 4);
}

TEST_CASE("calibration csv: invalid rows and metadata are rejected with the field named") {
  CalibrationRow row = gemm_row();
  row.op = "matmul";
  CHECK_THROWS_WITH_AS(format_row(row), "calibration row: unknown op 'matmul'", std::invalid_argument);
  row = gemm_row();
  row.dtype = "int8";
  CHECK_THROWS_WITH_AS(format_row(row), "calibration row: unknown dtype 'int8'", std::invalid_argument);
  row = gemm_row();
  row.k = 0;
  CHECK_THROWS_WITH_AS(format_row(row), "calibration row: k must be positive, got 0", std::invalid_argument);
  row = gemm_row();
  row.time_s = 0.0;
  CHECK_THROWS_WITH_AS(format_row(row), "calibration row: time_s must be finite and positive, got 0",
                       std::invalid_argument);
  row = gemm_row();
  row.spread_s = -1e-6;
  CHECK_THROWS_WITH_AS(format_row(row), "calibration row: spread_s must be finite and >= 0, got -1e-06",
                       std::invalid_argument);
  row = gemm_row();
  row.repeats = 0;
  CHECK_THROWS_WITH_AS(format_row(row), "calibration row: repeats must be >= 1, got 0", std::invalid_argument);
  row = gemm_row();
  row.accelerator = "";
  CHECK_THROWS_WITH_AS(format_row(row), "calibration row: accelerator is empty", std::invalid_argument);
  std::ostringstream out;
  CHECK_THROWS_WITH_AS(write_preamble(out, {{"gpu: x", "y"}}), "calibration metadata: invalid key 'gpu: x'",
                       std::invalid_argument);
  // A bad row leaves the stream untouched.
  row = gemm_row();
  row.op = "bogus";
  CHECK_THROWS_AS(write_calibration_csv(out, {{"gpu", "x"}}, {gemm_row(), row}), std::invalid_argument);
  CHECK(out.str().empty());
}

TEST_CASE("timing statistics: median and half the inter-quartile range") {
  // Sorted: 1 2 3 4 10. Q1 = 2, median = 3, Q3 = 4 (type 7) -> spread 1.
  const TimingSummary odd = summarize({10.0, 2.0, 4.0, 1.0, 3.0});
  CHECK(odd.median_s == doctest::Approx(3.0));
  CHECK(odd.spread_s == doctest::Approx(1.0));
  CHECK(odd.repeats == 5);
  // Sorted: 1 2 3 4: median 2.5, Q1 = 1.75, Q3 = 3.25 -> spread 0.75.
  const TimingSummary even = summarize({4.0, 3.0, 2.0, 1.0});
  CHECK(even.median_s == doctest::Approx(2.5));
  CHECK(even.spread_s == doctest::Approx(0.75));
  CHECK(quantile({5.0}, 0.9) == doctest::Approx(5.0));
  CHECK_THROWS_WITH_AS(summarize({}), "summarize: no timed repeats", std::invalid_argument);
  CHECK_THROWS_WITH_AS(summarize({1.0, -2.0}), "summarize: invalid sample -2.000000 s (must be finite and >= 0)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(quantile({1.0}, 1.5), "quantile: q must be in [0, 1], got 1.500000",
                       std::invalid_argument);
}

TEST_CASE("benchmark arguments") {
  const BenchArgs args = parse_bench_args({"--out", "r/gemm.csv", "--accelerator", "h200-sxm", "--repeats",
                                           "40", "--warmup", "0", "--quick", "--meta", "gpu=NVIDIA H200",
                                           "--meta", "clocks=sm 1980 MHz, mem 3201 MHz"});
  CHECK(args.out_path == "r/gemm.csv");
  CHECK(args.accelerator == "h200-sxm");
  CHECK(args.repeats == 40);
  CHECK(args.warmup == 0);
  CHECK(args.quick);
  REQUIRE(args.metadata.size() == 2);
  CHECK(args.metadata[1].first == "clocks");
  CHECK(args.metadata[1].second == "sm 1980 MHz, mem 3201 MHz");
  const BenchArgs defaults = parse_bench_args({"--out", "x.csv", "--accelerator", "a100-sxm-80gb"});
  CHECK(defaults.repeats == 30);
  CHECK(defaults.warmup == 5);
  CHECK_FALSE(defaults.quick);
  CHECK(defaults.seconds == 0);
  CHECK(parse_bench_args({"--out", "x.csv", "--accelerator", "h200-sxm", "--seconds", "90"}).seconds == 90);
  CHECK_THROWS_WITH_AS(parse_bench_args({"--seconds", "0"}), "--seconds: must be >= 1, got 0", std::invalid_argument);

  CHECK_THROWS_WITH_AS(parse_bench_args({"--accelerator", "h200-sxm"}), "--out is required",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_bench_args({"--out", "x.csv"}), "--accelerator is required", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_bench_args({"--out"}), "--out: missing value", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_bench_args({"--bogus"}), "unknown option '--bogus'", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_bench_args({"--repeats", "2"}), "--repeats: must be >= 3, got 2",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_bench_args({"--warmup", "5x"}), "--warmup: expected an integer, got '5x'",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_bench_args({"--meta", "=x"}), "--meta: expected KEY=VALUE, got '=x'",
                       std::invalid_argument);
  CHECK(defaults.shapes == "default");
  CHECK(parse_bench_args({"--out", "x.csv", "--accelerator", "h200-sxm", "--shapes", "decode"}).shapes == "decode");
  CHECK_THROWS_WITH_AS(parse_bench_args({"--shapes", "prefill"}), "--shapes: expected default or decode, got 'prefill'",
                       std::invalid_argument);
  CHECK(bench_usage("gemm_bench").find("[--shapes default|decode]") != std::string::npos);
}

TEST_CASE("transformer GEMM shapes: Llama-3-70B at tp 8, sequence 8192") {
  const std::vector<GemmShape> shapes = transformer_layer_gemms(llama3_70b_tp8());
  REQUIRE(shapes.size() == 12);
  // QKV: (64 + 2*8) heads * 128 / 8 = 1280 outputs per rank from 8192 inputs.
  CHECK(shapes[0].label == "llama-3-70b tp8 s8192 mb1 qkv fwd");
  CHECK((shapes[0].m == 8192 && shapes[0].n == 1280 && shapes[0].k == 8192));
  CHECK((shapes[1].m == 8192 && shapes[1].n == 8192 && shapes[1].k == 1280));  // dgrad
  CHECK((shapes[2].m == 8192 && shapes[2].n == 1280 && shapes[2].k == 8192));  // wgrad: k = tokens
  // Attention output: 64*128/8 = 1024 inputs.
  CHECK((shapes[3].m == 8192 && shapes[3].n == 8192 && shapes[3].k == 1024));
  // Gated MLP up: 2 * 28672 / 8 = 7168; down: 28672 / 8 = 3584 inputs.
  CHECK((shapes[6].n == 7168 && shapes[6].k == 8192));
  CHECK((shapes[9].n == 8192 && shapes[9].k == 3584));
  CHECK((shapes[11].m == 3584 && shapes[11].n == 8192 && shapes[11].k == 8192));
}

TEST_CASE("transformer GEMM shapes: the Megatron-Core 1.7B (tp 1) and 7.1B (tp 2) shards") {
  const std::vector<GemmShape> small = transformer_layer_gemms(mcore_gpt_1_7b_tp1());
  CHECK(small[0].label == "mcore-gpt-1.7b tp1 s4096 mb1 qkv fwd");
  CHECK((small[0].m == 4096 && small[0].n == 6144 && small[0].k == 2048));  // 3 x 2048 outputs
  CHECK((small[9].m == 4096 && small[9].n == 2048 && small[9].k == 8192));  // mlp down fwd
  const std::vector<GemmShape> mid = transformer_layer_gemms(mcore_gpt_7_1b_tp2());
  CHECK((mid[0].n == 6144 && mid[0].k == 4096));  // 3 x 4096 / 2
  CHECK((mid[6].n == 8192 && mid[6].k == 4096));  // 16384 / 2
}

TEST_CASE("transformer GEMM shapes: GPT-3 175B at tp 8, attention batched GEMMs, sweep") {
  const std::vector<GemmShape> shapes = transformer_layer_gemms(gpt3_175b_tp8());
  CHECK((shapes[0].m == 2048 && shapes[0].n == 4608 && shapes[0].k == 12288));  // 3*12288/8
  CHECK((shapes[6].n == 6144 && shapes[6].k == 12288));                          // 4*12288/8, not gated
  CHECK((shapes[8].m == 12288 && shapes[8].n == 6144 && shapes[8].k == 2048));   // up wgrad
  const std::vector<GemmShape> attention = attention_batched_gemms(gpt3_175b_tp8());
  REQUIRE(attention.size() == 2);
  CHECK((attention[0].batch == 12 && attention[0].m == 2048 && attention[0].n == 2048 && attention[0].k == 128));
  CHECK((attention[1].m == 2048 && attention[1].n == 128 && attention[1].k == 2048));
  CHECK(default_gemm_sweep(false).size() == 5 + 4 * 12 + 2);
  CHECK(default_gemm_sweep(true).size() == 2 + 4);
  CHECK(square_gemms({1024})[0].k == 1024);
}

TEST_CASE("transformer GEMM shapes: invalid shards are rejected") {
  TransformerShard shard = llama3_70b_tp8();
  shard.tp = 16;  // 8 kv heads cannot be split 16 ways
  CHECK_THROWS_WITH_AS(transformer_layer_gemms(shard),
                       "transformer shard llama-3-70b: num_kv_heads must be a multiple of tp (8 not divisible by 16)",
                       std::invalid_argument);
  shard = gpt3_175b_tp8();
  shard.seq_len = 0;
  CHECK_THROWS_WITH_AS(transformer_layer_gemms(shard), "transformer shard gpt3-175b: seq_len must be positive, got 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(square_gemms({-4}), "square GEMM size must be positive, got -4", std::invalid_argument);
}

TEST_CASE("sustained run: the first window against the settled tail") {
  // 10 windows of 1 s: 700 GEMMs each at first, 620 from t = 6 s on (a clock that dropped).
  std::vector<SustainWindow> windows;
  for (int i = 0; i < 10; ++i) windows.push_back({static_cast<double>(i), 1.0, i < 6 ? 700 : 620});
  const SustainedSummary tail4 = summarize_sustained(windows, 4.0);  // 10 s >= 2 x 4 s: last 4 s
  CHECK(tail4.first_op_s == doctest::Approx(1.0 / 700));
  CHECK(tail4.settled_op_s == doctest::Approx(1.0 / 620));
  CHECK(tail4.settled_windows == 4);
  CHECK(tail4.settled_executions == 4 * 620);
  CHECK(tail4.settled_from_s == doctest::Approx(6.0));
  // Shorter than 2 x tail: the second half (windows starting at >= 5 s).
  const SustainedSummary half = summarize_sustained(windows, 30.0);
  CHECK(half.settled_windows == 5);
  CHECK(half.settled_from_s == doctest::Approx(5.0));
  CHECK(half.settled_op_s == doctest::Approx(1.0 / 620));  // median of 700, 620 x 4
  // One window: it is both the first and the settled one.
  const SustainedSummary one = summarize_sustained({{0.0, 2.0, 100}}, 30.0);
  CHECK(one.settled_windows == 1);
  CHECK(one.settled_op_s == doctest::Approx(0.02));

  CHECK_THROWS_WITH_AS(summarize_sustained({}, 30.0), "summarize_sustained: no windows", std::invalid_argument);
  CHECK_THROWS_WITH_AS(summarize_sustained({{0.0, 1.0, 0}}, 30.0),
                       "summarize_sustained: window 0 needs executions >= 1 and a finite duration > 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(summarize_sustained({{1.0, 1.0, 5}, {0.5, 1.0, 5}}, 30.0),
                       "summarize_sustained: window 1 starts before window 0", std::invalid_argument);
  CHECK_THROWS_AS(summarize_sustained(windows, 0.0), std::invalid_argument);
}

TEST_CASE("decode GEMM shapes: Llama-3-8B and -70B linears per rank against 1..256 tokens") {
  // Llama-3-8B tp 1, one token: QKV (32 + 2*8) * 128 = 6144 outputs from 4096 inputs.
  const std::vector<GemmShape> one = decode_layer_gemms(llama3_8b_decode(1, 1));
  REQUIRE(one.size() == 4);
  CHECK(one[0].label == "llama-3-8b tp1 decode m1 qkv");
  CHECK((one[0].m == 1 && one[0].n == 6144 && one[0].k == 4096 && one[0].batch == 1));
  CHECK((one[1].m == 1 && one[1].n == 4096 && one[1].k == 4096));   // attention output
  CHECK((one[2].m == 1 && one[2].n == 28672 && one[2].k == 4096));  // gate + up: 2 x 14336
  CHECK((one[3].m == 1 && one[3].n == 4096 && one[3].k == 14336));  // down
  // Llama-3-70B tp 8, 64 tokens: QKV 1280 outputs, attention output 1024 inputs, MLP 7168 / 3584.
  const std::vector<GemmShape> big = decode_layer_gemms(llama3_70b_decode(8, 64));
  CHECK(big[0].label == "llama-3-70b tp8 decode m64 qkv");
  CHECK((big[0].m == 64 && big[0].n == 1280 && big[0].k == 8192));
  CHECK((big[1].n == 8192 && big[1].k == 1024));
  CHECK((big[2].n == 7168 && big[2].k == 8192));
  CHECK((big[3].n == 8192 && big[3].k == 3584));
  // Llama-3-8B tp 8: 4 q heads + 2 x 1 kv head = 768 QKV outputs; 14336 / 8 = 1792.
  const std::vector<GemmShape> split = decode_layer_gemms(llama3_8b_decode(8, 256));
  CHECK((split[0].m == 256 && split[0].n == 768 && split[0].k == 4096));
  CHECK((split[3].n == 4096 && split[3].k == 1792));

  CHECK(decode_token_counts(false) == std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256});
  CHECK(decode_token_counts(true) == std::vector<std::int64_t>{1, 16, 256});
  CHECK(decode_tp_degrees(false) == std::vector<std::int64_t>{1, 2, 4, 8});
  const std::vector<GemmShape> sweep = decode_gemm_sweep(false);
  REQUIRE(sweep.size() == 2 * 4 * 9 * 4);
  CHECK(sweep.front().label == "llama-3-8b tp1 decode m1 qkv");
  CHECK(sweep.back().label == "llama-3-70b tp8 decode m256 mlp_down");
  for (const GemmShape& shape : sweep) {
    CHECK((shape.m >= 1 && shape.m <= 256 && shape.batch == 1));
    CHECK(shape.n % 16 == 0);  // cuBLASLt fp8 needs 16-byte aligned leading dimensions (n is C's)
    CHECK(shape.k % 16 == 0);
  }
  CHECK(decode_gemm_sweep(true).size() == 2 * 2 * 3 * 4);
  // The training sweep is unchanged by the decode one.
  CHECK(default_gemm_sweep(false).size() == 5 + 4 * 12 + 2);
  CHECK_THROWS_WITH_AS(decode_layer_gemms(llama3_70b_decode(16, 1)),
                       "transformer shard llama-3-70b: num_kv_heads must be a multiple of tp (8 not divisible by 16)",
                       std::invalid_argument);
  CHECK_THROWS_AS(decode_layer_gemms(llama3_8b_decode(1, 0)), std::invalid_argument);
}

TEST_CASE("decode attention shapes: per-rank GQA heads, batch x KV length under the cache cap") {
  const std::vector<DecodeAttentionShape> sweep = decode_attention_sweep(false);
  CHECK(sweep.size() == 580);
  CHECK(sweep.front().label == "llama-3-8b tp1");
  CHECK((sweep.front().batch == 1 && sweep.front().heads == 32 && sweep.front().kv_heads == 8 &&
         sweep.front().seq_kv == 128 && sweep.front().head_dim == 128));
  std::vector<std::pair<std::int64_t, std::int64_t>> heads;
  std::int64_t longest = 0, widest = 0;
  for (const DecodeAttentionShape& shape : sweep) {
    CHECK(decode_kv_bytes(shape) <= kMaxDecodeKvBytes);
    CHECK(shape.heads % shape.kv_heads == 0);
    const std::int64_t group = shape.heads / shape.kv_heads;
    CHECK((group == 4 || group == 8));  // the fallback kernel's instantiations cover 1, 2, 4, 8
    if (std::find(heads.begin(), heads.end(), std::make_pair(shape.heads, shape.kv_heads)) == heads.end()) {
      heads.emplace_back(shape.heads, shape.kv_heads);
    }
    longest = std::max(longest, shape.seq_kv);
    widest = std::max(widest, shape.batch);
  }
  // Llama-3-8B 32/8, 16/4, 8/2, 4/1 and Llama-3-70B 64/8, 32/4, 16/2, 8/1 at tp 1, 2, 4, 8.
  CHECK(heads == std::vector<std::pair<std::int64_t, std::int64_t>>{
                     {32, 8}, {16, 4}, {8, 2}, {4, 1}, {64, 8}, {32, 4}, {16, 2}, {8, 1}});
  CHECK(longest == 32768);
  CHECK(widest == 256);
  // The cap: 8 kv heads reach 256 sequences only up to 1024 tokens; 1 kv head up to 8192.
  DecodeAttentionShape cap{"x", 256, 32, 8, 1024, 128};
  CHECK(decode_kv_bytes(cap) == kMaxDecodeKvBytes);
  cap.seq_kv = 2048;
  CHECK(decode_kv_bytes(cap) > kMaxDecodeKvBytes);
  CHECK(decode_attention_sweep(true).size() == 14);
}

TEST_CASE("decode attention: the fallback kernel's split-KV plan") {
  // One sequence, one kv head, 32k keys on 132 SMs: 264 blocks wanted, 128-key slices -> 256.
  const DecodeSplitPlan long_one = plan_decode_splits(1, 1, 32768, 132);
  CHECK(long_one.keys_per_split == 128);
  CHECK(long_one.splits == 256);
  // Enough (sequence, kv head) pairs for two waves: no split.
  const DecodeSplitPlan wide = plan_decode_splits(256, 8, 1024, 132);
  CHECK(wide.splits == 1);
  CHECK(wide.keys_per_split == 1024);
  // 1000 keys, 6 pairs: 44 splits wanted, at most ceil(1000 / 128) = 8; 125 -> 128 keys, 8 splits
  // with the last holding 104 keys.
  const DecodeSplitPlan tail = plan_decode_splits(3, 2, 1000, 132);
  CHECK(tail.keys_per_split == 128);
  CHECK(tail.splits == 8);
  CHECK((tail.splits - 1) * tail.keys_per_split < 1000);
  // Short caches stay one split; every split is non-empty.
  CHECK(plan_decode_splits(1, 1, 77, 132).splits == 1);
  for (std::int64_t seq : {128, 1000, 4096, 32768}) {
    for (std::int64_t pairs : {1, 3, 64, 2048}) {
      const DecodeSplitPlan plan = plan_decode_splits(pairs, 1, seq, 132);
      CHECK(plan.splits * plan.keys_per_split >= seq);
      CHECK((plan.splits - 1) * plan.keys_per_split < seq);
      CHECK(plan.keys_per_split % 64 == 0);
    }
  }
  CHECK_THROWS_WITH_AS(plan_decode_splits(1, 1, 0, 132),
                       "plan_decode_splits: batch, kv_heads, seq_kv, sm_count and min_keys must be positive",
                       std::invalid_argument);
}
