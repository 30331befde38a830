# cmake -DEXE=servebench -DDIR=out -P GenerateDocs.cmake: the man page and the completion scripts,
# printed by the binary from its own command definitions (`servebench completion bash|zsh|man`).
foreach(pair "bash;servebench.bash" "zsh;_servebench" "man;servebench.1")
  list(GET pair 0 kind)
  list(GET pair 1 name)
  execute_process(COMMAND "${EXE}" completion ${kind} OUTPUT_FILE "${DIR}/${name}.tmp"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "`${EXE} completion ${kind}` failed: ${rc}")
  endif()
  file(RENAME "${DIR}/${name}.tmp" "${DIR}/${name}")
endforeach()
