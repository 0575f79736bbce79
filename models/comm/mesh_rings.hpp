#pragma once
/// Rings on a full mesh of point-to-point links (AMD xGMI, Gaudi's RoCE all-to-all), laid out
/// so that no two carry data over the same directed link, as RCCL lays out its channels on an
/// MI300X node: a ring alone gets one link's bandwidth, the rings together every link.
#include <vector>

namespace clustersim::models {

/// Edge-disjoint directed Hamiltonian cycles of the complete directed graph on `n` vertices
/// (0..n-1), each listed from vertex 0 in the order it visits them: n - 1 of them (every
/// directed edge used exactly once) for every n except 4 and 6, where no such decomposition
/// exists (Tillson 1980) and the most that exist are returned (2 for n = 4, 4 for n = 6).
/// n = 2 gives the single ring 0 -> 1 -> 0. Found by a deterministic depth-first search
/// (151 extensions for n = 8) bounded per target count, so a large n may get fewer rings than
/// exist. Throws ConfigError for n < 2.
std::vector<std::vector<int>> disjoint_hamiltonian_rings(int n);

/// For even `m` >= 2: m directed Hamiltonian paths of the complete directed graph on m
/// vertices that together use every directed edge exactly once, path c starting at c and
/// ending at c + m/2 (mod m). Path 0 is the zig-zag 0, 1, -1, 2, -2, ..., m/2 (its steps 1, -2,
/// 3, -4, ... are every non-zero residue once), path c its translate by c. Reversed, they are
/// again such a family (from c + m/2 to c). Throws ConfigError for odd or m < 2.
std::vector<std::vector<int>> disjoint_hamiltonian_paths(int m);

}  // namespace clustersim::models
