import json

import pytest

from yarn_am import AppStatus, ConfigError, InvalidArgument, ResourceManager
from yarn_am.logs import is_container_of, strip_log_wrapper
from yarn_am.rm import check_app_id, rm_web_urls_from_conf


@pytest.fixture
def clean_env(monkeypatch):
    for k in ("YARN_AM_RM_WEB", "HADOOP_CONF_DIR", "YARN_CONF_DIR"):
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


def write_site(d, name, props):
    body = "".join(f"<property><name>{k}</name><value>{v}</value></property>" for k, v in props.items())
    (d / name).write_text(f"<?xml version='1.0'?><configuration>{body}</configuration>")


def test_address_from_yarn_site_with_variables(clean_env, tmp_path):
    write_site(tmp_path, "yarn-site.xml", {"yarn.resourcemanager.hostname": "rm"})
    clean_env.setenv("HADOOP_CONF_DIR", str(tmp_path))
    assert ResourceManager().urls == ["http://rm:8088"]
    write_site(tmp_path, "yarn-site.xml", {"yarn.resourcemanager.hostname": "rm",
                                           "yarn.resourcemanager.webapp.address": "${yarn.resourcemanager.hostname}:18088"})
    assert ResourceManager().urls == ["http://rm:18088"]


def test_env_and_argument_win(clean_env, tmp_path):
    write_site(tmp_path, "yarn-site.xml", {"yarn.resourcemanager.hostname": "rm"})
    clean_env.setenv("YARN_CONF_DIR", str(tmp_path))
    clean_env.setenv("YARN_AM_RM_WEB", "rm2:8088")
    assert ResourceManager().urls == ["http://rm2:8088"]
    assert ResourceManager("https://rm3:8090/").urls == ["https://rm3:8090"]


def test_https_only_and_ha():
    props = {"yarn.http.policy": "HTTPS_ONLY", "yarn.resourcemanager.ha.enabled": "true",
             "yarn.resourcemanager.ha.rm-ids": "a, b", "yarn.resourcemanager.hostname.a": "rma",
             "yarn.resourcemanager.webapp.https.address.b": "rmb:9443"}
    assert rm_web_urls_from_conf(props) == ["https://rma:8090", "https://rmb:9443"]


def test_no_rm_is_a_config_error(clean_env):
    with pytest.raises(ConfigError, match="YARN_AM_RM_WEB"):
        ResourceManager()


def test_kerberos_is_named_as_unsupported(clean_env, tmp_path):
    write_site(tmp_path, "core-site.xml", {"hadoop.security.authentication": "kerberos"})
    write_site(tmp_path, "yarn-site.xml", {"yarn.resourcemanager.hostname": "rm"})
    clean_env.setenv("HADOOP_CONF_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="SPNEGO"):
        ResourceManager()


def test_app_ids_are_checked():
    assert check_app_id("application_1700000000000_0001")
    for bad in ["app_1", "application_1_x", "application_1_2/../x", ""]:
        with pytest.raises(InvalidArgument):
            check_app_id(bad)


def test_status_outcomes_and_job_summary():
    summary = {"name": "j", "succeeded": True, "tasks_total": 2}
    r = {"id": "application_1_1", "state": "FINISHED", "finalStatus": "SUCCEEDED",
         "diagnostics": "job j: 2/2 tasks succeeded\n" + json.dumps(summary), "amRPCAddress": "nm1:4000"}
    s = AppStatus.from_report(r)
    assert (s.done, s.outcome, s.exit_code, s.succeeded) == (True, "succeeded", 0, True)
    assert s.job_summary == summary and s.am_rpc_address == "nm1:4000"
    cases = [("FINISHED", "FAILED", "failed"), ("FAILED", "FAILED", "failed"), ("KILLED", "KILLED", "killed"),
             ("FINISHED", "KILLED", "killed"), ("RUNNING", "UNDEFINED", "running"), ("ACCEPTED", "UNDEFINED", "running")]
    for state, final, outcome in cases:
        assert AppStatus.from_report({"state": state, "finalStatus": final}).outcome == outcome
    assert AppStatus.from_report({"state": "ACCEPTED", "amRPCAddress": "N/A"}).am_rpc_address is None


def test_container_ids_and_log_wrapper():
    app = "application_1700000000000_0007"
    assert is_container_of("container_1700000000000_0007_01_000002", app)
    assert is_container_of("container_e03_1700000000000_0007_02_000001", app)
    assert not is_container_of("container_1700000000000_00071_01_000002", app)
    assert not is_container_of("container_1700000000000_0008_01_000002", app)
    body = b"Container: c on nm1\nLogAggregationType: LOCAL\n====\nLogType:stdout\nLogContents:\nhello\nEnd of LogType:stdout.\n****\n"
    assert strip_log_wrapper(body, "stdout") == b"hello\n"
    assert strip_log_wrapper(b"plain", "stdout") == b"plain"
