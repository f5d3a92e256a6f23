# `cmake --install`: the library (headers below include/kinformer, static libraries, the CMake
# package kinformer::<part> and kinformer.pc) and the programs (kinformerd, kubesim,
# kinformer-watch, kinformer-subscribe).

# Each library target and the name it has in the package: kinformer_core -> kinformer::core.
set(kinformer_library_parts
  headers core watch_logic discovery stream client
  histogram store controller_queue actors remote controller cli)
foreach(part IN LISTS kinformer_library_parts)
  set_target_properties(kinformer_${part} PROPERTIES EXPORT_NAME ${part})
  add_library(kinformer::${part} ALIAS kinformer_${part})
  list(APPEND kinformer_library_targets kinformer_${part})
endforeach()

install(TARGETS ${kinformer_library_targets} EXPORT kinformerTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kinformer)
install(TARGETS kinformerd kubesim kinformer-watch kinformer-subscribe
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The library's headers, in their tree: protocol/, actors/ and the kubectl-style flags, stop
# signals and allocator tuning (kinformer::cli); the rest of app/ and tests/ are not part of it.
foreach(dir protocol actors)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kinformer/${dir}
    FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(FILES
  ${PROJECT_SOURCE_DIR}/app/common/allocator_tuning.hpp
  ${PROJECT_SOURCE_DIR}/app/common/client_flags.hpp
  ${PROJECT_SOURCE_DIR}/app/common/stop_signals.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kinformer/app/common)

include(CMakePackageConfigHelpers)
set(kinformer_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kinformer)
install(EXPORT kinformerTargets NAMESPACE kinformer:: DESTINATION ${kinformer_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kinformerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kinformerConfig.cmake INSTALL_DESTINATION ${kinformer_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kinformerConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/kinformerConfig.cmake
  ${PROJECT_BINARY_DIR}/kinformerConfigVersion.cmake
  DESTINATION ${kinformer_cmake_dir})
install(FILES ${CMAKE_CURRENT_LIST_DIR}/caf_targets.cmake
  DESTINATION ${kinformer_cmake_dir} RENAME kinformerCafTargets.cmake)

# pkg-config: the static libraries in link order, each before the ones it uses.
set(KINFORMER_PC_LIBS "")
foreach(part cli controller remote actors controller_queue store histogram discovery client
             stream watch_logic core)
  string(APPEND KINFORMER_PC_LIBS " -lkinformer_${part}")
endforeach()
string(STRIP "${KINFORMER_PC_LIBS}" KINFORMER_PC_LIBS)
# The prefix relative to the .pc file, so an installed tree can be moved (--prefix at install).
file(RELATIVE_PATH KINFORMER_PC_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" KINFORMER_PC_PREFIX "${KINFORMER_PC_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/kinformer.pc.in ${PROJECT_BINARY_DIR}/kinformer.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kinformer.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
