"""Roofline lower bounds of an op: the time each resource alone would need for the work the
emulator counted, from the same parameter set as the model. The binding resource is the one
with the largest bound; the fraction says how close the modeled time comes to it (1.0 = the
op runs at that resource's peak; far below 1 = latency and waits dominate)."""

from __future__ import annotations

from dataclasses import dataclass

from ttnn_moe.profiler.records import DeviceRecord, OpRecord


@dataclass(frozen=True)
class Bound:
    resource: str  # compute, dram, noc, fabric
    lower_ns: float  # the resource's time at its peak for this op's work
    modeled_ns: float  # the op's modeled time the bound is compared with

    @property
    def fraction(self) -> float:
        return self.lower_ns / self.modeled_ns if self.modeled_ns > 0 else 0.0


def _device_bounds(device: DeviceRecord, fidelity: str, params: dict) -> dict[str, float]:
    c = device.counters
    ns = 1.0 / float(params["clock_ghz"])
    cores = device.cores()
    compute_cores = {tuple(s["core"]) for s in device.timing["riscs"] if s["risc"].startswith("TRISC")}
    matmul_cycles = params["matmul_tile_cycles"].get(fidelity or "HiFi4", params["matmul_tile_cycles"]["HiFi4"])
    noc_bytes = sum(c[k] for k in ("noc_bytes_read_dram", "noc_bytes_read_l1", "noc_bytes_written_dram"))
    noc_bytes += c["noc_bytes_written_l1"]
    return {
        "compute": c["tile_matmuls"] * matmul_cycles / max(len(compute_cores), 1) * ns,
        "dram": (c["noc_bytes_read_dram"] + c["noc_bytes_written_dram"]) / params["dram_bytes_per_cycle"] * ns,
        "noc": noc_bytes / (max(len(cores), 1) * params["noc_port_bytes_per_cycle"]) * ns,
    }


def fabric_lower_ns(op: OpRecord, params: dict) -> float:
    """The busiest Ethernet link direction of the whole op: its wire bytes (payload, headers and
    framing) at the line rate, plus one hop latency for the last packet to reach the next router
    (the 1D latency, the smaller one). Every device's links count: a link is reported by the
    device it leaves, which need not be the slowest device, and the op is not done before its
    busiest link has carried and delivered its traffic."""
    cycles = max(
        (
            int(link["wire_bytes"]) / float(params["eth_bytes_per_cycle"])
            for device in op.devices
            for link in device.timing["links"]
        ),
        default=None,
    )
    if cycles is None:
        return 0.0
    return (cycles + int(params["fabric_hop_latency_1d_cycles"])) / float(params["clock_ghz"])


def op_bounds(op: OpRecord, params: dict) -> list[Bound]:
    """The op's bounds, largest first (host dispatch is op.dispatch_ns): compute, DRAM and NOC on
    its slowest device, the fabric over all its devices' links."""
    slowest = max(op.devices, key=lambda d: d.duration_ns())
    modeled = slowest.duration_ns()
    bounds = [Bound(r, t, modeled) for r, t in _device_bounds(slowest, op.math_fidelity, params).items()]
    bounds.append(Bound("fabric", fabric_lower_ns(op, params), modeled))
    bounds.sort(key=lambda b: b.lower_ns, reverse=True)
    return bounds
