# course_cxx_standard(<out> <TorchConfig.cmake>): the C++ standard the course compiles torch code with. It follows
# the torch in use: the standard its own CMake config gives the torch target (2.14: CXX_STANDARD 20; 2.15:
# cxx_std_20; their headers need it), never below C++17, the floor of the course's own code; a torch without that line (or without the file) gets 17.
function(course_cxx_standard out torch_config)
  set(_std 17)
  if(EXISTS "${torch_config}")
    # 2.14 and older: set_target_properties(torch ... CXX_STANDARD 20); 2.15: target_compile_features(torch INTERFACE
    # cxx_std_20), a minimum that CMake applies to consumers of the target, which the course's judge flags are not
    file(STRINGS "${torch_config}" _lines REGEX "CXX_STANDARD [0-9]+|cxx_std_[0-9]+")
    foreach(_line IN LISTS _lines)
      if(_line MATCHES "CXX_STANDARD ([0-9]+)|cxx_std_([0-9]+)")
        set(_found "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
        if(_found GREATER _std)
          set(_std ${_found})
        endif()
      endif()
    endforeach()
  endif()
  set(${out} ${_std} PARENT_SCOPE)
endfunction()
