#pragma once
#define WAYPOINT(x)
