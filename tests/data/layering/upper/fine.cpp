#include "lower/uses_upper.cpp"
