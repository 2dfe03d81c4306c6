# Installation (`cmake --install`), the CMake package (find_package(rseqmc))
# and the Debian package (`cpack -G DEB`).
#
# Installed: include/rseqmc/*.h, librseqmc.so.MAJOR (rseqmc::rseqmc, exported
# to lib/cmake/rseqmc with rseqmcConfig.cmake and rseqmcConfigVersion.cmake,
# SameMajorVersion), and the `rseqmc` command line when RSEQMC_CLI is on (the
# replay commands of counterexamples run it).
include(CMakePackageConfigHelpers)

set(RSEQMC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rseqmc)
install(TARGETS rseqmc_api EXPORT rseqmcTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT rseqmc NAMELINK_COMPONENT rseqmc)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rseqmc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT rseqmc)
install(EXPORT rseqmcTargets NAMESPACE rseqmc:: DESTINATION ${RSEQMC_CMAKE_DIR} COMPONENT rseqmc)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rseqmcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/rseqmcConfig.cmake INSTALL_DESTINATION ${RSEQMC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rseqmcConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rseqmcConfig.cmake ${PROJECT_BINARY_DIR}/rseqmcConfigVersion.cmake
        DESTINATION ${RSEQMC_CMAKE_DIR} COMPONENT rseqmc)
if(RSEQMC_CLI)
  install(TARGETS rseqmc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT rseqmc)
endif()

if(PROJECT_IS_TOP_LEVEL)
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME rseqmc)
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "model checker for Linux restartable sequences (rseq): library, headers, CLI")
  set(CPACK_PACKAGE_CONTACT "rseqmc maintainers <rseqmc@localhost>")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION devel)
  # The library needs Boost.Context, libelf and Zydis (the ELF import), the
  # CLI also Boost.Program_options; the GoogleTest and RapidCheck glue headers
  # need their -dev packages.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libboost-context1.74.0, libboost-program-options1.74.0, libelf1, libzydis4.0, libc6, libstdc++6")
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libgtest-dev, librapidcheck-dev, cmake")
  include(CPack)
endif()
