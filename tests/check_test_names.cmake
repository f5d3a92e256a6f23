# Run after each test program is built (cmake -DTEST_EXE=... -P): fails the build when a test
# case's name contains ';', '[' or ']'. catch_discover_tests reads the names as a CMake list:
# ';' splits a name, an unbalanced bracket joins it with the names after it. Either way ctest
# would run a filter that matches no test case, and report it passed without running it.
execute_process(COMMAND "${TEST_EXE}" --list-test-names-only
  OUTPUT_VARIABLE names RESULT_VARIABLE status)
string(REGEX MATCH "[^\n]*[];[][^\n]*" bad "${names}")
if(bad)
  message(FATAL_ERROR "${TEST_EXE}: a test name contains ';', '[' or ']' (ctest would never run it): ${bad}")
endif()
