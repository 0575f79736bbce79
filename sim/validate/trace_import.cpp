#include "sim/validate/trace_import.hpp"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "models/llm/moe_runtime.hpp"
#include "sim/engine/error.hpp"
#include "sim/engine/statistics.hpp"
#include "sim/validate/csv_table.hpp"
#include "sim/validate/json_text.hpp"

namespace clustersim::validate {
namespace {

using nlohmann::json;
using models::Dtype;
using models::KernelShape;
using models::OpClass;

/// One CPU operator of the trace with the inputs PyTorch recorded for it.
struct CpuOp {
  std::string name;
  std::int64_t thread = 0;  ///< pid and tid folded into one key
  double begin_us = 0, end_us = 0;
  const json* args = nullptr;
};

/// A recognised operator's kernel shapes, or why the instance is left out.
struct Recognized {
  /// One shape; a vLLM fused-MoE call two: its up (w1) and down (w2) grouped GEMMs.
  std::vector<KernelShape> shapes;
  std::string skip;  ///< why, when `shapes` is empty
};

std::optional<Dtype> tensor_dtype(const std::string& type) {
  if (type == "c10::BFloat16") return Dtype::bf16;
  if (type == "c10::Half") return Dtype::fp16;
  if (type == "float") return Dtype::fp32;
  if (type.rfind("c10::Float8_", 0) == 0) return Dtype::fp8;
  return std::nullopt;
}

/// The operator's recorded inputs: dimensions, types and concrete scalar values, by position.
struct Inputs {
  std::vector<std::vector<std::int64_t>> dims;
  std::vector<std::string> types;
  std::vector<std::string> concrete;

  [[nodiscard]] const std::vector<std::int64_t>* tensor(std::size_t i) const {
    return i < dims.size() && !dims[i].empty() ? &dims[i] : nullptr;
  }
  [[nodiscard]] std::optional<Dtype> dtype(std::size_t i) const {
    return i < types.size() ? tensor_dtype(types[i]) : std::nullopt;
  }
  [[nodiscard]] std::optional<std::int64_t> integer(std::size_t i) const {
    if (i >= concrete.size()) return std::nullopt;
    const std::string& text = concrete[i];
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
  }
  [[nodiscard]] std::optional<bool> flag(std::size_t i) const {
    if (i >= concrete.size()) return std::nullopt;
    if (concrete[i] == "True") return true;
    if (concrete[i] == "False") return false;
    return std::nullopt;
  }
};

Inputs read_inputs(const json& args) {
  Inputs inputs;
  if (const auto it = args.find("Input Dims"); it != args.end() && it->is_array()) {
    for (const auto& entry : *it) {
      std::vector<std::int64_t> dims;
      // A tensor's dims are a list of integers; a list of tensors (a nested list) is not read.
      if (entry.is_array() && std::all_of(entry.begin(), entry.end(), [](const json& d) { return d.is_number_integer(); })) {
        for (const auto& d : entry) dims.push_back(d.get<std::int64_t>());
      }
      inputs.dims.push_back(std::move(dims));
    }
  }
  const auto strings = [&args](const char* key, std::vector<std::string>& out) {
    if (const auto it = args.find(key); it != args.end() && it->is_array()) {
      for (const auto& entry : *it) out.push_back(entry.is_string() ? entry.get<std::string>() : "");
    }
  };
  strings("Input type", inputs.types);
  strings("Concrete Inputs", inputs.concrete);
  return inputs;
}

double elements(const std::vector<std::int64_t>& dims) {
  double n = 1;
  for (const std::int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

Recognized skipped(std::string why) { return {{}, std::move(why)}; }

/// GEMM operands a [.., m, k] and b [.., k, n] at input positions `a`, `b`.
Recognized gemm(const Inputs& in, std::size_t a, std::size_t b, bool batched) {
  const auto* lhs = in.tensor(a);
  const auto* rhs = in.tensor(b);
  const std::size_t rank = batched ? 3 : 2;
  if (lhs == nullptr || rhs == nullptr || lhs->size() != rank || rhs->size() != rank) {
    return skipped("GEMM operands not recorded as matrices (profile with record_shapes=True)");
  }
  if ((*lhs)[rank - 1] != (*rhs)[rank - 2] || (batched && (*lhs)[0] != (*rhs)[0])) {
    return skipped("GEMM operand shapes disagree");
  }
  const auto dtype = in.dtype(a);
  if (!dtype || dtype != in.dtype(b)) return skipped("GEMM of mixed or unsupported input types");
  if (*dtype == Dtype::fp32) {
    return skipped("fp32 GEMM: whether it ran on TF32 tensor cores (allow_tf32) is not in the trace");
  }
  KernelShape shape;
  shape.op = batched && (*lhs)[0] > 1 ? OpClass::batched_gemm : OpClass::gemm;
  shape.dtype = *dtype;
  shape.batch = batched ? (*lhs)[0] : 1;
  shape.m = (*lhs)[rank - 2];
  shape.k = (*lhs)[rank - 1];
  shape.n = (*rhs)[rank - 1];
  return {{shape}, ""};
}

/// FlashAttention through PyTorch's SDPA: q at `q`, k at `q + 1`, [batch, heads, seq, head_dim];
/// is_causal a concrete input at `causal` (aten/src/ATen/native/native_functions.yaml).
Recognized flash_attention(const Inputs& in, std::size_t q, std::size_t causal, bool backward) {
  const auto* query = in.tensor(q);
  const auto* key = in.tensor(q + 1);
  if (query == nullptr || key == nullptr || query->size() != 4 || key->size() != 4) {
    return skipped("attention inputs not recorded as [batch, heads, seq, head_dim]");
  }
  const auto is_causal = in.flag(causal);
  if (!is_causal) return skipped("attention's is_causal not recorded (Concrete Inputs: PyTorch 2.1 and later)");
  const auto dtype = in.dtype(q);
  if (!dtype || *dtype == Dtype::fp32) return skipped("attention in an unsupported input type");
  KernelShape shape;
  shape.op = OpClass::attention;
  shape.dtype = *dtype;
  shape.batch = (*query)[0];
  shape.heads = (*query)[1];
  shape.kv_heads = (*key)[1];
  shape.seq_q = (*query)[2];
  shape.seq_kv = (*key)[2];
  shape.head_dim = (*query)[3];
  shape.causal = *is_causal;
  shape.backward = backward;
  return {{shape}, ""};
}

KernelShape bandwidth(OpClass op, Dtype dtype, double bytes) {
  KernelShape shape;
  shape.op = op;
  shape.dtype = dtype;
  shape.bytes = std::round(bytes);
  return shape;
}

/// Bytes as the compute model counts them (models/accelerator/compute_model.cpp).
Recognized layer_norm(const Inputs& in) {
  const auto* x = in.tensor(0);
  const auto dtype = in.dtype(0);
  if (x == nullptr || !dtype) return skipped("layer-norm input not recorded");
  const double e = models::dtype_bytes(*dtype);
  const double hidden = static_cast<double>(x->back());
  const double rows = elements(*x) / hidden;
  double bytes = elements(*x) * 2 * e + 8 * rows;
  for (std::size_t i : {2, 3}) {
    if (in.tensor(i) != nullptr) bytes += hidden * e;  // weight, bias
  }
  return {{bandwidth(OpClass::layernorm, *dtype, bytes)}, ""};
}

Recognized softmax(const Inputs& in) {
  const auto* x = in.tensor(0);
  const auto dtype = in.dtype(0);
  if (x == nullptr || !dtype) return skipped("softmax input not recorded");
  const double out = in.flag(2).value_or(false) ? 4.0 : models::dtype_bytes(*dtype);
  return {{bandwidth(OpClass::softmax, *dtype, elements(*x) * (models::dtype_bytes(*dtype) + out))}, ""};
}

Recognized embedding(const Inputs& in) {
  const auto* weight = in.tensor(0);
  const auto* indices = in.tensor(1);
  const auto dtype = in.dtype(0);
  if (weight == nullptr || indices == nullptr || weight->size() != 2 || !dtype) {
    return skipped("embedding inputs not recorded");
  }
  const double tokens = elements(*indices);
  const double e = models::dtype_bytes(*dtype);
  return {{bandwidth(OpClass::embedding, *dtype, tokens * static_cast<double>((*weight)[1]) * 2 * e + 8 * tokens)}, ""};
}

/// Streaming ops: every tensor input read once, the output (the largest input's size, in the
/// first input's type; the first input itself for an in-place op) written once.
Recognized elementwise(const std::string& name, const Inputs& in) {
  const auto dtype = in.dtype(0);
  if (in.tensor(0) == nullptr || !dtype) return skipped("elementwise input not recorded");
  double bytes = 0, largest = 0;
  for (std::size_t i = 0; i < in.dims.size(); ++i) {
    const auto type = in.dtype(i);
    if (in.tensor(i) == nullptr || !type) continue;
    bytes += elements(in.dims[i]) * models::dtype_bytes(*type);
    largest = std::max(largest, elements(in.dims[i]));
  }
  const bool in_place = name.back() == '_';
  bytes += (in_place ? elements(in.dims[0]) : largest) * models::dtype_bytes(*dtype);
  return {{bandwidth(OpClass::elementwise, *dtype, bytes)}, ""};
}

/// vLLM's fused MoE operator (vllm/model_executor/layers/fused_moe/fused_moe.py, v0.10 and v0.11):
/// the Triton path's experts, under vllm::moe_forward (which itself is not read).
bool is_fused_experts(const std::string& name) {
  return name == "vllm::inplace_fused_experts" || name == "vllm::outplace_fused_experts";
}

/// The fused MoE call's two grouped GEMMs as the simulator sizes them. Inputs in schema order:
/// hidden_states [T, H], w1 [E, N, H] (N = 2 I for a gated activation), w2 [E, H, I],
/// topk_weights and topk_ids [T, k], ..., global_num_experts at 13 (a scalar; under expert
/// parallelism E is the rank's share of them and the rank routes all T tokens). The rank then
/// computes T k E / E_global token copies: models::expert_load of T / ep tokens on each of
/// ep = E_global / E ranks, sized by models::grouped_expert_gemm (m, batch). Up: n = N, k = H;
/// down: n = H, k = I. The type is the weights' (an FP8 checkpoint's Float8_e4m3fn: fp8).
Recognized fused_experts(const Inputs& in) {
  const auto* hidden = in.tensor(0);
  const auto* w1 = in.tensor(1);
  const auto* w2 = in.tensor(2);
  const auto* ids = in.tensor(4);
  if (hidden == nullptr || w1 == nullptr || w2 == nullptr || ids == nullptr || hidden->size() != 2 ||
      w1->size() != 3 || w2->size() != 3 || ids->size() != 2) {
    return skipped("vLLM fused_experts inputs not recorded as hidden [T, H], w1 [E, 2I, H], w2 [E, H, I], "
                   "topk_ids [T, k] (profile with record_shapes=True)");
  }
  const std::int64_t tokens = (*hidden)[0], h = (*hidden)[1], experts = (*w1)[0], top_k = (*ids)[1];
  if ((*w1)[2] != h || (*w2)[0] != experts || (*w2)[1] != h || (*ids)[0] != tokens || tokens < 1 || top_k < 1) {
    return skipped("vLLM fused_experts input shapes disagree");
  }
  const auto dtype = in.dtype(1);
  if (!dtype || *dtype == Dtype::fp32 || dtype != in.dtype(2)) {
    return skipped("vLLM fused_experts weights neither bf16, fp16 nor fp8 (int8, int4 and MXFP4 experts are not read)");
  }
  std::int64_t global = experts;
  if (const auto recorded = in.integer(13); recorded && *recorded > experts) global = *recorded;
  if (global % experts != 0) {
    return skipped("vLLM fused_experts with uneven expert parallelism (global experts not a multiple of the rank's)");
  }
  if (top_k > global) return skipped("vLLM fused_experts with a top-k above its expert count");
  models::MoeSpec moe;
  moe.num_experts = global;
  moe.num_experts_per_tok = top_k;
  const int ep = static_cast<int>(global / experts);
  const auto group = models::grouped_expert_gemm(
      models::expert_load(moe, {}, static_cast<double>(tokens) / static_cast<double>(ep), ep));
  KernelShape up;
  up.op = group.experts > 1 ? OpClass::batched_gemm : OpClass::gemm;  // as ComputeModel::gemm asks
  up.dtype = *dtype;
  up.batch = group.experts;
  up.m = group.tokens;
  up.n = (*w1)[1];
  up.k = h;
  KernelShape down = up;
  down.n = h;
  down.k = (*w2)[2];
  return {{up, down}, ""};
}

const std::set<std::string>& elementwise_ops() {
  static const std::set<std::string> names = {
      "aten::add",  "aten::add_",  "aten::mul",  "aten::mul_",     "aten::sub",          "aten::sub_",
      "aten::div",  "aten::div_",  "aten::gelu", "aten::gelu_backward", "aten::silu", "aten::silu_",
      "aten::silu_backward", "aten::relu", "aten::relu_", "aten::sigmoid", "aten::tanh", "aten::neg",
      "aten::exp",  "aten::rsqrt"};
  return names;
}

/// Whether the importer reads this operator's shapes.
bool is_read_operator(const std::string& name) {
  static const std::set<std::string> matrix_and_norm = {"aten::mm",
                                                        "aten::addmm",
                                                        "aten::_scaled_mm",
                                                        "aten::bmm",
                                                        "aten::baddbmm",
                                                        "aten::_scaled_dot_product_flash_attention",
                                                        "aten::_scaled_dot_product_flash_attention_backward",
                                                        "aten::native_layer_norm",
                                                        "aten::_softmax",
                                                        "aten::embedding"};
  return matrix_and_norm.contains(name) || elementwise_ops().contains(name) || is_fused_experts(name);
}

/// The shape of a recognised operator; nullopt for an operator the importer does not read.
std::optional<Recognized> recognize(const std::string& name, const json& args) {
  if (!is_read_operator(name)) return std::nullopt;
  const Inputs in = read_inputs(args);
  if (in.dims.empty()) return skipped("no Input Dims (profile with record_shapes=True)");
  if (name == "aten::mm" || name == "aten::_scaled_mm") return gemm(in, 0, 1, false);
  if (name == "aten::addmm") return gemm(in, 1, 2, false);
  if (name == "aten::bmm") return gemm(in, 0, 1, true);
  if (name == "aten::baddbmm") return gemm(in, 1, 2, true);
  if (name == "aten::_scaled_dot_product_flash_attention") return flash_attention(in, 0, 4, false);
  if (name == "aten::_scaled_dot_product_flash_attention_backward") return flash_attention(in, 1, 11, true);
  if (name == "aten::native_layer_norm") return layer_norm(in);
  if (name == "aten::_softmax") return softmax(in);
  if (name == "aten::embedding") return embedding(in);
  if (is_fused_experts(name)) return fused_experts(in);
  return elementwise(name, in);
}

/// What one trace contributes: per shape the instance times, and the counts of what was left out.
struct Samples {
  std::map<std::string, std::size_t> index;  ///< shape key -> position in `rows`
  std::vector<models::CalibrationRow> rows;  ///< shape and accelerator (time filled at the end)
  std::vector<std::vector<double>> times;    ///< per row, one time per operator instance
  std::vector<std::set<std::string>> ops;    ///< per row, the operator names behind it
  std::vector<std::set<std::string>> files;  ///< per row, the files it was measured in
  std::vector<std::set<std::string>> rules;  ///< per row, how its time was taken when not the whole call's

  /// One operator call of `shape` on `accelerator`, `time_s` long, read from `file`; `rule`
  /// says how a part of a call was timed (for the row's source).
  void add(const std::string& accelerator, const KernelShape& shape, double time_s, const std::string& op,
           const std::string& file, const std::string& rule = "");
};

std::string shape_key(const std::string& accelerator, const KernelShape& s) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", accelerator, models::op_class_name(s.op),
                     static_cast<int>(s.dtype), s.m, s.n, s.k, s.batch, s.heads, s.kv_heads, s.seq_q, s.seq_kv,
                     s.head_dim, s.causal, s.backward, s.bytes);
}

void Samples::add(const std::string& accelerator, const KernelShape& shape, double time_s, const std::string& op,
                  const std::string& file, const std::string& rule) {
  auto [it, inserted] = index.emplace(shape_key(accelerator, shape), rows.size());
  if (inserted) {
    models::CalibrationRow row;
    row.accelerator = accelerator;
    row.shape = shape;
    rows.push_back(row);
    times.emplace_back();
    ops.emplace_back();
    files.emplace_back();
    rules.emplace_back();
  }
  times[it->second].push_back(time_s);
  ops[it->second].insert(op);
  files[it->second].insert(file);
  if (!rule.empty()) rules[it->second].insert(rule);
}

std::int64_t integer_id(const json& value) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_string()) {
    try {
      return std::stoll(value.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  return -1;
}

std::int64_t thread_key(const json& event) {
  return integer_id(event.value("pid", json(-1))) * 1'000'003 + integer_id(event.value("tid", json(-1)));
}

/// Counts of what a trace's kernels and operators left out, for the notes.
struct LeftOut {
  std::size_t kernels_without_op = 0;
  std::size_t collective_kernels = 0;
  std::map<std::string, std::size_t> unread_ops;   ///< operator -> kernels
  std::map<std::string, std::size_t> skip_reasons; ///< reason -> operator instances
  std::map<std::string, std::size_t> moe_side;     ///< operator inside a vLLM fused_experts call -> kernels
  std::size_t moe_forward_kernels = 0;             ///< launched by vllm::moe_forward itself
};

std::string top_counts(const std::map<std::string, std::size_t>& counts, std::size_t shown) {
  std::vector<std::pair<std::size_t, std::string>> sorted;
  for (const auto& [name, n] : counts) sorted.emplace_back(n, name);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < sorted.size() && i < shown; ++i) parts.push_back(fmt::format("{} {}", sorted[i].second, sorted[i].first));
  if (sorted.size() > shown) parts.push_back(fmt::format("{} more", sorted.size() - shown));
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// Device id -> GPU name from the trace's deviceProperties.
std::map<std::int64_t, std::string> device_names(const json& trace) {
  std::map<std::int64_t, std::string> names;
  if (const auto it = trace.find("deviceProperties"); it != trace.end() && it->is_array()) {
    for (const auto& device : *it) {
      if (device.is_object() && device.contains("id") && device.value("name", json("")).is_string()) {
        names[integer_id(device["id"])] = device.value("name", "");
      }
    }
  }
  return names;
}

bool is_collective_kernel(const std::string& kernel, const std::string& op) {
  return kernel.rfind("nccl", 0) == 0 || kernel.rfind("ncclDevKernel", 0) == 0 || kernel.rfind("rccl", 0) == 0 ||
         op == "record_param_comms" || op.rfind("nccl:", 0) == 0 || op.rfind("c10d::", 0) == 0;
}

class TraceReader {
 public:
  TraceReader(const std::filesystem::path& file, std::string accelerator, Samples& samples)
      : file_(file.string()), accelerator_(std::move(accelerator)), samples_(samples) {}

  std::string read() {
    const std::string text = read_text(file_);
    if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b) {
      throw ConfigError(fmt::format("{}: a gzip-compressed trace: gunzip it first (e.g. `gunzip -k {}`)", file_, file_));
    }
    const json trace = parse_json(text, file_, 1);
    const auto events = trace.find("traceEvents");
    if (!trace.is_object() || events == trace.end() || !events->is_array()) {
      throw ConfigError(fmt::format("{}: no 'traceEvents' array: not a PyTorch profiler (Chrome trace) file", file_));
    }
    devices_ = device_names(trace);
    index_operators(*events);
    std::map<std::size_t, double> op_time_us;
    for (const auto& event : *events) {
      if (event.value("ph", "") != "X" || (event.value("cat", "") != "kernel" && event.value("cat", "") != "Kernel")) continue;
      ++kernels_;
      attribute_kernel(event, op_time_us);
    }
    if (kernels_ == 0) {
      throw ConfigError(fmt::format("{}: no GPU kernel events (cat 'kernel'): profile with "
                                    "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]",
                                    file_));
    }
    std::size_t read_instances = 0;
    for (const auto& [op, time_us] : op_time_us) read_instances += add_instance(op, time_us) ? 1 : 0;
    for (auto& [op, kernels] : expert_gemms_) read_instances += add_fused_experts(op, kernels) ? 1 : 0;
    if (read_instances == 0) {
      throw ConfigError(fmt::format("{}: no operator instance gave a kernel shape ({} kernels; left out: {})", file_,
                                    kernels_, left_out_summary()));
    }
    return fmt::format("{}: {} kernels, {} operator instances read; left out: {}", file_, kernels_, read_instances,
                       left_out_summary());
  }

 private:
  void index_operators(const json& events) {
    for (const auto& event : events) {
      if (event.value("ph", "") != "X" || event.value("cat", "") != "cpu_op") continue;
      const auto args = event.find("args");
      if (args == event.end() || !args->is_object()) continue;
      const auto id = args->find("External id");
      if (id == args->end()) continue;
      CpuOp op;
      op.name = event.value("name", "");
      op.thread = thread_key(event);
      op.begin_us = event.value("ts", 0.0);
      op.end_us = op.begin_us + event.value("dur", 0.0);
      op.args = &*args;
      by_id_[integer_id(*id)] = ops_.size();
      if (is_read_operator(op.name)) recognized_by_thread_[op.thread].push_back(ops_.size());
      ops_.push_back(std::move(op));
    }
    for (auto& [thread, list] : recognized_by_thread_) {
      std::sort(list.begin(), list.end(), [this](std::size_t a, std::size_t b) { return ops_[a].begin_us < ops_[b].begin_us; });
    }
  }

  /// The nearest operator the importer reads that encloses `op` on its thread (itself first).
  std::optional<std::size_t> readable(std::size_t op) const {
    if (is_read_operator(ops_[op].name)) return op;
    const auto list = recognized_by_thread_.find(ops_[op].thread);
    if (list == recognized_by_thread_.end()) return std::nullopt;
    auto it = std::upper_bound(list->second.begin(), list->second.end(), ops_[op].begin_us,
                               [this](double t, std::size_t i) { return t < ops_[i].begin_us; });
    // Enclosing operators begin at or before it; nesting is shallow, so a few steps back suffice.
    for (int steps = 0; it != list->second.begin() && steps < 64; ++steps) {
      --it;
      if (ops_[*it].end_us >= ops_[op].end_us) return *it;
    }
    return std::nullopt;
  }

  void attribute_kernel(const json& kernel, std::map<std::size_t, double>& op_time_us) {
    static const json no_args = json::object();
    const auto found = kernel.find("args");
    const json& args = found != kernel.end() && found->is_object() ? *found : no_args;
    const auto id = args.find("External id");
    const auto op = id != args.end() ? by_id_.find(integer_id(*id)) : by_id_.end();
    const std::string name = kernel.value("name", "");
    if (op == by_id_.end()) {
      ++(is_collective_kernel(name, "") ? left_.collective_kernels : left_.kernels_without_op);
      return;
    }
    if (is_collective_kernel(name, ops_[op->second].name)) {
      ++left_.collective_kernels;
      return;
    }
    const auto target = readable(op->second);
    const std::string& own = ops_[op->second].name;
    if (!target) {
      ++(own.rfind("vllm::moe_forward", 0) == 0 ? left_.moe_forward_kernels : left_.unread_ops[own]);
      return;
    }
    const json device = args.contains("device") ? args["device"] : kernel.value("pid", json(-1));
    if (is_fused_experts(ops_[*target].name)) {
      // Its expert GEMMs are the Triton fused_moe_kernel launches it makes itself (no operator
      // of their own); what its inner operators launch (moe_align_block_size, silu_and_mul,
      // moe_sum or aten::sum, the FP8 quantization) the simulator costs as elementwise ops.
      if (*target == op->second && name.find("fused_moe_kernel") != std::string::npos) {
        expert_gemms_[*target].emplace_back(kernel.value("ts", 0.0), kernel.value("dur", 0.0));
        device_of_[*target] = integer_id(device);
      } else {
        ++left_.moe_side[*target == op->second ? "its own " + name : own];
      }
      return;
    }
    op_time_us[*target] += kernel.value("dur", 0.0);
    device_of_[*target] = integer_id(device);
  }

  std::string accelerator_of(std::int64_t device) {
    if (!accelerator_.empty()) return accelerator_;
    const auto name = devices_.find(device);
    if (name == devices_.end()) {
      throw ConfigError(fmt::format("{}: the trace names no GPU for device {} (no deviceProperties): give the "
                                    "library accelerator (--accelerator)",
                                    file_, device));
    }
    std::string accelerator = accelerator_for_gpu_name(name->second);
    if (accelerator.empty()) {
      throw ConfigError(fmt::format("{}: device {} '{}' matches no library accelerator by name: give one with "
                                    "--accelerator (clustersim list accelerators)",
                                    file_, device, name->second));
    }
    return accelerator;
  }

  /// The shapes of a read operator's instance; empty after counting why it is left out.
  std::vector<KernelShape> shapes_of(std::size_t op) {
    auto recognized = recognize(ops_[op].name, *ops_[op].args);
    if (recognized->shapes.empty()) ++left_.skip_reasons[recognized->skip];
    return std::move(recognized->shapes);
  }

  bool add_instance(std::size_t op, double time_us) {
    const std::vector<KernelShape> shapes = shapes_of(op);
    if (shapes.empty() || !(time_us > 0)) return false;
    samples_.add(accelerator_of(device_of_.at(op)), shapes.front(), time_us * 1e-6, ops_[op].name, file_);
    return true;
  }

  /// A vLLM fused_experts call: each projection timed by its own kernels. Per chunk of tokens
  /// fused_experts_impl launches fused_moe_kernel twice, w1 (gate+up) then w2 (down), on one
  /// stream: in GPU order the 1st, 3rd, ... launches are the up GEMMs, the 2nd, 4th, ... the down.
  bool add_fused_experts(std::size_t op, std::vector<std::pair<double, double>>& kernels) {
    const std::vector<KernelShape> shapes = shapes_of(op);
    if (shapes.empty()) return false;
    if (kernels.size() % 2 != 0) {
      ++left_.skip_reasons["vLLM fused_experts call whose fused_moe_kernel launches do not pair into up and down "
                           "projections (a call cut by the profiling window?)"];
      return false;
    }
    std::sort(kernels.begin(), kernels.end());
    double up_us = 0, down_us = 0;
    for (std::size_t i = 0; i < kernels.size(); ++i) (i % 2 == 0 ? up_us : down_us) += kernels[i].second;
    if (!(up_us > 0) || !(down_us > 0)) return false;
    const std::string accelerator = accelerator_of(device_of_.at(op));
    constexpr const char* sizing = "m, batch: the simulator's grouped_expert_gemm of T x top-k copies; the call's "
                                   "align, activation, sum and quantization kernels not included";
    samples_.add(accelerator, shapes[0], up_us * 1e-6, ops_[op].name, file_,
                 fmt::format("vLLM fused MoE up projection (w1): each call's 1st, 3rd, ... fused_moe_kernel; {}", sizing));
    samples_.add(accelerator, shapes[1], down_us * 1e-6, ops_[op].name, file_,
                 fmt::format("vLLM fused MoE down projection (w2): each call's 2nd, 4th, ... fused_moe_kernel; {}", sizing));
    return true;
  }

  std::string left_out_summary() const {
    std::vector<std::string> parts;
    if (left_.collective_kernels > 0) {
      parts.push_back(fmt::format("{} collective kernels (compare collectives with `clustersim collective --compare` "
                                  "on nccl-tests output)",
                                  left_.collective_kernels));
    }
    if (left_.kernels_without_op > 0) {
      parts.push_back(fmt::format("{} kernels with no operator (CUDA-graph replays, launches outside profiled ops)",
                                  left_.kernels_without_op));
    }
    if (!left_.unread_ops.empty()) {
      parts.push_back(fmt::format("kernels of operators not read: {}", top_counts(left_.unread_ops, 5)));
    }
    if (!left_.moe_side.empty()) {
      parts.push_back(fmt::format("kernels inside vLLM fused_experts that are not its expert GEMMs (the simulator "
                                  "costs routing, activation and the sum as elementwise ops): {}",
                                  top_counts(left_.moe_side, 6)));
    }
    if (left_.moe_forward_kernels > 0) {
      parts.push_back(fmt::format("{} kernels launched by vllm::moe_forward outside a fused_experts call (DeepGEMM or "
                                  "modular-kernel experts: no expert shapes recorded)",
                                  left_.moe_forward_kernels));
    }
    for (const auto& [reason, n] : left_.skip_reasons) parts.push_back(fmt::format("{} instance(s): {}", n, reason));
    return parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, "; "));
  }

  std::string file_;
  std::string accelerator_;
  Samples& samples_;
  std::map<std::int64_t, std::string> devices_;
  std::vector<CpuOp> ops_;
  std::unordered_map<std::int64_t, std::size_t> by_id_;
  std::unordered_map<std::int64_t, std::vector<std::size_t>> recognized_by_thread_;
  std::map<std::size_t, std::int64_t> device_of_;
  std::map<std::size_t, std::vector<std::pair<double, double>>> expert_gemms_;  ///< fused_experts -> (start, duration)
  LeftOut left_;
  std::size_t kernels_ = 0;
};

}  // namespace

std::string accelerator_for_gpu_name(std::string_view gpu_name) {
  const auto has = [gpu_name](std::string_view part) { return gpu_name.find(part) != std::string_view::npos; };
  if (has("GB300")) return "gb300";
  if (has("GB200")) return "gb200";
  if (has("B200")) return "b200";
  if (has("GH200")) return "gh200";
  if (has("H200")) return "h200-sxm";
  if (has("H100")) return has("PCIe") || has("NVL") ? "" : "h100-sxm";
  if (has("A100")) return has("PCIe") || has("40GB") ? "" : "a100-sxm-80gb";
  if (has("MI325X")) return "mi325x";
  if (has("MI300X")) return "mi300x";
  if (has("L40S")) return "l40s";
  return "";
}

namespace {

/// The table of `samples`: each shape's median call, half the inter-quartile range, the calls.
void finish_table(const Samples& samples, const char* tool, const char* profiler, TraceCalibration& out) {
  out.table.metadata.emplace_back("tool", tool);
  for (std::size_t i = 0; i < samples.rows.size(); ++i) {
    auto row = samples.rows[i];
    auto times = samples.times[i];
    std::sort(times.begin(), times.end());
    row.time_s = engine::percentile(times, 50);
    row.spread_s = 0.5 * (engine::percentile(times, 75) - engine::percentile(times, 25));
    row.repeats = static_cast<std::int64_t>(times.size());
    row.source = fmt::format("measured (trace {}); {}, {}; median of {} call(s)", fmt::join(samples.files[i], " "),
                             profiler, fmt::join(samples.ops[i], "/"), times.size());
    for (const auto& rule : samples.rules[i]) row.source += "; " + rule;
    out.table.rows.push_back(std::move(row));
  }
}

/// PyTorch's NVTX range text (torch/csrc/profiler/util.cpp, getNvtxStr): "NAME, seq = N,
/// op_id = M, sizes = [[d, ...], [], ...], input_op_ids = [...]". The name and the sizes; nullopt
/// without sizes (emit_nvtx without record_shapes, or not an operator's range).
std::optional<std::pair<std::string, Inputs>> nvtx_operator(std::string_view text) {
  while (!text.empty() && text.front() == ':') text.remove_prefix(1);  // an empty NVTX domain's separator
  const auto comma = text.find(", ");
  const auto sizes = text.find(", sizes = [");
  if (comma == std::string_view::npos || sizes == std::string_view::npos) return std::nullopt;
  Inputs inputs;
  std::size_t at = sizes + std::string_view(", sizes = [").size();
  while (at < text.size() && text[at] != ']') {
    if (text[at] != '[') return std::nullopt;
    std::vector<std::int64_t> dims;
    ++at;
    while (at < text.size() && text[at] != ']') {
      std::size_t used = 0;
      try {
        dims.push_back(std::stoll(std::string(text.substr(at, 24)), &used));
      } catch (const std::exception&) {
        return std::nullopt;
      }
      at += used;
      if (text.substr(at, 2) == ", ") at += 2;
    }
    if (at >= text.size()) return std::nullopt;
    ++at;  // the tensor's ']'
    inputs.dims.push_back(std::move(dims));
    if (text.substr(at, 2) == ", ") at += 2;
  }
  if (at >= text.size()) return std::nullopt;
  return std::make_pair(std::string(text.substr(0, comma)), std::move(inputs));
}

/// The type name PyTorch's profiler gives a tensor of `dtype` (what recognize() reads).
std::string torch_type_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::bf16: return "c10::BFloat16";
    case Dtype::fp16: return "c10::Half";
    case Dtype::fp8: return "c10::Float8_e4m3fn";
    case Dtype::fp32:
    case Dtype::tf32: return "float";
    case Dtype::fp4: break;
  }
  throw ConfigError(fmt::format("--dtype {}: not a tensor type PyTorch's operators take (bf16, fp16, fp8, fp32)",
                                models::dtype_name(dtype)));
}

/// One `nsys stats --report nvtx_gpu_proj_trace --format csv` file.
std::string read_nsys_projection(const std::filesystem::path& file, const std::string& accelerator, Dtype dtype,
                                 Samples& samples) {
  const std::string where = file.string();
  // `nsys stats` on a terminal prints a preamble ("Generating ...", "** NVTX GPU Projection
  // Trace (nvtx_gpu_proj_trace):") before the CSV; its `--output` file starts at the header.
  const std::string text = read_text(file);
  std::size_t header = text.rfind("Name,Projected Start (ns)", 0) == 0 ? 0 : text.find("\nName,Projected Start (ns)");
  header = header == std::string::npos ? 0 : header + (header == 0 ? 0 : 1);
  const auto preamble_end = text.begin() + static_cast<std::ptrdiff_t>(header);
  const auto first_line = static_cast<int>(std::count(text.begin(), preamble_end, '\n')) + 1;
  const std::string name = first_line == 1 ? where : fmt::format("{} (the CSV from line {})", where, first_line);
  const std::vector<CsvRow> rows = parse_csv(std::string_view(text).substr(header), name);
  require_columns(rows, name, {"Name", "Projected Duration (ns)"});
  std::size_t read = 0, without_sizes = 0, without_gpu = 0;
  std::map<std::string, std::size_t> unread, skipped;
  for (const CsvRow& row : rows) {
    auto op = nvtx_operator(row.get("Name"));
    if (!op) {
      ++without_sizes;
      continue;
    }
    const auto duration = parse_number(row.get("Projected Duration (ns)"));
    if (!duration || !(*duration > 0)) {
      ++without_gpu;
      continue;
    }
    auto& [op_name, inputs] = *op;
    for (const auto& dims : inputs.dims) inputs.types.push_back(dims.empty() ? "" : torch_type_name(dtype));
    const nlohmann::json args = {{"Input Dims", inputs.dims}, {"Input type", inputs.types}};
    const auto recognized = recognize(op_name, args);
    if (!recognized) {
      ++unread[op_name];
    } else if (is_fused_experts(op_name)) {
      ++skipped["vLLM fused_experts: its range spans its routing, activation and sum kernels with both expert "
                "GEMMs (read it from a PyTorch profiler trace)"];
    } else if (recognized->shapes.empty()) {
      ++skipped[recognized->skip];
    } else {
      samples.add(accelerator, recognized->shapes.front(), *duration * 1e-9, op_name, where);
      ++read;
    }
  }
  std::vector<std::string> parts;
  if (without_sizes > 0) parts.push_back(fmt::format("{} ranges without operator sizes", without_sizes));
  if (without_gpu > 0) parts.push_back(fmt::format("{} ranges with no GPU work", without_gpu));
  if (!unread.empty()) parts.push_back(fmt::format("operators not read: {}", top_counts(unread, 5)));
  for (const auto& [reason, n] : skipped) parts.push_back(fmt::format("{} range(s): {}", n, reason));
  if (read == 0) {
    throw ConfigError(fmt::format("{}: no NVTX range gave a kernel shape ({} rows; left out: {}); the report must come "
                                  "from a run under torch.autograd.profiler.emit_nvtx(record_shapes=True)",
                                  where, rows.size(), parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, "; "))));
  }
  return fmt::format("{}: {} operator ranges read; left out: {}", where, read,
                     parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, "; ")));
}

}  // namespace

TraceCalibration calibration_from_traces(const std::vector<std::filesystem::path>& files,
                                         const std::string& accelerator) {
  Samples samples;
  TraceCalibration out;
  for (const auto& file : files) out.notes.push_back(TraceReader(file, accelerator, samples).read());
  finish_table(samples, "clustersim calibrate --from-trace (PyTorch profiler traces)", "PyTorch profiler", out);
  return out;
}

TraceCalibration calibration_from_nsys(const std::vector<std::filesystem::path>& files, const std::string& accelerator,
                                       const std::string& dtype) {
  if (accelerator.empty()) {
    throw ConfigError("an Nsight Systems report names no GPU model the library can map: give --accelerator");
  }
  if (dtype.empty()) {
    throw ConfigError("NVTX ranges record tensor sizes, not types: give the operators' --dtype (bf16, fp16, fp8)");
  }
  const Dtype type = models::dtype_names().parse(dtype);
  Samples samples;
  TraceCalibration out;
  for (const auto& file : files) out.notes.push_back(read_nsys_projection(file, accelerator, type, samples));
  finish_table(samples, "clustersim calibrate --from-nsys (Nsight Systems nvtx_gpu_proj_trace)",
               "Nsight Systems NVTX projection", out);
  return out;
}

}  // namespace clustersim::validate
