#pragma once
/// Physical quantities written with units in scenario files: "400 Gb/s", "80 GiB", "1.5 us".
#include <optional>
#include <string>
#include <string_view>

#include "sim/engine/error.hpp"

namespace clustersim::config {

/// Bytes per GiB (2^30): the one definition every model, report and validator uses.
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// What a quantity measures. Parsed values are SI: bytes, bytes/s, seconds, FLOP/s, W, J.
enum class Dimension { bytes, bytes_per_s, seconds, flops_per_s, watts, joules };

/// "size", "bandwidth", "time", "compute rate", "power", "energy".
std::string_view dimension_name(Dimension dimension);
/// An example for messages: "\"400 Gb/s\" or \"3.35 TB/s\"" for a bandwidth.
std::string_view dimension_example(Dimension dimension);
/// The unit printed in docs: "B", "B/s", "s", "FLOP/s", "W", "J".
std::string_view si_unit(Dimension dimension);

/// A quantity string is malformed: no unit, an unknown unit, the wrong dimension, a bad or
/// negative number. `suggestion` holds a close unit spelling when there is one.
class UnitError : public ConfigError {
 public:
  UnitError(const std::string& message, std::optional<std::string> suggestion)
      : ConfigError(message), suggestion_(std::move(suggestion)) {}
  const std::optional<std::string>& suggestion() const { return suggestion_; }

 private:
  std::optional<std::string> suggestion_;
};

/// Parses "<number> <unit>" (space optional) into the SI value of `expected`.
/// Decimal prefixes k M G T P are powers of 1000, binary Ki Mi Gi Ti powers of 1024;
/// "b" is a bit and "B" a byte ("Gb/s" = 1e9/8 B/s). Throws UnitError.
double parse_quantity(std::string_view text, Dimension expected);

/// Human-readable form: decimal prefixes for rates, power and energy ("3.35 TB/s",
/// "989 TFLOP/s"), binary for sizes ("80 GiB"), s/ms/us/ns/ps for times.
std::string format_quantity(double value_si, Dimension dimension);
/// format_quantity's text when it parses back to exactly `value_si`, else the shortest text in
/// another of the dimension's units that does ("0.6 us" for 0.6e-6 s, whose "600 ns" is another
/// double): what a documented default must be, so that writing it changes nothing.
std::string format_quantity_exact(double value_si, Dimension dimension);

}  // namespace clustersim::config
