# nexp_add_plugin(): the one way to declare a plugin. Every link rule for a plugin lives here.
#
#   nexp_add_plugin(<slug>
#     SOURCES <files...>     plugin.cpp (with NEXP_PLUGIN) and the method's sources
#     [TESTS <files...>]     the plugin's own GoogleTest files, labelled `unit` and `<slug>`
#     [SMOKE_CONFIG <file>]  the config the conformance suite runs (default: configs/<slug>/smoke.yaml)
#     [TORCH]                the plugin uses LibTorch: link libnexp_torch (nexp/torch.hpp,
#                            nexp/tensor_dataset.hpp) and LibTorch. Without it the plugin is plain C++
#                            over libnexp_core and a process that runs it never loads LibTorch (~1 s
#                            saved at every start).
#     [TORCH_PCH_SOURCES <files...>]  with TORCH: the files of SOURCES and TESTS that load the shared
#                            precompiled <torch/torch.h>; the others parse what they include. Name a
#                            file that includes the C++ frontend (<torch/torch.h>, torch::nn modules,
#                            torch::optim): loading the header costs ~8 CPU-s even in an empty file,
#                            and a file with only <ATen/ATen.h> or no LibTorch compiles 3-14 s faster
#                            without it (README.md, "Build notes").
#     [LIBRARIES <libs...>]  further Debian-packaged libraries the plugin links
#     [OUTPUT_DIR <dir>]     where the .so goes (default: the folder `nexp` searches); test fixtures only
#     [NO_CONFORMANCE]       skip the conformance test (test fixtures only)
#     [NO_INSTALL])          not installed (test fixtures only)
#
# Produces libnexp_plugin_<slug>.so in the plugin folder that `nexp` searches, a unit-test executable
# (built from the same object files, so every source compiles once) and the conformance tests: one
# that loads the plugin as `nexp run` does (only the plugins its smoke config names) and one that
# loads every plugin of its folder first, as `nexp list` does.
include_guard(GLOBAL)

set(NEXP_PLUGIN_VERSION_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/nexp_plugin.map)

# Compile settings every nexp target shares. The flags must be identical across targets for the one
# LibTorch precompiled header to be reused, so they live in one place.
function(nexp_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -fPIC)
  if(NEXP_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endfunction()

# The core library's target: nexp::core for a plugin built against an installed nexp, nexp_core in the tree.
function(nexp_core_target out)
  if(TARGET nexp::core)
    set(${out} nexp::core PARENT_SCOPE)
  else()
    set(${out} nexp_core PARENT_SCOPE)
  endif()
endfunction()

# Reuse the single precompiled <torch/torch.h> when it exists (in the nexp tree it does; an out-of-tree
# plugin builds without it): a file of the C++ frontend drops from ~40 s to ~30 s, but any other file
# pays ~8 s to load it, so a target marks the files that should not (SKIP_PRECOMPILE_HEADERS).
function(nexp_use_torch_pch target)
  if(TARGET nexp_torch_pch)
    target_precompile_headers(${target} REUSE_FROM nexp_torch_pch)
  endif()
endfunction()

# Registers each GoogleTest case of `target` as a CTest test named <prefix><Suite>.<Case>, with
# `labels` and one torch thread. (gtest_discover_tests' PROPERTIES cannot carry list values in
# CMake 3.25, so the labels are set by a script that runs after the discovery.) Listing the cases
# can take seconds on a loaded machine, hence the generous discovery timeout.
function(nexp_discover_tests target prefix labels)
  include(GoogleTest)
  # Listing the cases starts the executable (LibTorch included): give it time on a loaded machine.
  gtest_discover_tests(${target} TEST_PREFIX "${prefix}" DISCOVERY_MODE PRE_TEST TEST_LIST ${target}_TESTS
                       DISCOVERY_TIMEOUT 300 PROPERTIES WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set(_script ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${_script}
    "foreach(_t IN LISTS ${target}_TESTS)\n"
    "  set_tests_properties(\"\${_t}\" PROPERTIES LABELS \"${labels}\"\n"
    "    ENVIRONMENT \"OMP_NUM_THREADS=1;OMP_WAIT_POLICY=PASSIVE;NO_COLOR=1\")\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_script})
endfunction()

# TORCH_PCH_SOURCES: checks the list and marks every other source and test to skip the precompiled
# header (a target that reuses it applies it to all of its files unless told otherwise).
function(nexp_plugin_pch_sources slug torch all pch_sources)
  if(NOT pch_sources)
    return()
  endif()
  if(NOT torch)
    message(FATAL_ERROR "nexp_add_plugin(${slug}): TORCH_PCH_SOURCES names files that load the LibTorch "
                        "precompiled header; add TORCH too")
  endif()
  foreach(_f IN LISTS pch_sources)
    if(NOT _f IN_LIST all)
      message(FATAL_ERROR "nexp_add_plugin(${slug}): TORCH_PCH_SOURCES names '${_f}', which is in neither SOURCES nor TESTS")
    endif()
  endforeach()
  set(_plain ${all})
  list(REMOVE_ITEM _plain ${pch_sources})
  if(_plain)
    set_source_files_properties(${_plain} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
endfunction()

# A plugin compiled as unity translation units (UNITY_BUILD on nexp_<slug>_objects) whose files skip the
# precompiled header: the unity sources are files CMake generates, and they load the header unless they
# are marked too. `names` are CMake's names for them: unity_<batch>_cxx.cxx (batches counted from 0) or
# unity_<group>_cxx.cxx (UNITY_BUILD_MODE GROUP). This is the one place that knows where CMake puts them.
function(nexp_unity_skip_pch slug)
  foreach(_name IN LISTS ARGN)
    set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/nexp_${slug}_objects.dir/Unity/${_name}
                                DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endforeach()
endfunction()

function(nexp_add_plugin slug)
  cmake_parse_arguments(P "TORCH;NO_CONFORMANCE;NO_INSTALL" "SMOKE_CONFIG;OUTPUT_DIR" "SOURCES;TESTS;LIBRARIES;TORCH_PCH_SOURCES"
                        ${ARGN})
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nexp_add_plugin(${slug}): unknown arguments '${P_UNPARSED_ARGUMENTS}' (NO_PCH, "
                        "TORCH_NO_PCH and TORCH_SOURCES are gone: a plugin that uses LibTorch says TORCH, and "
                        "TORCH_PCH_SOURCES names its files that load the precompiled <torch/torch.h>; none do by default)")
  endif()
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${NEXP_PLUGIN_OUTPUT_DIR})
  endif()
  if(NOT slug MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "nexp_add_plugin: slug '${slug}' must be lower-case letters, digits and '_', "
                        "starting with a letter (it names the folder, the .so and the method prefix)")
  endif()
  if(NOT P_SOURCES)
    message(FATAL_ERROR "nexp_add_plugin(${slug}): SOURCES is empty; list plugin.cpp and the method's sources")
  endif()
  nexp_plugin_pch_sources(${slug} "${P_TORCH}" "${P_SOURCES};${P_TESTS}" "${P_TORCH_PCH_SOURCES}")
  set(_objects_pch OFF)  # which of the two targets has a file that loads the precompiled header
  set(_tests_pch OFF)
  foreach(_f IN LISTS P_TORCH_PCH_SOURCES)
    if(_f IN_LIST P_SOURCES)
      set(_objects_pch ON)
    else()
      set(_tests_pch ON)
    endif()
  endforeach()
  nexp_core_target(_core)
  set(_sdk ${_core})
  if(P_TORCH AND TARGET nexp::torch)
    list(APPEND _sdk nexp::torch ${TORCH_LIBRARIES})
  elseif(P_TORCH)
    list(APPEND _sdk nexp_torch ${TORCH_LIBRARIES})
  endif()

  # The sources compile once, into objects shared by the .so and the test executable.
  set(_objects nexp_${slug}_objects)
  add_library(${_objects} OBJECT ${P_SOURCES})
  nexp_target_defaults(${_objects})
  target_link_libraries(${_objects} PUBLIC ${_sdk} ${P_LIBRARIES})
  target_include_directories(${_objects} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  if(_objects_pch)
    nexp_use_torch_pch(${_objects})
  endif()

  set(_plugin nexp_plugin_${slug})
  add_library(${_plugin} MODULE $<TARGET_OBJECTS:${_objects}>)
  target_link_libraries(${_plugin} PRIVATE ${_sdk} ${P_LIBRARIES})
  # --no-as-needed keeps libtorch_cuda (linked for its side effects) from being dropped; -z defs makes
  # an unresolved symbol a link error here instead of a dlopen failure on a user's machine.
  target_link_options(${_plugin} PRIVATE
    -Wl,--no-as-needed -Wl,-z,defs -Wl,--version-script=${NEXP_PLUGIN_VERSION_SCRIPT})
  set_target_properties(${_plugin} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME nexp_plugin_${slug}
    LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${NEXP_PLUGIN_VERSION_SCRIPT}
    # Installed next to libnexp_core.so's folder: lib/nexp/plugins -> lib.
    INSTALL_RPATH "$ORIGIN:$ORIGIN/../.."
    BUILD_RPATH "$ORIGIN;$<TARGET_FILE_DIR:${_core}>")
  if(NEXP_INSTALL_PLUGIN_DIR AND NOT P_NO_INSTALL)
    install(TARGETS ${_plugin} LIBRARY DESTINATION ${NEXP_INSTALL_PLUGIN_DIR})
  endif()

  if(NOT DEFINED P_SMOKE_CONFIG)
    if(DEFINED NEXP_CONFIGS_DIR)
      set(P_SMOKE_CONFIG ${NEXP_CONFIGS_DIR}/${slug}/smoke.yaml)
    else()
      set(P_SMOKE_CONFIG ${CMAKE_CURRENT_SOURCE_DIR}/configs/smoke.yaml)
    endif()
  endif()

  if(BUILD_TESTING OR NEXP_BUILD_TESTS)
    if(P_TESTS)
      set(_tests nexp_${slug}_tests)
      add_executable(${_tests} ${P_TESTS})
      nexp_target_defaults(${_tests})
      target_link_libraries(${_tests} PRIVATE ${_objects} GTest::gtest GTest::gtest_main)
      if(_tests_pch)
        nexp_use_torch_pch(${_tests})
      endif()
      nexp_discover_tests(${_tests} "${slug}." "unit;${slug}")
    endif()
    # The shared conformance suite (tests/conformance): loads the .so through the real loader.
    if(TARGET nexp_conformance)
      set(_runner $<TARGET_FILE:nexp_conformance>)
    elseif(DEFINED NEXP_CONFORMANCE_RUNNER)
      set(_runner ${NEXP_CONFORMANCE_RUNNER})
    endif()
    # smoke.<slug>: the smoke config runs to completion with finite metrics (`ctest -L smoke`, a quick
    # check of every plugin); conformance.<slug>: the rest of the suite.
    if(DEFINED _runner AND NOT P_NO_CONFORMANCE)
      # Lazily loaded, as `nexp run` loads it (only the plugins its smoke config names): the smoke run and
      # the rest of the suite. With every plugin loaded, as `nexp list` loads them, the suite shows whether
      # the plugin still loads, registers and runs next to the others; the repeated runs (same seed,
      # resume) are left to the lazy test.
      set(_smoke_case Conformance.SmokeConfigRunsWithFiniteMetrics)
      set(_run ${_runner} --plugin $<TARGET_FILE:${_plugin}> --config ${P_SMOKE_CONFIG})
      add_test(NAME smoke.${slug} COMMAND ${_run} --load lazy --gtest_filter=${_smoke_case})
      add_test(NAME conformance.${slug} COMMAND ${_run} --load lazy --gtest_filter=-${_smoke_case})
      add_test(NAME conformance.${slug}.all_loaded COMMAND ${_run} --load all --gtest_filter=-*SameSeed*:*Resume*)
      set_tests_properties(smoke.${slug} PROPERTIES LABELS "smoke;conformance;${slug}")
      set_tests_properties(conformance.${slug} conformance.${slug}.all_loaded PROPERTIES LABELS "conformance;${slug}")
      set_tests_properties(smoke.${slug} conformance.${slug} conformance.${slug}.all_loaded PROPERTIES
        ENVIRONMENT "OMP_NUM_THREADS=1;OMP_WAIT_POLICY=PASSIVE" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    endif()
  endif()
endfunction()

# nexp_add_torch_free_tests(<slug> <target> EXCLUDE <regex> TESTS <files...> [LIBRARIES <libs...>]): a second unit-test
# executable for a TORCH plugin, over the plugin's object files minus those whose path matches <regex>
# (the ones that use LibTorch), so that none of the processes ctest starts for these tests loads
# LibTorch (about a second each on a loaded machine). Labelled `unit` and `<slug>` like TESTS.
function(nexp_add_torch_free_tests slug target)
  cmake_parse_arguments(T "" "EXCLUDE" "TESTS;LIBRARIES" ${ARGN})
  if(NOT T_EXCLUDE OR NOT T_TESTS OR T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nexp_add_torch_free_tests(${slug} ${target}): expected EXCLUDE <regex> TESTS <files...>")
  endif()
  if(NOT (BUILD_TESTING OR NEXP_BUILD_TESTS))
    return()
  endif()
  nexp_core_target(_core)
  add_executable(${target} ${T_TESTS} "$<FILTER:$<TARGET_OBJECTS:nexp_${slug}_objects>,EXCLUDE,${T_EXCLUDE}>")
  nexp_target_defaults(${target})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE ${_core} ${T_LIBRARIES} GTest::gtest GTest::gtest_main)
  nexp_discover_tests(${target} "${slug}." "unit;${slug}")
endfunction()

# nexp_add_plugin_cli_test(<slug> <name> <script>): a plugin's end-to-end shell test, `cli.<slug>.<name>`,
# labelled `cli` and `<slug>`. The script runs from the source tree with NEXP (the executable), PLUGIN_DIR
# (the plugin's folder) and SOURCE_DIR set, and sources tests/cli/plugin_lib.sh for its scratch folder
# and helpers. Only where the `nexp` executable is part of the build.
function(nexp_add_plugin_cli_test slug name script)
  if(NOT TARGET nexp OR NOT (BUILD_TESTING OR NEXP_BUILD_TESTS))
    return()
  endif()
  add_test(NAME cli.${slug}.${name} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${script})
  set_tests_properties(cli.${slug}.${name} PROPERTIES LABELS "cli;${slug}"
    ENVIRONMENT "NEXP=$<TARGET_FILE:nexp>;PLUGIN_DIR=$<TARGET_FILE_DIR:nexp_plugin_${slug}>;SOURCE_DIR=${PROJECT_SOURCE_DIR};OMP_NUM_THREADS=1")
endfunction()

# nexp_add_plugin_llm_tests(<slug> <target> SOURCES <files...> [LIBRARIES <libs...>]): a plugin's tests of
# its language-model path, `llm.<slug>.<Suite>.<Case>`, labelled `llm` and `<slug>`, beside the local model
# server that tests/CMakeLists.txt starts for them (fixture llm_server, one test at a time; a test that
# needs the server skips without it). Only where core's language-model tests are built.
function(nexp_add_plugin_llm_tests slug target)
  cmake_parse_arguments(T "" "" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT T_SOURCES OR T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nexp_add_plugin_llm_tests(${slug} ${target}): expected SOURCES <files...>")
  endif()
  if(NOT TARGET nexp_llm_tests)
    return()
  endif()
  include(GoogleTest)
  add_executable(${target} ${T_SOURCES})
  nexp_target_defaults(${target})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE ${T_LIBRARIES} PkgConfig::HTTPLIB GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${target} TEST_PREFIX "llm.${slug}." DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120
                       TEST_LIST ${target}_TESTS PROPERTIES WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set(_script ${CMAKE_CURRENT_BINARY_DIR}/${target}_properties.cmake)
  file(WRITE ${_script}
    "foreach(_t IN LISTS ${target}_TESTS)\n"
    "  set_tests_properties(\"\${_t}\" PROPERTIES LABELS \"llm;${slug}\" FIXTURES_REQUIRED llm_server RESOURCE_LOCK llm_server\n"
    "    ENVIRONMENT \"NEXP_LLM_LOCAL_STATE=${PROJECT_BINARY_DIR}/tests/llm-local;NO_COLOR=1\")\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_script})
endfunction()
