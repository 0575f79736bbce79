#include "upper/thing.hpp"
