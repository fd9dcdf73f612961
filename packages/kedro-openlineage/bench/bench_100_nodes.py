"""The plugin's cost on a `kedro run` of 100 trivial nodes, with the lineage server up, down and stuck.

Runs in one Python process (so Kedro's import and start-up are not counted) against a Headwater server it starts from
this repository (`npx tsc -b` first). Each mode runs the same pipeline `--repeat` times after one warm-up; the table
gives the median and the spread of `session.run()`, and the cost against the plugin turned off.

    python bench/bench_100_nodes.py [--nodes 100] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def write_project(root: Path, nodes: int, concurrency: int) -> None:
    files = {
        "conf/base/openlineage.yml": f"concurrency: {concurrency}\n",
        "pyproject.toml": """
            [tool.kedro]
            package_name = "bench_project"
            project_name = "bench-project"
            kedro_init_version = "1.7.0"
            source_dir = "src"
            """,
        "conf/base/catalog.yml": "",
        "conf/base/parameters.yml": "step: 1\n",
        "conf/local/.gitkeep": "",
        ".telemetry": "consent: false\n",
        "src/bench_project/__init__.py": "",
        # Measure this plugin alone, even where Kedro-Viz (whose hooks also run on every node) is installed.
        "src/bench_project/settings.py": 'DISABLE_HOOKS_FOR_PLUGINS = ("kedro-viz",)\n',
        "src/bench_project/pipeline_registry.py": f"""
            from kedro.pipeline import Node, Pipeline


            def step(value: int, size: int) -> int:
                return value + size


            def start() -> int:
                return 0


            def register_pipelines():
                nodes = [Node(start, None, "value_0", name="start")]
                nodes += [Node(step, [f"value_{{i - 1}}", "params:step"], f"value_{{i}}", name=f"step_{{i}}")
                          for i in range(1, {nodes})]
                return {{"__default__": Pipeline(nodes)}}
            """,
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_headwater(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        ["node", str(REPO / "packages/server/dist/cli/main.js"), "serve", "--port", str(port), "--data-dir",
         str(data_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/api/v1/namespaces", timeout=2).read()  # noqa: S310 - loopback
            return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("headwater did not start")


def stuck_server() -> str:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []

    def accept() -> None:
        while True:
            held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight (openlineage.yml)")
    args = parser.parse_args()
    os.environ.update({"KEDRO_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "1"})
    import logging

    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    work = Path(tempfile.mkdtemp(prefix="kedro-ol-bench-"))
    project = work / "project"
    write_project(project, args.nodes, args.concurrency)
    bootstrap_project(project)
    logging.disable(logging.WARNING)  # Kedro logs every node at INFO; the warnings of the down modes are expected
    server, url = start_headwater(work / "headwater")
    down = f"http://127.0.0.1:{free_port()}"
    stuck = stuck_server()
    modes = [
        ("plugin off (OPENLINEAGE_DISABLED)", {"OPENLINEAGE_DISABLED": "true"}),
        ("file sink only (no URL)", {}),
        ("backend up (Headwater)", {"OPENLINEAGE_URL": url}),
        ("backend down (connection refused)", {"OPENLINEAGE_URL": down}),
        ("backend stuck (never answers; timeout 2 s, bound 5 s)", {"OPENLINEAGE_URL": stuck}),
    ]
    results = []
    try:
        for label, env in modes:
            for key in ("OPENLINEAGE_URL", "OPENLINEAGE_DISABLED"):
                os.environ.pop(key, None)
            os.environ.update(env)
            os.environ["OPENLINEAGE_NAMESPACE"] = "bench"
            times = []
            for attempt in range(args.repeat + 1):
                spool = project / ".viz/openlineage_spool.ndjson"
                spool.unlink(missing_ok=True)  # each run starts with an empty spool: no replay in the figures
                with KedroSession.create(project_path=project) as session:
                    started = time.perf_counter()
                    session.run()
                    elapsed = time.perf_counter() - started
                if attempt:
                    times.append(elapsed)
            results.append((label, statistics.median(times), min(times), max(times)))
    finally:
        server.terminate()
        server.wait(15)
    base = results[0][1]
    print(f"kedro run of {args.nodes} trivial nodes (SequentialRunner), median of {args.repeat} runs, "
          f"concurrency {args.concurrency}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}")
    print()
    print("| mode | median | min–max | cost vs. plugin off |")
    print("| --- | ---: | ---: | ---: |")
    for label, median, low, high in results:
        print(f"| {label} | {median * 1000:.0f} ms | {low * 1000:.0f}–{high * 1000:.0f} ms | "
              f"{(median - base) * 1000:+.0f} ms ({(median - base) * 1000 / args.nodes:+.2f} ms/node) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
