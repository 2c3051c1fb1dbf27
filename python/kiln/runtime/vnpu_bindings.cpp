// Python hook for the virtual Ethos-U: run a Vela command stream against caller-owned
// regions (bytearrays, written in place) and get the PMU-style counters back. Registered on
// kiln._runtime by register_vnpu_bindings(); kiln.backends.arm.vnpu wraps it.
#include <cstring>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "backends/arm/vnpu/arch.h"
#include "backends/arm/vnpu/fast_weight_decoder.h"
#include "backends/arm/vnpu/operation_observer.h"
#include "backends/arm/vnpu/scratch_arena.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "backends/arm/vnpu/weight_decoder.h"
#include "python/kiln/runtime/npu_counters_dict.h"
#include "python/kiln/runtime/runtime_error.h"
#include "runtime/core/error.h"

namespace nb = nanobind;

namespace kiln::python {
namespace {

/// Calls a Python function after every operation: (index, op record dict, OFM) where the
/// OFM is (bytes of the dense NHWC feature map, height, width, depth, element size, signed)
/// or None. A Python error is kept and raised once the run is over (it cannot cross the
/// virtual NPU, which is built without exceptions).
class PythonObserver final : public vnpu::OperationObserver {
 public:
  explicit PythonObserver(nb::object callback) : callback_(std::move(callback)) {}
  void on_operation(size_t index, const vnpu::OpRecord& record, const vnpu::OfmView* ofm) override {
    nb::gil_scoped_acquire acquire;
    if (failed_) return;
    try {
      nb::object view = nb::none();
      if (ofm != nullptr) {
        std::vector<uint8_t> dense(ofm->nbytes());
        // `dense` holds exactly nbytes(): the copy cannot be refused for its size.
        (void)ofm->copy_nhwc(Span<uint8_t>(dense.data(), dense.size()));
        view = nb::make_tuple(nb::bytes(reinterpret_cast<const char*>(dense.data()), dense.size()),
                              ofm->height(), ofm->width(), ofm->depth(), ofm->element_size(), ofm->is_signed());
      }
      nb::list records = npu_op_records_to_list(&record, 1);
      callback_(index, records[0], view);
    } catch (nb::python_error& error) {
      error.restore();
      failed_ = true;
    }
  }
  bool failed() const { return failed_; }

 private:
  nb::object callback_;
  bool failed_ = false;
};

void err_or_raise(Error err, const std::string& what) {
  if (err != Error::Ok) raise(err, what);
}

// The work memory the virtual NPU needs for a command stream on `target`.
uint64_t work_memory_bytes(nb::bytes command_stream, const std::string& target) {
  vnpu::Config config;
  if (!vnpu::config_from_target_name(target.c_str(), &config)) {
    throw nb::value_error(("unknown Ethos-U configuration '" + target + "'").c_str());
  }
  if (command_stream.size() % 4 != 0) throw nb::value_error("command_stream length is not a multiple of 4 bytes");
  std::vector<uint32_t> words(command_stream.size() / 4);
  std::memcpy(words.data(), command_stream.c_str(), command_stream.size());
  uint64_t bytes = 0;
  err_or_raise(vnpu::work_memory_bytes(config, Span<const uint32_t>(words.data(), words.size()), &bytes),
               "sizing the work memory of a command stream for the virtual " + target);
  return bytes;
}

nb::dict run_vela(nb::bytes command_stream, nb::list regions, const std::string& arch, int macs,
                  uint64_t max_operations, uint64_t max_macs, nb::object observer) {
  vnpu::Config config;
  const std::string target = arch + "-" + std::to_string(macs);
  if (!vnpu::config_from_target_name(target.c_str(), &config)) {
    throw nb::value_error(("unknown Ethos-U configuration '" + target +
                           "' (ethos-u55-32/64/128/256, ethos-u65-256/512, "
                           "ethos-u85-128/256/512/1024/2048)").c_str());
  }
  if (max_operations > 0) config.max_operations = max_operations;
  if (max_macs > 0) config.max_macs = max_macs;
  if (command_stream.size() % 4 != 0) {
    throw nb::value_error("command_stream length is not a multiple of 4 bytes");
  }
  std::vector<uint32_t> words(command_stream.size() / 4);
  std::memcpy(words.data(), command_stream.c_str(), command_stream.size());
  if (regions.size() > vnpu::kMaxRegions) throw nb::value_error("more than 8 regions");
  vnpu::Region bound[vnpu::kMaxRegions];
  for (size_t i = 0; i < regions.size(); ++i) {
    nb::handle item = regions[i];
    if (item.is_none()) continue;
    if (!nb::isinstance<nb::bytearray>(item)) {
      throw nb::type_error("regions must be bytearray or None");
    }
    nb::bytearray array = nb::borrow<nb::bytearray>(item);
    bound[i] = vnpu::Region{reinterpret_cast<uint8_t*>(array.data()), array.size()};
  }
  // Sized from the stream: what its largest operation needs, not a fixed default.
  uint64_t work_bytes = 0;
  err_or_raise(vnpu::work_memory_bytes(config, Span<const uint32_t>(words.data(), words.size()), &work_bytes),
               "sizing the work memory of a command stream for the virtual " + target);
  std::vector<uint8_t> work(static_cast<size_t>(work_bytes));
  std::vector<vnpu::OpRecord> records(4096);
  vnpu::VirtualNpu npu(config, Span<uint8_t>(work.data(), work.size()));
  PythonObserver python_observer(observer);
  if (!observer.is_none()) npu.set_operation_observer(&python_observer);
  vnpu::Counters counters;
  size_t num_records = 0;
  Error err;
  {
    nb::gil_scoped_release release;
    err = npu.run(Span<const uint32_t>(words.data(), words.size()),
                  Span<const vnpu::Region>(bound, regions.size()), &counters,
                  Span<vnpu::OpRecord>(records.data(), records.size()), &num_records);
  }
  if (python_observer.failed()) throw nb::python_error();
  if (err != Error::Ok) raise(err, "running a command stream on the virtual " + target);
  nb::dict out = npu_counters_to_dict(counters, vnpu::kMaxRegions + 1);
  out["branches"] = counters.branches;
  out["work_memory_used"] = counters.work_memory_used;
  out["work_memory_bytes"] = work_bytes;
  out["ops"] = npu_op_records_to_list(records.data(), num_records < records.size() ? num_records : records.size());
  return out;
}

// The weight stream decoder alone, for checking it against Vela's mlw_codec.
nb::list decode_weights(nb::bytes stream, size_t max_weights) {
  std::vector<int16_t> out(max_weights);
  std::vector<uint8_t> work(1u << 20);
  vnpu::ScratchArena arena(Span<uint8_t>(work.data(), work.size()));
  size_t count = 0;
  Error err = vnpu::decode_weight_stream(
      Span<const uint8_t>(reinterpret_cast<const uint8_t*>(stream.c_str()), stream.size()),
      Span<int16_t>(out.data(), out.size()), arena, &count);
  if (err != Error::Ok) raise(err, "decoding a weight stream");
  nb::list values;
  for (size_t i = 0; i < count; ++i) values.append(out[i]);
  return values;
}

// The Ethos-U85 fast weight format decoder alone, for checking it against Vela's encoder.
nb::list decode_fast_weights(nb::bytes stream, size_t count) {
  std::vector<int16_t> out(count);
  Error err = vnpu::decode_fast_weight_stream(
      Span<const uint8_t>(reinterpret_cast<const uint8_t*>(stream.c_str()), stream.size()),
      Span<int16_t>(out.data(), out.size()));
  if (err != Error::Ok) raise(err, "decoding a fast weight stream");
  nb::list values;
  for (int16_t v : out) values.append(v);
  return values;
}

// {"NPU_OP_CONV": (0, 0x002), "NPU_SET_IFM_BASE0": (1, 0x000), ...}: (cmd1?, code) of the
// architecture of `target` ("ethos-u55-128", "ethos-u85-256", ...).
nb::dict command_codes(const std::string& target) {
  vnpu::Config config;
  if (!vnpu::config_from_target_name(target.c_str(), &config)) {
    throw nb::value_error(("unknown Ethos-U configuration '" + target + "'").c_str());
  }
  const vnpu::ArchLayer& arch = vnpu::arch_layer(config.arch);
  nb::dict out;
  for (uint32_t code = 0; code < 0x400; ++code) {
    if (const char* name = arch.cmd0_name(code)) out[name] = nb::make_tuple(0, code);
    if (const char* name = arch.cmd1_name(code)) out[name] = nb::make_tuple(1, code);
  }
  return out;
}

}  // namespace

void register_vnpu_bindings(nb::module_& m) {
  m.def("run_vela", &run_vela, nb::arg("command_stream"), nb::arg("regions"),
        nb::arg("arch") = "ethos-u55", nb::arg("macs") = 128, nb::arg("max_operations") = 0,
        nb::arg("max_macs") = 0, nb::arg("observer") = nb::none(),
        "Runs a Vela command stream (COP1 payload or bare commands) on the virtual Ethos-U. "
        "regions[i] is region i (bytearray, written in place, or None). arch is 'ethos-u55', "
        "'ethos-u65' or 'ethos-u85'. Returns the counters: operations, dma_transfers, macs, element_ops, "
        "commands, chained_operations, branches, bytes_read/bytes_written per region (index 8 = internal memory), "
        "work_memory_bytes (what the stream was given: vnpu_work_memory_bytes) and work_memory_used, ops "
        "(one dict per operation). observer(index, op, ofm), if given, is called after every "
        "operation with its output (bytes of the dense NHWC OFM, height, width, depth, element "
        "size, signed) or None. Raises KilnRuntimeError with the NPU's reason.");
  m.def("vnpu_work_memory_bytes", &work_memory_bytes, nb::arg("command_stream"), nb::arg("target"),
        "Bytes of work memory the virtual Ethos-U needs to run a Vela command stream (COP1 payload or "
        "bare commands) on target ('ethos-u85-256', ...): its internal memory and the largest operation's "
        "decode scratch. Raises KilnRuntimeError for a stream the NPU refuses.");
  m.def("vnpu_decode_weights", &decode_weights, nb::arg("stream"), nb::arg("max_weights"),
        "Decodes an Ethos-U compressed weight stream (at most max_weights values).");
  m.def("vnpu_decode_fast_weights", &decode_fast_weights, nb::arg("stream"), nb::arg("count"),
        "Decodes `count` weights of an Ethos-U85 fast-format (FWD) weight stream.");
  m.def("vnpu_command_codes", &command_codes, nb::arg("target") = "ethos-u55-128",
        "The virtual NPU's command definitions for a target: {name: (is_cmd1, code)}.");
}

}  // namespace kiln::python
