# What `cmake --install` and `cpack -G DEB` install, to the usual places
# (GNUInstallDirs): the program, both libraries, the headers listed in
# OA_PUBLIC_HEADERS, a relocatable pkg-config file, a CMake package, the man
# page, shell completions, the systemd service and timer, and the docs a
# Debian package carries (copyright, changelog).
include(CMakePackageConfigHelpers)

install(TARGETS ollama-audit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ollama_audit ollama_audit_static EXPORT ollama_auditTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${OA_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ollama_audit)

# pkg-config: the prefix relative to the .pc file's own directory, so the
# install can be moved (or made with --prefix after configuring).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(OA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(OA_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(OA_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH oa_up "/oa/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/oa")
  string(REGEX REPLACE "/$" "" oa_up "${oa_up}")
  set(OA_PC_PREFIX "\${pcfiledir}/${oa_up}")
  set(OA_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(OA_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# libsystemd is not among them: journal.c loads it at run time (dlopen).
# libarchive by its library, not its module: `pkg-config --static` would
# pull in the static forms of everything it links (acl, lz4, zstd, ...),
# whose -dev packages a consumer seldom has; libarchive.so brings them.
set(OA_PC_REQUIRES_PRIVATE "libxxhash libcrypto")
set(OA_PC_LIBS_PRIVATE "-larchive -lpthread -lm")
foreach(oa_lib ${CMAKE_DL_LIBS})
  string(APPEND OA_PC_LIBS_PRIVATE " -l${oa_lib}")
endforeach()
configure_file(dist/ollama-audit.pc.in ${CMAKE_BINARY_DIR}/ollama-audit.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ollama-audit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake: find_package(ollama_audit) -> ollama_audit::ollama_audit.
set(OA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ollama_audit)
install(EXPORT ollama_auditTargets NAMESPACE ollama_audit:: DESTINATION ${OA_CMAKE_DIR})
configure_package_config_file(dist/ollama_auditConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ollama_auditConfig.cmake INSTALL_DESTINATION ${OA_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ollama_auditConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ollama_auditConfig.cmake
              ${CMAKE_BINARY_DIR}/ollama_auditConfigVersion.cmake DESTINATION ${OA_CMAKE_DIR})

# Generated from the sources at build time: the gzipped man page and
# changelog (as Debian wants them) and the completion scripts, which the
# program prints from its own command table.
set(OA_GEN ${CMAKE_BINARY_DIR}/dist)
set(oa_gen_files)
foreach(pair "docs/ollama-audit.1:ollama-audit.1.gz" "dist/changelog:changelog.gz")
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 src)
  list(GET pair 1 out)
  add_custom_command(OUTPUT ${OA_GEN}/${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${OA_GEN}
    COMMAND sh -c "gzip -9n < \"$1\" > \"$2\"" sh ${CMAKE_SOURCE_DIR}/${src} ${OA_GEN}/${out}
    DEPENDS ${CMAKE_SOURCE_DIR}/${src} VERBATIM)
  list(APPEND oa_gen_files ${OA_GEN}/${out})
endforeach()
foreach(shell bash zsh fish)
  add_custom_command(OUTPUT ${OA_GEN}/completion.${shell}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${OA_GEN}
    COMMAND sh -c "\"$1\" completion \"$2\" > \"$3\"" sh $<TARGET_FILE:ollama-audit> ${shell}
            ${OA_GEN}/completion.${shell}
    DEPENDS ollama-audit VERBATIM)
  list(APPEND oa_gen_files ${OA_GEN}/completion.${shell})
endforeach()
add_custom_target(ollama-audit-dist ALL DEPENDS ${oa_gen_files})

install(FILES ${OA_GEN}/ollama-audit.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${OA_GEN}/completion.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME ollama-audit)
# Debian's zsh reads vendor-completions under /usr (the .deb), site-functions
# under /usr/local: chosen by the prefix of the install, not of the configure
# (OA_ZSH_DIR is set, and the destination expanded, at install time).
install(CODE "
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(OA_ZSH_DIR \"${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions\")
  else()
    set(OA_ZSH_DIR \"${CMAKE_INSTALL_DATADIR}/zsh/site-functions\")
  endif()
")
install(FILES ${OA_GEN}/completion.zsh DESTINATION \${OA_ZSH_DIR} RENAME _ollama-audit)
install(FILES ${OA_GEN}/completion.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d
        RENAME ollama-audit.fish)
install(FILES dist/copyright ${OA_GEN}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The systemd units name the program by its full path, which is known only
# at install time (cmake --install --prefix P, or /usr in the .deb): the
# service is written straight to its destination then (the build tree may
# not be writable by whoever installs), and listed in install_manifest.txt.
# A prefix under the installing user's home (make install PREFIX=~/.local)
# gets the user units, in <prefix>/share/systemd/user, which the user's
# systemd reads for ~/.local ($XDG_DATA_HOME/systemd/user): that store's
# audit into ~/.local/state/ollama-audit. Any other prefix gets the system
# units, in <prefix>/lib/systemd/system: every store, for node_exporter.
install(CODE "
  set(OA_FULL_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_BINDIR}\")
    set(OA_FULL_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  endif()
  string(REGEX REPLACE \"/+$\" \"\" oa_home \"\$ENV{HOME}\")
  string(FIND \"\${CMAKE_INSTALL_PREFIX}/\" \"\${oa_home}/\" oa_at)
  if(oa_home AND oa_at EQUAL 0)
    set(oa_units \"share/systemd/user\")
    set(oa_unit_in \"${CMAKE_SOURCE_DIR}/dist/ollama-audit-user.service.in\")
  else()
    set(oa_units \"lib/systemd/system\")
    set(oa_unit_in \"${CMAKE_SOURCE_DIR}/dist/ollama-audit.service.in\")
  endif()
  set(oa_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/\${oa_units}\")
  message(STATUS \"Installing: \${oa_dir}/ollama-audit.service\")
  configure_file(\"\${oa_unit_in}\" \"\${oa_dir}/ollama-audit.service\" @ONLY)
  message(STATUS \"Installing: \${oa_dir}/ollama-audit.timer\")
  configure_file(\"${CMAKE_SOURCE_DIR}/dist/ollama-audit.timer\" \"\${oa_dir}/ollama-audit.timer\" COPYONLY)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${oa_dir}/ollama-audit.service\" \"\${oa_dir}/ollama-audit.timer\")
  if(oa_units STREQUAL \"share/systemd/user\")
    message(STATUS \"User units (not enabled): systemctl --user enable --now ollama-audit.timer\")
  endif()
")

include(cmake/package.cmake)
