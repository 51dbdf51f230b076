# CMake's reader of exercises/ID/exercise.json (format 2; the schema is autograder/metadata/exercise.schema.json, the
# Python reader opcourse/metadata.py, the judge's Exercise::load).
#
# course_read_exercise(<exercise folder> <prefix>) sets <prefix>_LIBRARY (empty for a Python exercise) and
# <prefix>_SOURCES (the compiled sources: .cpp and .cu; .py files are imported by the worker, never built), and
# <prefix>_CUDA (ON when a source is CUDA), <prefix>_CPU_SOURCES (those not in cuda_sources: what a course without
# the CUDA toolkit builds).
# The strings of the JSON array <key> of <json> into the list <out> (empty when the key is absent).
function(_course_json_strings json key out)
  set(_items "")
  string(JSON _n ERROR_VARIABLE _absent LENGTH "${json}" ${key})
  if(NOT _absent AND _n GREATER 0)
    math(EXPR _last "${_n} - 1")
    foreach(_i RANGE ${_last})
      string(JSON _item GET "${json}" ${key} ${_i})
      list(APPEND _items "${_item}")
    endforeach()
  endif()
  set(${out} "${_items}" PARENT_SCOPE)
endfunction()

function(course_read_exercise dir prefix)
  file(READ "${dir}/exercise.json" _meta)
  set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${dir}/exercise.json")
  string(JSON _version ERROR_VARIABLE _err GET "${_meta}" format_version)
  if(_err OR NOT _version EQUAL 2)
    message(FATAL_ERROR "${dir}/exercise.json: format_version must be 2 (got '${_version}')")
  endif()
  string(JSON _library ERROR_VARIABLE _no_library GET "${_meta}" library)
  if(_no_library)
    set(_library "")
  endif()
  string(JSON _abi ERROR_VARIABLE _no_abi GET "${_meta}" abi)
  if(_no_abi)
    set(_abi classic)
  endif()
  string(JSON _torch_target ERROR_VARIABLE _no_target GET "${_meta}" torch_target)
  if(_no_target)
    set(_torch_target "")
  endif()
  set(${prefix}_ABI "${_abi}" PARENT_SCOPE)
  set(${prefix}_TORCH_TARGET "${_torch_target}" PARENT_SCOPE)
  _course_json_strings("${_meta}" cuda_sources _cuda_sources)
  _course_json_strings("${_meta}" sources _listed)
  set(_sources "")
  set(_cpu_sources "")
  set(_cuda OFF)
  foreach(_src IN LISTS _listed)
    if(_src MATCHES "\\.py$")
      continue()
    endif()
    list(APPEND _sources "${_src}")
    if(NOT _src IN_LIST _cuda_sources)
      list(APPEND _cpu_sources "${_src}")
    endif()
    if(_src MATCHES "\\.cu$")
      set(_cuda ON)
    endif()
  endforeach()
  set(${prefix}_CPU_SOURCES "${_cpu_sources}" PARENT_SCOPE)
  set(${prefix}_LIBRARY "${_library}" PARENT_SCOPE)
  set(${prefix}_SOURCES "${_sources}" PARENT_SCOPE)
  set(${prefix}_CUDA "${_cuda}" PARENT_SCOPE)
endfunction()

# course_stable_abi_flags(<target> <MAJOR.MINOR>): what a stable-ABI library (exercise.json "abi": "stable") is built
# with beyond the classic flags, as the judge builds it (toolchain.json "stable"): TORCH_TARGET_VERSION for the
# target, the limited C API of CPython for its module, and USE_CUDA for the shim's CUDA entry points.
function(course_stable_abi_flags target torch_target)
  string(REPLACE "." ";" _parts "${torch_target}")
  list(GET _parts 0 _major)
  list(GET _parts 1 _minor)
  math(EXPR _value "(${_major} << 8) | ${_minor}" OUTPUT_FORMAT HEXADECIMAL)  # 0x20a for 2.10
  string(SUBSTRING "${_value}" 2 -1 _digits)
  string(LENGTH "${_digits}" _n)
  math(EXPR _padding "4 - ${_n}")
  string(REPEAT "0" ${_padding} _pad)
  string(TOUPPER "${_pad}${_digits}" _digits)
  target_compile_definitions(${target} PRIVATE "TORCH_TARGET_VERSION=0x${_digits}000000000000"
                                               "Py_LIMITED_API=0x03090000" $<$<BOOL:${COURSE_WITH_CUDA}>:USE_CUDA>)
  execute_process(COMMAND "${COURSE_PYTHON}" -c "import sysconfig; print(sysconfig.get_paths()['include'])"
                  OUTPUT_VARIABLE _python_include OUTPUT_STRIP_TRAILING_WHITESPACE)
  target_include_directories(${target} SYSTEM PRIVATE "${_python_include}")
endfunction()
