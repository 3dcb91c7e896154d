# The install layout beyond the binaries and the library:
#   sbin/rspd, bin/rspctl, lib*/librsp.so.0        (targets, elsewhere)
#   lib/systemd/system/rspd.service                unit, paths of the prefix
#   etc/rspd.conf (/etc for prefix /usr)           the commented default file
#   share/man/man8/rspd.8, rspctl.8
#   share/bash-completion/completions/rspctl
#   include/rsp/annotate.h                         the annotations (USDT) for programs

# The default file is what `rspd --default-config` prints: generated from the
# option table, so it always lists every option with its default.
add_custom_command(OUTPUT "${CMAKE_BINARY_DIR}/rspd.conf"
  COMMAND sh -c "\"$<TARGET_FILE:rspd>\" --default-config > \"${CMAKE_BINARY_DIR}/rspd.conf\""
  DEPENDS rspd VERBATIM)
add_custom_target(rspd_conf ALL DEPENDS "${CMAKE_BINARY_DIR}/rspd.conf")

install(FILES man/rspd.8 man/rspctl.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
install(FILES lib/include/rsp/annotate.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/rsp)
install(FILES completions/rspctl
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# The unit and the configuration file are placed when installing, so that
# `cmake --install BUILD --prefix P` writes P's paths into the unit. The
# configuration goes where GNUInstallDirs puts it (/etc for prefix /usr,
# P/etc otherwise); an existing, edited file is kept and the new default
# goes next to it as rspd.conf.default.
install(CODE "
  set(_p \"\${CMAKE_INSTALL_PREFIX}\")
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_SBINDIR}\")
    set(RSPD_BIN \"${CMAKE_INSTALL_SBINDIR}/rspd\")
  else()
    set(RSPD_BIN \"\${_p}/${CMAKE_INSTALL_SBINDIR}/rspd\")
  endif()
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_SYSCONFDIR}\")
    set(_etc \"${CMAKE_INSTALL_SYSCONFDIR}\")
  elseif(_p STREQUAL \"/usr\")
    set(_etc \"/etc\")
  else()
    set(_etc \"\${_p}/${CMAKE_INSTALL_SYSCONFDIR}\")
  endif()
  set(RSPD_CONFIG \"\${_etc}/rspd.conf\")
  configure_file(\"${CMAKE_SOURCE_DIR}/systemd/rspd.service.in\"
                 \"${CMAKE_BINARY_DIR}/rspd.service\" @ONLY)
  file(INSTALL DESTINATION \"\${_p}/lib/systemd/system\" TYPE FILE
       FILES \"${CMAKE_BINARY_DIR}/rspd.service\")
  set(_conf \"\$ENV{DESTDIR}\${RSPD_CONFIG}\")
  if(EXISTS \"\${_conf}\")
    file(READ \"\${_conf}\" _old)
    file(READ \"${CMAKE_BINARY_DIR}/rspd.conf\" _new)
  endif()
  if(EXISTS \"\${_conf}\" AND NOT _old STREQUAL _new)
    message(STATUS \"Keeping \${_conf}; the new default is rspd.conf.default\")
    file(INSTALL DESTINATION \"\${_etc}\" TYPE FILE RENAME rspd.conf.default
         FILES \"${CMAKE_BINARY_DIR}/rspd.conf\")
  else()
    file(INSTALL DESTINATION \"\${_etc}\" TYPE FILE FILES \"${CMAKE_BINARY_DIR}/rspd.conf\")
  endif()
")
