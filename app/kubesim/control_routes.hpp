#pragma once
// The simulator's built-in control routes under /sim/: fault injection (drop, stall and resume
// watches, failing watches and lists, compaction, restore, latency), the truth dump and custom
// resource registration. Every route works through simulator's public interface.

namespace kinformer::sim {

class simulator;

// Registers /sim/faults/..., /sim/truth and /sim/crds on `sim`, which must outlive its server.
void add_builtin_control_routes(simulator& sim);

} // namespace kinformer::sim
