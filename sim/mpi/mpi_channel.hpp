#pragma once
/// The sweep farm's messages over MPI (`clustersim sweep --mpi`, sim/sweep/point_farm.hpp).
/// Built only with -DCLUSTERSIM_WITH_MPI=ON (OpenMPI); the rest of the simulator knows no MPI.
#include <vector>

#include "sim/sweep/point_farm.hpp"

namespace clustersim::mpi {

/// MPI_Init when made, MPI_Finalize when destroyed: one per process, on the main thread (the
/// farm calls MPI from it only).
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  /// Ends every rank of the job (MPI_Abort) with `exit_code`.
  [[noreturn]] void abort(int exit_code);
};

/// A FarmChannel on MPI_COMM_WORLD: each message is one MPI_Send of its bytes, tagged with its
/// FarmTag. receive() polls (MPI_Iprobe, then a short sleep) instead of blocking in MPI_Recv,
/// whose busy wait would take a core from the workers on a machine running more ranks than it
/// has cores (CI: 3 ranks on 2 cores).
class MpiChannel final : public sweep::FarmChannel {
 public:
  MpiChannel();
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int to, sweep::FarmTag tag, const std::vector<std::uint8_t>& bytes) override;
  sweep::FarmMessage receive() override;

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace clustersim::mpi
