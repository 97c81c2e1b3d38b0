# `cmake --install` and find_package(nexp) for out-of-tree plugins.
include(CMakePackageConfigHelpers)

install(TARGETS nexp_core nexp_torch EXPORT nexpTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/nexp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        PATTERN "*.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/core/include/nexp/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nexp)
install(EXPORT nexpTargets NAMESPACE nexp:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nexp)
if(TARGET nexp_conformance)
  set_target_properties(nexp_conformance PROPERTIES INSTALL_RPATH "$ORIGIN/../../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS nexp_conformance RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/nexp)
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nexpConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nexpConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nexp
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_LIBEXECDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nexpConfigVersion.cmake COMPATIBILITY ExactVersion)
install(FILES ${PROJECT_BINARY_DIR}/nexpConfig.cmake ${PROJECT_BINARY_DIR}/nexpConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/NexpPlugin.cmake ${PROJECT_SOURCE_DIR}/cmake/nexp_plugin.map
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nexp)
