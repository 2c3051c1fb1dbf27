# Compile flags shared by every Kiln library: warnings, and no exceptions or RTTI in
# the runtime and kernels (the Python extension re-enables them for itself only).

add_library(kiln_compile_options INTERFACE)
target_compile_options(kiln_compile_options INTERFACE
  -Wall -Wextra -Wno-unused-parameter
  $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)

if(KILN_ENABLE_SANITIZERS)
  # vptr checks need RTTI, which the runtime is built without: code with RTTI (tests,
  # bindings) would otherwise reference typeinfo the runtime never emits.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

if(KILN_BUILD_FUZZERS)
  # Coverage feedback for libFuzzer in every Kiln library; the fuzz targets link libFuzzer
  # itself (tests/fuzz).
  add_compile_options(-fsanitize=fuzzer-no-link)
  # UBSan findings stay recoverable here so that tests/fuzz/known_findings.supp can hold
  # back a known one; UBSAN_OPTIONS=halt_on_error=1 still stops at any other.
  add_compile_options(-fsanitize-recover=undefined)
endif()
