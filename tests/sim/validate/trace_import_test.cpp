// PyTorch profiler traces into calibration rows (sim/validate/trace_import): the sample trace
// tests/data/importers/kineto-gpt-layer-h100.json (values illustrative, not measurements) holds
// three forward passes of one layer, three attention backwards and the kernels the importer must
// leave out; every expected figure below is derived from its kernel durations by hand. The vLLM
// sample tests/data/importers/kineto-vllm-moe-h100.json (illustrative too) holds six fused-MoE
// calls of DeepSeek-V3 on one TP8 rank.
#include "sim/validate/trace_import.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <string>

#include "../sweep/temp_folders.hpp"
#include "models/accelerator/calibration_table.hpp"
#include "models/accelerator/compute_model.hpp"
#include "models/llm/transformer_ops.hpp"
#include "tests/models/llm/llm_test_models.hpp"
#include "tests/relative_approx.hpp"
#include "sim/engine/error.hpp"
#include "sim/runner/scenario_runner.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/validate/dataset_validation.hpp"
#include "sim/training/training_result.hpp"
#include "sim/validate/importers.hpp"

namespace trace_import_test {

using namespace clustersim;
using namespace clustersim::validate;
using clustersim::tolerance::relative_approx;

namespace {

const clustersim::testing::TempFolders folders("clustersim-trace-import");

std::filesystem::path sample(const std::string& name) {
  return std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "tests/data/importers" / name;
}

/// A file of `text` in this process's temporary folder.
std::filesystem::path written(const std::string& name, const std::string& text) {
  static const std::filesystem::path dir = [] {
    const auto made = folders.fresh("files");
    std::filesystem::create_directories(made);
    return made;
  }();
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const models::CalibrationRow& row_of(const TraceCalibration& traces, models::OpClass op, bool backward = false) {
  for (const auto& row : traces.table.rows) {
    if (row.shape.op == op && row.shape.backward == backward) return row;
  }
  FAIL("no row of op " << models::op_class_name(op));
  return traces.table.rows.front();
}

/// The calibration row of `shape`'s GEMM dimensions (m, n, k, batch).
const models::CalibrationRow& gemm_row(const TraceCalibration& traces, std::int64_t m, std::int64_t n, std::int64_t k,
                                       std::int64_t batch) {
  for (const auto& row : traces.table.rows) {
    if (row.shape.m == m && row.shape.n == n && row.shape.k == k && row.shape.batch == batch) return row;
  }
  FAIL("no GEMM row " << m << " x " << n << " x " << k << " x " << batch);
  return traces.table.rows.front();
}

/// A vLLM fused_experts operator as PyTorch records it: hidden [t, h], w1 [e, 2i, h], w2 [e, h, i]
/// of `type`, topk_weights and topk_ids [t, k], global_num_experts `global` (Concrete Inputs 13) and,
/// under expert parallelism (global > e), the expert map [global] at 14.
std::string fused_experts_op(int id, double ts, std::int64_t t, std::int64_t h, std::int64_t e, std::int64_t i,
                             std::int64_t k, const std::string& type, std::int64_t global) {
  return fmt::format(R"(
  {{"ph": "X", "cat": "cpu_op", "name": "vllm::inplace_fused_experts", "pid": 1, "tid": 1, "ts": {}, "dur": 100.0,
   "args": {{"External id": {}, "Input Dims": [[{}, {}], [{}, {}, {}], [{}, {}, {}], [{}, {}], [{}, {}], [], [], [], [], [], [], [], [], [], [{}]],
   "Input type": ["c10::BFloat16", "{}", "{}", "float", "int", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "{}"],
   "Concrete Inputs": ["", "", "", "", "", "", "False", "False", "False", "False", "False", "False", "False", "{}", ""]}}}},)",
                     ts, id, t, h, e, 2 * i, h, e, h, i, t, k, t, k, global > e ? std::to_string(global) : "", type, type,
                     global > e ? "int" : "", global);
}

std::string cpu_op(int id, const std::string& name, double ts, double dur) {
  return fmt::format(R"(
  {{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": 1, "tid": 1, "ts": {}, "dur": {}, "args": {{"External id": {}}}}},)",
                     name, ts, dur, id);
}

std::string kernel(int id, double ts, double dur, const std::string& name = "fused_moe_kernel") {
  return fmt::format(R"(
  {{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": 7, "ts": {}, "dur": {}, "args": {{"External id": {}, "device": 0}}}},)",
                     name, ts, dur, id);
}

/// A trace of `events` (each ending in a comma) on one H100 SXM.
std::string h100_trace(std::string events) {
  events.pop_back();  // the last comma
  return R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": [)" + events + "]}";
}

/// The library's H100 SXM, read as a scenario reads it.
models::AcceleratorSpec h100_sxm() {
  const std::string yaml = "schema_version: 1\ninclude: [systems/dgx-h100.yaml]\nname: h100\ncluster: {nodes: 1}\n";
  return scenario::load_platform(scenario::ScenarioSource::text(yaml, "h100.yaml")).platform.cluster.accelerator;
}

/// The sample's table written where a scenario can name it.
std::filesystem::path sample_table() {
  return written("kineto-h100.csv", models::write_calibration_csv(
                                         calibration_from_traces({sample("kineto-gpt-layer-h100.json")}, "").table));
}

}  // namespace

TEST_CASE("a PyTorch profiler trace: one calibration row per operator shape, the median of its calls") {
  const TraceCalibration traces = calibration_from_traces({sample("kineto-gpt-layer-h100.json")}, "");
  REQUIRE(traces.table.rows.size() == 7);
  for (const auto& row : traces.table.rows) {
    CHECK(row.accelerator == "h100-sxm");  // "NVIDIA H100 80GB HBM3" in deviceProperties
    CHECK(row.source.rfind("measured (trace ", 0) == 0);
  }
  // aten::addmm's one GEMM kernel: 1180.224, 1176.832, 1183.488 us. Median 1180.224; quartiles
  // 1178.528 and 1181.856 (linear interpolation); spread half their distance, 1.664 us.
  const auto& qkv = traces.table.rows[2];
  CHECK(qkv.shape.op == models::OpClass::gemm);
  CHECK(qkv.shape.dtype == models::Dtype::bf16);
  CHECK(qkv.shape.m == 8192);   // the input [4, 2048, 4096] as aten::addmm sees it
  CHECK(qkv.shape.n == 12288);
  CHECK(qkv.shape.k == 4096);
  CHECK(qkv.time_s == relative_approx(1180.224e-6, 1e-12));
  CHECK(qkv.spread_s == relative_approx(1.664e-6, 1e-9));
  CHECK(qkv.repeats == 3);
  CHECK(qkv.source.find("aten::addmm") != std::string::npos);
  // The output projection's aten::mm, under aten::linear -> aten::matmul.
  CHECK(traces.table.rows[4].shape.n == 4096);
  CHECK(traces.table.rows[4].time_s == relative_approx(402.112e-6, 1e-12));
  // Attention: the kernel is aten::_flash_attention_forward's ([b, s, h, d]); the enclosing
  // aten::_scaled_dot_product_flash_attention gives [b, h, s, d] and is_causal (Concrete Inputs).
  const auto& forward = row_of(traces, models::OpClass::attention);
  CHECK(forward.shape.batch == 4);
  CHECK(forward.shape.heads == 32);
  CHECK(forward.shape.kv_heads == 32);
  CHECK(forward.shape.seq_q == 2048);
  CHECK(forward.shape.seq_kv == 2048);
  CHECK(forward.shape.head_dim == 128);
  CHECK(forward.shape.causal);
  CHECK(forward.time_s == relative_approx(409.632e-6, 1e-12));
  // The backward, on the autograd thread: three kernels a call (60.128 + 1148.512 + 44.864 =
  // 1253.504 us; 1250.208; 1258.112): median 1253.504 us.
  const auto& backward = row_of(traces, models::OpClass::attention, true);
  CHECK(backward.shape.causal);
  CHECK(backward.time_s == relative_approx(1253.504e-6, 1e-12));
  // Bandwidth ops, bytes as the compute model counts them. Layer norm of 4 x 2048 x 4096 bf16:
  // in and out 2 x 33,554,432 x 2 B, weight and bias 2 x 4096 x 2, mean and rstd 8 x 8192.
  CHECK(row_of(traces, models::OpClass::layernorm).shape.bytes == 134'299'648.0);
  CHECK(row_of(traces, models::OpClass::layernorm).time_s == relative_approx(58.944e-6, 1e-12));
  // Residual add: two inputs and the output, 3 x 67,108,864 B.
  CHECK(row_of(traces, models::OpClass::elementwise).shape.bytes == 201'326'592.0);
  // Embedding of 8192 tokens x 4096: rows read and written (2 x 67,108,864 B), 8-byte ids.
  CHECK(row_of(traces, models::OpClass::embedding).shape.bytes == 134'283'264.0);
  CHECK(row_of(traces, models::OpClass::embedding).repeats == 1);
  // What was left out, each with its reason.
  REQUIRE(traces.notes.size() == 1);
  const std::string& note = traces.notes.front();
  CHECK(note.find("29 kernels, 19 operator instances read") != std::string::npos);
  CHECK(note.find("1 collective kernels") != std::string::npos);
  CHECK(note.find("1 kernels with no operator") != std::string::npos);
  CHECK(note.find("aten::cat 1") != std::string::npos);
  CHECK(note.find("fp32 GEMM: whether it ran on TF32") != std::string::npos);
}

TEST_CASE("the same trace twice: each shape's median over both files, its calls counted twice") {
  const auto trace = sample("kineto-gpt-layer-h100.json");
  std::ifstream in(trace, std::ios::binary);
  const auto copy = written("kineto-copy.json", std::string(std::istreambuf_iterator<char>(in), {}));
  const TraceCalibration both = calibration_from_traces({trace, copy}, "");
  REQUIRE(both.table.rows.size() == 7);
  CHECK(both.table.rows[2].repeats == 6);
  CHECK(both.table.rows[2].time_s == relative_approx(1180.224e-6, 1e-12));
  CHECK(both.table.rows[2].source.find("kineto-copy.json") != std::string::npos);
  // `import kineto` writes the same rows in the calibration table's columns.
  ImportedRows imported;
  import_files(ImportKind::kineto, {trace}, {}, imported);
  CHECK(imported.columns == calibration_columns());
  REQUIRE(imported.rows.size() == 7);
  const auto reread = models::parse_calibration_csv(rows_csv(imported), "imported.csv");
  CHECK(reread.rows[2].time_s == relative_approx(1180.224e-6, 1e-12));
  CHECK(detect_import_kind(trace) == ImportKind::kineto);
  CHECK_THROWS_WITH_AS(read_dataset_rows(trace), doctest::Contains("calibrate --from-trace"), ConfigError);
}

TEST_CASE("traces the importer cannot read: errors name the file and what to do") {
  const std::string device = R"("deviceProperties": [{"id": 0, "name": "NVIDIA H100 PCIe"}])";
  const std::string events = R"("traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.0, "dur": 5.0,
   "args": {"External id": 7, "Input Dims": [[64, 128], [128, 256]], "Input type": ["c10::Half", "c10::Half"]}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20.0, "dur": 3.5, "args": {"External id": 7, "device": 0}}])";
  const auto pcie = written("pcie.json", "{" + device + ",\n" + events + "}");
  CHECK_THROWS_WITH_AS(calibration_from_traces({pcie}, ""),
                       doctest::Contains("device 0 'NVIDIA H100 PCIe' matches no library accelerator by name: give "
                                         "one with --accelerator"),
                       ConfigError);
  const TraceCalibration named = calibration_from_traces({pcie}, "h100-pcie");
  REQUIRE(named.table.rows.size() == 1);
  CHECK(named.table.rows[0].accelerator == "h100-pcie");
  CHECK(named.table.rows[0].shape.dtype == models::Dtype::fp16);
  CHECK(named.table.rows[0].time_s == relative_approx(3.5e-6, 1e-12));

  CHECK_THROWS_WITH_AS(calibration_from_traces({written("gz.json", std::string("\x1f\x8b\x08\x00", 4))}, ""),
                       doctest::Contains("a gzip-compressed trace: gunzip it first"), ConfigError);
  CHECK_THROWS_WITH_AS(calibration_from_traces({written("events.json", R"({"events": []})")}, ""),
                       doctest::Contains("no 'traceEvents' array"), ConfigError);
  CHECK_THROWS_WITH_AS(calibration_from_traces({written("cpu.json", R"({"traceEvents": []})")}, ""),
                       doctest::Contains("no GPU kernel events"), ConfigError);
  CHECK_THROWS_WITH_AS(calibration_from_traces({written("syntax.json", "{\"traceEvents\": [\n  {\"ph\" \"X\"}]}")}, ""),
                       doctest::Contains("syntax.json:2:"), ConfigError);
  // Shapes not recorded (record_shapes=False): nothing to read, and it says why.
  const auto bare = written("bare.json", R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.0, "dur": 5.0, "args": {"External id": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20.0, "dur": 3.5, "args": {"External id": 7}}]})");
  CHECK_THROWS_WITH_AS(calibration_from_traces({bare}, "h100-sxm"), doctest::Contains("record_shapes=True"), ConfigError);
}

TEST_CASE("vLLM's fused MoE: each call's up and down GEMMs, sized as the simulator sizes its expert GEMMs") {
  const TraceCalibration traces = calibration_from_traces({sample("kineto-vllm-moe-h100.json")}, "");
  // DeepSeek-V3 on one TP8 rank: hidden 7168, w1 [256, 512, 7168] and w2 [256, 7168, 256]
  // (2,048-wide experts cut to 256 columns), top-8, Float8_e4m3fn weights: two calls shapes.
  REQUIRE(traces.table.rows.size() == 4);
  // Prefill, T = 2048: 16,384 copies over 256 experts; (255/256)^16384 = e^-64 leaves none idle:
  // batch 256, m = 16384 / 256 = 64. Up: n = 512, k = 7168; down: n = 7168, k = 256.
  const auto& up = gemm_row(traces, 64, 512, 7168, 256);
  const auto& down = gemm_row(traces, 64, 7168, 256, 256);
  for (const auto* row : {&up, &down}) {
    CHECK(row->accelerator == "h100-sxm");
    CHECK(row->shape.op == models::OpClass::batched_gemm);
    CHECK(row->shape.dtype == models::Dtype::fp8);  // w1's type, not the bf16 activations'
    CHECK(row->repeats == 3);
    CHECK(row->source.find("vllm::inplace_fused_experts/vllm::outplace_fused_experts") != std::string::npos);
  }
  // Each call's first fused_moe_kernel is w1's, its second w2's: up 301.6, 298.4, 305.6 us,
  // median 301.6, quartiles 300.0 and 303.6, spread 1.8; down 158.4, 160.8, 156.0, median
  // 158.4, quartiles 157.2 and 159.6, spread 1.2.
  CHECK(up.time_s == relative_approx(301.6e-6, 1e-12));
  CHECK(up.spread_s == relative_approx(1.8e-6, 1e-9));
  CHECK(down.time_s == relative_approx(158.4e-6, 1e-12));
  CHECK(down.spread_s == relative_approx(1.2e-6, 1e-9));
  CHECK(up.source.find("up projection (w1): each call's 1st, 3rd, ... fused_moe_kernel") != std::string::npos);
  CHECK(down.source.find("down projection (w2): each call's 2nd, 4th, ... fused_moe_kernel") != std::string::npos);
  CHECK(up.source.find("quantization kernels not included") != std::string::npos);
  // Decode, T = 8: 64 copies; an expert idles with probability (255/256)^64 = 0.7784, so
  // ceil(256 x 0.2216) = ceil(56.72) = 57 run, ceil(64 / 57) = 2 rows each.
  const auto& decode_up = gemm_row(traces, 2, 512, 7168, 57);
  CHECK(decode_up.time_s == relative_approx(71.2e-6, 1e-12));  // 71.2, 70.4, 72.0
  CHECK(gemm_row(traces, 2, 7168, 256, 57).time_s == relative_approx(37.6e-6, 1e-12));  // 37.6, 36.8, 38.4
  CHECK(decode_up.source.find("outplace") == std::string::npos);
  // vllm::moe_forward_shared wraps every call and gives no row; its routing and the call's other
  // kernels (per call: two FP8 quantizations, align and sort, silu_and_mul, aten::sum under
  // moe_sum for top-8) are left out and counted. 6 calls x 9 kernels = 54.
  REQUIRE(traces.notes.size() == 1);
  const std::string& note = traces.notes.front();
  CHECK(note.find("54 kernels, 6 operator instances read") != std::string::npos);
  CHECK(note.find("kernels of operators not read: _moe_C::grouped_topk 6") != std::string::npos);
  CHECK(note.find("kernels inside vLLM fused_experts that are not its expert GEMMs") != std::string::npos);
  for (const char* part : {"_C::per_token_group_fp8_quant 12", "_moe_C::moe_align_block_size 12",
                           "_C::silu_and_mul 6", "aten::sum 6"}) {
    CHECK(note.find(part) != std::string::npos);
  }
}

TEST_CASE("a fused-MoE table: the compute model costs the simulator's expert GEMMs at the trace's times") {
  // The rows are the shapes transformer_forward_ops asks for: DeepSeek-V3, tp 8, FP8 layers, a
  // 2,048-token prefill and an 8-sequence decode step; at a measured shape the calibrated
  // compute model returns the measurement.
  const TraceCalibration traces = calibration_from_traces({sample("kineto-vllm-moe-h100.json")}, "");
  const models::ComputeModel compute(h100_sxm(), traces.table);
  CHECK(compute.calibration_point_count() == 4);
  models::TransformerSharding sharding;
  sharding.tp = 8;
  sharding.gemm_dtype = models::Dtype::fp8;
  models::TransformerBatch prefill;
  prefill.sequences = {{2048, 2048, models::SequencePhase::prefill}};
  prefill.head = models::HeadOutput::next_token;
  models::TransformerBatch decode;
  decode.sequences.assign(8, {1, 1000, models::SequencePhase::decode});
  decode.head = models::HeadOutput::next_token;
  const auto model = models::testing::deepseek_v3();
  const auto cost = [&](const models::TransformerBatch& batch, const std::string& name) {
    for (const auto& op : models::transformer_forward_ops(model, batch, sharding).moe_layer) {
      if (op.name != name) continue;
      const auto estimate = models::compute_estimate(compute, op);
      CHECK(estimate.provenance == models::Provenance::measured_table);
      return estimate.time_s;
    }
    FAIL("no op " << name);
    return 0.0;
  };
  CHECK(cost(prefill, "experts fc1 gate+up") == relative_approx(301.6e-6, 1e-12));
  CHECK(cost(prefill, "experts fc2") == relative_approx(158.4e-6, 1e-12));
  CHECK(cost(decode, "experts fc1 gate+up") == relative_approx(71.2e-6, 1e-12));
  CHECK(cost(decode, "experts fc2") == relative_approx(37.6e-6, 1e-12));
}

TEST_CASE("fused-MoE calls under expert parallelism, and those left out with their reasons") {
  // Mixtral-8x7B (bf16) with expert parallelism 2: this rank holds 4 of the 8 experts
  // (global_num_experts 8 at 13) and routes all 512 tokens: 512 x 2 x 4 / 8 = 512 copies over
  // its 4 experts ((3/4)^512 ~ 0: all 4 run), m = 512 / 4 = 128.
  std::string events = fused_experts_op(1, 10, 512, 4096, 4, 14336, 2, "c10::BFloat16", 8) + kernel(1, 20, 800.0) +
                       kernel(1, 900, 400.0);
  // Two chunks: up, down, up, down: up 300 + 100, down 150 + 50.
  events += fused_experts_op(2, 2000, 512, 4096, 4, 14336, 2, "c10::BFloat16", 8) + kernel(2, 2010, 300.0) +
            kernel(2, 2400, 150.0) + kernel(2, 2600, 100.0) + kernel(2, 2800, 50.0);
  // Left out: three launches (no up/down pairs), int8 weights, no recorded shapes, and DeepGEMM's
  // experts launched by vllm::moe_forward itself.
  events += fused_experts_op(3, 4000, 512, 4096, 4, 14336, 2, "c10::BFloat16", 8) + kernel(3, 4010, 300.0) +
            kernel(3, 4400, 150.0) + kernel(3, 4600, 100.0);
  events += fused_experts_op(4, 6000, 512, 4096, 4, 14336, 2, "signed char", 8) + kernel(4, 6010, 300.0) +
            kernel(4, 6400, 150.0);
  events += cpu_op(5, "vllm::inplace_fused_experts", 8000, 100) + kernel(5, 8010, 300.0) + kernel(5, 8400, 150.0);
  events += cpu_op(6, "vllm::moe_forward", 10000, 100) + kernel(6, 10010, 200.0, "m_grouped_fp8_gemm_nt_contiguous");
  const TraceCalibration traces = calibration_from_traces({written("moe-ep.json", h100_trace(events))}, "");
  REQUIRE(traces.table.rows.size() == 2);
  const auto& up = gemm_row(traces, 128, 28672, 4096, 4);
  CHECK(up.shape.dtype == models::Dtype::bf16);
  CHECK(up.repeats == 2);
  CHECK(up.time_s == relative_approx(600e-6, 1e-12));  // the median of 800 and 400 us
  CHECK(gemm_row(traces, 128, 4096, 14336, 4).time_s == relative_approx(300e-6, 1e-12));  // of 400 and 200 us
  const std::string& note = traces.notes.front();
  CHECK(note.find("14 kernels, 2 operator instances read") != std::string::npos);
  CHECK(note.find("1 instance(s): vLLM fused_experts call whose fused_moe_kernel launches do not pair") !=
        std::string::npos);
  CHECK(note.find("1 instance(s): vLLM fused_experts weights neither bf16, fp16 nor fp8") != std::string::npos);
  CHECK(note.find("1 instance(s): no Input Dims (profile with record_shapes=True)") != std::string::npos);
  CHECK(note.find("1 kernels launched by vllm::moe_forward outside a fused_experts call") != std::string::npos);
  // Nsight Systems' range of the call spans all its kernels: left out there.
  const auto report = written("moe-nvtx.csv", "Name,Projected Start (ns),Projected Duration (ns)\n"
                                              "\"aten::mm, seq = 1, op_id = 1, sizes = [[64, 128], [128, 256]]\",10,3500\n"
                                              "\"vllm::inplace_fused_experts, seq = 2, op_id = 2, sizes = [[8, 7168], "
                                              "[256, 512, 7168], [256, 7168, 256], [8, 8], [8, 8]]\",5000,120000\n");
  const TraceCalibration nsys = calibration_from_nsys({report}, "h100-sxm", "fp8");
  CHECK(nsys.table.rows.size() == 1);
  CHECK(nsys.notes.front().find("1 range(s): vLLM fused_experts: its range spans its routing") != std::string::npos);
}

TEST_CASE("an Nsight Systems NVTX projection: PyTorch's operator ranges and the GPU time they span") {
  // tests/data/importers/nsys-nvtx-gpu-proj-gpt-layer-h100.csv: the same three forward passes as
  // the Kineto sample, as emit_nvtx(record_shapes=True) names them ("aten::addmm, seq = 2,
  // op_id = 6, sizes = [[12288], [8192, 4096], [4096, 12288], [], []]") with each range's
  // projected GPU time; NVTX records no types (--dtype) and no is_causal (attention left out).
  const auto report = sample("nsys-nvtx-gpu-proj-gpt-layer-h100.csv");
  const TraceCalibration nsys = calibration_from_nsys({report}, "h100-sxm", "bf16");
  REQUIRE(nsys.table.rows.size() == 4);
  const auto& qkv = row_of(nsys, models::OpClass::gemm);
  CHECK(qkv.shape.m == 8192);
  CHECK(qkv.shape.n == 12288);
  CHECK(qkv.shape.k == 4096);
  CHECK(qkv.shape.dtype == models::Dtype::bf16);
  CHECK(qkv.time_s == relative_approx(1180.224e-6, 1e-12));  // the Kineto sample's median, in ns here
  CHECK(qkv.spread_s == relative_approx(1.664e-6, 1e-9));
  CHECK(row_of(nsys, models::OpClass::layernorm).shape.bytes == 134'299'648.0);
  CHECK(row_of(nsys, models::OpClass::elementwise).shape.bytes == 201'326'592.0);
  CHECK(qkv.source.find("Nsight Systems NVTX projection") != std::string::npos);
  REQUIRE(nsys.notes.size() == 1);
  const std::string& note = nsys.notes.front();
  CHECK(note.find("12 operator ranges read") != std::string::npos);
  CHECK(note.find("2 ranges without operator sizes") != std::string::npos);  // the root and "step"
  CHECK(note.find("1 ranges with no GPU work") != std::string::npos);        // aten::view
  CHECK(note.find("operators not read: aten::cat 1") != std::string::npos);
  CHECK(note.find("3 range(s): attention's is_causal not recorded") != std::string::npos);
  CHECK(detect_import_kind(report) == ImportKind::nsys);

  // What `nsys stats` prints on a terminal: a preamble before the CSV.
  std::ifstream in(report, std::ios::binary);
  const auto printed = written("nsys-stdout.txt", "Generating '/tmp/nsys-report-1.sqlite'\n"
                                                  "[1/1] Executing 'nvtx_gpu_proj_trace' stats report\n\n"
                                                  " ** NVTX GPU Projection Trace (nvtx_gpu_proj_trace):\n\n" +
                                                      std::string(std::istreambuf_iterator<char>(in), {}));
  CHECK(calibration_from_nsys({printed}, "h100-sxm", "bf16").table.rows.size() == 4);
  CHECK_THROWS_WITH_AS(calibration_from_nsys({report}, "", "bf16"), doctest::Contains("give --accelerator"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(calibration_from_nsys({report}, "h100-sxm", ""), doctest::Contains("give the operators' --dtype"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(calibration_from_nsys({report}, "h100-sxm", "fp4"), doctest::Contains("--dtype fp4"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(calibration_from_nsys({written("kern_sum.csv", "Time (%),Total Time (ns),Instances,Name\n"
                                                                      "50.0,100,2,gemm\n")},
                                             "h100-sxm", "bf16"),
                       doctest::Contains("kern_sum.csv:1: the header has no column 'Projected Duration (ns)'"),
                       ConfigError);
  const auto no_shapes = written("no-shapes.csv", "Name,Projected Start (ns),Projected Duration (ns)\n"
                                                  "aten::mm,10,2000\n");
  CHECK_THROWS_WITH_AS(calibration_from_nsys({no_shapes}, "h100-sxm", "bf16"),
                       doctest::Contains("emit_nvtx(record_shapes=True)"), ConfigError);
}

TEST_CASE("validate --calibration: every row on the default tables and on the table, per row and per source") {
  const auto table = sample_table();
  DatasetValidationOptions options;
  const DatasetValidation plain = validate_dataset(sample("trtllm-bench-llama3-8b-fp8.json"), options);
  options.calibration = table;
  const DatasetValidation both = validate_dataset(sample("trtllm-bench-llama3-8b-fp8.json"), options);
  REQUIRE(both.json.contains("calibration"));
  const auto& rows = both.json["calibration"]["rows"];
  REQUIRE(rows.size() == plain.json["rows"].size());
  bool moved = false;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i]["error_default_pct"].get<double>() == plain.json["rows"][i]["error_pct"].get<double>());
    CHECK(rows[i]["error_calibrated_pct"].get<double>() == both.json["rows"][i]["error_pct"].get<double>());
    moved = moved || rows[i]["predicted_calibrated"].get<double>() != rows[i]["predicted_default"].get<double>();
  }
  CHECK(moved);  // the trace's bandwidth rows cost the FP8 engine's norms, adds and embedding
  REQUIRE(both.json["calibration"]["per_source"].size() == 1);
  CHECK(both.json["calibration"]["per_source"][0]["mape_default_pct"].get<double>() ==
        plain.json["per_source"][0]["mape_pct"].get<double>());
  CHECK(both.table.find("MAPE  11.58 % ->") != std::string::npos);
  CHECK_THROWS_WITH_AS(validate_dataset(std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "validation/data/ground_truth_power.csv",
                                        options),
                       doctest::Contains("--calibration applies to training and inference datasets"), ConfigError);
}

TEST_CASE("a run on a calibration table says how far it moved the step from the library's tables") {
  const std::string yaml = fmt::format(R"(schema_version: 1
include: [systems/dgx-h100.yaml]
name: calibrated
cluster: {{nodes: 1}}
models:
  tiny-llm: {{source: "invented for tests/sim/validate", hidden_size: 4096, num_hidden_layers: 2,
             num_attention_heads: 32, intermediate_size: 12288, vocab_size: 32000, hidden_act: gelu}}
workload: {{kind: training, model: tiny-llm, seq_len: 2048, global_batch: 32, parallelism: {{tp: 1, pp: 1, dp: 8}}}}
simulation: {{fidelity: analytical, calibration: {}}}
)",
                                       sample_table().string());
  const auto scenario = scenario::load_scenario_from_string(yaml, "calibrated.yaml");
  runner::RunResult run = runner::run_scenario(scenario);
  const auto effect = runner::compare_with_default_tables(scenario, run);
  REQUIRE(effect);
  REQUIRE(effect->calibrated.size() == 2);
  auto plain = scenario;
  plain.platform.calibration_path.clear();
  plain.platform.calibration = {};
  const auto without = runner::run_training(plain);
  CHECK(effect->default_tables[0].value == without.step_time_s);
  CHECK(effect->calibrated[0].value == dynamic_cast<const training::TrainingResult&>(*run.primary).step_time_s);
  CHECK(effect->calibrated[0].value != effect->default_tables[0].value);
  CHECK(run.primary->notes.back().find("against the library's tables, step_time ") != std::string::npos);
  // Without a table: nothing run twice, nothing said.
  runner::RunResult again = runner::run_scenario(plain);
  const auto notes = again.primary->notes.size();
  CHECK_FALSE(runner::compare_with_default_tables(plain, again));
  CHECK(again.primary->notes.size() == notes);
}

}  // namespace trace_import_test
