"""Opens a named mesh preset with the fabric its hardware has (config.MESH_FABRIC_TOPOLOGY).

The layers pass no `topology` to their fabric ops, so the ops route for the mesh's own fabric: a QUAD's
columns are rings, the other meshes' lines. In the emulator the topology is set on the opened mesh; on
hardware tt-fabric is configured before the mesh opens, as ttnn requires.
"""

from __future__ import annotations

from models.deepseek_v3.config import MESH_FABRIC_TOPOLOGY, mesh_shape
from models.deepseek_v3.tt.ttnn_api import emulator, ttnn

# ttnn.FabricConfig member that gives each topology on hardware.
FABRIC_CONFIG_OF_TOPOLOGY = {"Linear": "FABRIC_1D", "Ring": "FABRIC_1D_RING"}


def fabric_config_name(mesh_name: str) -> str:
    """The ttnn.FabricConfig member a mesh preset's hardware is opened with."""
    mesh_shape(mesh_name)  # ValueError naming an unknown mesh
    return FABRIC_CONFIG_OF_TOPOLOGY[MESH_FABRIC_TOPOLOGY[mesh_name]]


def open_preset_mesh(mesh_name: str):
    """ttnn.open_mesh_device for a preset (t3k, tg, galaxy, dual, quad), on its hardware's fabric."""
    rows, cols = mesh_shape(mesh_name)
    if emulator is None:
        if rows * cols > 1:  # dispatch, combine and the collectives send over tt-fabric
            ttnn.set_fabric_config(getattr(ttnn.FabricConfig, fabric_config_name(mesh_name)))
        return ttnn.open_mesh_device(ttnn.MeshShape(rows, cols))
    mesh_device = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols))
    mesh_device.fabric_topology = getattr(ttnn.Topology, MESH_FABRIC_TOPOLOGY[mesh_name])
    return mesh_device
