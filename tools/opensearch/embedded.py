"""Build and start a real OpenSearch 2.19 node (with k-NN) from the Maven module beside this file.

    python tools/opensearch/embedded.py            # build if needed, start one node, print its URL, wait
    python tools/opensearch/embedded.py --build    # only build (the first build downloads the jars)

The test suite's `opensearch_url` fixture, the parity benchmark and the cluster test start nodes through
`start()`. A node runs in its own JVM with a fresh home, listens on 127.0.0.1 only, and stops when the process
that started it exits (it watches its standard input), so a killed test run leaves no node behind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLASSES, LIB = HERE / "target" / "classes", HERE / "target" / "lib"
MAIN = "sourcerer.opensearch.EmbeddedNode"
# the engine without native libraries: faiss and nmslib kill the node on their first segment (no .so in the
# Maven zip), so indexes on an embedded node say `?engine=lucene`
ENGINE = "lucene"


class Unavailable(RuntimeError):
    """No Java, or the module cannot be built: what to install is in the message."""


def java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home, "bin", "java") if home else None
    return str(candidate) if candidate and candidate.exists() else shutil.which("java")


def maven() -> str | None:
    return shutil.which("mvn")


def built() -> bool:
    return (CLASSES / MAIN.replace(".", "/")).with_suffix(".class").exists() and any(LIB.glob("opensearch-knn-*.jar"))


def build(*, quiet: bool = True, force: bool = False) -> None:
    """`mvn package` of the module (offline once the jars are in ~/.m2). Raises `Unavailable` without Maven."""
    if built() and not force:
        return
    mvn = maven()
    if mvn is None or java() is None:
        raise Unavailable("the embedded OpenSearch needs Java 17 and Maven (apt-get install openjdk-17-jdk-headless maven)")
    command = [mvn, "-B", "-f", str(HERE / "pom.xml"), "package"] + (["-q"] if quiet else [])
    done = subprocess.run(command, capture_output=quiet, text=True)
    if done.returncode != 0:
        tail = (done.stdout or "")[-3000:] + (done.stderr or "")[-2000:] if quiet else ""
        raise Unavailable(f"building tools/opensearch failed (mvn package):\n{tail}")


@dataclass
class Node:
    """One running node: its URL, its transport address (for a cluster's seed hosts) and its process."""

    url: str
    transport: str
    process: subprocess.Popen
    home: Path
    log: list[str] = field(default_factory=list)

    def stop(self, timeout_s: float = 30) -> None:
        """A clean stop: close its standard input and wait; kill it if it does not go."""
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout_s)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.home, ignore_errors=True)

    def kill(self) -> None:
        """`kill -9`, as a crashed machine would go; its home stays so a test can look at what was left."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 right now (a cluster's nodes must know each other's transport ports in advance)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def start_cluster(nodes: int = 3, *, heap: str = "512m", timeout_s: float = 240) -> list[Node]:
    """`nodes` nodes in one cluster on 127.0.0.1, one JVM each, all eligible as cluster manager; returns when
    the cluster answers (they are started together: none can form a cluster alone)."""
    transport, http = free_ports(nodes), free_ports(nodes)
    name = f"sourcerer-cluster-{os.getpid()}-{int(time.time())}"
    names = [f"node-{i}" for i in range(nodes)]
    common = {
        "cluster.name": name,
        "discovery.seed_hosts": ",".join(f"127.0.0.1:{port}" for port in transport),
        "cluster.initial_cluster_manager_nodes": ",".join(names),
    }
    settings = [
        {**common, "node.name": names[i], "transport.port": str(transport[i]), "http.port": str(http[i])} for i in range(nodes)
    ]
    with ThreadPoolExecutor(max_workers=nodes) as pool:
        started = list(pool.map(lambda s: _start_or_none(s, heap, timeout_s), settings))
    if any(node is None for node in started):
        for node in started:
            if node is not None:
                node.stop()
        raise Unavailable(f"a {nodes}-node cluster did not form within {timeout_s:.0f} s")
    return [node for node in started if node is not None]


def _start_or_none(settings: dict[str, str], heap: str, timeout_s: float) -> Node | None:
    try:
        return start(settings=settings, heap=heap, timeout_s=timeout_s)
    except (Unavailable, OSError):
        return None


def start(
    *,
    settings: dict[str, str] | None = None,
    heap: str = "512m",
    timeout_s: float = 180,
    home: Path | None = None,
) -> Node:
    """Start one node (building the module first if needed) and return once it answers HTTP."""
    build()
    runtime = java()
    if runtime is None:
        raise Unavailable("the embedded OpenSearch needs Java 17 (apt-get install openjdk-17-jdk-headless)")
    home = home or Path(tempfile.mkdtemp(prefix="sourcerer-opensearch-"))
    given = {"path.home": str(home), **(settings or {})}
    command = [
        runtime,
        f"-Xms{heap}",
        f"-Xmx{heap}",
        "-XX:+UseSerialGC" if os.cpu_count() and os.cpu_count() <= 2 else "-XX:+UseG1GC",
        "-Dlog4j2.disable.jmx=true",
        "-Djna.nosys=true",
        "-Djava.awt.headless=true",
        "-cp",
        os.pathsep.join([str(CLASSES), str(LIB / "*")]),
        MAIN,
        *(f"-E{k}={v}" for k, v in given.items()),
        "--exit-on-eof",
    ]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    found: dict[str, str] = {}
    log: list[str] = []
    ready = threading.Event()

    def read() -> None:  # keeps draining the pipe for the node's whole life, so it never blocks on a full pipe
        for line in process.stdout:
            line = line.rstrip()
            if line.startswith("OPENSEARCH_URL=") or line.startswith("OPENSEARCH_TRANSPORT="):
                key, _, value = line.partition("=")
                found[key] = value
                if len(found) == 2:
                    ready.set()
            else:
                log.append(line)
                del log[:-200]
        ready.set()

    threading.Thread(target=read, daemon=True, name="opensearch-log").start()
    if not ready.wait(timeout_s) or len(found) < 2:
        process.kill()
        raise Unavailable("the embedded OpenSearch did not start:\n" + "\n".join(log[-40:]))
    node = Node(found["OPENSEARCH_URL"], found["OPENSEARCH_TRANSPORT"], process, home, log)
    wait_for_http(node.url, timeout_s=timeout_s)
    return node


def wait_for_http(url: str, *, timeout_s: float = 60, health: str = "yellow") -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_cluster/health?wait_for_status={health}&timeout=5s", timeout=10) as reply:
                if reply.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="store_true", help="only build the module (downloads the jars once)")
    parser.add_argument("--heap", default="1g", help="JVM heap (default 1g)")
    args = parser.parse_args()
    try:
        build(quiet=False, force=args.build)
        if args.build:
            print(f"built {CLASSES} and {LIB}")
            return 0
        node = start(heap=args.heap)
    except Unavailable as error:
        print(f"opensearch: {error}", file=sys.stderr)
        return 1
    print(f"OpenSearch {ENGINE}-engine node at {node.url} (home {node.home}); Ctrl-C stops it")
    print(f"  OPENSEARCH_URL=opensearch://{node.url.removeprefix('http://')}/sourcerer?engine={ENGINE}")
    try:
        node.process.wait()
    except KeyboardInterrupt:
        node.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
