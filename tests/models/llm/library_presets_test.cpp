// Every YAML preset in models/data parses and carries the keys of the preset format; the LLM
// presets give the parameter counts their names promise. (The scenario loader validates units.)
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/accelerator/dtype.hpp"
#include "models/llm/transformer_spec.hpp"

namespace library_presets_test {

using namespace clustersim::models;
namespace fs = std::filesystem;

namespace {

fs::path data_dir() { return fs::path(CLUSTERSIM_TEST_DATA_DIR).parent_path().parent_path() / "models" / "data"; }

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

/// The single entry under `section`, which must be named after the file.
YAML::Node single_entry(const fs::path& file, const char* section) {
  const YAML::Node root = YAML::LoadFile(file.string());
  REQUIRE_MESSAGE(root[section].IsMap(), file.string() << " lacks a '" << section << "' map");
  REQUIRE(root[section].size() == 1);
  const YAML::Node entry = root[section][file.stem().string()];
  REQUIRE_MESSAGE(entry.IsMap(), file.string() << ": entry must be named " << file.stem());
  return entry;
}

void require_string_with_unit(const YAML::Node& node, const std::string& where,
                              const std::string& unit) {
  REQUIRE_MESSAGE(node.IsScalar(), where << " missing");
  const std::string text = node.as<std::string>();
  CHECK_MESSAGE(text.size() > unit.size() + 1, where);
  CHECK_MESSAGE(text.substr(text.size() - unit.size()) == unit, where << " = '" << text
                                                                      << "' should end in " << unit);
}

TransformerSpec spec_from(const fs::path& file) {
  const YAML::Node entry = single_entry(file, "models");
  TransformerSpec spec;
  spec.name = file.stem().string();
  spec.source = entry["source"].as<std::string>();
  spec.hidden_size = entry["hidden_size"].as<std::int64_t>();
  spec.num_hidden_layers = entry["num_hidden_layers"].as<std::int64_t>();
  spec.num_attention_heads = entry["num_attention_heads"].as<std::int64_t>();
  spec.num_key_value_heads = entry["num_key_value_heads"].as<std::int64_t>();
  spec.intermediate_size = entry["intermediate_size"].as<std::int64_t>();
  spec.vocab_size = entry["vocab_size"].as<std::int64_t>();
  spec.max_position_embeddings = entry["max_position_embeddings"].as<std::int64_t>();
  spec.hidden_act = parse_activation(entry["hidden_act"].as<std::string>());
  spec.tie_word_embeddings = entry["tie_word_embeddings"].as<bool>();
  // Mixture of experts: Mixtral's or DeepSeek's key for the expert count; Mixtral's experts
  // are intermediate_size wide.
  const YAML::Node experts = entry["num_local_experts"] ? entry["num_local_experts"] : entry["n_routed_experts"];
  if (experts) {
    spec.moe.num_experts = experts.as<std::int64_t>();
    spec.moe.num_experts_per_tok = entry["num_experts_per_tok"].as<std::int64_t>();
    spec.moe.n_shared_experts = entry["n_shared_experts"].as<std::int64_t>(0);
    spec.moe.moe_intermediate_size = entry["moe_intermediate_size"].as<std::int64_t>(spec.intermediate_size);
    spec.moe.first_k_dense_replace = entry["first_k_dense_replace"].as<std::int64_t>(0);
    spec.moe.moe_layer_freq = entry["moe_layer_freq"].as<std::int64_t>(1);
  }
  if (entry["kv_lora_rank"]) {
    spec.attention = AttentionKind::mla;
    spec.mla.q_lora_rank = entry["q_lora_rank"].as<std::int64_t>(0);
    spec.mla.kv_lora_rank = entry["kv_lora_rank"].as<std::int64_t>();
    spec.mla.qk_nope_head_dim = entry["qk_nope_head_dim"].as<std::int64_t>();
    spec.mla.qk_rope_head_dim = entry["qk_rope_head_dim"].as<std::int64_t>();
    spec.mla.v_head_dim = entry["v_head_dim"].as<std::int64_t>();
  }
  return spec;
}

}  // namespace

TEST_CASE("the library holds the required presets") {
  std::set<std::string> names;
  for (const char* dir : {"accelerators", "llms", "systems"}) {
    for (const fs::path& file : yaml_files(data_dir() / dir)) names.insert(file.stem().string());
  }
  for (const char* name :
       {"a100-sxm-80gb", "h100-sxm", "h200-sxm", "b200", "mi300x", "tpu-v5p", "gaudi3",
        "gpt3-175b", "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b",
        "llama-3.1-405b", "megatron-gpt-1.7b", "megatron-gpt-3.6b", "megatron-gpt-7.5b",
        "megatron-gpt-18.4b", "megatron-gpt-39.1b", "megatron-gpt-76.1b", "megatron-gpt-145.6b",
        "megatron-gpt-310.1b", "megatron-gpt-529.6b", "megatron-gpt-1t", "mixtral-8x7b", "deepseek-v3",
        "dgx-a100", "dgx-h100",
        "dgx-h200", "dgx-b200"}) {
    CHECK_MESSAGE(names.count(name) == 1, "missing preset " << name);
  }
}

TEST_CASE("every preset starts with a Sources comment and parses") {
  for (const char* dir : {"accelerators", "llms", "systems"}) {
    const std::vector<fs::path> files = yaml_files(data_dir() / dir);
    CHECK(!files.empty());
    for (const fs::path& file : files) {
      CHECK_MESSAGE(first_line(file).rfind("# Sources:", 0) == 0, file.string());
      CHECK_NOTHROW(YAML::LoadFile(file.string()));
    }
  }
}

TEST_CASE("accelerator presets have the required keys") {
  const std::set<std::string> vendors = {"nvidia", "amd", "google", "intel"};
  for (const fs::path& file : yaml_files(data_dir() / "accelerators")) {
    const std::string where = file.filename().string();
    const YAML::Node entry = single_entry(file, "accelerators");
    CHECK_MESSAGE(!entry["display_name"].as<std::string>().empty(), where);
    CHECK_MESSAGE(vendors.count(entry["vendor"].as<std::string>()) == 1, where);
    CHECK_MESSAGE(!entry["source"].as<std::string>().empty(), where);
    REQUIRE_MESSAGE(entry["peak"].IsMap(), where);
    CHECK(entry["peak"].size() >= 1);
    for (const auto& peak : entry["peak"]) {
      CHECK_NOTHROW(parse_dtype(peak.first.as<std::string>()));
      require_string_with_unit(peak.second, where + " peak", "TFLOP/s");
    }
    require_string_with_unit(entry["vector_fp32"], where + " vector_fp32", "TFLOP/s");
    // Datasheet GB, or the MiB/GiB total the driver reports (nvidia-smi), which is what a run gets.
    const std::string capacity = entry["memory"]["hbm_capacity"].as<std::string>("");
    require_string_with_unit(entry["memory"]["hbm_capacity"], where + " hbm_capacity",
                             capacity.ends_with("MiB") ? "MiB" : capacity.ends_with("GiB") ? "GiB" : "GB");
    require_string_with_unit(entry["memory"]["hbm_bandwidth"], where + " hbm_bandwidth", "B/s");
    CHECK_MESSAGE(entry["compute_units"].as<int>() > 0, where);
    require_string_with_unit(entry["power"]["tdp"], where + " tdp", "W");
    require_string_with_unit(entry["power"]["idle"], where + " idle", "W");
    for (const char* efficiency : {"matmul", "memory"}) {
      const double value = entry["efficiency"][efficiency].as<double>();
      CHECK_MESSAGE((value > 0.3 && value <= 1.0), where << " efficiency." << efficiency);
    }
    require_string_with_unit(entry["kernel_launch"], where + " kernel_launch", "us");
    CHECK(entry["gemm_tile"]["m"].as<int>() > 0);
    CHECK(entry["gemm_tile"]["n"].as<int>() > 0);
    require_string_with_unit(entry["scale_up_bandwidth"], where + " scale_up_bandwidth", "GB/s");
  }
}

TEST_CASE("system presets name a library accelerator and the fabric it is built into") {
  std::map<std::string, std::string> fabric_of;  // accelerator -> its scale_up_fabric
  for (const fs::path& file : yaml_files(data_dir() / "accelerators")) {
    const YAML::Node entry = YAML::LoadFile(file.string())["accelerators"][file.stem().string()];
    fabric_of[file.stem().string()] = entry["scale_up_fabric"].as<std::string>("");
    CHECK_MESSAGE(!fabric_of[file.stem().string()].empty(), file.stem().string() << " states no scale_up_fabric");
  }
  std::set<std::string> fabrics_seen;
  for (const fs::path& file : yaml_files(data_dir() / "systems")) {
    const std::string where = file.filename().string();
    const YAML::Node root = YAML::LoadFile(file.string());
    const YAML::Node node = root["cluster"]["node"];
    REQUIRE_MESSAGE(node.IsMap(), where);
    const std::string accelerator = node["accelerator"].as<std::string>();
    REQUIRE_MESSAGE(fabric_of.count(accelerator) == 1, where);
    fabrics_seen.insert(fabric_of[accelerator]);
    if (fabric_of[accelerator] == "ici-torus") {
      // A TPU slice: hosts of 4 chips on the ICI torus, no scale-up block, no NICs.
      CHECK(node["per_node"].as<int>() == 4);
      CHECK_FALSE(node["scale_up"].IsDefined());
      CHECK(root["cluster"]["network"]["topology"].as<std::string>() == "torus");
      require_string_with_unit(root["cluster"]["network"]["link"]["bandwidth"], where + " ICI link", "GB/s");
      continue;
    }
    CHECK(node["per_node"].as<int>() == 8);
    CHECK_MESSAGE(node["scale_up"]["fabric"].as<std::string>() == fabric_of[accelerator], where);
    require_string_with_unit(node["scale_up"]["bandwidth"], where + " scale_up", "GB/s");
    require_string_with_unit(node["scale_up"]["latency"], where + " latency", "us");
    CHECK(root["cluster"]["network"]["nic"]["per_node"].as<int>() == 8);
    require_string_with_unit(root["cluster"]["network"]["nic"]["bandwidth"], where + " nic",
                             "Gb/s");
  }
  // Every fabric the library's accelerators are built into has a system preset.
  CHECK(fabrics_seen == std::set<std::string>{"ethernet-mesh", "ici-torus", "nvswitch", "pcie", "xgmi-mesh"});
}

TEST_CASE("LLM presets are valid transformers with the expected parameter counts") {
  // Exact counts from the HF configs (biases ignored); Llama-2-7B matches HF's 6,738,415,616.
  const std::map<std::string, double> exact = {{"llama-2-7b", 6738415616.0},
                                               {"llama-3-70b", 70553706496.0},
                                               {"llama-3.1-405b", 405853388800.0},
                                               {"gpt3-175b", 174566105088.0},
                                               // HF's 7,241,732,096 for Mistral-7B-v0.1
                                               {"mistral-7b", 7241732096.0}};
  // Megatron SC21 Table 1 nominal sizes. The paper's count adds position embeddings and
  // biases and rounds to 0.1 B, so small models differ by up to 3.5% (1.7B: 1.647e9 here).
  const std::map<std::string, double> nominal = {
      {"megatron-gpt-1.7b", 1.7e9},     {"megatron-gpt-3.6b", 3.6e9},
      {"megatron-gpt-7.5b", 7.5e9},     {"megatron-gpt-18.4b", 18.4e9},
      {"megatron-gpt-39.1b", 39.1e9},   {"megatron-gpt-76.1b", 76.1e9},
      {"megatron-gpt-145.6b", 145.6e9}, {"megatron-gpt-310.1b", 310.1e9},
      {"megatron-gpt-529.6b", 529.6e9}, {"megatron-gpt-1t", 1008.0e9}};
  std::size_t checked = 0;
  for (const fs::path& file : yaml_files(data_dir() / "llms")) {
    const TransformerSpec spec = spec_from(file);
    CHECK_NOTHROW(spec.validate());
    CHECK_MESSAGE(spec.max_position_embeddings > 0, spec.name);
    if (auto it = exact.find(spec.name); it != exact.end()) {
      CHECK_MESSAGE(spec.total_parameters() == it->second, spec.name);
      ++checked;
    }
    if (auto it = nominal.find(spec.name); it != nominal.end()) {
      CHECK_MESSAGE(spec.total_parameters() == doctest::Approx(it->second).epsilon(0.035),
                    spec.name);
      CHECK(spec.intermediate_size == 4 * spec.hidden_size);
      CHECK(spec.vocab_size == 51200);
      ++checked;
    }
  }
  CHECK(checked == exact.size() + nominal.size());
}

TEST_CASE("MoE presets give the published total and active parameter counts") {
  struct Published {
    double total;
    double active;
    double tolerance;
    double total_tolerance = 0.002;
  };
  // Mixtral: Jiang et al. 2024 (arXiv:2401.04088), 46.7B total / 12.9B active. DeepSeek-V3:
  // arXiv:2412.19437, 671B total / 37B activated (MTP module excluded from both); our active
  // count includes the embedding and LM head (1.9B), hence the 2% tolerance. Kimi K2:
  // arXiv:2507.20534, 1.04T total / 32B activated (32.6B on its model card); the config's
  // matrices count 1.026T here (within 1.5 %: the report's total is rounded up, and the model
  // card says 1T), the active count includes the embedding and LM head.
  const std::map<std::string, Published> published = {{"mixtral-8x7b", {46.7e9, 12.9e9, 0.002}},
                                                       {"deepseek-v3", {671e9, 37e9, 0.02}},
                                                       {"kimi-k2", {1.04e12, 32.6e9, 0.03, 0.015}}};
  std::size_t checked = 0;
  for (const fs::path& file : yaml_files(data_dir() / "llms")) {
    const TransformerSpec spec = spec_from(file);
    const auto it = published.find(spec.name);
    if (it == published.end()) {
      CHECK_MESSAGE(!spec.is_moe(), spec.name << " is an MoE preset without a published count here");
      continue;
    }
    CHECK(spec.is_moe());
    CHECK_MESSAGE(spec.total_parameters() == doctest::Approx(it->second.total).epsilon(it->second.total_tolerance),
                  spec.name);
    CHECK_MESSAGE(spec.active_parameters() == doctest::Approx(it->second.active).epsilon(it->second.tolerance),
                  spec.name);
    ++checked;
  }
  CHECK(checked == published.size());
}

}  // namespace library_presets_test
