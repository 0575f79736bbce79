#pragma once
#include "models/workload/op.hpp"
