// kiln._runtime.EtdumpRecorder: records a method's executions as an ETDump (profiling and,
// optionally, intermediate values) for kiln.devtools.record_etdump.
#include <nanobind/nanobind.h>

#include <memory>
#include <vector>

#include "python/kiln/runtime/method_handle.h"
#include "python/kiln/runtime/runtime_error.h"
#include "runtime/etdump/etdump_writer.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

/// Owns the writer's memory; attached to one method from construction to stop().
class EtdumpRecorder {
 public:
  EtdumpRecorder(MethodHandle& method, size_t event_bytes, size_t debug_bytes)
      : method_(method), events_(event_bytes), values_(debug_bytes),
        writer_(Span<uint8_t>(events_.data(), events_.size())) {
    if (debug_bytes > 0) writer_.set_debug_buffer({values_.data(), values_.size()});
    method_.set_event_tracer(&writer_);
  }
  ~EtdumpRecorder() { stop(); }

  void stop() {
    if (attached_) method_.set_event_tracer(nullptr);
    attached_ = false;
  }

  nb::bytes etdump() {
    Result<Span<const uint8_t>> dump = writer_.write();
    if (!dump.ok()) raise(dump.error(), "writing the ETDump");
    return nb::bytes(reinterpret_cast<const char*>(dump->data()), dump->size());
  }

  nb::bytes debug_buffer() const {
    const Span<const uint8_t> used = writer_.debug_buffer();
    return nb::bytes(reinterpret_cast<const char*>(used.data()), used.size());
  }

  size_t recorded_events() const { return writer_.recorded_events(); }
  size_t dropped_events() const { return writer_.dropped_events(); }
  size_t dropped_values() const { return writer_.dropped_values(); }

 private:
  MethodHandle& method_;
  // Vectors of uint64_t: the writer needs 8-byte-aligned memory.
  struct Aligned {
    explicit Aligned(size_t bytes) : words((bytes + 7) / 8) {}
    uint8_t* data() { return reinterpret_cast<uint8_t*>(words.data()); }
    size_t size() const { return words.size() * 8; }
    std::vector<uint64_t> words;
  };
  Aligned events_;
  Aligned values_;
  EtdumpWriter writer_;
  bool attached_ = true;
};

}  // namespace

void register_etdump_bindings(nb::module_& m) {
  nb::class_<EtdumpRecorder>(m, "EtdumpRecorder")
      .def(nb::init<MethodHandle&, size_t, size_t>(), nb::arg("method"), nb::arg("event_bytes"),
           nb::arg("debug_bytes"), nb::keep_alive<1, 2>(),
           "Records every execute of `method` from now on into buffers of these sizes.")
      .def("stop", &EtdumpRecorder::stop, "Detaches from the method (the record is kept).")
      .def("etdump", &EtdumpRecorder::etdump, "The ETDump of everything recorded (bytes).")
      .def("debug_buffer", &EtdumpRecorder::debug_buffer, "The intermediate values' bytes.")
      .def_prop_ro("recorded_events", &EtdumpRecorder::recorded_events)
      .def_prop_ro("dropped_events", &EtdumpRecorder::dropped_events)
      .def_prop_ro("dropped_values", &EtdumpRecorder::dropped_values);
}

}  // namespace kiln::python
