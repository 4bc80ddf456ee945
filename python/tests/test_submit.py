import os
import stat

import pytest

from yarn_am import ConfigError, InvalidArgument, Job, ResourceManager, SubmitError, submit
from yarn_am.submit import parse_submit_output, submit_args


def test_executor_flags():
    args = submit_args(None, executors=2, command="echo 'a b' $X", executor_memory=128, executor_env={"X": "1 2"},
                       keep_running=True, name="n", tags=["a", "b"], max_attempts=1, webhdfs="http://rm:9870")
    assert args == ["submit", "--name", "n", "--tag", "a", "--tag", "b", "--max-attempts", "1",
                    "--executors", "2", "--executor-command", "echo 'a b' $X", "--executor-memory", "128",
                    "--executor-env", "X=1 2", "--keep-running", "--webhdfs", "http://rm:9870"]


def test_production_settings_are_flags():
    args = submit_args("job.json", priority=5, lifetime=600, application_type="ETL",
                       attempt_failures_validity_interval=60000)
    assert args == ["submit", "--priority", "5", "--lifetime", "600", "--application-type", "ETL",
                    "--attempt-failures-validity-interval", "60000", "--job", "job.json"]


def test_acls_and_log_patterns_are_flags():
    args = submit_args("job.json", view_acl="bob ops", modify_acl="carol", log_include_pattern="stdout$",
                       rolled_log_exclude_pattern="gc.*", node_label="gpu", am_node_label="am",
                       executor_resources={"yarn.io/gpu": 2})
    assert args == ["submit", "--executor-resource", "yarn.io/gpu=2", "--node-label", "gpu", "--am-node-label", "am", "--view-acl", "bob ops", "--modify-acl", "carol",
                    "--log-include-pattern", "stdout$", "--rolled-log-exclude-pattern", "gc.*",
                    "--job", "job.json"]


def test_am_resources_are_flags_after_the_am_size():
    args = submit_args("job.json", am_memory=512, am_resources={"yarn.io/gpu": 1, "example.com/accelerator": 2})
    assert args == ["submit", "--am-memory", "512", "--am-resource", "yarn.io/gpu=1",
                    "--am-resource", "example.com/accelerator=2", "--job", "job.json"]


def test_files_archives_and_the_failure_window_go_with_a_job_too():
    args = submit_args("job.json", files=["data.csv#d.csv"], archives=["hdfs:///apps/env.zip#env"],
                       executor_failures_validity_interval=3600000)
    assert args == ["submit", "--job", "job.json", "--executor-failures-validity-interval", "3600000",
                    "--file", "data.csv#d.csv", "--archive", "hdfs:///apps/env.zip#env"]


def test_a_job_conflicts_with_executor_flags():
    with pytest.raises(InvalidArgument, match="executors"):
        submit_args("job.json", executors=2)
    assert submit_args("job.json", name="x")[-2:] == ["--job", "job.json"]


def test_parses_what_submit_prints():
    out = ("submitted application_1_0003\ndriver API secret: /root/.yarn-am/application_1_0003.secret\n"
           "staging folder: hdfs://rm:8020/x\ntracking URL: http://rm:8088/proxy/application_1_0003/\n")
    assert parse_submit_output(out) == {
        "app_id": "application_1_0003", "secret_file": "/root/.yarn-am/application_1_0003.secret",
        "staging": "hdfs://rm:8020/x", "tracking_url": "http://rm:8088/proxy/application_1_0003/"}


def fake_binary(tmp_path, script: str) -> str:
    p = tmp_path / "yarn-am"
    p.write_text("#!/bin/bash\n" + script)
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return str(p)


def test_submit_runs_the_binary_with_the_job_file(tmp_path):
    seen = tmp_path / "seen.json"
    exe = fake_binary(tmp_path, f'''
for ((i=1; i<=$#; i++)); do [[ "${{!i}}" == --job ]] && j=$((i+1)) && cp "${{!j}}" {seen}; done
echo "submitted application_1_0042"
echo "driver API secret: {tmp_path}/s.secret"
''')
    job = Job("j", cores=1, memory_mb=128)
    job.task("t", "echo hi")
    app = submit(job, binary=exe, rm=ResourceManager("rm:8088"))
    assert app.app_id == "application_1_0042" and app.secret_file == f"{tmp_path}/s.secret"
    assert '"command": "echo hi"' in seen.read_text()


def test_a_failed_submit_carries_its_stderr(tmp_path):
    exe = fake_binary(tmp_path, 'echo "error: the RM at rm:8088 cannot be reached" >&2; exit 2')
    with pytest.raises(SubmitError) as e:
        submit(executors=1, binary=exe, rm=ResourceManager("rm:8088"))
    assert e.value.returncode == 2 and "cannot be reached" in e.value.stderr
    assert "cannot be reached" in str(e.value)


def test_no_binary_is_a_config_error(monkeypatch, tmp_path):
    monkeypatch.setenv("YARN_AM_BIN", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="missing"):
        submit(executors=1, rm=ResourceManager("rm:8088"))
    monkeypatch.delenv("YARN_AM_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="YARN_AM_BIN"):
        submit(executors=1, rm=ResourceManager("rm:8088"))


def test_an_ended_apps_task_output_comes_from_yarn_am_logs(tmp_path, monkeypatch):
    # After the end the NodeManagers have nothing: the binary reads the aggregated logs.
    from yarn_am import Application
    from yarn_am.errors import YarnAmError

    args = tmp_path / "args"
    exe = fake_binary(tmp_path, f'echo "$@" > {args}; echo "out of t1"')
    app = Application("application_1_0042", rm=ResourceManager("rm:8088", user="alice"))
    monkeypatch.setattr(app, "logs", lambda files=None: {})
    monkeypatch.setattr(app, "status", lambda: type("S", (), {"state": "FINISHED"})())
    assert app.task_output("t1", binary=exe, aggregation_wait=5) == "out of t1\n"
    assert args.read_text().split() == [
        "logs", "application_1_0042", "--file", "task-t1.0.stdout", "--rm-web", "http://rm:8088",
        "--user", "alice", "--aggregation-wait", "5"]
    nothing = fake_binary(tmp_path, "exit 1")
    assert app.task_output("t1", binary=nothing) is None
    broken = fake_binary(tmp_path, 'echo "no NameNode" >&2; exit 2')
    with pytest.raises(YarnAmError, match="exit 2.*no NameNode"):
        app.task_output("t1", binary=broken)
    # While it runs only the NodeManagers are asked.
    monkeypatch.setattr(app, "status", lambda: type("S", (), {"state": "RUNNING"})())
    assert app.task_output("t1", binary=exe) is None


def test_executor_kinds_and_host_exclusion_are_flags():
    args = submit_args(
        command="run",
        executors=1,
        executor_kinds={"accel": {"memory": 512, "vcores": 1, "executors": 2,
                                  "resources": {"example.com/accelerator": 1}, "command": "echo a,b"}},
        host_exclusion_failures=1,
        host_exclusion_timeout=30,
    )
    assert args[args.index("--executor-kind") + 1] == (
        "accel:memory=512,vcores=1,executors=2,resource.example.com/accelerator=1,command=echo a,b")
    assert args[args.index("--host-exclusion-failures") + 1] == "1"
    assert args[args.index("--host-exclusion-timeout") + 1] == "30"
    with pytest.raises(InvalidArgument, match="colour"):
        submit_args(command="run", executor_kinds={"accel": {"colour": "red"}})
    with pytest.raises(InvalidArgument, match="executor_kinds"):
        submit_args("job.json", executor_kinds={"accel": {"memory": 1}})
