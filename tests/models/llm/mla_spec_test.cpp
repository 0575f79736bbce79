#include "models/llm/mla_spec.hpp"

#include <doctest/doctest.h>

namespace mla_spec_test {

using namespace clustersim::models;

TEST_CASE("MLA projections of DeepSeek-V3 (h 7168, 128 heads)") {
  const MlaSpec mla{1536, 512, 128, 64, 128};
  CHECK(mla.qk_head_dim() == 192);
  const MlaProjectionParameters p = mla_projection_parameters(mla, 7168, 128);
  // W_DQ 7168 x 1536, W_UQ 1536 x 128 x 192, W_DKV 7168 x 512, W_KR 7168 x 64, W_UK and W_UV
  // 512 x 128 x 128 each, W_O 128 x 128 x 7168.
  CHECK(p.matmul() == 11010048.0 + 37748736.0 + 3670016.0 + 458752.0 + 8388608.0 + 8388608.0 + 117440512.0);
  CHECK(p.norms == 2048.0);
}

TEST_CASE("MLA without query compression uses one W_Q") {
  MlaSpec mla{0, 512, 128, 64, 128};  // DeepSeek-V2-Lite style: q_lora_rank null
  const MlaProjectionParameters p = mla_projection_parameters(mla, 2048, 16);
  CHECK(p.w_dq == 0.0);
  CHECK(p.w_uq == 2048.0 * 16 * 192);
  CHECK(p.norms == 512.0);
  CHECK(p.matmul() == 2048.0 * 16 * 192 + 2048.0 * 512 + 2048.0 * 64 + 512.0 * 16 * 256 + 16.0 * 128 * 2048);
}

}  // namespace mla_spec_test
