"""Which of the given ttnn calls do not exist in the real ttnn 0.81.1: run inside the real-ttnn
environment as `python check_api.py '{"all_gather": ["cluster_axis", "dim"], ...}'`; prints one
JSON line of problems ([] when every function and keyword exists).

Keywords are checked against the function's signature, or, for ttnn's decorated operations
(whose signature is `*args, **kwargs`) and classes, against the arguments their docstrings document.
"""

import inspect
import json
import re
import sys

import ttnn


def accepted_keywords(function) -> set[str] | None:
    """The keyword names `function` takes, or None when it takes any."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if parameters and not any(p.kind == p.VAR_KEYWORD for p in parameters):
        return named
    if named:
        return None  # named arguments plus **kwargs: any keyword goes
    documented = function.__doc__ or ""
    if inspect.isclass(function):  # a constructor documents its overloads on __init__
        documented += function.__init__.__doc__ or ""
    # "name (type): ..." in the Args / Keyword Args sections, "name: type" in pybind signatures
    return set(re.findall(r"^\s*([a-z_]\w*)\s*\(", documented, re.MULTILINE)) | set(
        re.findall(r"\b([a-z_]\w*)\s*:\s*[\w.\[\]]+", documented)
    )


def main() -> None:
    problems = []
    for name, keywords in sorted(json.loads(sys.argv[1]).items()):
        function = getattr(ttnn, name, None)
        if function is None:
            problems.append(f"ttnn.{name} does not exist")
            continue
        accepted = accepted_keywords(function)
        problems += [
            f"ttnn.{name} takes no keyword {k!r}" for k in keywords if accepted is not None and k not in accepted
        ]
    print("API " + json.dumps(problems), flush=True)


if __name__ == "__main__":
    main()
