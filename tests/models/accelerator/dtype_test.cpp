#include "models/accelerator/dtype.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/engine/error.hpp"

namespace dtype_test {

using namespace clustersim;
using namespace clustersim::models;

TEST_CASE("dtype names round-trip and bytes per element") {
  for (Dtype dtype : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16, Dtype::fp8, Dtype::fp4}) {
    CHECK(parse_dtype(dtype_name(dtype)) == dtype);
  }
  CHECK(dtype_bytes(Dtype::tf32) == 4.0);
  CHECK(dtype_bytes(Dtype::bf16) == 2.0);
  CHECK(dtype_bytes(Dtype::fp8) == 1.0);
  CHECK(dtype_bytes(Dtype::fp4) == 0.5);
  CHECK(output_dtype_bytes(Dtype::fp8) == 2.0);
  CHECK(output_dtype_bytes(Dtype::fp4) == 2.0);
  CHECK(output_dtype_bytes(Dtype::fp32) == 4.0);
}

TEST_CASE("parse_dtype rejects unknown names and lists the valid ones") {
  std::string message;
  try {
    parse_dtype("bf17");
  } catch (const ConfigError& error) {
    message = error.what();
  }
  CHECK(message == "unknown dtype 'bf17'; valid: fp32, tf32, bf16, fp16, fp8, fp4");
  CHECK_THROWS_AS(parse_dtype("BF16"), ConfigError);  // names are lower-case
}

}  // namespace dtype_test
