"""The bad-input table: every row of docs/bad_inputs.md runs the real op on the emulator.

A host-side row must raise its error naming the argument and the value; a device-side row
must raise in strict mode and, with strict=False, return a status record whose counts are
exactly the row's (and whose other words report nothing). The doc's table is the case list
rendered, so a case added here without its row (or a row without its case) fails.
"""

from pathlib import Path

import pytest
from bad_input_cases import CASES, Case, Env
from ttnn_moe.ops import OPS
from ttnn_moe.ops._readback import read_device_words

from ttnn_moe import _C, emu

DOC = Path(__file__).resolve().parents[1] / "docs" / "bad_inputs.md"
HEADER = "| op | bad input | what happens |"
NONE = 0xFFFFFFFF
# Status words that describe the work rather than report a problem.
INFORMATIONAL = {"kNeededRows", "kRowsComputed"}


def render_row(case: Case) -> str:
    return f"| `{case.op}` | {case.bad_input} | `{case.outcome()}` |"


def doc_rows() -> list[str]:
    lines = DOC.read_text().splitlines()
    start = lines.index(HEADER) + 2  # past the separator line
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


@pytest.fixture(scope="module")
def env():
    device = emu.open_device(grid=(2, 2))
    mesh = emu.open_mesh_device(emu.MeshShape(1, 2), grid=(1, 1))
    yield Env(device=device, mesh=mesh)
    emu.close_mesh_device(mesh)
    emu.close_device(device)


def test_the_doc_table_is_the_case_list():
    assert doc_rows() == [render_row(case) for case in CASES]


def test_every_op_has_cases():
    assert {case.op for case in CASES} == set(OPS)


def _status_tensor(result, field: str):
    if field == "dispatch_status":
        return result.handle.dispatch_status
    return getattr(result, field)


def _word_index(op: str, field: str, word: str) -> int:
    if field == "row_overflow":  # one word per output row: "row r"
        return int(word.split()[1])
    return int(getattr(getattr(_C.ops, op).StatusWord, word))


def _check_counts(case: Case, result) -> None:
    for field, expected in case.counted.items():
        per_device = read_device_words(_status_tensor(result, field))
        indices = {_word_index(case.op, field, word): value for word, value in expected.items()}
        for device, words in enumerate(per_device):
            for index, word in enumerate(words):
                if index in indices:
                    value = indices[index]
                    want = value[device] if isinstance(value, tuple) else value
                    assert word == want, f"{field} word {index} on device {device}: {word} != {want}"
                elif field != "row_overflow" and word not in (0, NONE):
                    name = getattr(_C.ops, case.op).StatusWord(index).name
                    assert name in INFORMATIONAL, f"{field}.{name} = {word} on device {device} reports a second problem"
                elif field == "row_overflow":
                    assert word == 0, f"row {index} on device {device} also overflows"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}: {c.bad_input}" for c in CASES])
def test_bad_input(env, case):
    with pytest.raises(case.error) as raised:
        case.call(env, True)
    assert case.message in str(raised.value)
    if case.counted is not None:
        _check_counts(case, case.call(env, False))
