# course_add_pybind_twin(<target> SOURCE <file> MODULE <python module name>)
# Builds a plain Python extension module (pybind11, through torch's type casters) into ${CMAKE_BINARY_DIR}/twins.
# Chapter 1 contrasts it with the same function registered as a dispatcher operator; the grader's worker imports it.
execute_process(
  COMMAND "${COURSE_PYTHON}" -c "import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))"
  OUTPUT_VARIABLE _py_info RESULT_VARIABLE _py_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _py_rc EQUAL 0)
  message(FATAL_ERROR "${COURSE_PYTHON} could not report its include directory (needed for the pybind11 twin)")
endif()
string(REPLACE "\n" ";" _py_info "${_py_info}")
list(GET _py_info 0 COURSE_PYTHON_INCLUDE_DIR)
list(GET _py_info 1 COURSE_PYTHON_EXT_SUFFIX)
if(NOT EXISTS "${COURSE_PYTHON_INCLUDE_DIR}/Python.h")
  message(FATAL_ERROR "Python.h is not in ${COURSE_PYTHON_INCLUDE_DIR}: install Python's development headers "
                      "(Debian: python3-dev) to build the pybind11 twin of chapter 1")
endif()

function(course_add_pybind_twin target)
  cmake_parse_arguments(ARG "" "SOURCE;MODULE" "" ${ARGN})
  add_library(${target} MODULE "${ARG_SOURCE}")
  set_target_properties(${target} PROPERTIES
    CXX_STANDARD ${COURSE_CXX_STANDARD} CXX_STANDARD_REQUIRED ON PREFIX "" OUTPUT_NAME "${ARG_MODULE}"
    SUFFIX "${COURSE_PYTHON_EXT_SUFFIX}" LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/twins")
  target_include_directories(${target} SYSTEM PRIVATE "${COURSE_PYTHON_INCLUDE_DIR}")
  target_link_libraries(${target} PRIVATE Course::torch torch_python)
endfunction()
