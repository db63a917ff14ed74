"""ShardLens fake-tensor memory oracle: torch's own peak memory per category for one training step of a plan, at full
size, on a CPU, without allocating (FakeTensorMode + a fake process group + MemTracker).

Usage:
    shardlens_oracle.py --plan plan.json --out report.json     one configuration (every pipeline stage)
    shardlens_oracle.py --grid plans.json --out results.json   many configurations in one process
Exit codes: 0 measured; 2 bad input (torch missing or older than 2.4, a plan or layout the oracle cannot build; the
report then holds the error). The report is written to a temporary file and renamed: never half-written.
"""
import argparse
import json
import os
import platform
import sys
import time

MIN_TORCH = (2, 4)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watchdog import watch_parent  # noqa: E402

# Started by ShardLens: stop when ShardLens is gone (killed), instead of computing on for nobody.
if os.environ.get("SHARDLENS_PARENT_PID"):
    watch_parent("SHARDLENS_PARENT_PID")


def _write(path, obj):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def _torch_problem():
    try:
        import torch
    except ImportError as exc:
        return "torch-missing", (f"torch is not importable by {sys.executable} ({exc}); install torch >= 2.4 "
                                 "(pip install torch) or choose an interpreter that has it")
    parts = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2] if x.isdigit())
    if parts < MIN_TORCH:
        return "torch-too-old", (f"torch {torch.__version__} at {sys.executable} is older than 2.4: the oracle needs "
                                 "FSDP2 fully_shard, the fake process group and MemTracker (pip install 'torch>=2.4')")
    return None


def _report(plan, ranks=None, error=None, seconds=0.0):
    import torch
    rep = {"kind": "shardlens-oracle-report", "schemaVersion": 1, "ok": error is None,
           "versions": {"torch": torch.__version__, "python": platform.python_version()},
           "name": (plan or {}).get("name"), "seconds": round(seconds, 3), "ranks": ranks or []}
    if error is not None:
        rep["error"] = error
    return rep


def run_one(plan):
    from oracle.plan import OracleError
    from oracle.run import measure
    t0 = time.perf_counter()
    try:
        ranks = measure(plan)
        return _report(plan, ranks, seconds=time.perf_counter() - t0)
    except OracleError as exc:
        return _report(plan, error={"code": exc.code, "message": str(exc)}, seconds=time.perf_counter() - t0)
    except Exception as exc:  # A layout torch cannot build on fake tensors: say which and why.
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:400]
        return _report(plan, error={"code": "build-failed", "message": msg}, seconds=time.perf_counter() - t0)


def main(argv):
    p = argparse.ArgumentParser(description="ShardLens fake-tensor memory oracle")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--plan")
    src.add_argument("--grid")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    problem = _torch_problem()
    if problem:
        sys.stderr.write(f"shardlens-oracle: {problem[0]}: {problem[1]}\n")
        return 2
    import warnings
    warnings.filterwarnings("ignore")
    try:
        with open(args.plan or args.grid, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"shardlens-oracle: invalid-plan: cannot read {args.plan or args.grid}: {exc}\n")
        return 2
    if args.grid:
        if not isinstance(data, list):
            sys.stderr.write("shardlens-oracle: invalid-plan: --grid expects a JSON list of plans\n")
            return 2
        results = [run_one(plan) for plan in data]
        _write(args.out, results)
        return 0
    report = run_one(data)
    _write(args.out, report)
    if not report["ok"]:
        sys.stderr.write(f"shardlens-oracle: {report['error']['code']}: {report['error']['message']}\n")
        return 2
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
