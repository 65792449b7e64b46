# SPDX-License-Identifier: BSD-3-Clause
# Run by CPack (CPACK_PRE_BUILD_SCRIPTS) on the staged files of each Debian
# package before it is built: what Debian's policy asks that CMake's install
# rules do not give.
#   /usr/share/doc/<package>/copyright    machine-readable (DEP-5), from LICENSE
#   /usr/share/doc/<package>/changelog.gz a Debian changelog of this version
#   /usr/share/man/*/*.N                  compressed with gzip -9n
set(stage "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
if(NOT IS_DIRECTORY "${stage}")
  message(FATAL_ERROR "cmake/debian.cmake: no staging directory '${stage}'")
endif()

# copyright: the holders and the licence text of LICENSE.
file(READ "${CPACK_DMACONN_LICENSE_FILE}" licence)
string(REGEX MATCH "Copyright \\(c\\) ([^\n]*)" line "${licence}")
set(holders "${CMAKE_MATCH_1}")
string(FIND "${licence}" "Redistribution" start)
if(NOT holders OR start LESS 0)
  message(FATAL_ERROR "cmake/debian.cmake: ${CPACK_DMACONN_LICENSE_FILE} is not the expected BSD-3-Clause text")
endif()
string(SUBSTRING "${licence}" ${start} -1 body)
string(STRIP "${body}" body)
string(REGEX REPLACE "\n\n" "\n.\n" body "${body}")
string(REGEX REPLACE "\n" "\n " body "${body}")
set(copyright "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: dmaconn

Files: *
Copyright: ${holders}
License: BSD-3-Clause

License: BSD-3-Clause
 ${body}
")

foreach(component IN LISTS CPACK_COMPONENTS_ALL)
  string(TOUPPER "${component}" upper)
  set(package "${CPACK_DEBIAN_${upper}_PACKAGE_NAME}")
  set(root "${stage}/${component}")
  if(NOT package OR NOT IS_DIRECTORY "${root}")
    message(FATAL_ERROR "cmake/debian.cmake: component ${component}: no package name or no '${root}'")
  endif()
  set(doc "${root}${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc/${package}")
  file(MAKE_DIRECTORY "${doc}")
  file(WRITE "${doc}/copyright" "${copyright}")
  file(WRITE "${doc}/changelog" "dmaconn (${CPACK_DMACONN_VERSION}) unstable; urgency=medium

  * Release ${CPACK_DMACONN_VERSION}.

 -- ${CPACK_PACKAGE_CONTACT}  ${CPACK_DMACONN_PACKAGE_DATE}
")
  file(GLOB_RECURSE pages "${root}/*/share/man/man*/*")
  foreach(f IN LISTS pages ITEMS "${doc}/changelog")
    if(NOT f MATCHES "\\.gz$")
      execute_process(COMMAND gzip -9nf "${f}" RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "cmake/debian.cmake: gzip ${f} failed")
      endif()
    endif()
  endforeach()
endforeach()
