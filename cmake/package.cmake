# cpack -G DEB (from the build tree: cd build && cpack -G DEB): one package,
# ollama-audit, holding what `cmake --install` installs under /usr. Its
# run-time dependencies come from dpkg-shlibdeps (libjansson4, libxxhash0,
# libssl3, libarchive13 and libc6 on Debian 12) when it is there, else from the list
# below. libsystemd0 is recommended, not required: `history` loads it to
# read the journal (dlopen) and says so when it cannot.
set(CPACK_PACKAGE_NAME ollama-audit)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "The ollama-audit authors <maintainers@users.noreply.a-seed-c689fe1f.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "offline auditor for Ollama model stores")
set(CPACK_PACKAGE_DESCRIPTION "Audits an Ollama model store without a server or network: lists models,\n checks every reference, size and weight header, verifies sha256, reports\n disk usage and removes junk on request. Includes the libollama_audit\n library, its headers, pkg-config file and CMake package.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Homepage: this project's own page. The repository documents none, so the
# field is left out (it is optional) unless the packager names one; never
# Ollama's, which is another project.
set(OA_HOMEPAGE_URL "" CACHE STRING "The project's home page: the .deb's Homepage field (none when empty)")
if(OA_HOMEPAGE_URL)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${OA_HOMEPAGE_URL}")
endif()
# The shared library gets a shlibs file and the ldconfig trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
find_program(OA_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(OA_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libjansson4, libxxhash0, libssl3, libarchive13")
endif()
if(SYSTEMD_FOUND)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libsystemd0")
endif()
# The headers use jansson's: a program built against the library needs it.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libjansson-dev, pkg-config, prometheus-node-exporter")
set(CPACK_STRIP_FILES ON)
include(CPack)
