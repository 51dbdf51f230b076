# The operators that chapters 7 to 9 test rather than write: the student's Python code (a test harness, a profiler
# query, a target inspector) runs against libraries the course builds here.
#
# Chapter 7: the reference course::mm16 (exercise 06's solution) and planted-bug variants of it. Each variant swaps
# one source of the reference for that file as a planted case has it: the case's reference file with the case's patch
# applied, written at build time by autograder/tests/planted_cases.py (the module run_planted.py uses too), so the
# bug is the very code the grader's own planted tests grade. Every variant has the reference's file name: a harness
# cannot tell them apart by it.
#
# Chapter 9: one small kernel built for several target sets (cuobjdump lists what each embeds), and a library with no
# device code at all.
set(COURSE_OPERATOR "")
set(COURSE_HARNESS_TARGETS "")
set(_op_dir "${CMAKE_SOURCE_DIR}/solutions/06_autograd")
set(_planted "${CMAKE_SOURCE_DIR}/autograder/planted")
if(COURSE_BUILD_LIBRARIES AND COURSE_WITH_CUDA AND EXISTS "${_op_dir}/mm16_autograd.cpp")
  set(COURSE_OPERATOR "${CMAKE_BINARY_DIR}/lib/solutions/06_autograd/libmm16_autograd.so")
  set(_op_files mm16_cpu.cpp mm16_cuda.cpp mm16_kernel.cu mm16_meta.cpp mm16_autograd.cpp)
  # name | the source it replaces | the planted case whose version of that source it takes | needs a GPU to show
  set(_targets
    "wrong_forward_float64|mm16_cpu.cpp|06_autograd/forward_2x_float64|cpu"
    "ignores_strides|mm16_cpu.cpp|03_cpu/ignores_strides|cpu"
    "exit_on_invalid|mm16_cpu.cpp|03_cpu/exit_on_invalid|cpu"
    "missing_fake|mm16_meta.cpp|05_fake/fake_missing|cpu"
    "wrong_backward|mm16_autograd.cpp|06_autograd/backward_2x|cpu"
    "default_stream|mm16_kernel.cu|04_cuda/default_stream|cuda"
    "wrong_device|mm16_cuda.cpp|04_cuda/output_on_cpu|cuda")
  # the reference's sources, compiled once and shared by every variant
  foreach(_f IN LISTS _op_files)
    string(REPLACE "." "_" _obj "harness_ref_${_f}")
    add_library(${_obj} OBJECT "${_op_dir}/${_f}")
    set_target_properties(${_obj} PROPERTIES CXX_STANDARD 20 CUDA_STANDARD 17 POSITION_INDEPENDENT_CODE ON
                          CUDA_ARCHITECTURES "${COURSE_CUDA_ARCHITECTURES}")
    target_link_libraries(${_obj} PRIVATE Course::torch_cuda)
  endforeach()
  set(_json_items "")
  foreach(_t IN LISTS _targets)
    string(REPLACE "|" ";" _t "${_t}")
    list(GET _t 0 _name)
    list(GET _t 1 _swapped)
    list(GET _t 2 _from)
    list(GET _t 3 _device)
    # the case's version of the swapped source: its starting folder's file, patched (planted_cases.py writes it only
    # when its text changed, so an unrelated edit recompiles nothing)
    file(READ "${_planted}/${_from}/expected.json" _expected)
    string(JSON _start GET "${_expected}" submission)
    set(_generated "${CMAKE_BINARY_DIR}/harness_sources/${_name}/${_swapped}")
    add_custom_command(OUTPUT "${_generated}"
      COMMAND "${COURSE_PYTHON}" "${CMAKE_SOURCE_DIR}/autograder/tests/planted_cases.py" write "${CMAKE_SOURCE_DIR}"
              "${_planted}/${_from}" "${_swapped}" "${_generated}"
      DEPENDS "${_planted}/${_from}/expected.json" "${CMAKE_SOURCE_DIR}/${_start}/${_swapped}"
              "${CMAKE_SOURCE_DIR}/autograder/tests/planted_cases.py"
      COMMENT "planted ${_from}: ${_swapped} for the operator under test ${_name}" VERBATIM)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_planted}/${_from}/expected.json")
    set(_sources "${_generated}")
    foreach(_f IN LISTS _op_files)
      if(NOT _f STREQUAL _swapped)
        string(REPLACE "." "_" _obj "harness_ref_${_f}")
        list(APPEND _sources "$<TARGET_OBJECTS:${_obj}>")
      endif()
    endforeach()
    add_operator_library(harness_target_${_name} SOURCES ${_sources} OUTPUT_NAME mm16_autograd
                         OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/harness_targets/${_name}")
    if(_swapped STREQUAL "mm16_kernel.cu")
      set_target_properties(harness_target_${_name} PROPERTIES CUDA_ARCHITECTURES "${COURSE_CUDA_ARCHITECTURES}"
                            CUDA_STANDARD 17)
    endif()
    target_link_libraries(harness_target_${_name} PRIVATE Course::torch_cuda)
    # the generated source's quoted includes (mm16_kernel.h) are its starting folder's, as in the submission
    target_include_directories(harness_target_${_name} PRIVATE "${CMAKE_SOURCE_DIR}/${_start}")
    list(APPEND _json_items "{\"name\": \"${_name}\", \"device\": \"${_device}\", \"library\": \"${CMAKE_BINARY_DIR}/harness_targets/${_name}/libmm16_autograd.so\"}")
  endforeach()
  list(JOIN _json_items ", " _joined)
  set(COURSE_HARNESS_TARGETS "${_joined}")
endif()

set(COURSE_PORTABILITY_DIR "")
if(COURSE_WITH_CUDA)
  set(COURSE_PORTABILITY_DIR "${CMAKE_BINARY_DIR}/portability")
  # variant | CUDA_ARCHITECTURES (CMake's syntax, ',' for ';')
  foreach(_v "cubin_and_ptx|75,90-real" "cubin_only|75-real,90-real" "ptx_only|75-virtual" "newer_ptx|80-real,90")
    string(REPLACE "|" ";" _v "${_v}")
    list(GET _v 0 _name)
    list(GET _v 1 _archs)
    string(REPLACE "," ";" _archs "${_archs}")
    add_library(portability_${_name} SHARED "${CMAKE_SOURCE_DIR}/autograder/portability/probe_kernel.cu")
    set_target_properties(portability_${_name} PROPERTIES CUDA_ARCHITECTURES "${_archs}" OUTPUT_NAME probe
                          LIBRARY_OUTPUT_DIRECTORY "${COURSE_PORTABILITY_DIR}/${_name}")
    target_link_libraries(portability_${_name} PRIVATE CUDA::cudart)
  endforeach()
  add_library(portability_no_device SHARED "${CMAKE_SOURCE_DIR}/autograder/portability/no_device.cpp")
  set_target_properties(portability_no_device PROPERTIES OUTPUT_NAME probe
                        LIBRARY_OUTPUT_DIRECTORY "${COURSE_PORTABILITY_DIR}/no_device")
endif()
