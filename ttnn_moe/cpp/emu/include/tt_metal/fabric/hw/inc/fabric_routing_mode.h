// Routing-mode bits of tt-metal 0.81.1 (the JIT passes -DROUTING_MODE=<bits>;
// the emulator's runtime does the same from the mesh's fabric topology).
#pragma once

#define ROUTING_MODE_UNDEFINED 0x0000
#define ROUTING_MODE_1D 0x0001
#define ROUTING_MODE_2D 0x0002
#define ROUTING_MODE_3D 0x0004
#define ROUTING_MODE_LINE 0x0008
#define ROUTING_MODE_RING 0x0010
#define ROUTING_MODE_NEIGHBOR_EXCHANGE 0x0200
#define ROUTING_MODE_MESH 0x0020
#define ROUTING_MODE_TORUS 0x0040
#define ROUTING_MODE_LOW_LATENCY 0x0080
