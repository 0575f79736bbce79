#include "sim/config/units.hpp"

#include <doctest/doctest.h>

#include "tests/relative_approx.hpp"

#include <string>

namespace units_test {

using ::clustersim::tolerance::relative_approx;

using clustersim::config::Dimension;
using clustersim::config::format_quantity;
using clustersim::config::format_quantity_exact;
using clustersim::config::parse_quantity;
using clustersim::config::UnitError;

namespace {
std::string error_of(const char* text, Dimension dimension) {
  try {
    parse_quantity(text, dimension);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("units: byte sizes with decimal and binary prefixes, bits vs bytes") {
  CHECK(parse_quantity("80 GB", Dimension::bytes) == doctest::Approx(80e9));
  CHECK(parse_quantity("80 GiB", Dimension::bytes) == doctest::Approx(85899345920.0));
  CHECK(parse_quantity("1 kB", Dimension::bytes) == 1000.0);
  CHECK(parse_quantity("1 KiB", Dimension::bytes) == 1024.0);
  CHECK(parse_quantity("2 MiB", Dimension::bytes) == 2097152.0);
  CHECK(parse_quantity("50 MB", Dimension::bytes) == 50e6);
  CHECK(parse_quantity("1 TiB", Dimension::bytes) == 1099511627776.0);
  CHECK(parse_quantity("1 TB", Dimension::bytes) == 1e12);
  CHECK(parse_quantity("1 PB", Dimension::bytes) == 1e15);
  CHECK(parse_quantity("1 Mb", Dimension::bytes) == 125000.0);  // megabit
  CHECK(parse_quantity("12 B", Dimension::bytes) == 12.0);
  CHECK(parse_quantity("8 b", Dimension::bytes) == 1.0);
  CHECK(parse_quantity("1e3 B", Dimension::bytes) == 1000.0);
}

TEST_CASE("units: bandwidths, Gb/s is bits, GB/s decimal bytes, GiB/s binary bytes") {
  CHECK(parse_quantity("400 Gb/s", Dimension::bytes_per_s) == doctest::Approx(50e9));
  CHECK(parse_quantity("400 GB/s", Dimension::bytes_per_s) == doctest::Approx(400e9));
  CHECK(parse_quantity("1 GiB/s", Dimension::bytes_per_s) == 1073741824.0);
  CHECK(parse_quantity("3.35 TB/s", Dimension::bytes_per_s) == doctest::Approx(3.35e12));
  CHECK(parse_quantity("1.6 Tb/s", Dimension::bytes_per_s) == doctest::Approx(200e9));
  CHECK(parse_quantity("100 Mb/s", Dimension::bytes_per_s) == doctest::Approx(12.5e6));
  CHECK(parse_quantity("10 kB/s", Dimension::bytes_per_s) == 10000.0);
  CHECK(parse_quantity("1 PB/s", Dimension::bytes_per_s) == 1e15);
  CHECK(parse_quantity("450GB/s", Dimension::bytes_per_s) == doctest::Approx(450e9));
}

TEST_CASE("units: times, compute rates, power and energy") {
  CHECK(parse_quantity("1.5 us", Dimension::seconds) == relative_approx(1.5e-6));
  CHECK(parse_quantity("1.5us", Dimension::seconds) == relative_approx(1.5e-6));
  CHECK(parse_quantity("2 \xC2\xB5s", Dimension::seconds) == relative_approx(2e-6));
  CHECK(parse_quantity("2 ms", Dimension::seconds) == relative_approx(2e-3));
  CHECK(parse_quantity("3 ns", Dimension::seconds) == relative_approx(3e-9));
  CHECK(parse_quantity("4 ps", Dimension::seconds) == doctest::Approx(4e-12).scale(0));
  CHECK(parse_quantity("2 s", Dimension::seconds) == 2.0);
  CHECK(parse_quantity("989 TFLOP/s", Dimension::flops_per_s) == doctest::Approx(989e12));
  CHECK(parse_quantity("312 TFLOPS", Dimension::flops_per_s) == doctest::Approx(312e12));
  CHECK(parse_quantity("67 GFLOP/s", Dimension::flops_per_s) == doctest::Approx(67e9));
  CHECK(parse_quantity("1.2 PFLOP/s", Dimension::flops_per_s) == doctest::Approx(1.2e15));
  CHECK(parse_quantity("700 W", Dimension::watts) == 700.0);
  CHECK(parse_quantity("1.2 kW", Dimension::watts) == doctest::Approx(1200.0));
  CHECK(parse_quantity("2 pJ", Dimension::joules) == doctest::Approx(2e-12).scale(0));
  CHECK(parse_quantity("5 nJ", Dimension::joules) == relative_approx(5e-9));
}

TEST_CASE("units: errors name the problem") {
  CHECK(error_of("400", Dimension::bytes_per_s) ==
        "missing unit: expected a bandwidth such as \"400 Gb/s\" or \"3.35 TB/s\"");
  CHECK(error_of("80 GiB", Dimension::bytes_per_s) ==
        "\"80 GiB\" is a size, expected a bandwidth such as \"400 Gb/s\" or \"3.35 TB/s\"");
  CHECK(error_of("1 us", Dimension::bytes) ==
        "\"1 us\" is a time, expected a size such as \"80 GiB\" or \"50 MB\"");
  CHECK(error_of("-5 GB/s", Dimension::bytes_per_s) == "negative bandwidth \"-5 GB/s\": must be >= 0");
  CHECK(error_of("fast GB/s", Dimension::bytes_per_s) ==
        "bad number in \"fast GB/s\": expected a bandwidth such as \"400 Gb/s\" or \"3.35 TB/s\"");
  CHECK(error_of("", Dimension::seconds) == "empty value: expected a time such as \"1.5 us\" or \"2 ms\"");
  CHECK(error_of("1e999 B", Dimension::bytes).rfind("bad number", 0) == 0);
  try {
    parse_quantity("400 Gbs", Dimension::bytes_per_s);
    FAIL("expected UnitError");
  } catch (const UnitError& e) {
    CHECK(std::string(e.what()) ==
          "unknown unit \"Gbs\" in \"400 Gbs\": expected a bandwidth such as \"400 Gb/s\" or \"3.35 TB/s\"");
    REQUIRE(e.suggestion().has_value());
    CHECK(*e.suggestion() == "Gb/s");
  }
  try {
    parse_quantity("80 GIB", Dimension::bytes);
    FAIL("expected UnitError");
  } catch (const UnitError& e) {
    REQUIRE(e.suggestion().has_value());
    CHECK(*e.suggestion() == "GiB");
  }
}

TEST_CASE("units: format_quantity uses decimal rates, binary sizes, s/ms/us times") {
  CHECK(format_quantity(3.35e12, Dimension::bytes_per_s) == "3.35 TB/s");
  CHECK(format_quantity(50e9, Dimension::bytes_per_s) == "50 GB/s");
  CHECK(format_quantity(85899345920.0, Dimension::bytes) == "80 GiB");
  CHECK(format_quantity(80e9, Dimension::bytes) == "74.5058 GiB");
  CHECK(format_quantity(50.0 * 1048576, Dimension::bytes) == "50 MiB");
  CHECK(format_quantity(1.5e-6, Dimension::seconds) == "1.5 us");
  CHECK(format_quantity(0.25, Dimension::seconds) == "250 ms");
  CHECK(format_quantity(3.0, Dimension::seconds) == "3 s");
  CHECK(format_quantity(0.0, Dimension::seconds) == "0 s");
  CHECK(format_quantity(989e12, Dimension::flops_per_s) == "989 TFLOP/s");
  CHECK(format_quantity(700, Dimension::watts) == "700 W");
  CHECK(format_quantity(2e-12, Dimension::joules) == "2 pJ");
  // Round trip.
  CHECK(parse_quantity(format_quantity(450e9, Dimension::bytes_per_s), Dimension::bytes_per_s) ==
        doctest::Approx(450e9));
}

TEST_CASE("units: format_quantity_exact prints a text that parses back to the same double") {
  CHECK(format_quantity_exact(1e-6, Dimension::seconds) == "1 us");
  CHECK(format_quantity(0.6e-6, Dimension::seconds) == "600 ns");  // 600 x 1e-9 is another double
  CHECK(format_quantity_exact(0.6e-6, Dimension::seconds) == "0.6 us");
  CHECK(parse_quantity(format_quantity_exact(0.9e-6, Dimension::seconds), Dimension::seconds) == 0.9e-6);
  CHECK(format_quantity_exact(1500, Dimension::watts) == "1.5 kW");
  CHECK(format_quantity_exact(31 * 1e-12, Dimension::joules) == "31 pJ");
}

}  // namespace units_test
