"""Run inside the interpreter that has aiconfigurator (or aisimulate): one configuration, every batch size.

A script, not a capplan module: it is run by ``python aiconfigurator_worker.py``
with the tool's interpreter, which need not have capplan, so it imports only
the standard library and the tool. It reads one JSON request on stdin and
writes one JSON answer on stdout: the tool's versions and, per batch size,
the fields of its ``EstimateResult`` that an estimate file keeps. Exit 4
also when the distribution asked for (``aiconfigurator`` or ``aisimulate``,
which keeps its module and call) is not installed, before any work. Running
the tool in its own process keeps its 200-450 MB and its dependencies
(pandas, pyarrow) out of capplan's, and lets it live in another virtual
environment. Exit 4: the tool cannot be imported (the adapter says how to
install it); exit 5: the tool refused the configuration (its message on stderr).
"""

import contextlib
import importlib.metadata
import io
import json
import logging
import sys
import warnings

KEPT = ("ttft", "tpot", "request_latency", "seq/s", "tokens/s", "tokens/s/gpu", "tokens/s/user",
        "concurrency", "memory", "num_total_gpus", "version", "gemm", "kvcache")


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return ""


def main():
    request = json.load(sys.stdin)
    if not _version(request["distribution"]):
        print(f"no distribution {request['distribution']} installed", file=sys.stderr)
        return 4
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            from aiconfigurator.cli.api import cli_estimate
    except ImportError as exc:
        print(f"cannot import aiconfigurator.cli.api: {exc}", file=sys.stderr)
        return 4
    answer = {"versions": {name: _version(name) for name in ("aiconfigurator", "aiconfigurator-core", "aisimulate")},
              "points": [], "stopped": ""}
    for batch in request["batch_sizes"]:
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                result = cli_estimate(request["model_path"], request["system"], mode="agg",
                                      backend_name=request["backend"], backend_version=request.get("backend_version"),
                                      database_mode=request["database_mode"], isl=request["isl"],
                                      osl=request["osl"], batch_size=batch, tp_size=request["tp"],
                                      pp_size=request["pp"], moe_tp_size=request.get("moe_tp"),
                                      moe_ep_size=request.get("moe_ep"), gemm_quant_mode=request.get("gemm_quant_mode"),
                                      kvcache_quant_mode=request.get("kvcache_quant_mode"))
        except Exception as exc:  # the tool's own refusal: the adapter reports it with the configuration
            if not answer["points"]:
                print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
                return 5
            answer["stopped"] = f"batch size {batch}: {type(exc).__name__}: {exc}"
            break
        if result.kv_cache_warning:
            answer["stopped"] = f"batch size {batch}: {result.kv_cache_warning}"
            break
        raw = result.get()
        answer["points"].append({"batch_size": batch, **{k: raw.get(k) for k in KEPT},
                                 "backend_version": result.backend_version})
    json.dump(answer, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
