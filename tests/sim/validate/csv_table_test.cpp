#include "sim/validate/csv_table.hpp"

#include <doctest/doctest.h>

#include "sim/engine/error.hpp"

namespace csv_table_test {

using clustersim::validate::parse_csv;

TEST_CASE("CSV rows are addressed by header name, with quoted commas, quotes and newlines") {
  const auto rows = parse_csv(
      "id,source,value\n"
      "a,\"Narayanan et al., SC21\",137\n"
      "\n"
      "b,\"said \"\"hi\"\"\nover two lines\",4.4\r\n"
      "c,,\n",
      "t.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].get("source") == "Narayanan et al., SC21");
  CHECK(rows[0].line == 2);
  CHECK(rows[1].get("source") == "said \"hi\"\nover two lines");
  CHECK(rows[1].get("value") == "4.4");
  CHECK(rows[1].line == 4);
  CHECK(rows[2].line == 6);
  CHECK(rows[2].get("value").empty());
  CHECK(rows[2].get("no such column").empty());
}

TEST_CASE("CSV errors name the file and line") {
  CHECK_THROWS_WITH_AS(parse_csv("id,value\nx,\"open\n", "bad.csv"), "bad.csv:2: unterminated quoted field",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(parse_csv("id,value\nx,1,2\n", "wide.csv"),
                       "wide.csv:2: row has 3 fields but the header has 2", clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(parse_csv("", "empty.csv"), "empty.csv: empty CSV file (no header)",
                       clustersim::ConfigError);
  CHECK_THROWS_WITH_AS(clustersim::validate::read_csv_file("/nonexistent/x.csv"),
                       "/nonexistent/x.csv: cannot read file", clustersim::ConfigError);
}

}  // namespace csv_table_test
