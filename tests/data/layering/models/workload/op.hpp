#pragma once
#include "models/hardware/chip.hpp"
