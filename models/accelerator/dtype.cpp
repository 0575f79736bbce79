#include "models/accelerator/dtype.hpp"

#include <array>
#include <string>

#include "sim/engine/error.hpp"

namespace clustersim::models {

namespace {

constexpr std::array<Dtype, 6> kAllDtypes = {Dtype::fp32, Dtype::tf32, Dtype::bf16,
                                             Dtype::fp16, Dtype::fp8,  Dtype::fp4};

}  // namespace

double dtype_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32:
    case Dtype::tf32:  // tf32 is a math mode; operands live in memory as fp32
      return 4.0;
    case Dtype::bf16:
    case Dtype::fp16:
      return 2.0;
    case Dtype::fp8:
      return 1.0;
    case Dtype::fp4:
      return 0.5;
  }
  throw ConfigError("dtype_bytes: invalid Dtype value");
}

double output_dtype_bytes(Dtype dtype) {
  const double bytes = dtype_bytes(dtype);
  return bytes < 2.0 ? 2.0 : bytes;
}

double stored_element_bytes(Dtype precision) { return output_dtype_bytes(precision); }

std::string_view dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp32:
      return "fp32";
    case Dtype::tf32:
      return "tf32";
    case Dtype::bf16:
      return "bf16";
    case Dtype::fp16:
      return "fp16";
    case Dtype::fp8:
      return "fp8";
    case Dtype::fp4:
      return "fp4";
  }
  throw ConfigError("dtype_name: invalid Dtype value");
}

Dtype parse_dtype(std::string_view name) {
  std::string valid;
  for (Dtype dtype : kAllDtypes) {
    if (dtype_name(dtype) == name) return dtype;
    if (!valid.empty()) valid += ", ";
    valid += dtype_name(dtype);
  }
  throw ConfigError("unknown dtype '" + std::string(name) + "'; valid dtypes: " + valid);
}

}  // namespace clustersim::models
