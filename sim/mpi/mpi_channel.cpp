#include "sim/mpi/mpi_channel.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <thread>

#include "sim/engine/error.hpp"

namespace clustersim::mpi {

MpiSession::MpiSession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) throw Error("MPI is already initialised in this process");
  MPI_Init(nullptr, nullptr);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // MPI_Abort does not return; [[noreturn]] needs the compiler to know
}

MpiChannel::MpiChannel() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

void MpiChannel::send(int to, sweep::FarmTag tag, const std::vector<std::uint8_t>& bytes) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error(fmt::format("sweep farm: a message of {} bytes is too large for one MPI_Send", bytes.size()));
  }
  // MPI_Send takes a non-const buffer in older bindings; it does not write to it.
  MPI_Send(const_cast<std::uint8_t*>(bytes.data()), static_cast<int>(bytes.size()), MPI_BYTE, to,
           static_cast<int>(tag), MPI_COMM_WORLD);
}

sweep::FarmMessage MpiChannel::receive() {
  MPI_Status status;
  int arrived = 0;
  auto pause = std::chrono::microseconds(50);
  while (true) {
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status);
    if (arrived != 0) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));  // points take milliseconds or more
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  sweep::FarmMessage message;
  message.source = status.MPI_SOURCE;
  message.tag = static_cast<sweep::FarmTag>(status.MPI_TAG);
  message.bytes.resize(static_cast<std::size_t>(count));
  MPI_Recv(message.bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return message;
}

}  // namespace clustersim::mpi
