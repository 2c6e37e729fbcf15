"""A PostgreSQL server for the fleet tests: the cluster `.ci/run` started (PASSBRIDGE_TEST_POSTGRES_DIR and
PASSBRIDGE_TEST_POSTGRES_URL), else one started here with Tests/postgres-cluster.sh for the session. Each test
gets a database of its own. A test that stops or restarts its server takes a cluster of its own (`own_postgres`)."""
import glob
import os
import pathlib
import subprocess
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "Tests" / "postgres-cluster.sh"


def start_cluster() -> tuple[str, str]:
    """A new cluster (Tests/postgres-cluster.sh start): its socket directory and the URL of its database
    `passbridge`. Skips the test (fails it in CI) when no PostgreSQL server is installed."""
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        message = "no PostgreSQL server: install Debian's postgresql package (Tests/install-deps.sh does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    started = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True, check=True, timeout=120)
    exports = dict(line.removeprefix("export ").split("=", 1) for line in started.stdout.splitlines())
    return exports["PASSBRIDGE_TEST_POSTGRES_DIR"].strip("'"), exports["PASSBRIDGE_TEST_POSTGRES_URL"].strip("'")


def cluster_server(command: str, directory: str):
    """Runs `Tests/postgres-cluster.sh COMMAND DIR`: stop (and remove), restart, halt or resume."""
    subprocess.run(["bash", str(SCRIPT), command, directory], check=True, timeout=120)


@pytest.fixture(scope="session")
def postgres_cluster():
    """The cluster's socket directory."""
    directory = os.environ.get("PASSBRIDGE_TEST_POSTGRES_DIR")
    if directory:
        yield directory
        return
    directory, _ = start_cluster()
    yield directory
    cluster_server("stop", directory)


@pytest.fixture()
def own_postgres():
    """A cluster for this test alone, removed after it: (socket directory, URL). Restarting or stopping the shared
    one would cut the connections of every other test's daemons."""
    directory, url = start_cluster()
    yield directory, url
    cluster_server("stop", directory)


@pytest.fixture()
def postgres_url(postgres_cluster):
    """The URL of a new, empty database."""
    name = "pb_" + uuid.uuid4().hex[:12]
    createdb = sorted(glob.glob("/usr/lib/postgresql/*/bin/createdb"))[-1]
    subprocess.run([createdb, "-h", postgres_cluster, "-U", "passbridge", name], check=True, timeout=30)
    return f"postgresql:///{name}?host={postgres_cluster}&user=passbridge"
