#pragma once
/// Typed errors thrown by library code. Only `main` turns them into exit codes.
#include <stdexcept>
#include <string>

namespace clustersim {

/// Base of every error ClusterSim throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A configuration value is invalid (a model or topology parameter out of range).
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// The simulation cannot honestly produce a result (deadlock, unsupported feature, does not fit).
class SimulationError : public Error {
 public:
  using Error::Error;
};

/// A run reached the event limit its owner set (Engine::set_event_limit).
class EventLimitError : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

}  // namespace clustersim
