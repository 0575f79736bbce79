#pragma once
/// The keys of a model (an entry of a scenario's `models:` map, an inline `workload.model`, or
/// a library file in models/data/llms), with Hugging Face config.json names, each declared once
/// and bound to the TransformerSpec member it sets; and what the declarations cannot say: the
/// keys whose default is another key, and the rules between the mixture-of-experts and
/// latent-attention keys.
#include <string>

#include "models/llm/transformer_spec.hpp"
#include "sim/config/declarations.hpp"

namespace clustersim::models {

/// Every key of a model.
const config::Declarations<TransformerSpec>& transformer_keys();

/// Completes a model read through transformer_keys() from `entry` (its mapping, at dotted
/// `path`): num_key_value_heads defaults to num_attention_heads, intermediate_size to
/// 4 x hidden_size (gelu only), moe_intermediate_size to intermediate_size; an MLA key makes
/// the attention MLA. Adds a problem for every broken rule: both expert-count keys, MoE keys on
/// a dense model, top-k above the experts, no MoE layer left, a partial MLA, a missing
/// intermediate_size.
void complete_transformer(const config::ConfigNode& entry, const std::string& path, TransformerSpec& spec,
                          config::Problems& problems);

}  // namespace clustersim::models
