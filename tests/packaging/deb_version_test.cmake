# cmake -DSRC=<source dir> -P deb_version_test.cmake: sb_deb_version turns every shape of
# `git describe` output into a valid Debian version.
cmake_minimum_required(VERSION 3.25)
include("${SRC}/cmake/DebVersion.cmake")
foreach(case "v1.2.0|1.2.0" "1.2.0|1.2.0" "v1.2.0-3-gabc1234|1.2.0+3.gabc1234"
        "v1.2.0-rc1|1.2.0~rc1" "v1.2.0-rc1-5-gabc1234|1.2.0~rc1+5.gabc1234"
        "gabc1234|0.1.0+gabc1234" "g1234567|0.1.0+g1234567" "|0.1.0"
        "nightly-2-gabc1234|0.1.0+nightly+2.gabc1234" "release/2.0|0.1.0+release.2.0" "v2.0_beta|2.0.beta")
  string(REGEX REPLACE "\\|.*" "" describe "${case}")
  string(REGEX REPLACE ".*\\|" "" want "${case}")
  sb_deb_version(got "${describe}" "0.1.0")
  if(NOT got STREQUAL want)
    message(SEND_ERROR "describe '${describe}': got '${got}', want '${want}'")
  endif()
  if(NOT got MATCHES "^[0-9][0-9A-Za-z.+~]*$")
    message(SEND_ERROR "describe '${describe}': '${got}' is no Debian version")
  endif()
  find_program(DPKG dpkg)
  if(DPKG)
    execute_process(COMMAND ${DPKG} --validate-version "${got}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(SEND_ERROR "dpkg --validate-version ${got} failed")
    endif()
  endif()
endforeach()
