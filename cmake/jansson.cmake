# SPDX-License-Identifier: BSD-3-Clause
# Jansson built here from its release source, as a static position-independent
# library linked into libdmaconn_replay and the dmaconn program: a wheel then
# needs nothing but libc, whatever the machine that builds or installs it has.
#
# The source is upstream's jansson-2.14 release tarball as Debian mirrors it
# (the .orig.tar.gz of Debian's jansson package), checked against its SHA-256.
# Offline: -DDMACONN_JANSSON_TARBALL=/path/to/jansson_2.14.orig.tar.gz, or the
# environment variable of that name (what reaches a `pip install .` most
# simply; the CMake variable wins).
#
# Defines the interface target dmaconn_jansson and sets JANSSON_FOUND.
set(DMACONN_JANSSON_VERSION 2.14)
set(DMACONN_JANSSON_SHA256 c739578bf6b764aa0752db9a2fdadcfe921c78f1228c7ec0bb47fa804c55d17b)
set(DMACONN_JANSSON_URL
  "https://deb.debian.org/debian/pool/main/j/jansson/jansson_${DMACONN_JANSSON_VERSION}.orig.tar.gz"
  CACHE STRING "Where the Jansson source tarball is downloaded from")
set(DMACONN_JANSSON_TARBALL "" CACHE FILEPATH
  "A local copy of the Jansson ${DMACONN_JANSSON_VERSION} source tarball (no download)")
if(NOT DMACONN_JANSSON_TARBALL AND NOT "$ENV{DMACONN_JANSSON_TARBALL}" STREQUAL "")
  set(DMACONN_JANSSON_TARBALL "$ENV{DMACONN_JANSSON_TARBALL}")
endif()

set(jansson_root ${CMAKE_BINARY_DIR}/_deps/jansson)
set(jansson_src ${jansson_root}/jansson-${DMACONN_JANSSON_VERSION})
if(NOT EXISTS ${jansson_src}/CMakeLists.txt)
  set(tarball "${DMACONN_JANSSON_TARBALL}")
  if(NOT tarball)
    set(tarball ${jansson_root}/jansson-${DMACONN_JANSSON_VERSION}.tar.gz)
    message(STATUS "Downloading Jansson ${DMACONN_JANSSON_VERSION} from ${DMACONN_JANSSON_URL}")
    file(DOWNLOAD "${DMACONN_JANSSON_URL}" ${tarball} STATUS status
      EXPECTED_HASH SHA256=${DMACONN_JANSSON_SHA256})
    list(GET status 0 code)
    if(NOT code EQUAL 0)
      list(GET status 1 reason)
      file(REMOVE ${tarball})
      message(FATAL_ERROR "Could not download Jansson's source (${reason}) from ${DMACONN_JANSSON_URL}: "
        "give a local copy with -DDMACONN_JANSSON_TARBALL=FILE or the environment variable "
        "DMACONN_JANSSON_TARBALL=FILE (SHA-256 ${DMACONN_JANSSON_SHA256}), "
        "or build against an installed Jansson with -DDMACONN_BUNDLED_JANSSON=OFF")
    endif()
  endif()
  file(SHA256 "${tarball}" sum)
  if(NOT sum STREQUAL DMACONN_JANSSON_SHA256)
    message(FATAL_ERROR "${tarball} is not Jansson ${DMACONN_JANSSON_VERSION}'s source: SHA-256 ${sum}, "
      "expected ${DMACONN_JANSSON_SHA256}")
  endif()
  file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION ${jansson_root})
endif()

# Jansson's own CMake build, library only; it predates CMake 3.5, which CMake 4
# refuses without this.
set(CMAKE_POLICY_VERSION_MINIMUM 3.5)
# Its symbols stay inside whatever links it (a process may hold another
# Jansson): the visibility preset applies to its static library too.
set(CMAKE_POLICY_DEFAULT_CMP0063 NEW)
foreach(off JANSSON_BUILD_SHARED_LIBS JANSSON_EXAMPLES JANSSON_BUILD_DOCS JANSSON_INSTALL JANSSON_COVERAGE)
  set(${off} OFF CACHE INTERNAL "")
endforeach()
set(JANSSON_WITHOUT_TESTS ON CACHE INTERNAL "")
add_subdirectory(${jansson_src} ${CMAKE_BINARY_DIR}/_deps/jansson-build EXCLUDE_FROM_ALL)
unset(CMAKE_POLICY_VERSION_MINIMUM)
unset(CMAKE_POLICY_DEFAULT_CMP0063)
set_target_properties(jansson PROPERTIES POSITION_INDEPENDENT_CODE ON)

add_library(dmaconn_jansson INTERFACE)
target_include_directories(dmaconn_jansson SYSTEM INTERFACE ${CMAKE_BINARY_DIR}/_deps/jansson-build/include)
target_link_libraries(dmaconn_jansson INTERFACE jansson)
set(JANSSON_FOUND ON)
message(STATUS "Jansson ${DMACONN_JANSSON_VERSION}: built from source, linked statically")
# Jansson's licence (MIT) travels with the copy of it that ships.
if(SKBUILD)
  set(jansson_licence_dir licenses)
else()
  set(jansson_licence_dir ${CMAKE_INSTALL_DOCDIR})
endif()
install(FILES ${jansson_src}/LICENSE DESTINATION ${jansson_licence_dir} RENAME jansson-LICENSE COMPONENT lib)
