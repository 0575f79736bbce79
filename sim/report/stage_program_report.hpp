#pragma once
/// Report of one pipeline stage's costed per-micro-batch program (`clustersim ops`): every
/// kernel and collective with its time, FLOPs and achieved TFLOP/s, so a user can see where a
/// layer's time goes before simulating the whole step.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/training/stage_program.hpp"

namespace clustersim::report {

/// Table of the stage's embedding, one layer's forward and backward, and the head, with per
/// section totals and the whole micro-batch (layers x chunks included). Times in us; each op's
/// estimator (models::Provenance: measured_table, fitted, roofline, collective_model). GFLOP
/// are the op's model FLOPs (StageOp::flops, the MFU convention), TFLOP/s the kernel's own
/// FLOPs over its time (StageOp::kernel_flops: a causal attention kernel's about half its model
/// FLOPs), the rate to hold against the accelerator's peak.
std::string stage_program_table(const training::StageProgram& program);

/// JSON form: {stage, stages, chunk_layers, chunk_first_layer, chunks, p2p_forward_s, optimizer_s,
/// optimizer_provenance, sections: {name: [{name, kind, time_s, flops, kernel_flops, provenance,
/// overlap}]}}.
nlohmann::json stage_program_json(const training::StageProgram& program);

}  // namespace clustersim::report
