nexp_add_plugin(@SLUG@
  SOURCES plugin.cpp @SLUG@.cpp
  TESTS tests/test_@SLUG@.cpp
  TORCH)
