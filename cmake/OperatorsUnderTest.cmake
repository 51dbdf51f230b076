# The operators that chapters 7 to 9 test rather than write: the student's Python code (a test harness, a profiler
# query, a target inspector) runs against libraries the course builds here.
#
# Chapter 7: the correct course::mm16 (exercise 06's solution) and planted-bug variants of it, each in
# build/harness_targets/NAME/libmm16_autograd.so ("correct" is the correct one). Each variant swaps one source of the
# reference for that file as a planted case has it: the case's reference file with the case's patch applied, written
# at build time by opcourse/planted.py (the module run_planted.py uses too), so the bug is the very code
# the grader's own planted tests grade.
#
# A harness must learn which operator it was given only by calling it, so the files say nothing else:
#  * the correct one is built like the variants, from the same compiled objects (the course's own build of chapter 6
#    in build/lib/ was compiled separately and differs in its local symbols);
#  * the source paths compiled into them (__FILE__ in every TORCH_CHECK message) all read mm16/FILE, never
#    build/harness_sources/NAME/...;
#  * no build id, no local symbol table (-s), nothing exported (every definition is local), and every variant imports
#    the union of what any of them imports (autograder/operators_under_test/imports.py): `nm` and `nm -D` list the
#    same names for all of them;
#  * a .course_salt page that the judge fills with random bytes before each run, when it also pads the copy to a
#    random size (harness_checks.cpp): no hash, size or mtime is shared by two runs.
# Each is linked twice: once without the union (build/harness_targets_raw/, only to read what it imports), then with
# it. autograder/operators_under_test/mm16_call_counter.cpp is in every one: it counts the calls the harness makes.
#
# Chapter 9: one small kernel built for several target sets (cuobjdump lists what each embeds), and a library with no
# device code at all.
#
# A copy of the course without solutions/ (the Gradescope zip) gets them built: COURSE_PREBUILT_OPERATORS names a folder
# whose operators.json lists them (written by `course gradescope-zip`, paths relative to that folder).
set(COURSE_OPERATOR "")
set(COURSE_HARNESS_TARGETS "")
set(COURSE_GRADING_TARGETS "")  # what grading needs built besides the judge (the `grader` target)
set(_op_dir "${CMAKE_SOURCE_DIR}/solutions/06_autograd")
set(_planted "${CMAKE_SOURCE_DIR}/autograder/planted")
set(_out "${CMAKE_SOURCE_DIR}/autograder/operators_under_test")
set(COURSE_PREBUILT_OPERATORS "" CACHE PATH "folder with operators.json: the operators under test, built elsewhere")
if(COURSE_PREBUILT_OPERATORS)
  file(READ "${COURSE_PREBUILT_OPERATORS}/operators.json" _ops)
  string(JSON _rel GET "${_ops}" course_operator)
  set(COURSE_OPERATOR "${COURSE_PREBUILT_OPERATORS}/${_rel}")
  string(JSON _n LENGTH "${_ops}" harness_targets)
  set(_json_items "")
  math(EXPR _last "${_n} - 1")
  foreach(_i RANGE ${_last})
    string(JSON _t GET "${_ops}" harness_targets ${_i})
    string(JSON _lib GET "${_t}" library)
    string(JSON _t SET "${_t}" library "\"${COURSE_PREBUILT_OPERATORS}/${_lib}\"")
    list(APPEND _json_items "${_t}")
  endforeach()
  list(JOIN _json_items ", " COURSE_HARNESS_TARGETS)
elseif(COURSE_BUILD_LIBRARIES AND EXISTS "${_op_dir}/mm16_autograd.cpp")
  set(COURSE_OPERATOR "${CMAKE_BINARY_DIR}/lib/solutions/06_autograd/libmm16_autograd.so")
  if(NOT CMAKE_READELF)
    find_program(CMAKE_READELF readelf REQUIRED)
  endif()
  set(_op_files mm16_cpu.cpp mm16_cuda.cpp mm16_kernel.cu mm16_meta.cpp mm16_autograd.cpp)
  # name | the source it replaces | the planted case whose version of that source it takes | needs a GPU to show
  set(_targets
    "correct|||cpu"
    "wrong_forward_float64|mm16_cpu.cpp|06_autograd/forward_2x_float64|cpu"
    "wrong_forward_float16|mm16_cpu.cpp|03_cpu/forward_2x_float16|cpu"
    "ignores_strides|mm16_cpu.cpp|03_cpu/ignores_strides|cpu"
    "exit_on_invalid|mm16_cpu.cpp|03_cpu/exit_on_invalid|cpu"
    "missing_fake|mm16_meta.cpp|05_fake/fake_missing|cpu"
    "fake_wrong_shape|mm16_meta.cpp|05_fake/fake_wrong_shape|cpu"
    "wrong_backward|mm16_autograd.cpp|06_autograd/backward_2x|cpu"
    "wrong_backward_b|mm16_autograd.cpp|06_autograd/backward_b_2x|cpu"
    "wrong_dtype|mm16_cpu.cpp|03_cpu/wrong_dtype|cpu"
    "default_stream|mm16_kernel.cu|04_cuda/default_stream|cuda"
    "wrong_device|mm16_cuda.cpp|04_cuda/output_on_cpu|cuda")
  # Without the CUDA toolkit (COURSE_CUDA=off): the operators' CPU sources alone, as exercise 06's solution is built
  # then, and no variant whose bug is in a CUDA source (the judge SKIPS the rows that would use them).
  set(_op_link Course::torch_cuda)
  if(NOT COURSE_WITH_CUDA)
    set(_op_link Course::torch)
    list(REMOVE_ITEM _op_files mm16_cuda.cpp mm16_kernel.cu)
    list(FILTER _targets EXCLUDE REGEX "\\|cuda$")
  endif()
  # Every source path compiled into an operator under test reads mm16/FILE, whichever folder it came from.
  # The build may name a source by its absolute path or relative to the build folder (Ninja does, and ccache with a
  # CCACHE_BASEDIR rewrites absolute paths that way): both are mapped.
  function(_harness_neutral_paths target dir)
    file(RELATIVE_PATH _rel "${CMAKE_BINARY_DIR}" "${dir}")
    foreach(_from "${dir}" "${_rel}")
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-ffile-prefix-map=${_from}=mm16>
                             $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-ffile-prefix-map=${_from}=mm16>)
    endforeach()
  endfunction()
  # the reference's sources, compiled once and shared by every operator
  foreach(_f IN LISTS _op_files)
    string(REPLACE "." "_" _obj "harness_ref_${_f}")
    add_library(${_obj} OBJECT "${_op_dir}/${_f}")
    set_target_properties(${_obj} PROPERTIES CXX_STANDARD ${COURSE_CXX_STANDARD} CUDA_STANDARD 17 POSITION_INDEPENDENT_CODE ON
                          CUDA_ARCHITECTURES "${COURSE_CUDA_ARCHITECTURES}")
    target_link_libraries(${_obj} PRIVATE ${_op_link})
    _harness_neutral_paths(${_obj} "${_op_dir}")
  endforeach()
  add_library(harness_call_counter OBJECT "${_out}/mm16_call_counter.cpp")
  set_target_properties(harness_call_counter PROPERTIES CXX_STANDARD ${COURSE_CXX_STANDARD} POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(harness_call_counter PRIVATE Course::torch)
  _harness_neutral_paths(harness_call_counter "${_out}")
  # every definition local: the libraries export nothing (torch finds the operator through its registrations)
  set(_local_map "${CMAKE_BINARY_DIR}/harness_imports/local.map")
  file(WRITE "${_local_map}" "{ local: *; };\n")
  set(_imports "${CMAKE_BINARY_DIR}/harness_imports/imports.cpp")
  set(_raw_files "")
  set(_raw_targets "")
  set(_json_items "")
  foreach(_t IN LISTS _targets)
    string(REPLACE "|" ";" _t "${_t}")
    list(GET _t 0 _name)
    list(GET _t 1 _swapped)
    list(GET _t 2 _from)
    list(GET _t 3 _device)
    set(_objects "$<TARGET_OBJECTS:harness_call_counter>")
    if(_swapped)
      # the case's version of the swapped source: its starting folder's file, patched (opcourse/planted.py writes it
      # only when its text changed, so an unrelated edit recompiles nothing)
      file(READ "${_planted}/${_from}/expected.json" _expected)
      string(JSON _start GET "${_expected}" submission)
      set(_gen_dir "${CMAKE_BINARY_DIR}/harness_sources/${_name}")
      set(_generated "${_gen_dir}/${_swapped}")
      add_custom_command(OUTPUT "${_generated}"
        COMMAND "${COURSE_PYTHON}" "${CMAKE_SOURCE_DIR}/opcourse/planted.py" write "${CMAKE_SOURCE_DIR}"
                "${_planted}/${_from}" "${_swapped}" "${_generated}"
        DEPENDS "${_planted}/${_from}/expected.json" "${CMAKE_SOURCE_DIR}/${_start}/${_swapped}"
                "${CMAKE_SOURCE_DIR}/opcourse/planted.py"
        COMMENT "planted ${_from}: ${_swapped} for the operator under test ${_name}" VERBATIM)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_planted}/${_from}/expected.json")
      add_library(harness_own_${_name} OBJECT "${_generated}")
      set_target_properties(harness_own_${_name} PROPERTIES CXX_STANDARD ${COURSE_CXX_STANDARD} CUDA_STANDARD 17
                            POSITION_INDEPENDENT_CODE ON CUDA_ARCHITECTURES "${COURSE_CUDA_ARCHITECTURES}")
      target_link_libraries(harness_own_${_name} PRIVATE ${_op_link})
      # the generated source's quoted includes (mm16_kernel.h) are its starting folder's, as in the submission
      target_include_directories(harness_own_${_name} PRIVATE "${CMAKE_SOURCE_DIR}/${_start}")
      _harness_neutral_paths(harness_own_${_name} "${_gen_dir}")
      list(APPEND _objects "$<TARGET_OBJECTS:harness_own_${_name}>")
    endif()
    foreach(_f IN LISTS _op_files)
      if(NOT _f STREQUAL _swapped)
        string(REPLACE "." "_" _obj "harness_ref_${_f}")
        list(APPEND _objects "$<TARGET_OBJECTS:${_obj}>")
      endif()
    endforeach()
    foreach(_stage raw final)
      if(_stage STREQUAL "raw")
        set(_lib harness_raw_${_name})
        set(_dir "${CMAKE_BINARY_DIR}/harness_targets_raw/${_name}")
        add_operator_library(${_lib} SOURCES ${_objects} OUTPUT_NAME mm16_autograd OUTPUT_DIRECTORY "${_dir}")
        list(APPEND _raw_files "${_dir}/libmm16_autograd.so")
        list(APPEND _raw_targets ${_lib})
      else()
        set(_lib harness_target_${_name})
        set(_dir "${CMAKE_BINARY_DIR}/harness_targets/${_name}")
        add_operator_library(${_lib} SOURCES ${_objects} "$<TARGET_OBJECTS:harness_imports>" OUTPUT_NAME mm16_autograd
                             OUTPUT_DIRECTORY "${_dir}")
        # -s: no local symbol table (the variants' local symbols differ: a static helper inlined, a registration
        # missing); the dynamic one holds only the imports, the same for every variant
        target_link_options(${_lib} PRIVATE -s)
      endif()
      set_target_properties(${_lib} PROPERTIES LINKER_LANGUAGE CXX CUDA_ARCHITECTURES "${COURSE_CUDA_ARCHITECTURES}"
                            CUDA_STANDARD 17 LINK_DEPENDS "${_local_map}")
      target_link_libraries(${_lib} PRIVATE ${_op_link})
      target_link_options(${_lib} PRIVATE "LINKER:--build-id=none" "LINKER:--version-script=${_local_map}")
    endforeach()
    list(APPEND COURSE_GRADING_TARGETS harness_target_${_name})
    set(_item "\"name\": \"${_name}\", \"device\": \"${_device}\", \"library\": \"${CMAKE_BINARY_DIR}/harness_targets/${_name}/libmm16_autograd.so\"")
    if(_name STREQUAL "correct")
      string(APPEND _item ", \"correct\": true")
    endif()
    list(APPEND _json_items "{${_item}}")
  endforeach()
  add_custom_command(OUTPUT "${_imports}"
    COMMAND "${COURSE_PYTHON}" "${_out}/imports.py" "${_imports}" "${CMAKE_READELF}" ${_raw_files}
    DEPENDS ${_raw_targets} "${_out}/imports.py"
    COMMENT "the imports of every operator under test, for each of them" VERBATIM)
  add_library(harness_imports OBJECT "${_imports}")
  set_target_properties(harness_imports PROPERTIES POSITION_INDEPENDENT_CODE ON)
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
    list(APPEND COURSE_GRADING_TARGETS portability_${_name})
  endforeach()
  add_library(portability_no_device SHARED "${CMAKE_SOURCE_DIR}/autograder/portability/no_device.cpp")
  set_target_properties(portability_no_device PROPERTIES OUTPUT_NAME probe
                        LIBRARY_OUTPUT_DIRECTORY "${COURSE_PORTABILITY_DIR}/no_device")
  list(APPEND COURSE_GRADING_TARGETS portability_no_device)
endif()
