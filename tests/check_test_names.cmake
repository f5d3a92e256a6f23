# Run after each test program is built (cmake -DTEST_EXE=... -P): fails the build when a test
# case's name contains ';'. catch_discover_tests splits names on it (a CMake list separator), so
# ctest would run such a test under a truncated name that matches no test case, and report it
# passed without running it.
execute_process(COMMAND "${TEST_EXE}" --list-test-names-only
  OUTPUT_VARIABLE names RESULT_VARIABLE status)
string(REGEX MATCH "[^\n]*;[^\n]*" bad "${names}")
if(bad)
  message(FATAL_ERROR "${TEST_EXE}: a test name contains ';' (ctest would never run it): ${bad}")
endif()
