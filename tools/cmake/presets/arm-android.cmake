# Preset "android": the runtime, kernels and host runner for Android arm64-v8a with the
# NDK's own toolchain file (CMakePresets.json points CMAKE_TOOLCHAIN_FILE at
# $env{ANDROID_NDK}/build/cmake/android.toolchain.cmake). Tests need a device or an
# emulator, so none are added here.
if(NOT ANDROID)
  message(FATAL_ERROR
    "The android preset needs the Android NDK: set ANDROID_NDK to the NDK's root "
    "(the folder with build/cmake/android.toolchain.cmake), e.g. "
    "ANDROID_NDK=$HOME/Android/Sdk/ndk/27.0.12077973 cmake --preset android")
endif()
set(CMAKE_BUILD_TYPE Release CACHE STRING "")
set(KILN_BUILD_TESTS OFF CACHE BOOL "")
set(KILN_BUILD_HOST_RUNNER ON CACHE BOOL "")
set(KILN_BUILD_PYTHON OFF CACHE BOOL "")
# The XNNPACK delegate: build XNNPACK (and pthreadpool) for arm64-v8a with the same NDK,
#   cmake -S XNNPACK -B xnnpack-android -DCMAKE_TOOLCHAIN_FILE=$ANDROID_NDK/build/cmake/android.toolchain.cmake \
#     -DANDROID_ABI=arm64-v8a -DANDROID_PLATFORM=android-26 -DXNNPACK_BUILD_TESTS=OFF -DXNNPACK_BUILD_BENCHMARKS=OFF
#   cmake --build xnnpack-android && cmake --install xnnpack-android --prefix $HOME/xnnpack-android
# then: cmake --preset android -DXNNPACK_ROOT=$HOME/xnnpack-android (-DKILN_BUILD_XNNPACK=ON to insist).
# Kiln's delegate uses the subgraph API of Debian's 2022 snapshot; newer XNNPACK releases
# keep those xnn_define_* calls.
