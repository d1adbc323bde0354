# nnergy_set_warnings(<target>): the project's warning flags, -Werror when NNERGY_WERROR is on.
function(nnergy_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow)
  # GCC 12 reports false -Wrestrict positives inside libstdc++ for `"literal" + std::string`
  # at -O2 (GCC bug 105329, fixed in GCC 13); the code is correct, so the check is off there.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(NNERGY_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
