// Where Metal 2.0 data-movement kernels include the Semaphore object from.
#pragma once

#include "api/semaphore.h"
