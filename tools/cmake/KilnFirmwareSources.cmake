# Installs the sources a firmware build needs into the Python package (kiln/firmware_sources),
# so that `kiln-deploy` builds firmware after a plain `pip install`, from exactly the sources
# the installed package was built from (kiln/deploy/firmware.py finds them there).
#
# What `cmake --preset arm-baremetal` configures with the options kiln-deploy passes: the
# top-level project, the runtime, kernels and backends, the Arm firmware (examples/arm), the
# CMake modules, toolchains and presets, the kernel-registration codegen and the .pte reader
# and the op-table reader the codegen loads by path (python/kiln/serialize/operator_list.py,
# python/kiln/passes/op_tables.py). No tests, no host runner.

set(_kiln_sources_destination kiln/firmware_sources)
install(FILES "${PROJECT_SOURCE_DIR}/CMakeLists.txt" "${PROJECT_SOURCE_DIR}/CMakePresets.json"
        DESTINATION "${_kiln_sources_destination}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime" "${PROJECT_SOURCE_DIR}/kernels" "${PROJECT_SOURCE_DIR}/backends"
        DESTINATION "${_kiln_sources_destination}"
        PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/examples/arm" DESTINATION "${_kiln_sources_destination}/examples")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/tools/cmake" "${PROJECT_SOURCE_DIR}/tools/codegen"
        DESTINATION "${_kiln_sources_destination}/tools"
        PATTERN "__pycache__" EXCLUDE)
install(FILES "${PROJECT_SOURCE_DIR}/python/kiln/serialize/operator_list.py"
        DESTINATION "${_kiln_sources_destination}/python/kiln/serialize")
install(FILES "${PROJECT_SOURCE_DIR}/python/kiln/passes/op_tables.py"
        DESTINATION "${_kiln_sources_destination}/python/kiln/passes")
