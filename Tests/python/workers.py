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
        self.daemon = None
        self.others: list = []
        if transport == "pipes":
            self.client = ScriptedHost(bin_dir, platform, *self.args) if platform else StdioDaemon(bin_dir, *self.args)
            self.daemon = self.client
        else:
            self.socket = SocketDaemon(bin_dir, socket_dir / "pb.sock", *self.args)
            self.client = ScriptedSocketHost(self.socket.path, platform) if platform else self.socket.client()

    def other(self):
        """Another writer of the same device's logins: over pipes a second daemon on the same state directory, over
        a socket a second connection to the same daemon (with its own scripted host when the worker has one)."""
        if self.transport == "pipes":
            other = ScriptedHost(self.bin_dir, self.platform, *self.args) if self.platform else StdioDaemon(self.bin_dir, *self.args)
        else:
            other = ScriptedSocketHost(self.socket.path, self.platform) if self.platform else self.socket.client()
        self.others.append(other)
        return other

    def stop(self) -> int:
        codes = [other.stop() if self.transport == "pipes" else other.close() or 0 for other in self.others]
        if self.daemon is not None:
            return self.daemon.stop() or max(codes, default=0)
        self.client.close()
        return self.socket.stop() or max(codes, default=0)


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
