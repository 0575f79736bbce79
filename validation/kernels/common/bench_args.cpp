#include "bench_args.hpp"

#include <charconv>
#include <stdexcept>

namespace clustersim::kernels {

const std::vector<std::string>& shape_sets() {
  static const std::vector<std::string> sets = {"default", "decode"};
  return sets;
}

std::string bench_usage(const std::string& program) {
  return "usage: " + program +
         " --out FILE.csv --accelerator NAME [--warmup N] [--repeats N] [--seconds N] [--quick]"
         " [--shapes default|decode] [--source TEXT] [--meta KEY=VALUE]...";
}

namespace {

int parse_int(const std::string& option, const std::string& text, int minimum) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    throw std::invalid_argument(option + ": expected an integer, got '" + text + "'");
  }
  if (value < minimum) {
    throw std::invalid_argument(option + ": must be >= " + std::to_string(minimum) + ", got " +
                                text);
  }
  return value;
}

}  // namespace

BenchArgs parse_bench_args(const std::vector<std::string>& args) {
  BenchArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& option = args[i];
    if (option == "--quick") {
      parsed.quick = true;
      continue;
    }
    if (option != "--out" && option != "--accelerator" && option != "--warmup" &&
        option != "--repeats" && option != "--seconds" && option != "--shapes" && option != "--source" &&
        option != "--meta") {
      throw std::invalid_argument("unknown option '" + option + "'");
    }
    if (i + 1 >= args.size()) throw std::invalid_argument(option + ": missing value");
    const std::string& value = args[++i];
    if (option == "--out") {
      parsed.out_path = value;
    } else if (option == "--accelerator") {
      parsed.accelerator = value;
    } else if (option == "--warmup") {
      parsed.warmup = parse_int(option, value, 0);
    } else if (option == "--repeats") {
      parsed.repeats = parse_int(option, value, 3);
    } else if (option == "--seconds") {
      parsed.seconds = parse_int(option, value, 1);
    } else if (option == "--shapes") {
      bool known = false;
      for (const std::string& set : shape_sets()) known = known || set == value;
      if (!known) {
        throw std::invalid_argument("--shapes: expected default or decode, got '" + value + "'");
      }
      parsed.shapes = value;
    } else if (option == "--source") {
      parsed.source = value;
    } else {  // --meta
      const auto equals = value.find('=');
      if (equals == std::string::npos || equals == 0) {
        throw std::invalid_argument("--meta: expected KEY=VALUE, got '" + value + "'");
      }
      parsed.metadata.emplace_back(value.substr(0, equals), value.substr(equals + 1));
    }
  }
  if (parsed.out_path.empty()) throw std::invalid_argument("--out is required");
  if (parsed.accelerator.empty()) throw std::invalid_argument("--accelerator is required");
  return parsed;
}

}  // namespace clustersim::kernels
