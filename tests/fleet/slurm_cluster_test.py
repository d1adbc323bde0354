"""Single-node Slurm 22.05 with nnergy's SPANK plugin over the fake NVML (2 fake GPUs whose energy
counters grow at 250 W and 100 W):

1. A job with one GPU: the plugin's record of its batch step holds 250 W (or 100 W) x the step's
   time within 5 %, the job's AdminComment says so, and `nnergy jobs` sums it per job, user and
   partition.
2. `nnergy profile --sbatch` (alexnet on the CPU, 2 array tasks + a merge job with
   --dependency=afterok), submitted with its submit.sh; task 1's `nnergy profile` is SIGKILLed
   mid-run, requeues itself and resumes its shard; the merged dataset has exactly the
   measurements of an uninterrupted run.
3. `--shard auto` with malformed Slurm variables: exit 2, one line on stderr, nothing on stdout.
4. Jobs of an unprivileged user whose shell carries SLURM_STEP_GPUS=99, 1, 0 ten times or x: each
   record holds the one GPU Slurm allocated, with its energy.

Prints Slurm's start-up and shut-down times and the array's time."""

import argparse
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import tempfile
import time

from fleet_services import SlurmCluster, TestFailure, run_main, wait_until

GPU_W = {0: 250.0, 1: 100.0}
ENERGY_TOLERANCE = 0.05
PROFILE = ["--models", "alexnet", "--min-time-s", "0.01", "--repeats", "1", "--threads", "1"]


def ok_keys(path):
    with contextlib.closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT o.signature, m.mode, m.dtype, m.clock_mhz FROM measurements m "
                          "JOIN ops o ON o.id = m.op_id WHERE m.status = 'ok'").fetchall()
    return sorted(rows)


def ok_count(path):
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return db.execute("SELECT count(*) FROM measurements WHERE status = 'ok'").fetchone()[0]
    except sqlite3.Error:
        return 0


def profile_pid(array_job, task):
    """The PID of `nnergy profile` in array task ARRAY_JOB_TASK, found by its environment."""
    wanted = {f"SLURM_ARRAY_JOB_ID={array_job}".encode(), f"SLURM_ARRAY_TASK_ID={task}".encode()}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                words = f.read().split(b"\0")
            if len(words) < 2 or not words[0].endswith(b"nnergy") or words[1] != b"profile":
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if wanted <= set(f.read().split(b"\0")):
                    return int(pid)
        except OSError:
            continue
    return None


def check_job_energy(cluster, nnergy, records):
    out = cluster.run("/usr/bin/sbatch", "--parsable", "--gres=gpu:1", "-o", "/dev/null",
                      "--wrap", "sleep 2")
    job = out.strip().split(";")[0]
    wait_until(f"job {job} completed", lambda: cluster.job_states().get(job) == "COMPLETED", 30)
    path = wait_until(f"the SPANK record of job {job}'s batch step", lambda: next(
        (os.path.join(records, n) for n in os.listdir(records)
         if n.startswith(f"job-{job}.step-batch.")), None), 10)
    with open(path) as f:
        record = json.load(f)
    if len(record["gpus"]) != 1:
        raise TestFailure(f"{path}: expected 1 GPU, found {record['gpus']}")
    gpu = record["gpus"][0]
    seconds = record["end_epoch_s"] - record["start_epoch_s"]
    expected = GPU_W[gpu["index"]] * seconds
    print(f"job {job}: GPU {gpu['index']} {gpu['energy_j']:.1f} J over {seconds:.2f} s "
          f"({gpu['energy_method']}); expected {expected:.1f} J")
    if gpu["energy_j"] is None or abs(gpu["energy_j"] / expected - 1) > ENERGY_TOLERANCE:
        raise TestFailure(f"{path}: GPU energy {gpu['energy_j']} J, expected {expected:.1f} J "
                          f"within {100 * ENERGY_TOLERANCE:g} %")
    if record["user"] != "root" or record["partition"] != "debug":
        raise TestFailure(f"{path}: user {record['user']}, partition {record['partition']}")
    shown = cluster.run("/usr/bin/scontrol", "-o", "show", "job", job)
    comment = next((w for w in shown.split() if w.startswith("AdminComment=")), "")
    if f"nnergy_gpu_joules={gpu['energy_j']:.1f}" not in comment:
        raise TestFailure(f"job {job}: expected AdminComment=nnergy_gpu_joules="
                          f"{gpu['energy_j']:.1f} ..., found {comment or 'none'}")
    summary = subprocess.run([nnergy, "jobs", "--dir", records, "--job", job, "--format", "json"],
                             capture_output=True, text=True)
    if summary.returncode != 0:
        raise TestFailure(f"nnergy jobs: exit {summary.returncode}: {summary.stderr}")
    report = json.loads(summary.stdout)
    jobs = report["jobs"]
    if len(jobs) != 1 or abs(jobs[0]["energy_j"] - gpu["energy_j"]) > 1e-6 * expected:
        raise TestFailure(f"nnergy jobs --job {job}: {jobs}, expected {gpu['energy_j']} J")
    if [u["name"] for u in report["users"]] != ["root"]:
        raise TestFailure(f"nnergy jobs: users {report['users']}")


def check_array(cluster, nnergy, work, records):
    began = time.monotonic()
    reference = os.path.join(work, "reference.sqlite")
    run = subprocess.run([nnergy, "profile", *PROFILE, "--db", reference], capture_output=True,
                         text=True)
    if run.returncode != 0:
        raise TestFailure(f"uninterrupted nnergy profile: exit {run.returncode}: {run.stderr}")
    reference_s = time.monotonic() - began
    expected = ok_keys(reference)
    campaign = os.path.join(work, "campaign")
    merged = os.path.join(work, "merged.sqlite")
    written = subprocess.run([nnergy, "profile", *PROFILE, "--db", merged, "--sbatch", campaign,
                              "--sbatch-tasks", "2", "--sbatch-option=--gres=gpu:1"],
                             capture_output=True, text=True)
    if written.returncode != 0:
        raise TestFailure(f"nnergy profile --sbatch: exit {written.returncode}: {written.stderr}")
    began = time.monotonic()
    submitted = cluster.run(os.path.join(campaign, "submit.sh")).split()
    array_job, merge_job = submitted[3].rstrip(","), submitted[6]
    shard = os.path.join(campaign, "shards", "shard-1.sqlite")
    wait_until("task 1's first measurement", lambda: ok_count(shard) > 0, 60)
    pid = profile_pid(array_job, 1)
    if pid is None:
        raise TestFailure(f"no nnergy profile process of task {array_job}_1 (it ended too soon)")
    before_kill = ok_count(shard)
    os.kill(pid, signal.SIGKILL)
    killed_s = time.monotonic() - began
    # slurmctld holds a requeued job for its requeue delay (Reason=BeginTime, about 2 minutes);
    # the test shortens it to 2 s with `scontrol update ... StartTime=now+2`. Not to 0: a task
    # started in the second its previous run's credential was revoked is killed at once ("Job
    # credential revoked").
    task = f"{array_job}_1"
    wait_until(f"task {task} requeued", lambda: cluster.job_states().get(task) == "PENDING", 30)
    cluster.run("/usr/bin/scontrol", "update", f"JobId={task}", "StartTime=now+2")

    def merge_done():
        states = cluster.job_states()
        bad = ("FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL")
        # A failed task leaves the merge pending for ever (afterok): fail at once.
        if states.get(merge_job) in bad or any(
                job.startswith(f"{array_job}_") and state in bad for job, state in states.items()):
            raise TestFailure(f"merge job {merge_job} or an array task failed: {states}")
        return states.get(merge_job) == "COMPLETED"
    wait_until(f"merge job {merge_job} completed", merge_done, 240, None,
               os.path.join(cluster.dir, "log", "slurmctld.log"))
    array_s = time.monotonic() - began
    restarts = cluster.run("/usr/bin/scontrol", "-o", "show", "job", f"{array_job}_1")
    restart_count = next((w.split("=")[1] for w in restarts.split() if w.startswith("Restarts=")),
                         "?")
    got = ok_keys(merged)
    print(f"uninterrupted profile {reference_s:.1f} s, {len(expected)} measurements; array of 2 "
          f"tasks + merge {array_s:.1f} s; task 1 SIGKILLed {killed_s:.1f} s in after "
          f"{before_kill} measurements, restarts {restart_count}; merged {len(got)} measurements")
    # The SPANK plugin recorded each task's GPU (--gres=gpu:1): `nnergy jobs` by array job id.
    summary = subprocess.run([nnergy, "jobs", "--dir", records, "--job", array_job, "--format",
                              "json"], capture_output=True, text=True)
    tasks = json.loads(summary.stdout)["jobs"] if summary.returncode == 0 else []
    if len(tasks) != 2 or not all(t["energy_j"] > 0 for t in tasks):
        raise TestFailure(f"nnergy jobs --job {array_job}: exit {summary.returncode}, {tasks}, "
                          f"{summary.stderr}")
    if restart_count in ("0", "?"):
        raise TestFailure(f"task {array_job}_1 was not requeued after SIGKILL: {restarts}")
    if got != expected:
        raise TestFailure(f"merged dataset: {len(got)} measurements, uninterrupted run "
                          f"{len(expected)}: missing {sorted(set(expected) - set(got))[:5]}, "
                          f"extra {sorted(set(got) - set(expected))[:5]}")


def check_malformed_variables(nnergy):
    env = dict(os.environ, SLURM_ARRAY_TASK_ID="x1", SLURM_ARRAY_TASK_COUNT="2")
    run = subprocess.run([nnergy, "profile", *PROFILE, "--db", "/nonexistent/never.sqlite",
                          "--shard", "auto"], capture_output=True, text=True, env=env)
    lines = run.stderr.strip().splitlines()
    if run.returncode != 2 or run.stdout or len(lines) != 1 or "SLURM_ARRAY_TASK_ID" not in lines[0]:
        raise TestFailure(f"--shard auto with SLURM_ARRAY_TASK_ID=x1: exit {run.returncode}, "
                          f"stdout {run.stdout!r}, stderr {run.stderr!r}")


def check_hostile_gpu_variables(cluster, records):
    """Jobs submitted by an unprivileged user whose shell carries SLURM_STEP_GPUS (sbatch copies
    it into the job even with --export=NONE): each batch step's record holds exactly the GPU
    Slurm allocated (GPU 0, the first free one) with its energy, whatever the variable said."""
    for hostile in ("99", "1", "0,0,0,0,0,0,0,0,0,0", "x"):
        env = dict(cluster.env, SLURM_STEP_GPUS=hostile)
        result = subprocess.run(
            ["/usr/sbin/runuser", "-u", "nobody", "--", "/usr/bin/sbatch", "--parsable",
             "--export=NONE", "--gres=gpu:1", "--chdir=/tmp", "-o", "/dev/null", "--wrap",
             "sleep 1"], env=env, capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            raise TestFailure(f"sbatch as nobody: exit {result.returncode}: {result.stderr}")
        job = result.stdout.strip().split(";")[0]
        wait_until(f"job {job} completed",
                   lambda: cluster.job_states().get(job) == "COMPLETED", 30)
        path = wait_until(f"the SPANK record of job {job}'s batch step", lambda: next(
            (os.path.join(records, n) for n in os.listdir(records)
             if n.startswith(f"job-{job}.step-batch.")), None), 10)
        with open(path) as f:
            record = json.load(f)
        gpus = [g["index"] for g in record["gpus"]]
        seconds = record["end_epoch_s"] - record["start_epoch_s"]
        energy = sum(g["energy_j"] or 0 for g in record["gpus"])
        expected = GPU_W[0] * seconds
        print(f"job {job} (SLURM_STEP_GPUS={hostile} in the submitter's shell): GPUs {gpus}, "
              f"{energy:.1f} J, expected GPU 0 with {expected:.1f} J")
        if gpus != [0] or abs(energy / expected - 1) > ENERGY_TOLERANCE or \
                record["user"] != "nobody":
            raise TestFailure(f"{path}: SLURM_STEP_GPUS={hostile}: recorded GPUs {gpus} with "
                              f"{energy:.1f} J for user {record['user']}, expected GPU 0 with "
                              f"{expected:.1f} J for nobody")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nnergy", required=True)
    parser.add_argument("--fake-nvml", required=True)
    parser.add_argument("--spank-plugin", required=True)
    args = parser.parse_args()
    began = time.monotonic()
    check_malformed_variables(args.nnergy)
    with tempfile.TemporaryDirectory(prefix="nnergy_slurm_") as work:
        records = os.path.join(work, "records")
        script = os.path.join(work, "fake_nvml.txt")
        with open(script, "w") as f:
            f.write("gpus 2\n" + "".join(f"energy_rate_mw {i} {int(w * 1000)}\n"
                                          f"power_mw {i} {int(w * 1000)}\n"
                                          for i, w in GPU_W.items()))
        os.chmod(work, 0o755)
        cluster = SlurmCluster(work, gpus=2, spank_plugin=args.spank_plugin,
                               spank_arguments=[f"dir={records}", f"nvml={args.fake_nvml}",
                                                "interval_ms=50", "admin_comment=yes"],
                               daemon_env={"NNERGY_FAKE_NVML_SCRIPT": script})
        print(f"Slurm up in {cluster.startup_s:.2f} s")
        try:
            check_job_energy(cluster, args.nnergy, records)
            check_hostile_gpu_variables(cluster, records)
            check_array(cluster, args.nnergy, work, records)
        except TestFailure as e:
            raise TestFailure(f"{e}\nslurmctld.log:\n{cluster.log('slurmctld')}\n"
                              f"slurmd.log:\n{cluster.log('slurmd')}")
        finally:
            print(f"Slurm down in {cluster.stop():.2f} s")
    print(f"test time {time.monotonic() - began:.2f} s")


run_main(main)
