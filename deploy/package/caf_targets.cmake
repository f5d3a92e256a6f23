# CAF 0.17 ships no CMake config: find it by path and define caf::core, caf::io and caf::openssl.
# Included by kinformer's build and by its installed package config, so both see the same targets.
if(NOT TARGET caf::core)
  find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
  foreach(component core io openssl)
    find_library(CAF_${component}_LIBRARY caf_${component} REQUIRED)
    add_library(caf::${component} SHARED IMPORTED)
    set_target_properties(caf::${component} PROPERTIES
      IMPORTED_LOCATION "${CAF_${component}_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}")
  endforeach()
  set_property(TARGET caf::io APPEND PROPERTY INTERFACE_LINK_LIBRARIES caf::core)
  set_property(TARGET caf::openssl APPEND PROPERTY INTERFACE_LINK_LIBRARIES caf::io OpenSSL::SSL)
endif()
