# add_operator_library(<target> SOURCES <.cpp and .cu files> [OUTPUT_NAME <name>])
# Builds a shared library that torch.ops.load_library() can load. .cu sources bring in the CUDA runtime and are
# compiled for COURSE_CUDA_ARCHITECTURES.
#
# COURSE_CUDA_ARCHITECTURES uses CMake's syntax: "75" = sm_75 machine code + compute_75 PTX, "90-real" = sm_90
# machine code only, "75-virtual" = compute_75 PTX only. TORCH_CUDA_ARCH_LIST ("7.5+PTX;9.0") is translated.
include("${CMAKE_CURRENT_LIST_DIR}/ArchList.cmake")

if(NOT DEFINED COURSE_CUDA_ARCHITECTURES AND DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  course_arch_list_from_torch(_from_env "$ENV{TORCH_CUDA_ARCH_LIST}")
  set(COURSE_CUDA_ARCHITECTURES "${_from_env}" CACHE STRING "CUDA targets of the operator libraries")
endif()
set(COURSE_CUDA_ARCHITECTURES "75;90-real" CACHE STRING
    "CUDA targets of the operator libraries (default: sm_75 cubin + compute_75 PTX + sm_90 cubin)")
# The contract (and the build.targets row) wants sm_75 machine code and compute_75 PTX: say so at configure time.
if(NOT "75" IN_LIST COURSE_CUDA_ARCHITECTURES)
  message(WARNING "COURSE_CUDA_ARCHITECTURES is '${COURSE_CUDA_ARCHITECTURES}' (TORCH_CUDA_ARCH_LIST: "
                  "'$ENV{TORCH_CUDA_ARCH_LIST}'): it lacks '75' (sm_75 machine code + compute_75 PTX), so every "
                  "submission fails the build.targets row. Add 7.5+PTX to TORCH_CUDA_ARCH_LIST, or unset it.")
endif()

function(add_operator_library target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME;OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    CXX_STANDARD ${COURSE_CXX_STANDARD} CXX_STANDARD_REQUIRED ON CXX_VISIBILITY_PRESET default
    PREFIX "lib" OUTPUT_NAME "${ARG_OUTPUT_NAME}")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
  set(has_cuda OFF)
  foreach(src IN LISTS ARG_SOURCES)
    if(src MATCHES "\\.cu$")
      set(has_cuda ON)
    endif()
  endforeach()
  if(has_cuda)
    if(NOT TARGET Course::torch_cuda)
      message(FATAL_ERROR "${target} has CUDA sources but the torch in use has no CUDA")
    endif()
    # CUDA_STANDARD defaults to CXX_STANDARD (20), which CMake < 3.28 cannot pass to nvcc; the .cu files hold no torch
    # headers, so C++17 is enough for them
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${COURSE_CUDA_ARCHITECTURES}" CUDA_STANDARD 17)
    target_link_libraries(${target} PRIVATE Course::torch_cuda)
  else()
    target_link_libraries(${target} PRIVATE Course::torch)
  endif()
endfunction()
