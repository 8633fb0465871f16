# Runs the editor grammar tests (`node --test` in editors/test) for ctest. Missing
# prerequisites fail the test with the command that installs them, instead of a node stack
# trace about a module that cannot be found.
#
#   cmake -DNODE=/usr/bin/node -DTEST_DIR=.../editors/test -P RunNodeTests.cmake

if(NOT NODE OR NOT EXISTS "${NODE}")
  message(FATAL_ERROR "Node.js >= 20 is needed to test the editor grammars, and `node` was not found.")
endif()

foreach(package IN ITEMS vscode-textmate vscode-oniguruma js-yaml)
  if(NOT EXISTS "${TEST_DIR}/node_modules/${package}/package.json")
    message(FATAL_ERROR
      "editors/test/node_modules lacks ${package}: "
      "run `npm ci --prefix editors/test` in the repository root.")
  endif()
endforeach()

execute_process(
  COMMAND "${NODE}" --test --test-reporter=spec
  WORKING_DIRECTORY "${TEST_DIR}"
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "editor grammar tests failed (node --test exited with ${status})")
endif()
