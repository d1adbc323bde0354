# Sets NNERGY_VERSION_STRING from `git describe` (falls back to the project version outside git).
find_package(Git QUIET)
set(NNERGY_VERSION_STRING "${PROJECT_VERSION}")
if(GIT_FOUND AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/.git")
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" describe --tags --always --dirty
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    OUTPUT_VARIABLE _nnergy_git_describe
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE _nnergy_git_result)
  if(_nnergy_git_result EQUAL 0 AND _nnergy_git_describe)
    set(NNERGY_VERSION_STRING "${PROJECT_VERSION}+g${_nnergy_git_describe}")
  endif()
endif()
