import json

import pytest

from yarn_am import InvalidArgument, Job


def sample() -> Job:
    job = Job("sample", cores=2, memory_mb=256, max_executors=6, initial_executors=0, idle_timeout_ms=5000,
              task_retries=4, locality_wait_ms=3000)
    for i, host in enumerate(["nm1", "nm2", "nm3"]):
        job.task(f"t{i:02}", f"sleep 1 && echo t{i:02} done", hosts=[host])
    return job


def test_writes_the_job_file_format(tmp_path):
    path = sample().write(tmp_path / "job.json")
    d = json.loads(open(path).read())
    assert d == {
        "name": "sample",
        "executor": {"cores": 2, "memory_mb": 256, "max_executors": 6, "initial_executors": 0,
                     "idle_timeout_ms": 5000},
        "task_retries": 4,
        "locality_wait_ms": {"node": 3000, "rack": 3000},
        "tasks": [
            {"id": "t00", "command": "sleep 1 && echo t00 done", "preferred_hosts": ["nm1"],
             "preferred_racks": [], "cpus": 1},
            {"id": "t01", "command": "sleep 1 && echo t01 done", "preferred_hosts": ["nm2"],
             "preferred_racks": [], "cpus": 1},
            {"id": "t02", "command": "sleep 1 && echo t02 done", "preferred_hosts": ["nm3"],
             "preferred_racks": [], "cpus": 1},
        ],
    }


def test_round_trips_the_example_job_file():
    import pathlib

    example = pathlib.Path(__file__).resolve().parents[2] / "conf" / "examples" / "job.json"
    if not example.exists():
        pytest.skip("not in the yarn-am repository")
    d = json.loads(example.read_text())
    job = Job.load(example)
    job.validate()
    assert job.to_dict() == d
    hdfs = Job.load(example.parent / "hdfs-job.json")
    hdfs.validate()
    assert hdfs.to_dict()["inputs"] == json.loads((example.parent / "hdfs-job.json").read_text())["inputs"]


def test_inputs_and_timeouts():
    job = Job("wc", cores=2, memory_mb=512, timeout_ms=60_000)
    job.add_inputs(["/data/*"], "{split.cat} | wc -w", split="size", split_size_bytes=1 << 20)
    job.task("extra", "true", timeout_ms=1000)
    d = job.to_dict()
    assert d["inputs"] == {"paths": ["/data/*"], "command": "{split.cat} | wc -w", "split": "size",
                           "split_size_bytes": 1 << 20}
    assert d["timeout_ms"] == 60_000 and d["tasks"][0]["timeout_ms"] == 1000
    job.validate()


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda j: setattr(j, "name", " "), "name"),
        (lambda j: setattr(j.executor, "cores", 0), "executor.cores"),
        (lambda j: setattr(j.executor, "min_executors", 9), "executor.max_executors"),
        (lambda j: setattr(j.executor, "initial_executors", 7), "executor.initial_executors"),
        (lambda j: j.task("t00", "true"), "tasks[3].id"),
        (lambda j: j.task("a/b", "true"), "tasks[3].id"),
        (lambda j: j.task("x", "  "), "tasks[3].command"),
        (lambda j: j.task("x", "true", cpus=3), "tasks[3].cpus"),
        (lambda j: j.task("x", "true", timeout_ms=0), "tasks[3].timeout_ms"),
        (lambda j: j.task("x", "true", hosts=[""]), "tasks[3].preferred_hosts"),
        (lambda j: setattr(j, "task_retries", 0), "task_retries"),
        (lambda j: setattr(j, "allocation", {"executor_allocation_ratio": 0}), "allocation.executor_allocation_ratio"),
        (lambda j: setattr(j, "allocation", {"ratio": 1}), "allocation.ratio"),
        (lambda j: j.add_inputs(["rel/path"], "cat"), "inputs.paths"),
        (lambda j: j.add_inputs(["/a"], "cat", split="size"), "inputs.split_size_bytes"),
    ],
)
def test_validation_names_the_field(change, field):
    job = sample()
    change(job)
    with pytest.raises(InvalidArgument) as e:
        job.to_json()
    assert str(e.value).startswith(field + ":"), str(e.value)


def test_a_job_needs_tasks_or_inputs():
    with pytest.raises(InvalidArgument, match="tasks"):
        Job("empty").validate()


def test_from_dict_refuses_unknown_fields():
    with pytest.raises(InvalidArgument, match="unknown job field"):
        Job.from_dict({"name": "x", "executor": {"cores": 1, "memory_mb": 1}, "taks": []})
    with pytest.raises(InvalidArgument, match="missing field 'memory_mb'"):
        Job.from_dict({"name": "x", "executor": {"cores": 1}})


def test_kinds_and_a_tasks_kind_go_into_the_file_and_back():
    job = Job("kinds", cores=1, memory_mb=256)
    job.kind("accel", cores=2, memory_mb=512, max_executors=2, resources={"example.com/accelerator": 1})
    job.task("a", "run", kind="accel", cpus=2)
    job.task("p", "run")
    d = job.to_dict()
    assert d["kinds"] == {"accel": {"cores": 2, "memory_mb": 512, "max_executors": 2,
                                    "resources": {"example.com/accelerator": 1}}}
    assert d["tasks"][0]["kind"] == "accel" and "kind" not in d["tasks"][1]
    job.validate()
    assert Job.from_dict(d).to_dict() == d
    job.task("b", "run", kind="gpu")
    with pytest.raises(InvalidArgument, match=r"tasks\[2\].kind"):
        job.validate()
    bad = Job("k")
    bad.kind("default")
    bad.task("a", "run")
    with pytest.raises(InvalidArgument, match="kinds.default"):
        bad.validate()
