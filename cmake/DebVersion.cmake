# sb_deb_version(OUT DESCRIBE FALLBACK): a valid Debian version from `git describe --tags --always`.
#   v1.2.0           -> 1.2.0
#   v1.2.0-3-gabc123 -> 1.2.0+3.gabc123      (3 commits after the tag)
#   v1.2.0-rc1       -> 1.2.0~rc1            (sorts before 1.2.0)
#   gabc123          -> FALLBACK+gabc123     (no tags: sb_git_describe marks the bare hash with g)
#   "" (no git)      -> FALLBACK
# Used by cpack (CPackProjectConfig.cmake, so the version is that of the commit packaged, not the
# one configured) and by tests/packaging/deb_version_test.cmake.
function(sb_deb_version out describe fallback)
  set(d "${describe}")
  if(d STREQUAL "")
    set(v "${fallback}")
  elseif(d MATCHES "^g[0-9a-f]+$")
    set(v "${fallback}+${d}")
  else()
    string(REGEX REPLACE "^[vV]" "" d "${d}")
    string(REGEX REPLACE "-([0-9]+)-(g[0-9a-f]+)$" "+\\1.\\2" d "${d}")
    string(REPLACE "-" "~" d "${d}")
    string(REGEX REPLACE "[^0-9A-Za-z.+~]" "." d "${d}")
    if(d MATCHES "^[0-9]")
      set(v "${d}")
    else()
      set(v "${fallback}+${d}")  # a tag that is no version number ("nightly"): kept after a +
    endif()
  endif()
  if(NOT v MATCHES "^[0-9][0-9A-Za-z.+~]*$")
    set(v "${fallback}")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# sb_git_describe(OUT SOURCE_DIR): `git describe --tags --always` there; when no tag is reachable
# (it prints the bare hash) the hash gets a leading g, as in "v1.2.0-3-gabc123"; "" when git fails
# (no git, not a checkout).
function(sb_git_describe out dir)
  set(d "")
  find_program(SB_GIT git)
  if(SB_GIT)
    execute_process(COMMAND ${SB_GIT} -C "${dir}" describe --tags --always
                    OUTPUT_VARIABLE d RESULT_VARIABLE rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      set(d "")
    else()
      execute_process(COMMAND ${SB_GIT} -C "${dir}" describe --tags
                      OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE tagged)
      if(NOT tagged EQUAL 0)
        set(d "g${d}")
      endif()
    endif()
  endif()
  set(${out} "${d}" PARENT_SCOPE)
endfunction()
