#pragma once
/// Report of one pipeline stage's costed per-micro-batch program (`clustersim ops`): every
/// kernel and collective with its time, FLOPs and achieved TFLOP/s, so a user can see where a
/// layer's time goes before simulating the whole step.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/training/stage_program.hpp"

namespace clustersim::report {

/// Table of the stage's embedding, one layer's forward and backward, and the head, with per
/// section totals and the whole micro-batch (layers x chunks included). Times in us.
std::string stage_program_table(const training::StageProgram& program);

/// JSON form: {stage, stages, layers, chunks, sections: {name: [ops]}, totals}.
nlohmann::json stage_program_json(const training::StageProgram& program);

}  // namespace clustersim::report
