// The PMU-style NPU counters as a Python dict and the per-operation records as a list of
// dicts, shared by the raw virtual-NPU hook (vnpu_bindings.cpp) and the delegate hook
// (ethos_u_bindings.cpp), whose counter structs have the same fields.
#pragma once

#include <cstddef>

#include <nanobind/nanobind.h>

namespace kiln {

/// `byte_slots` entries of bytes_read/bytes_written: the regions plus the internal memory.
template <typename Counters>
nanobind::dict npu_counters_to_dict(const Counters& counters, size_t byte_slots) {
  nanobind::dict out;
  out["operations"] = counters.operations;
  out["chained_operations"] = counters.chained_operations;
  out["dma_transfers"] = counters.dma_transfers;
  out["macs"] = counters.macs;
  out["element_ops"] = counters.element_ops;
  out["commands"] = counters.commands;
  nanobind::list read, written;
  for (size_t i = 0; i < byte_slots; ++i) {
    read.append(counters.bytes_read[i]);
    written.append(counters.bytes_written[i]);
  }
  out["bytes_read"] = read;
  out["bytes_written"] = written;
  return out;
}

/// The first `count` records (vnpu::OpRecord: one per NPU operation) as dicts.
template <typename OpRecord>
nanobind::list npu_op_records_to_list(const OpRecord* records, size_t count) {
  nanobind::list out;
  for (size_t i = 0; i < count; ++i) {
    nanobind::dict op;
    op["kind"] = records[i].kind;
    op["mode"] = records[i].mode;
    op["chained"] = records[i].chained != 0;
    op["command_index"] = records[i].command_index;
    op["macs"] = records[i].macs;
    op["bytes_read"] = records[i].bytes_read;
    op["bytes_written"] = records[i].bytes_written;
    op["cycles"] = records[i].cycles;
    out.append(op);
  }
  return out;
}

}  // namespace kiln
