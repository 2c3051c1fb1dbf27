# Toolchain file for the "android" preset: hands over to the Android NDK's own
# toolchain file, found through the ANDROID_NDK environment (or cache) variable.
# The NDK cannot be installed on Kiln's CI machines; without it configuring stops here
# with instructions instead of CMake's "could not find toolchain file".
if(NOT ANDROID_NDK AND DEFINED ENV{ANDROID_NDK})
  set(ANDROID_NDK "$ENV{ANDROID_NDK}")
endif()
if(NOT ANDROID_NDK)
  message(FATAL_ERROR
    "The android preset needs the Android NDK (r25 or newer): set ANDROID_NDK to its root, e.g.\n"
    "  ANDROID_NDK=$HOME/Android/Sdk/ndk/27.0.12077973 cmake --preset android\n"
    "(get it from Android Studio's SDK manager or https://developer.android.com/ndk/downloads).")
endif()
set(_kiln_ndk_toolchain "${ANDROID_NDK}/build/cmake/android.toolchain.cmake")
if(NOT EXISTS "${_kiln_ndk_toolchain}")
  message(FATAL_ERROR "ANDROID_NDK=${ANDROID_NDK} has no build/cmake/android.toolchain.cmake; "
                      "point it at the NDK's root folder.")
endif()
include("${_kiln_ndk_toolchain}")
