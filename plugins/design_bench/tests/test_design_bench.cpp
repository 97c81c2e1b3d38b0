#include <gtest/gtest.h>
TEST(DesignBench, Placeholder) {}
