"""A throwaway PostgreSQL cluster for the tests and benchmarks: ``initdb`` in a temporary folder, a
loopback port, a password file; stopped and removed by whoever started it.

    python -m tests.pg_cluster start FOLDER     # prints the cluster's URL (with its password)
    python -m tests.pg_cluster stop FOLDER      # stops it (even half-started) and removes FOLDER

``scripts/test`` starts one this way and stops it in a ``trap`` (so also when tests fail), and
passes its URL to pytest in ``TINY_AGENT_TEST_PG``. Without that variable, ``tests/conftest.py``
starts one itself when the server binaries are installed (Debian's ``postgresql`` package puts them
in ``/usr/lib/postgresql/<version>/bin``, off the PATH).

``initdb`` refuses to run as root: as root, every server command runs as the ``postgres`` system user
(``runuser -u postgres --``), and the folder (with the socket folder inside it) belongs to that user.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cluster", "find_bin", "why_not"]

SERVER_USER = "postgres"
"""The system user that runs the server when we are root (Debian's package creates it)."""
DB_USER = "tiny"


def _runuser() -> str | None:
    """``runuser``, also where a minimal PATH (a CI job's, cron's) leaves out the sbin folders."""
    return shutil.which("runuser") or shutil.which("runuser", path="/usr/sbin:/sbin")


def find_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: ``$PG_BIN``, the PATH, or the newest Debian install."""
    candidates = [os.environ.get("PG_BIN", "")]
    found = shutil.which("pg_ctl")
    if found:
        candidates.append(str(Path(found).parent))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version, reverse=True)
    for folder in filter(None, candidates):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _version(folder: str) -> int:
    name = Path(folder).parent.name
    return int(name) if name.isdigit() else 0


def why_not() -> str | None:
    """Why no cluster can be started here, or None if one can."""
    if find_bin() is None:
        return "PostgreSQL is not installed (initdb not found; Debian: apt-get install postgresql)"
    if os.geteuid() == 0 and _runuser() is None:
        return "running as root without runuser, and initdb refuses root"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return f"running as root and there is no {SERVER_USER!r} user to run the server as"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Cluster:
    folder: Path
    port: int = 0
    password: str = ""

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def url(self, database: str = "postgres", *, password: bool = True) -> str:
        secret = f":{self.password}" if password else ""
        return f"postgresql://{DB_USER}{secret}@127.0.0.1:{self.port}/{database}"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        bin_dir = find_bin()
        assert bin_dir is not None, why_not()
        command = [str(bin_dir / argv[0]), *argv[1:]]
        if os.geteuid() == 0:
            command = [str(_runuser()), "-u", SERVER_USER, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if check and done.returncode != 0:
            tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(argv[:2])} failed ({done.returncode}): {done.stderr.strip()}\n{tail}")
        return done

    def start(self, *, fsync: bool = True, settings: dict[str, str] | None = None) -> Cluster:
        """initdb and start; ``fsync=False`` for tests that never crash the server itself."""
        reason = why_not()
        if reason:
            raise RuntimeError(reason)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.password = self.password or secrets.token_urlsafe(16)
        pwfile = self.folder / "pwfile"
        pwfile.write_text(self.password + "\n")
        if os.geteuid() == 0:
            import pwd

            owner = pwd.getpwnam(SERVER_USER)
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
            os.chown(pwfile, owner.pw_uid, owner.pw_gid)
        os.chmod(self.folder, 0o700)
        os.chmod(pwfile, 0o600)
        self._run(
            "initdb", "-D", str(self.data), "-U", DB_USER, "--pwfile", str(pwfile),
            "-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        pwfile.unlink()
        options = {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(self.folder),
            "max_connections": "200",
            "fsync": "on" if fsync else "off",
            "synchronous_commit": "on" if fsync else "off",
            "full_page_writes": "on" if fsync else "off",
            **(settings or {}),
        }
        with open(self.data / "postgresql.conf", "a") as conf:
            for key, value in options.items():
                conf.write(f"{key} = '{value}'\n")
        for attempt in range(5):  # the free port can be taken between the probe and the start
            self.port = free_port()
            with open(self.data / "postgresql.conf", "a") as conf:
                conf.write(f"port = {self.port}\n")  # the last line wins; a plain restart keeps it
            started = self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start", check=attempt == 4
            )
            if started.returncode == 0:
                break
        (self.folder / "port").write_text(str(self.port))
        return self

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is cut, the server is back when this returns."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-m", "fast", "-w", "restart")

    def stop_server(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def start_server(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "start")

    def stop(self) -> None:
        """Stop the server if it runs and remove the folder."""
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)

    def admin(self, database: str = "postgres") -> object:
        """A psycopg connection as the cluster's superuser (autocommit)."""
        import psycopg

        return psycopg.connect(self.url(database), autocommit=True)

    def wait_until_up(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[1])
    if argv[0] == "start":
        try:
            cluster = Cluster(folder).start(fsync=False)
        except RuntimeError as exc:
            print(f"cannot start a PostgreSQL server for the tests: {exc}", file=sys.stderr)
            return 1
        print(cluster.url())
        return 0
    Cluster(folder).stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
