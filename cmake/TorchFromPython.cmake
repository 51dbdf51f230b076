# Needs COURSE_CUDA_ARCHITECTURES (OperatorLibrary.cmake) first.
# Finds the torch that COURSE_PYTHON imports and describes it as imported targets:
#   Course::torch       headers + libtorch/libtorch_cpu/libc10 (CPU operator libraries)
#   Course::torch_cuda  the above + libtorch_cuda/libc10_cuda + the CUDA runtime (CUDA operator libraries)
# No find_package(Torch): its config probes the GPU and is slow; the operator libraries need only these paths.
if(NOT COURSE_PYTHON)
  set(COURSE_PYTHON "$ENV{COURSE_PYTHON}")
endif()
if(NOT COURSE_PYTHON)
  find_program(COURSE_PYTHON NAMES python3 REQUIRED)
endif()
set(COURSE_PYTHON "${COURSE_PYTHON}" CACHE FILEPATH "Python interpreter whose torch the course builds against")

execute_process(
  COMMAND "${COURSE_PYTHON}" -c [=[
import os, torch
d = os.path.dirname(torch.__file__)
print(torch.__version__)
print(torch.version.cuda or "")
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
print(os.path.join(d, "include") + ";" + os.path.join(d, "include", "torch", "csrc", "api", "include"))
print(os.path.join(d, "lib"))
print(int(hasattr(torch.Tag, "out")))
]=]
  OUTPUT_VARIABLE _torch_info RESULT_VARIABLE _torch_rc ERROR_VARIABLE _torch_err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR "${COURSE_PYTHON} cannot import torch:\n${_torch_err}\nRun tools/setup.sh, or pass -DCOURSE_PYTHON=<python with torch>.")
endif()
string(REPLACE "\n" "|" _torch_info "${_torch_info}")
string(REPLACE "|" ";" _torch_lines "${_torch_info}")
# the include line itself holds a ';', so split by position
list(GET _torch_lines 0 COURSE_TORCH_VERSION)
list(GET _torch_lines 1 COURSE_TORCH_CUDA)
list(GET _torch_lines 2 COURSE_TORCH_CXX11_ABI)
list(GET _torch_lines 3 _inc0)
list(GET _torch_lines 4 _inc1)
list(GET _torch_lines 5 COURSE_TORCH_LIBRARY_DIR)
list(GET _torch_lines 6 COURSE_TORCH_HAS_OUT_TAG)  # at::Tag::out, which exercise 02 teaches (torch 2.11 has none)
set(COURSE_TORCH_INCLUDE_DIRS "${_inc0};${_inc1}")
# The C++ standard follows the torch in use (TorchStandard.cmake)
include("${CMAKE_CURRENT_LIST_DIR}/TorchStandard.cmake")
course_cxx_standard(COURSE_CXX_STANDARD "${COURSE_TORCH_LIBRARY_DIR}/../share/cmake/Torch/TorchConfig.cmake")
message(STATUS "torch ${COURSE_TORCH_VERSION} (CUDA ${COURSE_TORCH_CUDA}) from ${COURSE_PYTHON}; C++${COURSE_CXX_STANDARD}")

set(COURSE_TORCH_DEFINITIONS "_GLIBCXX_USE_CXX11_ABI=${COURSE_TORCH_CXX11_ABI}")
add_library(Course::torch INTERFACE IMPORTED)
target_include_directories(Course::torch SYSTEM INTERFACE ${COURSE_TORCH_INCLUDE_DIRS})
target_compile_definitions(Course::torch INTERFACE ${COURSE_TORCH_DEFINITIONS})
target_link_directories(Course::torch INTERFACE "${COURSE_TORCH_LIBRARY_DIR}")
target_link_libraries(Course::torch INTERFACE torch torch_cpu c10)
target_link_options(Course::torch INTERFACE "LINKER:-rpath,${COURSE_TORCH_LIBRARY_DIR}")

# CUDA: torch must have been built for it and nvcc must be found (COURSE_NVCC, CUDACXX, PATH, /usr/local/cuda).
if(COURSE_TORCH_CUDA AND NOT DEFINED COURSE_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(_nvcc NAMES nvcc HINTS ENV COURSE_NVCC ENV CUDACXX PATHS /usr/local/cuda/bin)
    if(_nvcc)
      set(CMAKE_CUDA_COMPILER "${_nvcc}")
    endif()
  endif()
  if(CMAKE_CUDA_COMPILER)
    set(COURSE_WITH_CUDA ON)
  else()
    set(COURSE_WITH_CUDA OFF)
  endif()
endif()
option(COURSE_WITH_CUDA "Build the CUDA sources of the course" OFF)
if(COURSE_WITH_CUDA)
  set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}")
  # CMake prefers the CUDAHOSTCXX environment variable. The lent GPU image sets it to another g++ (13.3, /opt/gcc),
  # whose libstdc++ then ends up linked statically into every library with a .cu source: such a library segfaults
  # as soon as a TORCH_CHECK message formats a value (measured on the H200). One C++ compiler for everything.
  set(ENV{CUDAHOSTCXX} "${CMAKE_CXX_COMPILER}")
  set(CMAKE_CUDA_ARCHITECTURES "${COURSE_CUDA_ARCHITECTURES}")
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  add_library(Course::torch_cuda INTERFACE IMPORTED)
  target_link_libraries(Course::torch_cuda INTERFACE Course::torch torch_cuda c10_cuda CUDA::cudart)
endif()
