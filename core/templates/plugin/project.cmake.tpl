# A nexp plugin built outside the nexp tree, against an installed nexp:
#   cmake -S . -B build -DCMAKE_PREFIX_PATH=<nexp prefix> && cmake --build build
#   NEXP_PLUGIN_PATH=build/plugins nexp run configs/smoke.yaml
cmake_minimum_required(VERSION 3.25)
project(nexp_plugin_@SLUG@ LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(nexp REQUIRED)
include(CTest)
find_package(GTest REQUIRED)
set(NEXP_CONFIGS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/configs/..)
nexp_add_plugin(@SLUG@
  SOURCES plugin.cpp @SLUG@.cpp
  TESTS tests/test_@SLUG@.cpp
  SMOKE_CONFIG ${CMAKE_CURRENT_SOURCE_DIR}/configs/smoke.yaml
  TORCH)
