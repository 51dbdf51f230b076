# course_arch_list_from_torch(<out> <TORCH_CUDA_ARCH_LIST>): PyTorch's spelling of CUDA targets in CMake's.
#   "7.5+PTX" -> "75" (sm_75 machine code + compute_75 PTX), "9.0" -> "90-real", "9.0a" -> "90a-real".
# Entries are separated by ";" or spaces. Tested in script mode by autograder/tests/test_arch_list.cmake.
function(course_arch_list_from_torch out torch_list)
  set(result "")
  string(REPLACE " " ";" torch_list "${torch_list}")
  foreach(item IN LISTS torch_list)
    if(item STREQUAL "")
      continue()
    endif()
    string(REGEX MATCH "^([0-9]+)\\.([0-9]+)([af]?)(\\+PTX)?$" ok "${item}")
    if(NOT ok)
      message(FATAL_ERROR "TORCH_CUDA_ARCH_LIST entry '${item}' is not of the form 7.5, 7.5+PTX or 9.0a")
    endif()
    # the letter stays: 9.0a is sm_90a, whose arch-specific instructions (wgmma...) sm_90 code cannot use
    set(arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
    if(CMAKE_MATCH_4)
      list(APPEND result "${arch}")
    else()
      list(APPEND result "${arch}-real")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()
