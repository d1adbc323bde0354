"""Starting and stopping the real services the fleet tests use (Prometheus, the Pushgateway,
munge, slurmctld, slurmd) and `nnergy exporter`, each stopped by its PID. A service whose program
is missing fails the test with what to install (scripts/install-deps.sh installs them all)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request


class TestFailure(Exception):
    """The test failed; the message says why."""


def require_program(path, package):
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise TestFailure(f"{path} not found: install the Debian package {package} "
                          "(scripts/install-deps.sh installs every test dependency)")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what, predicate, timeout_s, process=None, log=None):
    """Polls predicate() until it returns a truthy value; fails naming `what` after timeout_s or
    when `process` exits first."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise TestFailure(f"{what}: the process exited with {process.returncode}"
                              + (f"; its log:\n{tail(log)}" if log else ""))
        time.sleep(0.05)
    raise TestFailure(f"{what}: not within {timeout_s} s" + (f"; log:\n{tail(log)}" if log else ""))


def tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)"


def http_get(url, timeout=2):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except OSError:
        return None, ""


def stop(process, timeout_s=15):
    """SIGTERM to the process by its PID, then SIGKILL if it is still there after timeout_s."""
    if process is None or process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


class Exporter:
    """`nnergy exporter` on a port the kernel chooses; the port is read from its ready line."""

    def __init__(self, nnergy, args, env=None):
        self.process = subprocess.Popen(
            [nnergy, "exporter", "--listen", "127.0.0.1:0", *args], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=env)
        line = self.process.stderr.readline()
        marker = "serving http://127.0.0.1:"
        if marker not in line:
            self.process.kill()
            raise TestFailure(f"nnergy exporter did not start: {line}{self.process.stderr.read()}")
        self.port = int(line.split(marker)[1].split("/")[0])
        self.url = f"http://127.0.0.1:{self.port}/metrics"

    def stop(self):
        stop(self.process)
        out = self.process.stdout.read()
        self.process.stdout.close()
        self.process.stderr.close()
        return self.process.returncode, out


class Prometheus:
    """Prometheus scraping `targets` every second, with its storage in `workdir`."""

    def __init__(self, workdir, targets, pushgateway=None):
        program = require_program("/usr/bin/prometheus", "prometheus")
        self.port = free_port()
        config = os.path.join(workdir, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n"
                    "  - job_name: nnergy\n"
                    f"    static_configs: [{{targets: [{', '.join(repr(t) for t in targets)}]}}]\n")
            if pushgateway:
                f.write("  - job_name: pushgateway\n    honor_labels: true\n"
                        f"    static_configs: [{{targets: ['{pushgateway}']}}]\n")
        self.log = os.path.join(workdir, "prometheus.log")
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [program, f"--config.file={config}",
                 f"--storage.tsdb.path={os.path.join(workdir, 'tsdb')}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                stdout=log, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"
        try:
            wait_until("Prometheus ready", lambda: http_get(self.url + "/-/ready")[0] == 200, 20,
                       self.process, self.log)
        except BaseException:
            stop(self.process)
            raise

    def query(self, expression):
        """The instant vector of `expression` as [(labels, value)]."""
        import json
        status, body = http_get(self.url + "/api/v1/query?" +
                                urllib.parse.urlencode({"query": expression}))
        if status != 200:
            return []
        return [(r["metric"], float(r["value"][1])) for r in json.loads(body)["data"]["result"]]

    def stop(self):
        stop(self.process)


class Pushgateway:
    def __init__(self, workdir):
        program = require_program("/usr/bin/prometheus-pushgateway", "prometheus-pushgateway")
        self.port = free_port()
        self.log = os.path.join(workdir, "pushgateway.log")
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [program, f"--web.listen-address=127.0.0.1:{self.port}"], stdout=log,
                stderr=subprocess.STDOUT)
        self.address = f"127.0.0.1:{self.port}"
        try:
            wait_until("Pushgateway ready",
                       lambda: http_get(f"http://{self.address}/-/ready")[0] == 200, 20,
                       self.process, self.log)
        except BaseException:
            stop(self.process)
            raise

    def stop(self):
        stop(self.process)


def run_main(main):
    """Runs main(), printing TestFailure as one FAIL line with exit code 1."""
    try:
        main()
    except TestFailure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)


class SlurmCluster:
    """A single-node Slurm cluster in `workdir`: munged, slurmctld and slurmd in the foreground on
    free ports, with their own munge key and socket (so that it never meets another cluster on
    the machine), proctrack/linuxproc and task/none (no cgroups needed), `gpus` fake GPU device
    files (gres gpu, character devices 195:N), and nnergy's SPANK plugin loaded from
    plugstack.conf when `spank_plugin` is given. `daemon_env` is added to slurmd's environment,
    which slurmstepd (and so the plugin) inherits: the fake NVML's script goes there. Needs root
    (mknod, munge's user). Stopped by PID."""

    def __init__(self, workdir, gpus=2, spank_plugin=None, spank_arguments=(), daemon_env=None):
        self.processes = []
        try:
            self._start_cluster(workdir, gpus, spank_plugin, spank_arguments, daemon_env)
        except BaseException:
            self.stop()  # the daemons started so far, by PID
            raise

    def _start_cluster(self, workdir, gpus, spank_plugin, spank_arguments, daemon_env):
        self.munged = require_program("/usr/sbin/munged", "munge")
        require_program("/usr/bin/munge", "munge")
        self.slurmctld_program = require_program("/usr/sbin/slurmctld", "slurmctld")
        self.slurmd_program = require_program("/usr/sbin/slurmd", "slurmd")
        for client in ("sbatch", "squeue", "sinfo", "scontrol", "srun"):
            require_program(f"/usr/bin/{client}", "slurm-client")
        if os.geteuid() != 0:
            raise TestFailure("the Slurm tests need root (munge's user, device files, slurmd)")
        began = time.monotonic()
        self.dir = os.path.join(workdir, "slurm")
        for sub in ("etc", "state", "spool", "log", "run", "dev", "munge"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        os.chmod(workdir, 0o755)
        os.chmod(self.dir, 0o755)
        munge_dir = os.path.join(self.dir, "munge")
        import pwd
        munge_user = pwd.getpwnam("munge")
        os.chown(munge_dir, munge_user.pw_uid, munge_user.pw_gid)
        os.chmod(munge_dir, 0o755)
        key = os.path.join(munge_dir, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chown(key, munge_user.pw_uid, munge_user.pw_gid)
        os.chmod(key, 0o600)
        self.munge_socket = os.path.join(munge_dir, "munge.socket")
        munge_log = os.path.join(self.dir, "log", "munged.log")
        self._start("munged", [
            "/usr/bin/setpriv", f"--reuid={munge_user.pw_uid}", f"--regid={munge_user.pw_gid}",
            "--init-groups", self.munged, "--foreground", f"--key-file={key}",
            f"--socket={self.munge_socket}", f"--pid-file={os.path.join(munge_dir, 'munged.pid')}",
            f"--seed-file={os.path.join(munge_dir, 'munged.seed')}", f"--log-file={munge_log}"],
            munge_log)
        wait_until("munged answering", lambda: subprocess.run(
            f"/usr/bin/munge -S {self.munge_socket} -n </dev/null | /usr/bin/unmunge -S "
            f"{self.munge_socket} >/dev/null", shell=True,
            stderr=subprocess.DEVNULL).returncode == 0, 10, self.processes[-1][1], munge_log + ".out")

        self.host = socket.gethostname().split(".")[0]
        self.cpus = os.cpu_count() or 1
        for n in range(gpus):
            device = os.path.join(self.dir, "dev", f"nvidia{n}")
            if not os.path.exists(device):
                os.mknod(device, 0o666 | 0o020000, os.makedev(195, n))
        self.conf = os.path.join(self.dir, "etc", "slurm.conf")
        d = self.dir
        gres = f" Gres=gpu:{gpus}" if gpus else ""
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=nnergytest
SlurmctldHost={self.host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
GresTypes=gpu
NodeName={self.host} CPUs={self.cpus} RealMemory=1000{gres} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        with open(os.path.join(self.dir, "etc", "gres.conf"), "w") as f:
            if gpus:
                f.write(f"NodeName={self.host} Name=gpu File={d}/dev/nvidia[0-{gpus - 1}]\n")
        with open(os.path.join(self.dir, "etc", "plugstack.conf"), "w") as f:
            if spank_plugin:
                f.write(f"required {spank_plugin} {' '.join(spank_arguments)}\n")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self._start("slurmctld", [self.slurmctld_program, "-D", "-i", "-f", self.conf],
                    os.path.join(d, "log", "slurmctld.log"))
        slurmd_env = dict(self.env, **(daemon_env or {}))
        self._start("slurmd", [self.slurmd_program, "-D", "-f", self.conf],
                    os.path.join(d, "log", "slurmd.log"), slurmd_env)

        def idle():
            for name, process, log in self.processes:
                if process.poll() is not None:
                    raise TestFailure(f"{name} exited with {process.returncode}; log:\n{tail(log)}")
            try:
                out = subprocess.run(["/usr/bin/sinfo", "-h", "-N", "-o", "%t"], env=self.env,
                                     capture_output=True, text=True, timeout=2).stdout.strip()
            except subprocess.TimeoutExpired:
                return False
            return out == "idle"
        wait_until("the Slurm node idle", idle, 30, None, os.path.join(d, "log", "slurmctld.log"))
        self.startup_s = time.monotonic() - began

    def _start(self, name, command, log, env=None):
        with open(log + ".out", "w") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                       env=env or getattr(self, "env", None))
        self.processes.append((name, process, log))

    def run(self, *command, check=True, timeout=30):
        """A Slurm client command with this cluster's SLURM_CONF; its stdout."""
        result = subprocess.run(list(command), env=self.env, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise TestFailure(f"{' '.join(command)}: exit {result.returncode}: {result.stderr}")
        return result.stdout

    def job_states(self):
        """{job id as squeue prints it (ARRAY_TASK or JOB): state} of the jobs Slurm knows."""
        out = self.run("/usr/bin/scontrol", "-o", "show", "job", check=False)
        states = {}
        for line in out.splitlines():
            fields = dict(w.split("=", 1) for w in line.split() if "=" in w)
            if "JobId" not in fields:
                continue
            job = fields["JobId"]
            if "ArrayTaskId" in fields and "ArrayJobId" in fields:
                job = f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}"
            states[job] = fields.get("JobState", "?")
        return states

    def log(self, name):
        return tail(os.path.join(self.dir, "log", f"{name}.log"), 60)

    def stop(self):
        """SIGTERM to slurmd, slurmctld, then munged, each by its PID."""
        began = time.monotonic()
        for name, process, _ in reversed(self.processes):
            stop(process, 20)
        self.processes = []
        return time.monotonic() - began
