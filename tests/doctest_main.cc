// The doctest runner shared by every test executable (not globbed as a test file: .cc).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
