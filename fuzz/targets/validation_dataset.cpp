// `validate --dataset` CSVs: the CSV reader, then every row through the training and the serving
// row mappers, which build a scenario from the row's columns; a mapped scenario is loaded, so
// a row cannot smuggle a broken scenario past the loader either.
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "sim/scenario/scenario_loader.hpp"
#include "sim/validate/csv_table.hpp"
#include "sim/validate/serving_validation.hpp"
#include "sim/validate/training_validation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace v = clustersim::validate;
  clustersim::fuzz::expect_parse_or_error([&] {
    const auto rows = v::parse_csv(clustersim::fuzz::as_text(data, size), "fuzz.csv");
    int loaded = 0;
    for (const v::CsvRow& row : rows) {
      std::string problem;
      (void)v::parse_inference_row(row, problem);
      for (const auto& yaml : {v::map_training_row(row).scenario_yaml, v::map_serving_row(row).scenario_yaml}) {
        if (yaml && loaded < 2) {  // loading is the slow part: the first two scenarios suffice
          ++loaded;
          clustersim::fuzz::expect_parse_or_error(
              [&] { (void)clustersim::scenario::load_scenario_from_string(*yaml, "row.yaml"); });
        }
      }
    }
  });
  return 0;
}
