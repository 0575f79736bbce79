#include "models/accelerator/op_class.hpp"

#include <array>
#include <cstdio>
#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

namespace {

constexpr std::array<std::pair<OpClass, std::string_view>, 16> kOpNames{{
    {OpClass::gemm, "gemm"},
    {OpClass::batched_gemm, "batched_gemm"},
    {OpClass::attention, "attention"},
    {OpClass::layernorm, "layernorm"},
    {OpClass::softmax, "softmax"},
    {OpClass::elementwise, "elementwise"},
    {OpClass::embedding, "embedding"},
    {OpClass::optimizer, "optimizer"},
    {OpClass::memcpy, "memcpy"},
    {OpClass::hbm_read, "hbm_read"},
    {OpClass::hbm_write, "hbm_write"},
    {OpClass::hbm_copy, "hbm_copy"},
    {OpClass::hbm_triad, "hbm_triad"},
    {OpClass::l2_read, "l2_read"},
    {OpClass::layer_fwd, "layer_fwd"},
    {OpClass::layer_bwd, "layer_bwd"},
}};

}  // namespace

std::string_view op_class_name(OpClass op) {
  for (const auto& [value, name] : kOpNames) {
    if (value == op) return name;
  }
  throw ConfigError("op_class_name: invalid OpClass value");
}

OpClass parse_op_class(std::string_view name) {
  std::string valid;
  for (const auto& [value, op_name] : kOpNames) {
    if (op_name == name) return value;
    if (!valid.empty()) valid += " | ";
    valid += op_name;
  }
  throw ConfigError("unknown op '" + std::string(name) + "'; valid ops: " + valid);
}

bool is_matrix_op(OpClass op) {
  return op == OpClass::gemm || op == OpClass::batched_gemm || op == OpClass::attention;
}

bool is_bandwidth_op(OpClass op) {
  return !is_matrix_op(op) && op != OpClass::layer_fwd && op != OpClass::layer_bwd;
}

std::string describe_kernel(const KernelShape& shape) {
  // Built with append() only: GCC 12 warns (-Wrestrict, a false positive) on "x" + string.
  std::string text(op_class_name(shape.op));
  const auto append_number = [&text](const char* prefix, std::int64_t value) {
    text.append(prefix);
    text.append(std::to_string(value));
  };
  if (shape.op == OpClass::gemm || shape.op == OpClass::batched_gemm) {
    text.append(" ");
    text.append(dtype_name(shape.dtype));
    append_number(" ", shape.m);
    append_number("x", shape.n);
    append_number("x", shape.k);
    if (shape.batch != 1) append_number(" batch ", shape.batch);
  } else if (shape.op == OpClass::attention) {
    text.append(" ");
    text.append(dtype_name(shape.dtype));
    text.append(shape.backward ? " bwd" : " fwd");
    if (shape.causal) text.append(" causal");
    append_number(" b", shape.batch);
    append_number(" h", shape.heads);
    append_number("/", shape.kv_heads);
    append_number(" s", shape.seq_q);
    append_number("/", shape.seq_kv);
    append_number(" d", shape.head_dim);
  } else {
    char bytes[32];
    std::snprintf(bytes, sizeof bytes, " %.3g B", shape.bytes);
    text.append(bytes);
  }
  return text;
}

}  // namespace clustersim::models
