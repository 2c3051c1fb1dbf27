// kiln._runtime.Method: an initialized method with the memory it runs in (sized from its
// MethodMeta) and the input tensors it points at, run on C-contiguous CPU arrays.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/host/method_memory.h"

namespace kiln::python {

using InputArray = nanobind::ndarray<nanobind::ro, nanobind::c_contig, nanobind::device::cpu>;

/// Never moves once built: the runtime keeps pointers to the memory and to the input
/// tensors held here. One thread at a time: a second thread calling execute while the
/// first runs gets InvalidState (load one method per thread to run them in parallel).
class MethodHandle {
 public:
  /// `fill_planned` (0 to 255) is written over the planned buffers before the method
  /// loads; -1 leaves them as allocated.
  MethodHandle(const Program& program, const std::string& name, size_t temp_bytes,
               int fill_planned = -1);
  MethodHandle(const MethodHandle&) = delete;
  MethodHandle& operator=(const MethodHandle&) = delete;

  /// Runs once; copies of the outputs. Each input is a C-contiguous CPU array, or a
  /// Python bool, int or float for a non-tensor input.
  nanobind::list execute(const nanobind::list& inputs);
  /// Outputs of the last run and the duration of each of `iterations` runs (ns).
  nanobind::tuple execute_timed(const nanobind::list& inputs, int64_t iterations);
  /// describe_meta() plus allocator use and init time.
  nanobind::dict meta() const;
  /// What the NPU did in this method's last execute (its Ethos-U delegates' latest calls).
  nanobind::dict npu_counters() const;
  const std::string& name() const { return name_; }
  /// Attaches an event tracer to the method (kiln.devtools' ETDump recording); nullptr
  /// detaches it. The tracer must outlive its use.
  void set_event_tracer(EventTracer* tracer) { method_->set_event_tracer(tracer); }

 private:
  void set_inputs(const nanobind::list& inputs);
  /// A tensor over `array` (kept in held_inputs_), checked for a Kiln dtype and shape.
  EValue tensor_input(const InputArray& array, size_t i, const std::string& context);
  void reapply_inputs();
  void run_once();
  nanobind::list collect_outputs() const;
  nanobind::object to_python(const EValue& value, size_t i) const;

  std::string name_;
  int64_t init_ns_ = 0;
  std::unique_ptr<host::MethodMemory> memory_;
  std::optional<Method> method_;
  std::atomic<bool> busy_{false};

  std::vector<InputArray> held_inputs_;
  std::vector<std::vector<SizesType>> input_sizes_;
  std::vector<std::vector<DimOrderType>> input_dim_orders_;
  std::vector<std::vector<StridesType>> input_strides_;
  // Inputs the program stores in another dim order, reordered from the row-major arrays.
  std::vector<std::vector<uint8_t>> reordered_inputs_;
  std::vector<Tensor> input_tensors_;
  /// One per input: a scalar, or a Tensor value pointing into input_tensors_.
  std::vector<EValue> input_values_;
};

}  // namespace kiln::python
