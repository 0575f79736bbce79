#include "models/accelerator/dtype.hpp"

#include "sim/engine/error.hpp"

namespace clustersim::models {

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

const config::NameTable<Dtype>& dtype_names() {
  static const config::NameTable<Dtype> names("dtype", {{"fp32", Dtype::fp32},
                                                        {"tf32", Dtype::tf32},
                                                        {"bf16", Dtype::bf16},
                                                        {"fp16", Dtype::fp16},
                                                        {"fp8", Dtype::fp8},
                                                        {"fp4", Dtype::fp4}});
  return names;
}

std::string_view dtype_name(Dtype dtype) { return dtype_names().name(dtype); }

Dtype parse_dtype(std::string_view name) { return dtype_names().parse(name); }

}  // namespace clustersim::models
