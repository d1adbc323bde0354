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

# Configure again when HEAD moves (a commit, a checkout, a pull), so that an incremental build
# never stamps its outputs with an older commit. The "-dirty" mark is as of the last configure.
if(GIT_FOUND AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/.git")
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" rev-parse --absolute-git-dir
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    OUTPUT_VARIABLE _nnergy_git_dir
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE _nnergy_git_dir_result)
  if(_nnergy_git_dir_result EQUAL 0 AND EXISTS "${_nnergy_git_dir}/HEAD")
    set(_nnergy_version_inputs "${_nnergy_git_dir}/HEAD")
    file(READ "${_nnergy_git_dir}/HEAD" _nnergy_head)
    if(_nnergy_head MATCHES "^ref: ([^\n]+)")
      list(APPEND _nnergy_version_inputs "${_nnergy_git_dir}/${CMAKE_MATCH_1}")
    endif()
    list(APPEND _nnergy_version_inputs "${_nnergy_git_dir}/packed-refs")
    foreach(_nnergy_input IN LISTS _nnergy_version_inputs)
      if(EXISTS "${_nnergy_input}")
        set_property(DIRECTORY "${CMAKE_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                     "${_nnergy_input}")
      endif()
    endforeach()
  endif()
endif()
