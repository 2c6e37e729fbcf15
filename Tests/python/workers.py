"""Parallel workers for the suites that repeat one scenario many times: each worker is a daemon of its own (a state
directory, hence a device, of its own) with one connection, over pipes or over a socket, against one emulator, so
that many repetitions run at once."""
import concurrent.futures

from rpc_helper import SocketDaemon, StdioDaemon, daemon_args
from test_partner_sso import Platform, ScriptedHost, ScriptedSocketHost

WORKERS = 25


class Worker:
    """One daemon (over `transport`) with one connection, and the client of that connection."""

    def __init__(self, transport, bin_dir, emulator, state_dir, socket_dir, platform=None):
        self.transport, self.bin_dir, self.platform = transport, bin_dir, platform
        self.args = daemon_args(emulator.base, state_dir)
        if transport == "socket":
            self.socket = SocketDaemon(bin_dir, socket_dir / "pb.sock", *self.args)
        self.connections: list = []
        self.client = self.other()

    def other(self):
        """A connection to this worker's device: over pipes a daemon of its own on the worker's state directory,
        over a socket a connection to the worker's daemon; with a scripted partner SSO host when the worker has
        one. The first is `client`; the next ones are other writers of the same device's logins."""
        if self.transport == "pipes":
            connection = ScriptedHost(self.bin_dir, self.platform, *self.args) if self.platform else StdioDaemon(self.bin_dir, *self.args)
        else:
            connection = ScriptedSocketHost(self.socket.path, self.platform) if self.platform else self.socket.client()
        self.connections.append(connection)
        return connection

    def stop(self) -> int:
        """The first non-zero exit status of the worker's daemons, else 0."""
        if self.transport == "pipes":
            codes = [connection.stop() for connection in self.connections]
        else:
            for connection in self.connections:
                connection.close()
            codes = [self.socket.stop()]
        return next((code for code in codes if code != 0), 0)


def run_in_workers(case, runs, transport, bin_dir, emulator, tmp_path, short_tmp, partner=False):
    """Runs `case(worker, emulator, n)` in WORKERS workers at once, `runs` in all (a multiple of WORKERS), each on a
    daemon of its own over `transport` ("pipes" or "socket"), with a scripted partner SSO host when `partner`."""
    assert runs % WORKERS == 0
    per_worker = runs // WORKERS
    workers = []

    def one(index):
        socket_dir = short_tmp / f"w{index}"
        socket_dir.mkdir()
        worker = Worker(transport, bin_dir, emulator, tmp_path / f"state{index}", socket_dir,
                        Platform(emulator) if partner else None)
        workers.append(worker)
        case(worker, emulator, per_worker)
        return per_worker

    try:
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
            done = sum(pool.map(one, range(WORKERS)))
        assert done == runs
    finally:
        assert [worker.stop() for worker in workers] == [0] * len(workers)
