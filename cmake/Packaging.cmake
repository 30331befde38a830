# Installing and packaging (docs/install.md): `cmake --install build` and `cpack -G DEB` in build/.
include(GNUInstallDirs)

# The man page and the completion scripts, generated after the binary from its own command
# definitions (`servebench completion bash|zsh|man`): never hand-maintained, never checked in.
set(SB_GENERATED_DIR ${PROJECT_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${SB_GENERATED_DIR})
set(SB_GENERATED ${SB_GENERATED_DIR}/servebench.1 ${SB_GENERATED_DIR}/servebench.bash
    ${SB_GENERATED_DIR}/_servebench)
add_custom_command(
  OUTPUT ${SB_GENERATED}
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:servebench> -DDIR=${SB_GENERATED_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake
  DEPENDS servebench ${PROJECT_SOURCE_DIR}/cmake/GenerateDocs.cmake
  COMMENT "Generating the man page and the bash/zsh completions from the command definitions")
add_custom_target(servebench_generated ALL DEPENDS ${SB_GENERATED})

install(TARGETS servebench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${SB_GENERATED_DIR}/servebench.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${SB_GENERATED_DIR}/servebench.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME servebench)
install(FILES ${SB_GENERATED_DIR}/_servebench
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
# README.md keeps its docs/ links: docs/*.md go to share/doc/servebench/docs/.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")

# The .deb: `cpack -G DEB` in build/ writes servebench_<version>_amd64.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME servebench)
set(CPACK_PACKAGE_VENDOR "servebench maintainers")
set(CPACK_PACKAGE_CONTACT "servebench maintainers <maintainers@users.noreply.a-seed-8dbb463b.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "does a model work on an LLM server, and how fast is it?")
# The Description's first line is the summary; CPack adds this as the extended description.
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
       "servebench benchmarks OpenAI-compatible LLM servers (vLLM, SGLang, llama.cpp, Ollama):\n"
       "quality suites over generated images, videos and sounds, reasoning, executed code and\n"
       "writing, and speed profiles (decode, concurrency, TTFT, context, rate), written to a run\n"
       "directory with every raw value and a Markdown report. A built-in simulator needs no\n"
       "server.")
# The version is set when cpack runs, from `git describe --tags --always` (CPackProjectConfig).
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake)
configure_file(${PROJECT_SOURCE_DIR}/cmake/CPackProjectConfig.cmake.in
               ${PROJECT_BINARY_DIR}/CPackProjectConfig.cmake @ONLY)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${CPACK_PACKAGE_CONTACT})
# The shared libraries' packages, computed by dpkg-shlibdeps (dpkg-dev) from the binary itself.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What no library dependency covers (dpkg-shlibdeps appends its list to these):
# - python3: every built-in suite (quick, standard, full) has code checks that execute the model's
#   Python as /usr/bin/python3 in the sandbox (docs/sandbox.md); without it they end in
#   "python interpreter not found".
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3")
# - fonts-dejavu-core: the generated images draw their text in DejaVu Sans / Sans Mono
#   (src/media/draw.cpp); without it pango falls back to another font, the images still work
#   and their ground truth is the same, but they differ from everyone else's.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-dejavu-core")
# - g++: only user suites with `language: cpp` code checks compile C++; no built-in suite does.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "g++")
include(CPack)
