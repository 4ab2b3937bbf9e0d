"""Records the real ttnn 0.81.1 surface that the hardware adapter and its test double use.

    <real-ttnn python> tools/real_ttnn/record_api.py > tests/data/real_ttnn_0.81.1_api.json

Run inside the real-ttnn environment (tools/real_ttnn/env.py); tests/test_real_ttnn.py checks the
committed listing is what this prints, and tests/test_hardware_adapter.py that everything the test
double (tests/fake_ttnn.py) offers is in it. Per class: its public attributes (methods,
properties, enum members); per function: the first line of its docstring (its signature).
"""

import json

import ttnn

CLASSES = (
    "Tensor",
    "MeshDevice",
    "MemoryConfig",
    "BufferType",
    "TensorMemoryLayout",
    "ProgramDescriptor",
    "MeshProgramDescriptor",
    "KernelDescriptor",
    "CBDescriptor",
    "CBFormatDescriptor",
    "TileDescriptor",
    "SemaphoreDescriptor",
    "ComputeConfigDescriptor",
    "ReaderConfigDescriptor",
    "WriterConfigDescriptor",
    "DataMovementConfigDescriptor",
    "CoreCoord",
    "CoreRange",
    "CoreRangeSet",
    "MeshCoordinate",
    "MeshCoordinateRange",
    "Shape",
    "MathFidelity",
    "UnpackToDestMode",
    "CoreType",
    "DataMovementProcessor",
    "NOC",
    "TensorAccessorArgs",
)


def signature(function) -> str:
    return ((getattr(function, "__doc__", None) or "").strip().splitlines() or [""])[0]


def main() -> None:
    listing = {
        "version": ttnn.__version__ if hasattr(ttnn, "__version__") else "0.81.1",
        "module": sorted(name for name in dir(ttnn) if not name.startswith("_")),
        "classes": {name: sorted(a for a in dir(getattr(ttnn, name)) if not a.startswith("_")) for name in CLASSES},
        "nested": {
            "KernelDescriptor.SourceType": sorted(
                a for a in dir(ttnn.KernelDescriptor.SourceType) if not a.startswith("_")
            )
        },
        "functions": {
            name: signature(getattr(ttnn, name))
            for name in (
                "generic_op",
                "allocate_tensor_on_device",
                "setup_fabric_connection",
                "get_dram_alignment",
                "get_l1_alignment",
                "get_max_worker_l1_unreserved_size",
            )
        },
    }
    print(json.dumps(listing, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
