#pragma once
/// Numeric formats of accelerator math.
#include <cstddef>
#include <string>
#include <string_view>

#include "sim/config/name_table.hpp"

namespace clustersim::models {

/// Numeric format of an op's math and operands.
enum class Dtype { fp32, tf32, bf16, fp16, fp8, fp4 };
/// Number of Dtype values (for per-format arrays indexed by the enum value).
inline constexpr std::size_t kDtypeCount = 6;

/// Bytes per element of the format as stored in memory (tf32 is stored as fp32).
double dtype_bytes(Dtype dtype);
/// Bytes per element of an op's *output* in this format. Sub-16-bit formats (fp8, fp4) produce
/// bf16 outputs (as cuBLASLt fp8 GEMMs and FlashAttention-3 fp8 do), so this is 2 for them and
/// dtype_bytes() otherwise.
double output_dtype_bytes(Dtype dtype);
/// Bytes per element a mixed-precision run of math precision `precision` stores its
/// activations and model parameters in: 4 for fp32 and tf32, 2 otherwise (fp8 and fp4 runs keep
/// them in bf16, as Transformer Engine does). The one place this width is decided: the stage
/// programs, the data-parallel collectives and the memory footprint read it. Equal to
/// output_dtype_bytes(precision).
double stored_element_bytes(Dtype precision);
/// The names of the formats: "fp32", "tf32", "bf16", "fp16", "fp8", "fp4" (lower case).
const config::NameTable<Dtype>& dtype_names();
/// The format's name (dtype_names()).
std::string_view dtype_name(Dtype dtype);
/// Parses a name; throws ConfigError listing the valid names.
Dtype parse_dtype(std::string_view name);

}  // namespace clustersim::models
