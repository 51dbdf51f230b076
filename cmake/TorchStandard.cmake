# course_cxx_standard(<out> <TorchConfig.cmake>): the C++ standard the course compiles torch code with. It follows
# the torch in use: the CXX_STANDARD its own CMake config gives the torch target (2.14: 20, whose headers need it),
# never below C++17, the floor of the course's own code; a torch without that line (or without the file) gets 17.
function(course_cxx_standard out torch_config)
  set(_std 17)
  if(EXISTS "${torch_config}")
    file(STRINGS "${torch_config}" _lines REGEX "CXX_STANDARD [0-9]+")
    if(_lines MATCHES "CXX_STANDARD ([0-9]+)" AND CMAKE_MATCH_1 GREATER _std)
      set(_std ${CMAKE_MATCH_1})
    endif()
  endif()
  set(${out} ${_std} PARENT_SCOPE)
endfunction()
